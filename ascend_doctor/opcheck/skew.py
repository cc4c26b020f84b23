"""Warn when the PyTorch that recorded a manifest is not the PyTorch of a compared line.

The op list, the call counts and (for recorded ops) the dispatch keys that decide
"decomposed by PyTorch" / "unknown" come from the PyTorch that ran the recording; ops without
recorded keys are judged with the shipped aten dispatch table of one PyTorch. A torch_npu line
is built for its own PyTorch minor, whose registrations can differ, so a verdict taken across
minors can be wrong in ways the text below names.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Dict, Mapping, Optional

from ascend_doctor.opcheck.manifest import Manifest
from compat_matrix.versions import parse_version, try_parse_version


@dataclass(frozen=True)
class TorchSkew:
    """Which PyTorch minors disagree, and the warning to print."""

    recorded: Optional[str]  # major.minor of the recording PyTorch (None: the manifest does not say)
    dispatch: Optional[str]  # major.minor whose dispatch data decides composite / unknown
    dispatch_from: str  # "recording" or "shipped table"
    source: Optional[str]  # major.minor the --from line is built for
    target: Optional[str]  # major.minor the --to line is built for
    note: str

    def to_json(self) -> Dict[str, Any]:
        return {"recorded_torch": self.recorded, "dispatch_torch": self.dispatch, "dispatch_from": self.dispatch_from,
                "from_torch": self.source, "to_torch": self.target, "note": self.note}


def minor(version: Any) -> Optional[str]:
    """``'2.13.0+cpu'`` -> ``'2.13'``; None when there is no X.Y to read."""
    v = None if version is None else try_parse_version(version, "torch")
    return None if v is None else "%d.%d" % v.series


def _table_minor() -> Optional[str]:
    from compat_matrix.op_support import dispatch

    try:
        return minor(dispatch.table_torch_version())
    except Exception:  # noqa: BLE001 - an unreadable table is reported where it is used
        return None


def torch_skew(manifest: Manifest, source: Mapping[str, Any], target: Mapping[str, Any]) -> Optional[TorchSkew]:
    """The warning for this comparison, or None when every PyTorch minor agrees."""
    recorded = minor((manifest.recorded or {}).get("torch"))
    with_keys = sum(1 for e in manifest.ops if e.dispatch is not None)
    if with_keys and recorded:
        dispatch, dispatch_from = recorded, "recording"
    else:
        dispatch, dispatch_from = _table_minor(), "shipped table"
    judged_with = recorded or dispatch
    src, dst = minor(source.get("torch")), minor(target.get("torch"))
    differ = [(side, v) for side, v in (("--from", src), ("--to", dst)) if v and judged_with and v != judged_with]
    if not differ:
        return None
    olds = sorted({v for _, v in differ}, key=lambda t: parse_version(t, "torch"))
    if len(differ) == 2 and differ[0][1] == differ[1][1]:
        lines = "both lines are built for torch %s" % differ[0][1]
    else:
        lines = " and the ".join("%s line is built for torch %s" % (side, v) for side, v in differ)
        lines = "the " + lines
    if recorded:
        head = "the manifest was recorded with torch %s, but %s" % (recorded, lines)
    else:
        head = "the manifest does not say which torch recorded it, and %s" % lines
    if dispatch_from == "shipped table" and dispatch:
        head += "; ops without recorded dispatch keys are judged with torch %s's dispatch table" % dispatch
    old = " / ".join(olds)
    what = (
        ". Verdicts taken across PyTorch minors can be wrong: an op the recording torch runs through a Composite "
        "kernel may have none in torch %(old)s, so 'decomposed by PyTorch' can really be a CPU fallback or a "
        "failure there (and the reverse); an op torch %(old)s does not define shows as 'unknown'; and the op list "
        "and call counts follow the recording torch's eager paths, so ops the model calls under torch %(old)s can "
        "be missing or extra. For exact verdicts record again under the torch of each line (e.g. pip install "
        "torch==%(pin)s in a scratch environment)."
    ) % {"old": old, "pin": _pin(olds[0], source, target)}
    return TorchSkew(recorded, dispatch, dispatch_from, src, dst, head + what)


def _pin(minor_version: str, source: Mapping[str, Any], target: Mapping[str, Any]) -> str:
    """The full torch version to install for a line: the wheel's X.Y.Z, else X.Y.*."""
    for side in (source, target):
        wheel = str(side.get("wheel") or "")
        if minor(wheel) == minor_version:
            return parse_version(wheel, "torch_npu").base.text
    return minor_version + ".*"
