"""What the published torch-npu wheels state about themselves, merged into the build rows.

``data/wheels.yaml`` is written by ``tools/harvest_wheels.py`` from the wheels on the package
index (METADATA and file tags; nothing is imported). This module gives every published build a
CANN statement, and says which kind it is:

``table``      a stored table row (torch_npu.yaml) pairs the build with a CANN release;
``wheel``      no table row does, but the wheel's own description names it (its release table
               lists this build, or it tells the user which CANN to install);
``inherited``  a post build of a torch_npu X.Y.Z line no source names: it takes what the line
               states (the newest earlier build of the line with a ``table`` or ``wheel``
               statement, and the line's row in the wheel's description);
``inferred``   nothing names a CANN for the line: the nearest published builds on both sides that
               do bound the likely range. An inference, never a basis for ``compatible``;
``none``       not even that (no neighbour names a CANN).

``merge()`` is called once while the matrix loads; it returns the build rows with the wheel
facts applied and the statement of every published build.
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple

from compat_matrix.versions import Version, VersionSpec, parse_spec, try_parse_version

KINDS = ("table", "wheel", "inherited", "inferred", "none")
# table rows whose CANN statement is a release fact (pre-release rows pair with alpha builds)
_DIRECT_STATUSES = ("active", "eol", "hotfix")


def source_id(version: str) -> str:
    """The source id (and label) of one wheel's metadata: ``pypi: torch-npu==V METADATA``."""
    return "pypi: torch-npu==%s METADATA" % version


def source_url(version: str) -> str:
    return "https://pypi.org/project/torch-npu/%s/#files" % version


@dataclass(frozen=True)
class CannStatement:
    torch_npu: Version
    kind: str
    specs: Tuple[VersionSpec, ...]  # table/wheel/inherited: the CANN(s) stated, paired one first
    source: Optional[str]  # source id
    text: str  # one sentence saying what is known and from where
    via: Optional[Version] = None  # inherited: the build whose statement is taken
    lower: Optional[Tuple[Version, VersionSpec]] = None  # inferred: nearest older build naming a CANN
    upper: Optional[Tuple[Version, VersionSpec]] = None  # inferred: nearest newer build naming a CANN

    @property
    def range(self) -> Optional[Tuple[Optional[Version], Optional[Version]]]:
        """inferred: (low, high) CANN bound (either may be open)."""
        if self.kind != "inferred":
            return None
        vals = [b[1].version for b in (self.lower, self.upper) if b is not None and b[1].version is not None]
        if not vals:
            return None
        if self.lower is None:
            return None, max(vals)
        if self.upper is None:
            return min(vals), None
        return min(vals), max(vals)

    def range_text(self) -> str:
        r = self.range
        if r is None:
            return "unknown"
        lo, hi = r
        if lo is not None and hi is not None:
            return "CANN %s" % lo.text if lo == hi else "CANN %s to %s" % (lo.text, hi.text)
        return "CANN %s or later" % lo.text if lo is not None else "CANN %s or earlier" % hi.text  # type: ignore[union-attr]

    def in_range(self, cann: Version) -> bool:
        r = self.range
        if r is None:
            return False
        lo, hi = r
        return (lo is None or cann >= lo) and (hi is None or cann <= hi)

    def to_json(self) -> Dict[str, Any]:
        out: Dict[str, Any] = {"torch_npu": self.torch_npu.text, "kind": self.kind,
                               "cann": [s.text for s in self.specs], "source": self.source, "text": self.text}
        if self.via is not None:
            out["inherited_from"] = self.via.text
        if self.kind == "inferred":
            out["likely"] = self.range_text()
            out["lower"] = [self.lower[0].text, self.lower[1].text] if self.lower else None
            out["upper"] = [self.upper[0].text, self.upper[1].text] if self.upper else None
        return out


def _spec(text: str) -> Optional[VersionSpec]:
    try:
        return parse_spec(text, "cann")
    except ValueError:
        return None


def _line(v: Version) -> str:
    return ".".join(str(x) for x in v.pep440.release[:3])


def _fmt(specs: Sequence[VersionSpec]) -> str:
    return ", ".join(s.text for s in specs)


def _cell_cann(cell: str, branch: str, releases: Mapping[Version, Any], known: Any) -> Tuple[List[VersionSpec], str]:
    """A description's CANN cell -> (specs, how it was read). The cell sometimes carries the
    TorchNPU release number (the branch suffix) instead of a CANN release: that is read through
    the release line's own CANN."""
    suffix = branch.rsplit("-", 1)[1] if "-" in branch else None
    rv = try_parse_version(suffix, "torch_npu_release") if suffix else None
    rel = releases.get(rv) if rv is not None else None
    if rel is not None and rel.release.text == cell and rel.cann is not None:
        specs = [rel.cann] + [s for s in rel.supports if s.text != rel.cann.text]
        return specs, ("branch %s (TorchNPU %s, made for CANN %s); its CANN column reads \"%s\", the TorchNPU "
                       "release number" % (branch, cell, rel.cann.text, cell))
    spec = _spec(cell)
    if spec is None:
        return [], "an unreadable CANN cell %r" % cell
    if spec.version is not None and not known(spec.version) and rel is None:
        return [spec], "CANN %s (branch %s; a CANN release no other source names)" % (cell, branch)
    return [spec], "CANN %s (branch %s)" % (cell, branch)


def merge(doc: Optional[Mapping[str, Any]], builds: List[Any], releases: Sequence[Any],
          build_cls: Any) -> Tuple[List[Any], Dict[str, Tuple[str, str]], Dict[Version, CannStatement]]:
    """Apply the harvested wheel facts: (builds, {source id: (url, title)}, statements)."""
    from compat_matrix.versions import parse_version

    if not doc:
        return builds, {}, {}
    facts: Dict[Version, Mapping[str, Any]] = {}
    for r in doc.get("builds") or ():
        facts[parse_version(r["torch_npu"], "torch_npu")] = r
    m = _Merge(facts, releases)
    sources, out = m.add_index_builds(builds, build_cls)
    m.direct_statements()  # 1. a stored table row, else the wheel's own description
    m.inherited_statements()  # 2. post builds inherit what their line states
    m.inferred_statements()  # 3. nothing names a CANN: the nearest builds on both sides bound the likely range
    return m.final_rows(out), sources, m.statements


class _Merge:
    """The state of one merge: the wheel facts, the release lines, every build by wheel, the statements made so far."""

    def __init__(self, facts: Dict[Version, Mapping[str, Any]], releases: Sequence[Any]) -> None:
        self.facts = facts
        self.releases = releases
        self.rel_by = {r.release: r for r in releases}
        self.by_wheel: Dict[Version, Any] = {}
        self.statements: Dict[Version, CannStatement] = {}
        self.published: List[Version] = []
        self.known_canns: set = set()

    def add_index_builds(self, builds: List[Any], build_cls: Any) -> Tuple[Dict[str, Tuple[str, str]], List[Any]]:
        """Every stored build, then a row for each wheel on the index that no table lists."""
        from compat_matrix.versions import parse_version

        for b in builds:
            if b.cann is not None and b.cann.version is not None:
                self.known_canns.add(b.cann.version)
        for r in self.releases:
            if r.cann is not None and r.cann.version is not None:
                self.known_canns.add(r.cann.version)
        sources: Dict[str, Tuple[str, str]] = {}
        out: List[Any] = []
        for b in builds:
            self.by_wheel.setdefault(b.torch_npu, b)
            out.append(b)
        for v, f in sorted(self.facts.items()):
            sources[source_id(v.text)] = (source_url(v.text), "pypi: torch-npu==%s METADATA (and the file tags of the index)" % v.text)
            if v in self.by_wheel:
                continue
            torch = parse_version(f.get("torch") or _line(v), "torch")
            nb = build_cls(torch_npu=v, torch=torch, cann=None, release=None, hotfix_of=None, branch=None,
                           python=tuple(f.get("python") or ()) or None, python_min=None,
                           python_x86_64=tuple(f["python_x86_64"]) if f.get("python_x86_64") else None,
                           status="prerelease" if v.pep440.is_prerelease else "unverified", on_pypi=True,
                           source=source_id(v.text), python_source=source_id(v.text), contradiction=None,
                           note="on the package index; in no stored table")
            out.append(nb)
            self.by_wheel[v] = nb
        self.published = sorted(v for v, b in self.by_wheel.items() if b.on_pypi or v in self.facts)
        return sources, out

    def release_specs(self, b: Any) -> List[VersionSpec]:
        """A build's CANN, then what its release line (the GA line of a hotfix) also supports."""
        specs = [b.cann]
        line = None
        if b.hotfix_of is not None:
            line = self.rel_by.get(b.hotfix_of)
        elif b.release is not None:
            line = self.rel_by.get(b.release)
            if line is not None and line.hotfix_of is not None:
                line = self.rel_by.get(line.hotfix_of) or line
        if line is not None:
            specs += [s for s in line.supports if s.text not in {x.text for x in specs}]
        return specs

    def direct(self, v: Version) -> Optional[CannStatement]:
        """A statement about ``v`` itself that may stand for its neighbours, or None."""
        st = self.statements.get(v)
        if st is None or st.kind not in ("table", "wheel"):
            return None
        if st.kind == "table" and self.by_wheel[v].status not in _DIRECT_STATUSES:
            return None
        if v.pep440.is_prerelease:
            return None  # an rc pairs with alpha CANN builds or says nothing about the GA
        return st

    def direct_statements(self) -> None:
        for v in self.published:
            b = self.by_wheel[v]
            if b.cann is not None and b.status != "unverified":
                specs = self.release_specs(b)
                self.statements[v] = CannStatement(v, "table", tuple(specs), b.source,
                                                   "a stored table pairs torch_npu %s with CANN %s" % (v.text, b.cann.text))
                continue
            f = self.facts.get(v)
            if f is not None:
                st = self._wheel_statement(v, f)
                if st is not None:
                    self.statements[v] = st

    def _wheel_statement(self, v: Version, f: Mapping[str, Any]) -> Optional[CannStatement]:
        """What the wheel's own description says: its table row for itself, else its install instructions."""
        sid = source_id(v.text)
        for cell, branch in f.get("table_self") or ():
            specs, how = _cell_cann(str(cell), str(branch), self.rel_by, self.known_canns.__contains__)
            if specs:
                return CannStatement(v, "wheel", tuple(specs), sid,
                                     "the torch-npu %s wheel's own description lists it for %s" % (v.text, how))
        if f.get("install_cann"):
            spec = _spec(str(f["install_cann"]))
            if spec is not None:
                ex = f.get("install_example")
                text = "the torch-npu %s wheel's own description says to install CANN %s" % (v.text, spec.text)
                if ex and ex != v.text:
                    text += " (in an install example written for TorchNPU %s)" % ex
                return CannStatement(v, "wheel", (spec,), sid, text)
        return None

    def inherited_statements(self) -> None:
        for v in self.published:
            if v in self.statements or not v.pep440.is_postrelease:
                continue
            st = self._inherited(v)
            if st is not None:
                self.statements[v] = st

    def _inherited(self, v: Version) -> Optional[CannStatement]:
        line = _line(v)
        earlier = [w for w in self.published if w < v and _line(w) == line and self.direct(w) is not None]
        f = self.facts.get(v) or {}
        line_rows = [(str(c), str(e), str(br)) for c, e, br in (f.get("table_line") or ())]
        parts: List[str] = []
        specs: List[VersionSpec] = []
        sid = None
        via = None
        if earlier:
            via = earlier[-1]
            st = self.statements[via]
            specs += list(st.specs)
            sid = st.source
            how = "its wheel's description" if st.kind == "wheel" else "the stored table"
            made = "%s is made for CANN %s by %s" % (via.text, st.specs[0].text, how)
            if len(st.specs) > 1:
                made += " (its release line also supports %s)" % _fmt(st.specs[1:])
            parts.append(made)
        described = []
        for cell, ext, branch in line_rows:
            rs, _how = _cell_cann(cell, branch, self.rel_by, self.known_canns.__contains__)
            new = [s for s in rs if s.text not in {x.text for x in specs}]
            if rs:
                specs += new
                described.append("CANN %s (%s, branch %s)" % (rs[0].text, ext, branch))
        if described:
            parts.append("its own description pairs the %s line with %s" % (line, "; ".join(described)))
            sid = sid or source_id(v.text)
        if not specs:
            return None
        return CannStatement(
            v, "inherited", tuple(specs), sid,
            "torch_npu %s is a build of the %s line, which no source names on its own; it inherits what the "
            "line states: %s" % (v.text, line, "; ".join(parts)), via=via)

    def inferred_statements(self) -> None:
        statements, published = self.statements, self.published
        for v in published:
            if v in statements:
                continue
            below = [w for w in published if w < v and self.direct(w) is not None]
            above = [w for w in published if w > v and self.direct(w) is not None]
            lower = (below[-1], statements[below[-1]].specs[0]) if below else None
            upper = (above[0], statements[above[0]].specs[0]) if above else None
            if lower is None and upper is None:
                statements[v] = CannStatement(v, "none", (), None, "no source names a CANN for torch_npu %s or any "
                                                                   "published build near it" % v.text)
                continue
            st = CannStatement(v, "inferred", (), None, "", lower=lower, upper=upper)
            sides = []
            for side in (lower, upper):
                if side is not None:
                    sst = statements[side[0]]
                    sides.append("%s (CANN %s, %s)" % (side[0].text, side[1].text,
                                                       "its wheel's description" if sst.kind == "wheel" else "stored table"))
            text = ("no source names a CANN for torch_npu %s; the nearest published builds that do are %s, so %s is "
                    "likely - an inference, not a statement" % (v.text, " and ".join(sides), st.range_text()))
            statements[v] = replace(st, text=text)

    def final_rows(self, out: List[Any]) -> List[Any]:
        """Final builds on the index with a wheel / inherited statement become 'published' rows."""
        final: List[Any] = []
        for b in out:
            st = self.statements.get(b.torch_npu)
            if st is not None and st.kind in ("wheel", "inherited") and b.cann is None:
                status = b.status if b.status != "unverified" else "published"
                b = replace(b, cann=st.specs[0], cann_also=tuple(st.specs[1:]), cann_basis=st.kind,
                            cann_note=st.text, status=status, source=st.source or b.source,
                            note=b.note if b.note and "no stored table" not in b.note else None)
            elif st is not None and st.kind in ("inferred", "none"):
                b = replace(b, cann_basis=st.kind, cann_note=st.text)
            final.append(b)
        return final
