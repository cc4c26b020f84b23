"""Load the version-matching data (YAML under compat_matrix/data/) into typed, indexed rows.

Loaded on first use and cached: importing compat_matrix costs no YAML parsing.
Every row keeps its ``source`` id; ``Matrix.source_url(id)`` turns it into a URL.
"""
from __future__ import annotations

import datetime
import gzip
import json
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

from compat_matrix.errors import DataError, VersionError
from compat_matrix.versions import Version, VersionSpec, parse_spec, parse_version

DATA_DIR = Path(__file__).resolve().parent / "data"
DATA_FILES = ("sources", "torch_npu", "releases", "torch_python", "cann_hdk", "host_rules",
              "downstream", "contradictions", "wheels")

# torch_npu build statuses, and the relations of CANN <-> HDK statements
# published: a final release on the package index that no stored table lists, whose CANN comes
# from its own wheel or from its line (compat_matrix.wheels); unverified: not even that.
BUILD_STATUSES = ("active", "eol", "prerelease", "hotfix", "beta", "unverified", "published")
GA_STATUSES = ("active", "eol", "published")
HDK_RELATIONS = ("incompatible", "mapping", "compatible", "release_bundle", "tested",
                 "required_by_installer", "shipped_by_installer")
# the release notes' own statements: they define the allowed set for a CANN release
NOTE_RELATIONS = ("incompatible", "mapping", "compatible")


@dataclass(frozen=True)
class Source:
    id: str
    url: str
    kind: str
    title: str
    commit: Optional[str] = None

    def cite(self) -> str:
        """The URL to show: a permalink at ``commit`` when the row was read at one."""
        return permalink(self.url, self.commit)


# GitHub paths whose 4th segment is a ref that a commit can replace: owner/repo/blob|tree/<ref>/...
_REF_KINDS = ("blob", "tree")


def permalink(url: str, commit: Optional[str]) -> str:
    """``url`` pinned to ``commit`` (GitHub blob/tree links and repository roots).

    ``https://github.com/o/r/blob/master/F.md`` at ``c`` becomes ``.../blob/c/F.md``: a URL
    that still resolves when the branch moves on (``url@commit`` is not a URL at all). Other
    URLs, or a URL with no commit, come back unchanged.
    """
    if not commit:
        return url
    from urllib.parse import urlsplit, urlunsplit

    parts = urlsplit(url)
    if parts.netloc.lower() != "github.com":
        return url
    segs = [s for s in parts.path.split("/") if s]
    if len(segs) >= 4 and segs[2] in _REF_KINDS:
        segs[3] = commit
    elif len(segs) == 2:
        segs += ["tree", commit]
    else:
        return url  # issues, tags, branches pages: nothing to pin
    return urlunsplit((parts.scheme, parts.netloc, "/" + "/".join(segs), parts.query, parts.fragment))


@dataclass(frozen=True)
class Build:
    """One torch_npu wheel build (a row of torch_npu.yaml)."""

    torch_npu: Version
    torch: Version
    cann: Optional[VersionSpec]
    release: Optional[Version]
    hotfix_of: Optional[Version]
    branch: Optional[str]
    python: Optional[Tuple[str, ...]]
    python_min: Optional[Version]
    python_x86_64: Optional[Tuple[str, ...]]
    status: str
    on_pypi: bool
    source: str
    python_source: Optional[str]
    contradiction: Optional[str]
    note: Optional[str]
    # where `cann` comes from: table (a stored row), wheel (the wheel's own METADATA),
    # inherited (from its torch_npu X.Y.Z line), inferred / none (cann stays None)
    cann_basis: str = "table"
    cann_also: Tuple[VersionSpec, ...] = ()  # further CANN the same statement names
    cann_note: Optional[str] = None  # the statement, one sentence (wheel / inherited / inferred)

    @property
    def is_ga(self) -> bool:
        return self.status in GA_STATUSES

    @property
    def line(self) -> Optional[Version]:
        """The GA release line whose CANN statements apply (the parent for hotfix/beta tags)."""
        return self.hotfix_of or self.release


@dataclass(frozen=True)
class Release:
    """A TorchNPU release line (releases.yaml)."""

    release: Version
    cann: Optional[VersionSpec]
    status: str
    source: str
    supports: Tuple[VersionSpec, ...]
    supports_source: Optional[str]
    hotfix_of: Optional[Version]
    contradiction: Optional[str]
    note: Optional[str]


@dataclass(frozen=True)
class TorchPython:
    torch: Version
    upstream: Tuple[str, ...]
    ascend: Optional[Tuple[str, ...]]
    python_min: Optional[Version]
    source: str
    ascend_source: Optional[str]
    note: Optional[str]


@dataclass(frozen=True)
class HdkStatement:
    cann: VersionSpec
    hdk: Tuple[VersionSpec, ...]
    relation: str
    chips: Tuple[str, ...]
    source: str
    driver: Optional[Version]
    firmware: Optional[Version]
    contradiction: Optional[str]
    note: Optional[str]

    def covers_driver(self, driver: Version) -> bool:
        if self.driver is not None and (self.driver == driver or
                                        parse_spec(self.driver.text, "driver").matches(driver)):
            return True
        return any(spec.matches(driver) for spec in self.hdk)


@dataclass(frozen=True)
class Pin:
    """A stack a downstream project pins (evidence only)."""

    project: str
    version: Optional[str]
    torch: Optional[str]
    torch_npu: Optional[str]
    cann: Optional[str]
    python: Optional[str]
    branch: Optional[str]
    source: str
    contradiction: Optional[str]


@dataclass(frozen=True)
class DriverRule:
    driver: Optional[Version]
    innerversion: Optional[str]
    compatible_version: Tuple[str, ...]
    compatible_version_fw: Tuple[Tuple[str, str], ...]
    source: str
    note: Optional[str]


@dataclass(frozen=True)
class FirmwareRule:
    firmware: Version
    package_version: Optional[str]
    compatible_version_drv: Tuple[Tuple[str, str], ...]
    source: str


@dataclass(frozen=True)
class ToolkitRule:
    cann: Version
    innerversion: str
    compatible_version: Tuple[str, ...]
    source: str


@dataclass(frozen=True)
class Contradiction:
    id: str
    topic: str
    claims: Tuple[Tuple[str, str], ...]
    trusted: str
    why: str


@dataclass
class Matrix:
    """All tables, parsed and indexed. Get it with ``load_matrix()``."""

    sources: Dict[str, Source]
    builds: List[Build]
    releases: List[Release]
    contradicted_releases: List[Dict[str, Any]]
    cann_editions: Dict[Version, Version]  # community name -> commercial name
    torch_python: List[TorchPython]
    hdk: List[HdkStatement]
    pins: List[Pin]
    drivers: List[DriverRule]
    firmwares: List[FirmwareRule]
    toolkits: List[ToolkitRule]
    contradictions: Dict[str, Contradiction]
    wheel_glibc: List[Dict[str, Any]]
    cann_statements: Dict[Version, Any] = field(default_factory=dict)  # compat_matrix.wheels.CannStatement
    wheel_facts: Dict[str, Any] = field(default_factory=dict)  # wheels.yaml "index" block
    _by_wheel: Dict[Version, Build] = field(default_factory=dict, repr=False)
    _by_release: Dict[Version, Release] = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        for b in self.builds:
            self._by_wheel.setdefault(b.torch_npu, b)
        for r in self.releases:
            self._by_release.setdefault(r.release, r)

    # lookups -------------------------------------------------------------------------
    def source(self, sid: str) -> Source:
        try:
            return self.sources[sid]
        except KeyError:
            raise DataError("unknown source id %r" % sid) from None

    def source_url(self, sid: Optional[str]) -> Optional[str]:
        return self.source(sid).cite() if sid else None

    def source_commit(self, sid: Optional[str]) -> Optional[str]:
        """The full commit a source was read at (None for pages without one)."""
        return self.source(sid).commit if sid else None

    def build(self, wheel: Version) -> Optional[Build]:
        """The build of this exact wheel version (a +local part is ignored)."""
        return self._by_wheel.get(wheel) or self._by_wheel.get(wheel.public)

    def cann_statement(self, wheel: Version) -> Optional[Any]:
        """What is known of the CANN of a published build, and how (compat_matrix.wheels)."""
        return self.cann_statements.get(wheel) or self.cann_statements.get(wheel.public)

    def release(self, version: Version) -> Optional[Release]:
        return self._by_release.get(version)

    def release_line(self, build: Build) -> Optional[Release]:
        """The GA release whose CANN statements govern ``build`` (parent of a hotfix/beta)."""
        if build.hotfix_of is not None:
            return self._by_release.get(build.hotfix_of)
        if build.release is not None:
            rel = self._by_release.get(build.release)
            if rel is not None and rel.hotfix_of is not None:
                return self._by_release.get(rel.hotfix_of) or rel
            return rel
        return None

    def builds_for_torch(self, torch: Version) -> List[Build]:
        base = torch.public
        return [b for b in self.builds if b.torch == base]

    def torch_python_row(self, torch: Version) -> Optional[TorchPython]:
        base = torch.public
        for row in self.torch_python:
            if row.torch == base:
                return row
        return None

    def commercial_cann(self, cann: Version) -> Version:
        """The commercial name of a CANN community build (8.0.RC2.beta1 -> 8.0.RC2)."""
        return self.cann_editions.get(cann, cann)

    def is_known_cann(self, cann: Version) -> bool:
        """Does any torch_npu table name this exact CANN release?"""
        known = self.__dict__.get("_known_cann")
        if known is None:
            known = frozenset(self.known_cann_releases())
            self.__dict__["_known_cann"] = known
        return cann in known

    def known_cann_releases(self) -> List[Version]:
        """Every exact CANN release a torch_npu table pairs with (no wildcards)."""
        seen = set()
        for b in self.builds:
            if b.cann is not None and b.cann.version is not None:
                seen.add(b.cann.version)
        for r in self.releases:
            if r.cann is not None and r.cann.version is not None:
                seen.add(r.cann.version)
            for s in r.supports:
                if s.version is not None:
                    seen.add(s.version)
        return sorted(seen)


# ------------------------------------------------------------------------------ loading
_LOCK = threading.Lock()
_CACHE: Dict[str, Any] = {}


def _yaml_load(path: Path) -> Any:
    import yaml  # lazy: keep `import compat_matrix` cheap

    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    with open(path, "r", encoding="utf-8") as fh:
        return _plain(yaml.load(fh, Loader=loader))


def _plain(value: Any) -> Any:
    """YAML dates as ISO text, so the YAML and the compiled JSON read the same."""
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    if isinstance(value, datetime.date):
        return value.isoformat()
    return value


# The YAML files are for people. The package also ships them compiled into one gzipped JSON
# document (data/compiled.json.gz, written by tools/compile_compat.py) with each file's size;
# it is used only while every YAML file beside it still has the size it was compiled from
# (JSON parses several times faster than YAML, which is most of `check`'s and `compat`'s
# start-up). tests/compat_matrix/test_cm_compiled.py fails when it is stale or differs.
COMPILED = "compiled.json.gz"


def yaml_sizes(data_dir: Path = DATA_DIR) -> Dict[str, int]:
    return {name: (data_dir / (name + ".yaml")).stat().st_size for name in DATA_FILES}


def _compiled(data_dir: Path = DATA_DIR) -> Optional[Dict[str, Any]]:
    """The compiled documents when made from YAML files of exactly these sizes, else None."""
    try:
        with gzip.open(data_dir / COMPILED, "rb") as fh:
            doc = json.loads(fh.read().decode("utf-8"))
        if doc.get("sizes") != yaml_sizes(data_dir):
            return None
        return doc["docs"]
    except (OSError, ValueError, KeyError, AttributeError, EOFError):
        return None


def raw_data(name: str) -> Dict[str, Any]:
    """The parsed YAML of one data file (cached)."""
    if name not in DATA_FILES:
        raise DataError("no data file %r" % name)
    with _LOCK:
        if name not in _CACHE:
            if "__compiled__" not in _CACHE:
                _CACHE["__compiled__"] = _compiled()
            compiled = _CACHE["__compiled__"]
            data = compiled[name] if compiled is not None else _yaml_load(DATA_DIR / (name + ".yaml"))
            if not isinstance(data, dict) or data.get("schema") != 1:
                raise DataError("%s.yaml: missing 'schema: 1'" % name)
            _CACHE[name] = data
        return _CACHE[name]


def _v(value: Any, kind: str, where: str) -> Version:
    try:
        return parse_version(value, kind)
    except VersionError as exc:
        raise DataError("%s: %s" % (where, exc)) from None


def _opt_v(value: Any, kind: str, where: str) -> Optional[Version]:
    return None if value is None else _v(value, kind, where)


def _spec(value: Any, kind: str, where: str) -> VersionSpec:
    try:
        return parse_spec(value, kind)
    except VersionError as exc:
        raise DataError("%s: %s" % (where, exc)) from None


def _tup(value: Any) -> Optional[Tuple[str, ...]]:
    return None if value is None else tuple(str(x) for x in value)


def _pairs(value: Any) -> Tuple[Tuple[str, str], ...]:
    return tuple((str(a), str(b)) for a, b in (value or ()))


def _build_matrix() -> Matrix:
    src = raw_data("sources")["sources"]
    sources = {k: Source(k, v["url"], v.get("kind", ""), v.get("title", ""), v.get("commit"))
               for k, v in src.items()}

    builds = []
    for i, r in enumerate(raw_data("torch_npu")["builds"]):
        where = "torch_npu.yaml builds[%d]" % i
        if r.get("status") not in BUILD_STATUSES:
            raise DataError("%s: bad status %r" % (where, r.get("status")))
        builds.append(Build(
            torch_npu=_v(r["torch_npu"], "torch_npu", where),
            torch=_v(r["torch"], "torch", where),
            cann=None if r.get("cann") is None else _spec(r["cann"], "cann", where),
            release=_opt_v(r.get("release"), "torch_npu_release", where),
            hotfix_of=_opt_v(r.get("hotfix_of"), "torch_npu_release", where),
            branch=r.get("branch"),
            python=_tup(r.get("python")),
            python_min=_opt_v(r.get("python_min"), "python", where),
            python_x86_64=_tup(r.get("python_x86_64")),
            status=r["status"],
            on_pypi=bool(r.get("on_pypi")),
            source=r["source"],
            python_source=r.get("python_source"),
            contradiction=r.get("contradiction"),
            note=r.get("note"),
        ))

    rel_data = raw_data("releases")
    releases = []
    for i, r in enumerate(rel_data["releases"]):
        where = "releases.yaml releases[%d]" % i
        releases.append(Release(
            release=_v(r["release"], "torch_npu_release", where),
            cann=None if r.get("cann") is None else _spec(r["cann"], "cann", where),
            status=r["status"],
            source=r["source"],
            supports=tuple(_spec(s, "cann", where) for s in r.get("supports") or ()),
            supports_source=r.get("supports_source"),
            hotfix_of=_opt_v(r.get("hotfix_of"), "torch_npu_release", where),
            contradiction=r.get("contradiction"),
            note=r.get("note"),
        ))
    editions = {}
    for i, r in enumerate(rel_data.get("cann_editions") or ()):
        where = "releases.yaml cann_editions[%d]" % i
        editions[_v(r["community"], "cann", where)] = _v(r["commercial"], "cann", where)

    torch_python = []
    for i, r in enumerate(raw_data("torch_python")["torch"]):
        where = "torch_python.yaml torch[%d]" % i
        torch_python.append(TorchPython(
            torch=_v(r["torch"], "torch", where),
            upstream=tuple(r["upstream"]),
            ascend=_tup(r.get("ascend")),
            python_min=_opt_v(r.get("python_min"), "python", where),
            source=r["source"],
            ascend_source=r.get("ascend_source"),
            note=r.get("note"),
        ))

    hdk = []
    for i, r in enumerate(raw_data("cann_hdk")["statements"]):
        where = "cann_hdk.yaml statements[%d]" % i
        if r.get("relation") not in HDK_RELATIONS:
            raise DataError("%s: bad relation %r" % (where, r.get("relation")))
        hdk.append(HdkStatement(
            cann=_spec(r["cann"], "cann", where),
            hdk=tuple(_spec(h, "driver", where) for h in r["hdk"]),
            relation=r["relation"],
            chips=tuple(r.get("chips") or ("all",)),
            source=r["source"],
            driver=_opt_v(r.get("driver"), "driver", where),
            firmware=_opt_v(r.get("firmware"), "firmware", where),
            contradiction=r.get("contradiction"),
            note=r.get("note"),
        ))

    pins = [Pin(project=r["project"], version=r.get("version"), torch=r.get("torch"),
                torch_npu=r.get("torch_npu"), cann=r.get("cann"), python=r.get("python"),
                branch=r.get("branch"), source=r["source"], contradiction=r.get("contradiction"))
            for r in raw_data("downstream")["pins"]]

    hr = raw_data("host_rules")
    drivers = [DriverRule(driver=_opt_v(r.get("driver"), "driver", "host_rules.yaml drivers"),
                          innerversion=r.get("innerversion"),
                          compatible_version=tuple(r.get("compatible_version") or ()),
                          compatible_version_fw=_pairs(r.get("compatible_version_fw")),
                          source=r["source"], note=r.get("note"))
               for r in hr.get("drivers") or ()]
    firmwares = [FirmwareRule(firmware=_v(r["firmware"], "firmware", "host_rules.yaml firmwares"),
                              package_version=r.get("package_version"),
                              compatible_version_drv=_pairs(r.get("compatible_version_drv")),
                              source=r["source"])
                 for r in hr.get("firmwares") or ()]
    toolkits = [ToolkitRule(cann=_v(r["cann"], "cann", "host_rules.yaml toolkits"),
                            innerversion=r["innerversion"],
                            compatible_version=tuple(r["compatible_version"]), source=r["source"])
                for r in hr.get("toolkits") or ()]

    from compat_matrix import wheels as wheels_mod

    wheel_doc = raw_data("wheels")
    builds, wheel_sources, statements = wheels_mod.merge(wheel_doc, builds, releases, Build)
    for sid, (url, title) in wheel_sources.items():
        sources.setdefault(sid, Source(sid, url, "wheel-metadata", title))

    contradictions = {}
    for r in raw_data("contradictions")["contradictions"]:
        contradictions[r["id"]] = Contradiction(
            id=r["id"], topic=r["topic"],
            claims=tuple((c["source"], c["says"]) for c in r["claims"]),
            trusted=r["trusted"], why=r["why"])

    return Matrix(sources=sources, builds=builds, releases=releases,
                  contradicted_releases=list(rel_data.get("contradicted_pairings") or ()),
                  cann_editions=editions, torch_python=torch_python, hdk=hdk, pins=pins,
                  drivers=drivers, firmwares=firmwares, toolkits=toolkits,
                  contradictions=contradictions,
                  wheel_glibc=list(raw_data("torch_npu").get("wheel_glibc") or ()),
                  cann_statements=statements, wheel_facts=dict(wheel_doc.get("index") or {}))


def load_matrix() -> Matrix:
    """All data, parsed once per process."""
    with _LOCK:
        cached = _CACHE.get("__matrix__")
    if cached is not None:
        return cached
    matrix = _build_matrix()
    with _LOCK:
        _CACHE.setdefault("__matrix__", matrix)
        return _CACHE["__matrix__"]


def clear_cache() -> None:
    """Forget loaded data (tests that edit data files use this)."""
    with _LOCK:
        _CACHE.clear()
