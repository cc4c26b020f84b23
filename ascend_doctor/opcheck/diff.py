"""Compare a manifest's verdicts on two releases and sum them up for a platform team."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Tuple

from ascend_doctor.opcheck.choices import FailOn
from ascend_doctor.opcheck.classify import ON_CPU, OpVerdict, classify, op_notes
from ascend_doctor.opcheck.manifest import Manifest, OpEntry
from ascend_doctor.opcheck.skew import TorchSkew, torch_skew

# change kind -> impact group shown in the summary
CHANGE_IMPACT = {
    "newly_unsupported": "breaks",
    "still_unsupported": "breaks",
    "newly_fallback": "slower",
    "still_fallback": "on_cpu",
    "fallback_fixed": "faster",
    "newly_supported": "faster",
    "removed_but_decomposed": "test",
    "newly_npu_kernel": "test",
    "now_covered": "test",
    "no_longer_covered": "test",
    "path_changed": "test",
    "dtype_warning": "test",
    "unknown": "test",
}
IMPACTS = ("breaks", "slower", "on_cpu", "test", "faster")


@dataclass
class OpChange:
    op: str
    calls: int
    before: OpVerdict
    after: OpVerdict
    change: Optional[str] = None
    why: str = ""
    hint: Optional[str] = None
    children: List[Tuple[str, str]] = field(default_factory=list)  # (op, status on target) for decomposed ops
    parent: Optional[str] = None  # for now_covered / no_longer_covered: the composite op that changed
    detail: Optional[str] = None  # for path_changed: what changed, without the op's own paths

    @property
    def impact(self) -> Optional[str]:
        return CHANGE_IMPACT.get(self.change) if self.change else None

    def to_json(self) -> Dict[str, Any]:
        out: Dict[str, Any] = {
            "op": self.op,
            "calls": self.calls,
            "from": self.before.to_json(),
            "to": self.after.to_json(),
            "change": self.change,
            "impact": self.impact,
        }
        if self.why:
            out["why"] = self.why
        if self.hint:
            out["hint"] = self.hint
        if self.children:
            out["children"] = [{"op": o, "status": s} for o, s in self.children]
        if self.parent:
            out["parent"] = self.parent
        return out


# The kernel variants that decide which path runs; dvm (lazy fusion), sparse and
# internal_format_opapi variants are extras that do not change the default path.
CORE_IMPLS = frozenset({"acl_op", "op_api", "torch_npu"})


def _path_change(a: OpVerdict, b: OpVerdict) -> Optional[str]:
    ia, ib = set(a.impl) & CORE_IMPLS, set(b.impl) & CORE_IMPLS
    if ia == ib:
        return None
    bits = []
    if "acl_op" in ia and "acl_op" not in ib:
        bits.append("acl_op dropped: with jit_compile=True, private-format (e.g. NZ) inputs or on chips that "
                    "default to acl_op (Atlas training/inference series) this op now needs the aclnn path")
    if "op_api" in ib and "op_api" not in ia:
        bits.append("op_api (aclnn) added: on A2/A3 with jit_compile=False (their default) it now takes the aclnn path")
    if "op_api" in ia and "op_api" not in ib:
        bits.append("op_api (aclnn) removed: it runs through acl_op, compiled on first use")
    if "acl_op" in ib and "acl_op" not in ia:
        bits.append("acl_op added")
    if "torch_npu" in ia and "torch_npu" not in ib:
        bits.append("kernel moved from torch_npu into op-plugin")
    if "torch_npu" in ib and "torch_npu" not in ia:
        bits.append("kernel moved into torch_npu")
    return f"{a.path} -> {b.path}: " + "; ".join(bits)


def _children(op: str, manifest: Manifest, after: Dict[str, OpVerdict]) -> List[Tuple[str, str]]:
    """Ops recorded directly inside ``op`` and their status on the target."""
    out: List[Tuple[str, str]] = []
    for e in manifest.ops:
        if any(c.within and c.within[-1] == op for c in e.contexts):
            out.append((e.op, after[e.op].status))
    return out


def compare(manifest: Manifest, before: Dict[str, OpVerdict], after: Dict[str, OpVerdict]) -> List[OpChange]:
    """What changes for each op of ``manifest`` between its verdicts ``before`` and ``after``."""
    changes = [_explain(OpChange(e.op, e.calls, a, b, change=_transition(a, b)), e, manifest, after)
               for e, a, b in _statuses(manifest, before, after)]
    _fold_into_parents(changes)
    return changes


def _statuses(manifest: Manifest, before: Dict[str, OpVerdict],
              after: Dict[str, OpVerdict]) -> List[Tuple[OpEntry, OpVerdict, OpVerdict]]:
    """Each op of the manifest (by name) with its verdict on both versions."""
    return [(e, before[e.op], after[e.op]) for e in sorted(manifest.ops, key=lambda e: e.op)]


def _transition(a: OpVerdict, b: OpVerdict) -> Optional[str]:
    """The kind of change from verdict ``a`` to ``b`` (a key of CHANGE_IMPACT), None when the
    op runs the same way; dtype notes are added afterwards (``_explain``)."""
    if b.status == "unsupported":
        return "still_unsupported" if a.status == "unsupported" else "newly_unsupported"
    if b.status in ON_CPU:
        return "still_fallback" if a.status in ON_CPU else "newly_fallback"
    if a.status in ON_CPU:
        return "fallback_fixed"
    if a.status == "unsupported":
        return "newly_supported"
    if a.status == "npu" and b.status == "decomposed":
        return "removed_but_decomposed"
    if a.status == "decomposed" and b.status == "npu":
        return "newly_npu_kernel"
    if b.status == "covered" and a.status != "covered":
        return "now_covered"
    if a.status == "covered" and b.status != "covered":
        return "no_longer_covered"
    if a.status == "npu" and b.status == "npu":
        return "path_changed" if _path_change(a, b) else None
    if b.status == "unknown" and a.status != "unknown":
        return "unknown"
    return None


def _explain(ch: OpChange, entry: OpEntry, manifest: Manifest, after: Dict[str, OpVerdict]) -> OpChange:
    """Fill in why ``ch`` happens (and its parts, parent or path detail), the target's dtype
    notes and the op's hint."""
    a, b, kind = ch.before, ch.after, ch.change
    now = f"now {b.status}" + (f" ({b.path})" if b.path else "")
    if kind in ("still_unsupported", "newly_unsupported"):
        ch.why = b.note or "fails on the target"
    elif kind in ("still_fallback", "newly_fallback"):
        was = f"{a.status} ({a.path})" if a.path else a.status
        ch.why = (b.note or "runs on the CPU") + ("" if a.status in ON_CPU else f"; was {was}")
    elif kind in ("fallback_fixed", "newly_supported"):
        ch.why = now
    elif kind == "removed_but_decomposed":
        ch.why = "no NPU kernel on the target any more; " + (b.note or "PyTorch decomposes it")
        ch.children = _children(entry.op, manifest, after)
        if not ch.children and entry.level == "kernel":
            ch.why += " (its parts were not recorded: record again with this ascend-doctor to list them)"
    elif kind == "newly_npu_kernel":
        ch.why = f"runs as one NPU kernel ({b.path}) instead of its parts"
    elif kind == "now_covered":
        ch.parent = b.covered_by[0]
        ch.why = "absorbed into " + ", ".join(b.covered_by) + ", which now has an NPU kernel"
    elif kind == "no_longer_covered":
        lost = [p for p in a.covered_by if p not in b.covered_by] or list(a.covered_by)
        ch.parent = lost[0]
        ch.why = (f"{', '.join(lost)} {'has' if len(lost) == 1 else 'have'} no NPU kernel on the target; "
                  f"runs on its own as {b.status}" + (f" ({b.path})" if b.path else ""))
    elif kind == "path_changed":
        ch.why = _path_change(a, b) or ""
        ch.detail = ch.why.split(": ", 1)[1]
    elif kind == "unknown":
        ch.why = b.note or ""
    if kind is None and b.dtype_notes:
        ch.change, ch.why = "dtype_warning", "; ".join(b.dtype_notes)
    elif b.dtype_notes:
        ch.why = (ch.why + "; " if ch.why else "") + "; ".join(b.dtype_notes)
    note = op_notes().get(entry.op)
    if note and ch.change and note.get("hint"):
        ch.hint = note["hint"]
    return ch


def _fold_into_parents(changes: List[OpChange]) -> None:
    """Put an absorbed or released op under the composite op whose own change explains it."""
    changed = {c.op for c in changes if c.change and c.change not in ("now_covered", "no_longer_covered")}
    for c in changes:
        if c.change in ("now_covered", "no_longer_covered"):
            pool = c.after.covered_by if c.change == "now_covered" else c.before.covered_by
            c.parent = next((p for p in pool if p in changed), c.parent)


@dataclass
class Report:
    manifest: Manifest
    source: Dict[str, Any]  # resolution of --from
    target: Dict[str, Any]  # resolution of --to
    changes: List[OpChange]
    before: Dict[str, OpVerdict]
    after: Dict[str, OpVerdict]
    notes: List[str] = field(default_factory=list)
    skew: Optional[TorchSkew] = None  # the recording PyTorch is not the PyTorch of a compared line

    def group(self, impact: str) -> List[OpChange]:
        return [c for c in self.changes if c.impact == impact]

    @property
    def verdict(self) -> str:
        if self.group("breaks"):
            return "breaks"
        if any(c.change == "newly_fallback" for c in self.changes):
            return "slower"
        if any(c.change for c in self.changes if c.change != "still_fallback"):
            return "changes"
        return "same"

    def counts(self, which: Dict[str, OpVerdict]) -> Dict[str, int]:
        out: Dict[str, int] = {}
        for v in which.values():
            out[v.status] = out.get(v.status, 0) + 1
        return out

    def exit_code(self, fail_on: str = FailOn.UNSUPPORTED) -> int:
        if self.group("breaks"):
            return 1
        if fail_on in (FailOn.FALLBACK, FailOn.CHANGE) and any(c.after.status in ON_CPU for c in self.changes):
            return 1
        if fail_on == FailOn.CHANGE and any(c.change for c in self.changes):
            return 1
        return 0

    def to_json(self) -> Dict[str, Any]:
        m = self.manifest
        return {
            "schema": 1,
            "manifest": {
                "path": m.path,
                "ops": len(m.ops),
                "calls": m.total_calls,
                "recorded": m.recorded,
            },
            "from": self.source,
            "to": self.target,
            "verdict": self.verdict,
            "summary": {
                "breaks": [c.op for c in self.group("breaks")],
                "slower": [c.op for c in self.group("slower")],
                "on_cpu_in_both": [c.op for c in self.group("on_cpu")],
                "to_test": [c.op for c in self.group("test")],
                "faster": [c.op for c in self.group("faster")],
                "from_counts": self.counts(self.before),
                "to_counts": self.counts(self.after),
            },
            "ops": [dict(c.to_json(), source={"from": self.source.get("source"), "to": self.target.get("source")})
                    for c in self.changes],
            "notes": list(self.notes),
            "torch_skew": self.skew.to_json() if self.skew else None,
        }


def build_report(manifest: Manifest, before_support: Any, after_support: Any,
                 source: Dict[str, Any], target: Dict[str, Any]) -> Report:
    before = classify(manifest, before_support)
    after = classify(manifest, after_support)
    notes: List[str] = []
    rec = manifest.recorded
    if rec and rec.get("complete") is False:
        notes.append(f"the recording did not finish ({rec.get('error') or 'unknown error'}): ops after that point are missing")
    if rec and rec.get("composite_parents") is False:
        notes.append("recorded without composite parents (older PyTorch or disabled): ops torch_npu runs as one kernel "
                     "(matmul, scaled_dot_product_attention) show up as their CPU parts")
    if rec.get("mode") == "meta":
        notes.append("recorded on the meta device: PyTorch's eager fast paths (e.g. eval TransformerEncoderLayer) were not taken")
    for r in (source, target):
        if r.get("note"):
            notes.append(r["note"])
    skew = torch_skew(manifest, source, target)
    if skew is not None:
        notes.insert(0, skew.note)  # first: it qualifies every verdict below
    return Report(manifest, source, target, compare(manifest, before, after), before, after, notes, skew)
