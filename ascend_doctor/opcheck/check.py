"""The lookup and the diff, as functions (no torch needed)."""
from __future__ import annotations

from typing import Any, Dict, List, Optional, Sequence, Tuple

from ascend_doctor.opcheck.classify import OpVerdict, classify
from ascend_doctor.opcheck.diff import Report, build_report
from ascend_doctor.opcheck.manifest import Manifest


def resolve_pair(from_v: str, to_v: str) -> Tuple[Any, Any]:
    """Resolve both version arguments; a release line or CANN version on one side takes
    the PyTorch minor of the other side (upgrading CANN usually keeps PyTorch)."""
    from compat_matrix import op_support

    a = op_support.resolve(from_v)
    b = op_support.resolve(to_v)
    if b.form in ("release", "cann") and a.form in ("wheel", "branch"):
        b = op_support.resolve(to_v, torch=a.release.torch)
    elif a.form in ("release", "cann") and b.form in ("wheel", "branch"):
        a = op_support.resolve(from_v, torch=b.release.torch)
    return a, b


def check(manifest: Manifest, from_v: str, to_v: str) -> Report:
    """Verdicts of every manifest op on both versions and what changes between them.

    Raises ``compat_matrix.op_support.UnknownVersionError`` for a version the data does not know.
    """
    from compat_matrix import op_support

    a, b = resolve_pair(from_v, to_v)
    return build_report(manifest, op_support.load_branch(a.data_key), op_support.load_branch(b.data_key), a.to_json(), b.to_json())


def status_matrix(manifest: Manifest, versions: Optional[Sequence[str]] = None) -> Dict[str, Dict[str, OpVerdict]]:
    """``{branch: {op: verdict}}`` for the given versions (default: every release with data)."""
    from compat_matrix import op_support

    branches: List[str] = []
    for v in versions or [r.branch for r in op_support.releases()]:
        br = op_support.resolve(v).data_key
        if br not in branches:
            branches.append(br)
    return {br: classify(manifest, op_support.load_branch(br)) for br in branches}
