"""Load the shipped op-support data: one small gzip'd JSON per torch_npu release branch.

``data/index.json`` lists the releases (with provenance and counts) and the release map;
``data/releases/<branch>.json.gz`` holds one release's ops. Each file is read on first use
and cached, so asking about two releases reads two files of ~10 kB.
"""
from __future__ import annotations

import gzip
import json
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Dict, Iterator, List, Mapping, Optional, Tuple

from compat_matrix.versions import parse_version

DATA_DIR = Path(__file__).resolve().parent / "data"
INDEX_FILE = DATA_DIR / "index.json"
SCHEMA = 1

# Impl kinds that mean "an NPU kernel is registered for this op" (tocpu/unsupported do not).
NPU_IMPLS = frozenset({"acl_op", "op_api", "dvm", "sparse", "internal_format_opapi", "torch_npu"})

_lock = threading.Lock()
_index: Optional[Dict[str, Any]] = None
_loaded: Dict[str, "OpSupport"] = {}
_cache: Dict[str, Any] = {}  # wheel releases and line files, read once


class DataError(RuntimeError):
    """The shipped data is missing or damaged (a packaging bug, not a user error)."""


@dataclass(frozen=True)
class Provenance:
    """Where one input file of a release's op list came from."""

    repo: str
    path: str
    commit: str
    branch: Optional[str] = None

    @property
    def url(self) -> str:
        return f"https://github.com/{self.repo}/blob/{self.commit}/{self.path}"


@dataclass(frozen=True)
class Release:
    """One torch_npu release branch the data covers, e.g. ``v2.1.0-6.0.0``."""

    branch: str
    torch: str  # PyTorch minor the op list was resolved for, '2.1'
    release: str  # Ascend Extension for PyTorch release line (= op-plugin branch), '6.0.0'
    wheel: str  # torch_npu wheel built from this branch, '2.1.0.post10'
    cann: str  # paired CANN version without the 'CANN ' prefix, '8.0.0'
    sources: Tuple[Provenance, ...] = ()
    counts: Mapping[str, int] = field(default_factory=dict)
    # "branch": reduced from the upstream repositories at a release branch; "wheel": read from the
    # published wheel's own registration (branch is then the key 'torch-npu==V')
    kind: str = "branch"
    source: Optional[str] = None  # wheel: 'pypi: torch-npu==V'
    url: Optional[str] = None  # wheel: the package-index page of that version
    git_branch: Optional[str] = None  # wheel: the release branch it was built from, when known
    cann_basis: Optional[str] = None  # wheel: how its CANN is known (compat_matrix.wheels)

    @property
    def torch_tuple(self) -> Tuple[int, int]:
        return parse_version(self.torch, "torch").series

    @property
    def has_cpu_fallback(self) -> bool:
        """torch_npu for torch >= 2.1 sends ops without an NPU kernel to the CPU (with a warning);
        for torch <= 2.0 such an op is an error."""
        return self.torch_tuple >= (2, 1)

    def to_json(self) -> Dict[str, Any]:
        out: Dict[str, Any] = {
            "branch": self.branch,
            "torch": self.torch,
            "release": self.release,
            "wheel": self.wheel,
            "cann": self.cann,
            "sources": [
                {"repo": s.repo, "path": s.path, "commit": s.commit, "branch": s.branch, "url": s.url}
                for s in self.sources
            ],
            "kind": self.kind,
        }
        if self.kind == "wheel":
            out.update(source=self.source, url=self.url, git_branch=self.git_branch, cann_basis=self.cann_basis)
        return out


@dataclass(frozen=True)
class OpStatus:
    """What one release says about one op.

    ``kind``: ``both`` (acl_op and op_api), ``op_api``, ``acl_op``, ``torch_npu`` (kernel in
    torch_npu itself), ``other`` (only a dvm/sparse kernel), ``tocpu`` (op-plugin sends it to
    the CPU on purpose, torch <= 2.0), ``unsupported`` (op-plugin registers an error kernel,
    torch <= 2.0) or ``absent`` (not in the release's lists: PyTorch decomposes it, or it
    falls back to the CPU; see ``compat_matrix.op_support.dispatch``).
    """

    op: str
    branch: str
    kind: str
    impl: Tuple[str, ...] = ()
    src: Tuple[str, ...] = ()
    aclnn: Optional[str] = None
    dtype: Optional[str] = None
    dtype_supported: Optional[bool] = None  # None: the data says nothing about this dtype
    dtype_note: Optional[str] = None

    @property
    def npu_kernel(self) -> bool:
        return bool(NPU_IMPLS.intersection(self.impl))

    @property
    def path(self) -> str:
        """Short label of the NPU path(s): 'acl_op+op_api', 'op_api', 'torch_npu+op_api', ..."""
        return "+".join(k for k in self.impl if k in NPU_IMPLS) or self.kind

    def to_json(self) -> Dict[str, Any]:
        out: Dict[str, Any] = {"op": self.op, "branch": self.branch, "kind": self.kind, "impl": list(self.impl)}
        if self.aclnn:
            out["aclnn"] = self.aclnn
        if self.dtype is not None:
            out["dtype"] = self.dtype
            out["dtype_supported"] = self.dtype_supported
            if self.dtype_note:
                out["dtype_note"] = self.dtype_note
        return out


def normalize_op_name(name: str) -> str:
    """Accept the spellings users and tools print for one overload.

    'aten::add.Tensor', 'aten.add.Tensor', 'torch.ops.aten.add.Tensor' and 'add.Tensor'
    all give 'aten::add.Tensor'; a trailing '.default' is dropped ('aten.addmm.default'
    is 'aten::addmm').
    """
    text = name.strip()
    if text.startswith("torch.ops."):
        text = text[len("torch.ops."):]
    if "::" not in text:
        ns, dot, rest = text.partition(".")
        if dot and ns in ("aten", "npu", "prim", "prims", "torchvision", "_c10d_functional", "c10d"):
            text = f"{ns}::{rest}"
        else:
            text = "aten::" + text
    if text.endswith(".default"):
        text = text[: -len(".default")]
    return text


def _kind(impl: Tuple[str, ...]) -> str:
    s = set(impl)
    if "unsupported" in s:
        return "unsupported"
    if "tocpu" in s and not NPU_IMPLS.intersection(s):
        return "tocpu"
    if "torch_npu" in s:
        return "torch_npu"
    if {"acl_op", "op_api"} <= s:
        return "both"
    if "op_api" in s:
        return "op_api"
    if "acl_op" in s:
        return "acl_op"
    return "other" if s else "absent"


class OpSupport:
    """The op list of one release. ``status(op)`` never raises for an unknown op: it is 'absent'."""

    def __init__(self, release: Release, ops: Mapping[str, Tuple[Tuple[str, ...], Tuple[str, ...], Optional[str]]]):
        self.release = release
        self._ops = ops

    def __repr__(self) -> str:
        return f"OpSupport({self.release.branch!r}, {len(self._ops)} ops)"

    def __len__(self) -> int:
        return len(self._ops)

    def __contains__(self, op: object) -> bool:
        return isinstance(op, str) and normalize_op_name(op) in self._ops

    def __iter__(self) -> Iterator[str]:
        return iter(self._ops)

    def ops(self, namespace: Optional[str] = None) -> List[str]:
        if namespace is None:
            return list(self._ops)
        prefix = namespace + "::"
        return [k for k in self._ops if k.startswith(prefix)]

    def status(self, op: str, dtype: Optional[str] = None) -> OpStatus:
        key = normalize_op_name(op)
        rec = self._ops.get(key)
        impl, src, aclnn = rec if rec is not None else ((), (), None)
        supported: Optional[bool] = None
        note: Optional[str] = None
        if dtype is not None:
            from compat_matrix.op_support import dtypes

            supported, note = dtypes.judge(key, dtype, impl, self.release)
        return OpStatus(
            op=key,
            branch=self.release.branch,
            kind=_kind(impl),
            impl=impl,
            src=src,
            aclnn=aclnn,
            dtype=dtype,
            dtype_supported=supported,
            dtype_note=note,
        )


def _read_index() -> Dict[str, Any]:
    global _index
    if _index is None:
        with _lock:
            if _index is None:
                try:
                    doc = json.loads(INDEX_FILE.read_text(encoding="utf-8"))
                except (OSError, ValueError) as exc:
                    raise DataError(f"op-support index unreadable: {INDEX_FILE}: {exc}") from exc
                if doc.get("schema") != SCHEMA:
                    raise DataError(f"op-support index {INDEX_FILE} has schema {doc.get('schema')!r}, expected {SCHEMA}")
                _index = doc
    return _index


def index() -> Dict[str, Any]:
    """The parsed ``data/index.json`` (releases, release map, provenance)."""
    return _read_index()


def _release_from_json(row: Mapping[str, Any]) -> Release:
    return Release(
        branch=row["branch"],
        torch=row["torch"],
        release=row["release"],
        wheel=row["wheel"],
        cann=row["cann"],
        sources=tuple(Provenance(**s) for s in row.get("sources", [])),
        counts=dict(row.get("counts", {})),
    )


def releases() -> List[Release]:
    """Every release branch with op data, oldest release line first."""
    return [_release_from_json(r) for r in _read_index()["releases"]]


WHEEL_KEY = "torch-npu=="
PYPI_PAGE = "https://pypi.org/project/torch-npu/{}/#files"


def wheel_key(version: str) -> str:
    """The key of one wheel build's op data: 'torch-npu==2.14.0'."""
    return WHEEL_KEY + version


def wheel_releases() -> List[Release]:
    """Every torch-npu build on the package index whose wheel registration was read, oldest first."""
    cached = _cache.get("__wheel_releases__")
    if cached is not None:
        return cached
    out = []
    for r in (_read_index().get("wheels") or {}).get("builds", []):
        out.append(Release(
            branch=wheel_key(r["wheel"]), torch=r["torch"], release=r.get("release") or "", wheel=r["wheel"],
            cann=r.get("cann") or ("~" + r["cann_likely"][5:] if (r.get("cann_likely") or "").startswith("CANN ") else ""),
            sources=(), counts=dict(r.get("counts", {})), kind="wheel",
            source=r.get("source"), url=PYPI_PAGE.format(r["wheel"]), git_branch=r.get("branch"),
            cann_basis=r.get("cann_basis")))
    with _lock:
        _cache["__wheel_releases__"] = out
    return out


def wheel_lines() -> List[Dict[str, Any]]:
    """The torch_npu X.Y.Z lines with wheel data: line, base build, builds, file."""
    return list((_read_index().get("wheels") or {}).get("lines", []))


def wheel_unreadable() -> List[Dict[str, str]]:
    """Builds on the index whose wheel registration could not be read, with the reason."""
    return list((_read_index().get("wheels") or {}).get("unreadable", []))


def wheel_release(version: str) -> Optional[Release]:
    for r in wheel_releases():
        if r.wheel == version:
            return r
    return None


def release_by_branch(branch: str) -> Optional[Release]:
    if branch.startswith(WHEEL_KEY):
        return wheel_release(branch[len(WHEEL_KEY):])
    for r in releases():
        if r.branch == branch:
            return r
    return None


def _line_doc(line: str) -> Dict[str, Any]:
    key = "__line__" + line
    cached = _cache.get(key)
    if cached is not None:
        return cached
    path = DATA_DIR / "wheels" / f"{line}.json.gz"
    try:
        with gzip.open(path, "rt", encoding="utf-8") as fh:
            doc = json.load(fh)
    except (OSError, ValueError) as exc:
        raise DataError(f"op-support data unreadable: {path}: {exc}") from exc
    with _lock:
        _cache[key] = doc
    return doc


def _load_wheel(rel: Release) -> "OpSupport":
    line = next((ln["line"] for ln in wheel_lines() if rel.wheel in ln["builds"]), None)
    if line is None:
        raise DataError(f"op-support index lists {rel.wheel} but no line file holds it")
    doc = _line_doc(line)
    raw = dict(doc["ops"])
    if rel.wheel != doc["base"]:
        diff = doc["builds"][rel.wheel]
        for k in diff.get("del", []):
            raw.pop(k, None)
        raw.update(diff.get("add", {}))
    ops = {k: (tuple(v[0]), tuple(v[1]), v[2]) for k, v in raw.items()}
    return OpSupport(rel, ops)


def load_branch(branch: str) -> OpSupport:
    """Load one release by its exact branch name (see ``resolve`` for version arguments)."""
    cached = _loaded.get(branch)
    if cached is not None:
        return cached
    rel = release_by_branch(branch)
    if rel is None:
        known = ", ".join(r.branch for r in releases())
        raise KeyError(f"no op data for branch {branch!r}; known: {known}")
    if rel.kind == "wheel":
        support = _load_wheel(rel)
        with _lock:
            _loaded[branch] = support
        return support
    path = DATA_DIR / "releases" / f"{branch}.json.gz"
    try:
        with gzip.open(path, "rt", encoding="utf-8") as fh:
            doc = json.load(fh)
    except (OSError, ValueError) as exc:
        raise DataError(f"op-support data unreadable: {path}: {exc}") from exc
    ops = {k: (tuple(v[0]), tuple(v[1]), v[2]) for k, v in doc["ops"].items()}
    support = OpSupport(rel, ops)
    with _lock:
        _loaded[branch] = support
    return support
