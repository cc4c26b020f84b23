"""What each op of a manifest does on one torch_npu release (no torch needed).

Status of an op on a release, from best to worst:

- ``covered``: every recorded call happens inside a composite op that this release runs
  as one NPU kernel (e.g. the children of ``aten::scaled_dot_product_attention``);
- ``npu``: the release registers an NPU kernel (path: acl_op / op_api / both / torch_npu);
- ``decomposed``: no NPU kernel, but PyTorch has a Composite kernel: the op runs as its
  parts, which are judged on their own ("removed" is not "unsupported");
- ``unknown``: the data cannot tell (an op PyTorch's table does not know, a third-party
  namespace);
- ``tocpu``: op-plugin sends it to the CPU on purpose (torch <= 2.0);
- ``cpu_fallback``: no NPU kernel and no composite: torch_npu's boxed fallback copies the
  inputs to the CPU, runs it there and warns once (torch >= 2.1);
- ``unsupported``: the call fails (torch <= 2.0 without a kernel or with op-plugin's error
  kernel; a torch_npu custom ``npu::`` op the release does not have).
"""
from __future__ import annotations

import functools
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

from ascend_doctor.opcheck.manifest import Manifest, OpEntry

STATUSES = ("covered", "npu", "decomposed", "unknown", "tocpu", "cpu_fallback", "unsupported")
SEVERITY = {s: i for i, s in enumerate(STATUSES)}
ON_CPU = ("tocpu", "cpu_fallback")
WIDE_DTYPES = ("float64", "complex64", "complex128", "complex32")

_NOTES_FILE = Path(__file__).resolve().parent / "data" / "op_notes.yaml"


@functools.lru_cache(maxsize=1)
def op_notes() -> Dict[str, Dict[str, Any]]:
    """Per-op facts from data/op_notes.yaml (device choices, fast paths, field reports)."""
    import yaml

    doc = yaml.safe_load(_NOTES_FILE.read_text(encoding="utf-8")) or {}
    return {n["op"]: n for n in doc.get("notes", [])}


@dataclass
class OpVerdict:
    op: str
    status: str
    path: Optional[str] = None  # NPU path label, e.g. 'acl_op+op_api'
    impl: Tuple[str, ...] = ()
    covered_by: Tuple[str, ...] = ()  # NPU-kernel parents that absorb (some of) its calls
    own_calls: int = 0  # calls that run as this op on this release
    note: Optional[str] = None
    dtype_notes: List[str] = field(default_factory=list)

    def to_json(self) -> Dict[str, Any]:
        out: Dict[str, Any] = {"status": self.status, "own_calls": self.own_calls}
        if self.path:
            out["path"] = self.path
        if self.impl:
            out["impl"] = list(self.impl)
        if self.covered_by:
            out["covered_by"] = list(self.covered_by)
        if self.note:
            out["note"] = self.note
        if self.dtype_notes:
            out["dtype_notes"] = list(self.dtype_notes)
        return out


def _dispatch_info(entry: OpEntry, torch_version: str):
    from compat_matrix import op_support

    if entry.dispatch is not None:
        return op_support.dispatch.from_keys(entry.op, entry.dispatch, torch_version)
    return op_support.dispatch_info(entry.op)


def _own_status(entry: OpEntry, support: Any, torch_version: str) -> OpVerdict:
    """Status of the op itself on this release, ignoring enclosing composite ops."""
    op = entry.op
    ns = op.split("::", 1)[0]
    rel = support.release
    st = support.status(op)
    if ns == "npu":
        if st.npu_kernel:
            return OpVerdict(op, "npu", st.path, st.impl)
        return OpVerdict(op, "unsupported", note=f"torch_npu {rel.release} has no custom op {op} (removed or renamed)")
    if ns != "aten":
        if entry.dispatch and any(k.startswith("Composite") for k in entry.dispatch):
            return OpVerdict(op, "decomposed", note="a device-generic (Composite) kernel of its library runs on the NPU")
        return OpVerdict(
            op,
            "unknown",
            note="not a torch_npu op list entry; unless its library registers an NPU kernel it runs on the CPU "
            "(e.g. torchvision::nms, reported in MinerU issue #1695)",
        )
    if st.kind == "unsupported":
        return OpVerdict(op, "unsupported", impl=st.impl, note=f"op-plugin registers an error kernel for it ('{op.split('::')[1]} is unsupported!')")
    if st.kind == "tocpu":
        return OpVerdict(op, "tocpu", impl=st.impl, note="op-plugin runs it on the CPU on purpose")
    if st.npu_kernel:
        return OpVerdict(op, "npu", st.path, st.impl)
    note = op_notes().get(op)
    if note and note.get("kind") == "device_choice":
        return OpVerdict(op, "decomposed", note=f"chosen by PyTorch only on a CPU device; on the NPU: {note['on_npu']}")
    info = _dispatch_info(entry, torch_version)
    if info is None:
        return OpVerdict(op, "unknown", note=f"PyTorch {torch_version} does not know this op; the data cannot tell")
    if info.composite_implicit:
        return OpVerdict(op, "decomposed", note="PyTorch decomposes it (CompositeImplicit); its parts run as NPU ops")
    if info.composite_explicit:
        return OpVerdict(op, "decomposed", note="PyTorch's device-generic kernel (CompositeExplicit) runs on the NPU and calls other ops")
    if rel.has_cpu_fallback:
        return OpVerdict(op, "cpu_fallback", note="no NPU kernel and no composite kernel: runs on the CPU with copies to and from the NPU")
    return OpVerdict(op, "unsupported", note=f"no NPU kernel, and torch_npu for torch {rel.torch} has no CPU fallback: the call fails")


def classify(manifest: Manifest, support: Any) -> Dict[str, OpVerdict]:
    """Verdict per manifest op on one release (``support``: a compat_matrix OpSupport)."""
    torch_version = str(manifest.recorded.get("torch") or "").split("+")[0] or "?"
    npu_cache: Dict[str, bool] = {}

    def has_npu(op: str) -> bool:
        if op not in npu_cache:
            npu_cache[op] = support.status(op).npu_kernel
        return npu_cache[op]

    out: Dict[str, OpVerdict] = {}
    for entry in manifest.ops:
        own = 0
        covering: List[str] = []
        for ctx in entry.contexts:
            parent = next((p for p in ctx.within if has_npu(p)), None)  # outermost NPU kernel wins
            if parent is None:
                own += ctx.calls
            elif parent not in covering:
                covering.append(parent)
        if own == 0 and covering:
            st = support.status(entry.op)
            v = OpVerdict(entry.op, "covered", st.path if st.npu_kernel else None, st.impl, tuple(covering), 0,
                          note="runs inside " + ", ".join(covering) + " (one NPU kernel)")
        else:
            v = _own_status(entry, support, torch_version)
            v.covered_by = tuple(covering)
            v.own_calls = own
        if v.status not in ("covered", "unknown") and entry.op.startswith("aten::"):
            for dt in entry.all_dtypes:
                if dt in WIDE_DTYPES:
                    v.dtype_notes.append(f"{dt} input: NPU kernels are mostly built for float16/bfloat16/float32; check {dt} support")
                else:
                    st = support.status(entry.op, dtype=dt)
                    if st.dtype_supported is False:
                        v.dtype_notes.append(st.dtype_note or f"{dt} not supported")
        out[entry.op] = v
    return out
