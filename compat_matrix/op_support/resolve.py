"""Map a version argument to the release branch whose op data answers for it.

Accepted forms (case-insensitive):
- a release branch: ``v2.1.0-7.2.0`` (also without the ``v``);
- a torch_npu wheel version: ``2.1.0.post10`` (a local suffix such as ``+gitabc123`` is ignored);
- a release line of Ascend Extension for PyTorch: ``7.2.0``, ``6.0.rc3`` (prefix ``release:`` to force);
- a CANN version: ``8.3.RC1``, ``CANN 8.0.0`` (prefix ``cann:`` / ``CANN `` to force).

The wheel/branch/CANN rows come from Ascend/pytorch ``COMPATIBILITY.en.md`` (see
``index.json`` ``release_map``). When several branches share a release line (one per
PyTorch version), a PyTorch hint picks one; without data for the exact branch the nearest
PyTorch minor of the same release line is used and the substitution is said in ``note``
(the op set of a release line barely changes with the PyTorch minor).

This module keeps its own small normalisation; the version grammar of ``compat_matrix``
can replace ``_norm_*`` without changing the interface.
"""
from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from typing import Dict, List, Optional, Sequence, Tuple

from compat_matrix.op_support.store import (Release, index, release_by_branch, releases, wheel_lines, wheel_releases,
                                            wheel_unreadable)


class UnknownVersionError(ValueError):
    """A version argument the data cannot answer for; the message is one line naming the known ones."""


@dataclass(frozen=True)
class Resolution:
    text: str  # the argument as given
    form: str  # branch | wheel | release | cann
    branch: str  # the branch whose op data is used
    matched: Tuple[str, ...]  # release-map branches the argument named
    note: Optional[str] = None  # set when the data of another branch stands in
    key: Optional[str] = None  # the op data used, when not the branch's own: 'torch-npu==V' (a wheel)

    @property
    def data_key(self) -> str:
        """What ``load_branch`` takes: the wheel key, or the branch."""
        return self.key or self.branch

    @property
    def release(self) -> Release:
        rel = release_by_branch(self.data_key)
        assert rel is not None
        return rel

    def to_json(self) -> Dict[str, object]:
        out: Dict[str, object] = {"given": self.text, "form": self.form, "branch": self.branch, "matched": list(self.matched)}
        if self.note:
            out["note"] = self.note
        rel = self.release
        out.update({"release": rel.release, "torch": rel.torch, "wheel": rel.wheel, "cann": rel.cann,
                    "data": rel.kind, "source": source_label(rel)})
        if rel.kind == "wheel":
            out.update({"key": rel.branch, "url": rel.url, "cann_basis": rel.cann_basis})
        return out


def source_label(rel: Release) -> str:
    """Where an op list comes from, in one phrase: 'pypi: torch-npu==V' or the branch's files."""
    if rel.kind == "wheel" and rel.source:
        return rel.source
    return ", ".join(f"{s.repo}@{s.commit[:12]}" for s in rel.sources) or rel.branch


def _rows() -> List[Dict[str, str]]:
    return list(index()["release_map"]["rows"])


def _simple_wheel(text: str) -> str:
    text = re.sub(r"\s*\(beta\)$", "", text.strip().lower())
    return text.split("+", 1)[0]


def _simple_cann(text: str) -> str:
    text = re.sub(r"^\s*cann[\s:=_-]*", "", text.strip(), flags=re.I)
    return re.sub(r"rc", "RC", text, flags=re.I)


def _simple_release(text: str) -> str:
    return re.sub(r"^\s*release[\s:=_-]*", "", text.strip().lower())


_SIMPLE = {"torch_npu": _simple_wheel, "cann": _simple_cann, "torch_npu_release": _simple_release}


@functools.lru_cache(maxsize=4096)
def _canon(text: str, kind: str) -> str:
    """One spelling per version, by compat_matrix's version grammar where it parses."""
    try:
        from compat_matrix.versions import try_parse_version
    except ImportError:  # pragma: no cover - the grammar ships in the same package
        try_parse_version = None
    cleaned = _SIMPLE[kind](text)
    if try_parse_version is not None:
        v = try_parse_version(cleaned, kind)
        if v is not None:
            v = v.public if kind == "torch_npu" else v
            return f"{kind}:{v.text}"
    return f"{kind}:{cleaned}"


def _norm_wheel(text: str) -> str:
    return _canon(text, "torch_npu")


def _norm_cann(text: str) -> str:
    return _canon(text, "cann")


def _norm_release(text: str) -> str:
    return _canon(text, "torch_npu_release")


def _torch_minor(text: str) -> Optional[Tuple[int, int]]:
    m = re.match(r"^v?(\d+)\.(\d+)", text.strip())
    return (int(m.group(1)), int(m.group(2))) if m else None


def _wheel_data(text: str) -> Optional[Release]:
    """The wheel build whose own registration was read, for a torch_npu version text."""
    want = _norm_wheel(text)
    for r in wheel_releases():
        if _norm_wheel(r.wheel) == want:
            return r
    return None


def _via_wheel(res: Resolution) -> Resolution:
    """The wheel wins: a branch resolution whose build was read from its wheel uses the wheel's data."""
    rel = release_by_branch(res.branch)
    if rel is None or rel.kind == "wheel":
        return res
    w = _wheel_data(rel.wheel)
    if w is None:
        return res
    return Resolution(res.text, res.form, res.branch, res.matched, res.note, key=w.branch)


def _wheel_resolution(raw: str, w: Release) -> Resolution:
    branch = w.git_branch or w.branch
    return Resolution(raw, "wheel", branch, (branch,), key=w.branch)


def known_versions() -> str:
    """One line naming everything that resolves, for error messages."""
    lines_w = [ln["line"] for ln in wheel_lines()]
    head = ""
    if lines_w:
        head = (f"any torch_npu build on the package index ({len(wheel_releases())} builds of the lines "
                f"{', '.join(lines_w)}; `ascend-doctor opcheck versions` lists them); ")
    rels = releases()
    lines = []
    for r in rels:
        if r.release not in lines:
            lines.append(r.release)
    canns = []
    for r in rels:
        if r.cann not in canns:
            canns.append(r.cann)
    return (
        head + "release lines " + ", ".join(lines)
        + "; CANN " + ", ".join(canns)
        + "; branches " + ", ".join(r.branch for r in rels)
        + "; or a torch_npu wheel version of those branches (e.g. " + ", ".join(r.wheel for r in rels[-3:]) + ")"
    )


def _unknown(text: str, why: str) -> UnknownVersionError:
    return UnknownVersionError(f"{why}; known: {known_versions()}")


def _pick(text: str, form: str, rows: Sequence[Dict[str, str]], torch_hint: Optional[Tuple[int, int]]) -> Resolution:
    have = {r.branch: r for r in releases()}
    matched = tuple(r["branch"] for r in rows)
    with_data = [r for r in rows if r["branch"] in have]

    def tkey(branch: str) -> Tuple[int, int]:
        return _torch_minor(branch) or (0, 0)

    if with_data:
        if torch_hint is not None:
            exact = [r for r in with_data if tkey(r["branch"]) == torch_hint]
            if exact:
                return Resolution(text, form, exact[0]["branch"], matched)
        best = max(with_data, key=lambda r: tkey(r["branch"]))
        note = None
        if len(with_data) > 1 or len(rows) > 1:
            note = f"{text} covers {', '.join(matched)}; using {best['branch']}" + (
                "" if torch_hint is None else f" (no branch for torch {torch_hint[0]}.{torch_hint[1]})"
            )
        return Resolution(text, form, best["branch"], matched, note)

    # No branch data, but the named build's own wheel was read: that is exact.
    for r in rows:
        w = _wheel_data(r["wheel"])
        if w is not None and (torch_hint is None or tkey(r["branch"]) == torch_hint or len(rows) == 1):
            return Resolution(text, form, r["branch"], matched, key=w.branch)
    # No data for the named branch(es): stand in with the same release line, same fallback family.
    line = rows[0]["torch_npu_release"]
    want = torch_hint or tkey(rows[0]["branch"])
    family = want >= (2, 1)
    same_line = [r for r in have.values() if r.release == line and (r.torch_tuple >= (2, 1)) == family]
    if not same_line:
        raise _unknown(text, f"no op data for {text} ({', '.join(matched)}, release line {line})")
    best_rel = min(same_line, key=lambda r: (abs(r.torch_tuple[1] - want[1]) if r.torch_tuple[0] == want[0] else 99, r.torch_tuple))
    note = (
        f"no op data for {', '.join(matched)}; using {best_rel.branch} (same release line {line}, "
        f"nearest PyTorch; the op set of a release line barely changes with the PyTorch minor)"
    )
    return Resolution(text, form, best_rel.branch, matched, note)


def resolve(text: str, torch: Optional[str] = None) -> Resolution:
    """Resolve a version argument; ``torch`` (e.g. '2.1') picks among branches of one release line."""
    if not isinstance(text, str) or not text.strip():
        raise _unknown(str(text), "empty version")
    raw = text.strip()
    hint = _torch_minor(torch) if torch else None
    low = raw.lower()
    for prefix in ("torch_npu==", "torch-npu==", "torch_npu ", "torch-npu ", "wheel:"):
        if low.startswith(prefix):
            return _by_wheel(raw, raw[len(prefix):], hint)
    if re.match(r"^cann[\s:=_-]*\d", low):
        return _by_cann(raw, hint)
    if low.startswith("release:"):
        return _by_release(raw, raw[len("release:"):], hint)
    m = re.match(r"^v?(\d+\.\d+\.\d+)-(\S+)$", raw, flags=re.I)
    if m:
        branch = f"v{m.group(1)}-{m.group(2).lower()}"
        rows = [r for r in _rows() if r["branch"].lower() == branch]
        if not rows and release_by_branch(branch) is None:
            raise _unknown(raw, f"unknown release branch {raw!r}")
        if release_by_branch(branch) is not None:
            return Resolution(raw, "branch", branch, (branch,))
        return _pick(raw, "branch", rows, hint)

    w = _wheel_data(raw)
    if w is not None:
        return _wheel_resolution(raw, w)
    unread = next((u for u in wheel_unreadable() if _norm_wheel(u["wheel"]) == _norm_wheel(raw)), None)
    if unread is not None:
        raise _unknown(raw, f"the wheel of torch_npu {unread['wheel']} could not be read: {unread['reason']}")
    wheel_rows = [r for r in _rows() if _norm_wheel(r["wheel"]) == _norm_wheel(raw)]
    release_rows = [r for r in _rows() if _norm_release(r["torch_npu_release"]) == _norm_release(raw)]
    cann_rows = [r for r in _rows() if _norm_cann(r["cann"]) == _norm_cann(raw)]
    if wheel_rows:
        return _via_wheel(_pick(raw, "wheel", wheel_rows, hint or _torch_minor(raw)))
    if release_rows and cann_rows:
        a = ", ".join(sorted({_simple_cann(r['cann']) for r in release_rows}))
        b = ", ".join(sorted({r['torch_npu_release'] for r in cann_rows}))
        raise UnknownVersionError(
            f"{raw!r} is ambiguous: release line {raw} (CANN {a}) or CANN {raw} (release line {b}); "
            f"write 'release:{raw}' or 'cann:{raw}'"
        )
    if release_rows:
        return _via_wheel(_pick(raw, "release", release_rows, hint))
    if cann_rows:
        return _via_wheel(_pick(raw, "cann", cann_rows, hint))
    raise _unknown(raw, f"unknown version {raw!r}")


def _by_wheel(raw: str, value: str, hint: Optional[Tuple[int, int]]) -> Resolution:
    w = _wheel_data(value)
    if w is not None:
        return _wheel_resolution(raw, w)
    rows = [r for r in _rows() if _norm_wheel(r["wheel"]) == _norm_wheel(value)]
    if not rows:
        raise _unknown(raw, f"unknown torch_npu wheel version {value!r}")
    return _via_wheel(_pick(raw, "wheel", rows, hint or _torch_minor(value)))


def _by_cann(raw: str, hint: Optional[Tuple[int, int]]) -> Resolution:
    rows = [r for r in _rows() if _norm_cann(r["cann"]) == _norm_cann(raw)]
    if not rows:
        raise _unknown(raw, f"unknown CANN version {_simple_cann(raw)!r}")
    return _via_wheel(_pick(raw, "cann", rows, hint))


def _by_release(raw: str, value: str, hint: Optional[Tuple[int, int]]) -> Resolution:
    rows = [r for r in _rows() if _norm_release(r["torch_npu_release"]) == _norm_release(value)]
    if not rows:
        raise _unknown(raw, f"unknown release line {value!r}")
    return _via_wheel(_pick(raw, "release", rows, hint))
