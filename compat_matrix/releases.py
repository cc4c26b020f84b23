"""Map what people call a torch_npu version to the builds (and branches) it means.

``resolve_torch_npu_release(text)`` accepts
  * a torch_npu wheel version:        2.1.0.post10, 2.4.0rc1, torch_npu==2.1.0.post10
  * a branch name:                    v2.1.0-7.2.0
  * a TorchNPU release line:          7.2.0, 6.0.rc3, 6.0.RC3, v7.2.0
  * a CANN release:                   8.3.RC1, CANN 8.0.0
and returns the matching builds, newest first. Each Build has ``.branch`` (the Ascend/pytorch
branch; op-plugin uses the part after the last '-'), ``.torch``, ``.cann`` and ``.release``.

A bare ``7.0.0`` is both a release line and a CANN release: the release line wins; write
``CANN 7.0.0`` (or pass kind="cann") for the CANN.
"""
from __future__ import annotations

import re
from typing import Any, Dict, List, Optional

from compat_matrix.errors import CompatError
from compat_matrix.tables import Build, Matrix, load_matrix
from compat_matrix.versions import try_parse_version

ACCEPTED = ("a torch_npu wheel version (2.1.0.post10)", "a branch (v2.1.0-7.2.0)",
            "a TorchNPU release line (7.2.0, 6.0.rc3)", "a CANN version (8.3.RC1 or 'CANN 8.3.RC1')")
KINDS = ("wheel", "branch", "release", "cann")

_BRANCH = re.compile(r"^v?(\d+\.\d+\.\d+)-(\S+)$", re.IGNORECASE)
_CANN_PREFIX = re.compile(r"^\s*cann\b", re.IGNORECASE)


class ReleaseQueryError(CompatError):
    """Text that is none of the accepted forms."""

    def __init__(self, text: str) -> None:
        self.text = text
        super().__init__("not a torch_npu version, branch, release line or CANN version: %r; "
                         "accepted forms: %s" % (text, "; ".join(ACCEPTED)))


def _order(builds: List[Build]) -> List[Build]:
    """GA before hotfix/beta/pre-release; within each, newest PyTorch and wheel first."""
    rank = {"active": 0, "eol": 0, "hotfix": 1, "beta": 2, "prerelease": 3, "unverified": 4}
    newest = sorted(builds, key=lambda b: (b.torch, b.torch_npu), reverse=True)
    return sorted(newest, key=lambda b: rank.get(b.status, 5))


def resolve_torch_npu_release(text: str, kind: Optional[str] = None, include_all: bool = False,
                              matrix: Optional[Matrix] = None) -> List[Build]:
    """Builds meant by ``text`` (see module doc). ``kind`` forces one reading ('wheel',
    'branch', 'release', 'cann'). Release lines and CANN versions return GA builds only unless
    ``include_all``. An accepted form that matches nothing returns []; anything else raises
    ReleaseQueryError (a ValueError)."""
    m = matrix or load_matrix()
    raw = str(text).strip()
    if kind is not None and kind not in KINDS:
        raise CompatError("unknown kind %r; known: %s" % (kind, ", ".join(KINDS)))
    wanted_all = include_all

    def ga(builds: List[Build]) -> List[Build]:
        return _order(builds if wanted_all else [b for b in builds if b.is_ga])

    forced_cann = kind == "cann" or bool(_CANN_PREFIX.match(raw))
    parsed_any = False
    # branch: v2.1.0-7.2.0
    bm = _BRANCH.match(raw)
    if bm and not forced_cann and kind in (None, "branch"):
        rel = try_parse_version(bm.group(2), "torch_npu_release")
        torch = try_parse_version(bm.group(1), "torch")
        if rel is not None and torch is not None:
            parsed_any = True
            hits = [b for b in m.builds if b.branch and b.branch.lower() == ("v%s-%s" % (torch.text, rel.text)).lower()]
            if hits:
                return _order(hits)
            hits = [b for b in m.builds if b.torch == torch and b.release == rel]
            return _order(hits)
    if kind == "branch":
        raise ReleaseQueryError(raw)
    # wheel
    if not forced_cann and kind in (None, "wheel"):
        wheel = try_parse_version(raw, "torch_npu")
        if wheel is not None:
            parsed_any = True
            b = m.build(wheel)
            if b is not None:
                return [b]
            if kind == "wheel":
                return []
    # release line
    if not forced_cann and kind in (None, "release"):
        rel = try_parse_version(raw, "torch_npu_release")
        if rel is not None:
            parsed_any = True
            hits = [b for b in m.builds if b.release == rel or (b.release is None and b.hotfix_of == rel and wanted_all)]
            if hits or kind == "release" or m.release(rel) is not None:
                return ga(hits) if any(b.is_ga for b in hits) else _order(hits)
    # CANN
    if kind in (None, "cann"):
        cann = try_parse_version(raw, "cann")
        if cann is not None:
            parsed_any = True
            cann = m.commercial_cann(cann)
            hits = [b for b in m.builds if b.cann is not None and b.cann.matches(cann)]
            return ga(hits) if any(b.is_ga for b in hits) else _order(hits)
    if parsed_any:
        return []
    raise ReleaseQueryError(raw)


def release_map_row(b: Build) -> Dict[str, Any]:
    """A build as a release-map row: wheel, branch, torch, CANN, release line (plus status)."""
    return {
        "wheel": b.torch_npu.text,
        "branch": b.branch,
        "torch": b.torch.text,
        "cann": ("CANN " + b.cann.text) if b.cann is not None else None,
        "torch_npu_release": b.release.text if b.release is not None else None,
        "status": b.status,
        "on_pypi": b.on_pypi,
        "source": b.source,
    }
