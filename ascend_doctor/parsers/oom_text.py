"""Out-of-memory messages of torch_npu and of PyTorch on CUDA/ROCm, with their numbers.

Templates (https://github.com/Ascend/pytorch/blob/9e73e708ab9350d203475609f36f8a43f6a0c2ab/torch_npu/csrc/core/npu/NPUCachingAllocator.cpp):
torch_npu caching allocator (``...reserved in total by PyTorch) If reserved`` before
26.0.0, ``...PyTorch).If reserved`` after), the fraction-limit rejection, the 1 EB
guard, the workspace allocator, GE's first-op ``NPU out of memory. device id: N``,
pinned host memory (``Rried`` is in the original); CUDA's "cached" (1.0-1.3),
"reserved in total" (1.4-2.0) and "GPU d has a total capacity" (2.1+) forms, the last
also as ROCm's ``HIP out of memory``.

``classify`` applies the decision rules
(``ascend_doctor.core.oom``) and returns the shared category; ``reading`` gives
the numbers with their printing error for callers that want the full decision.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from typing import Dict, List, Optional, Tuple

from ..core.oom import Decision, Reading, judge
from ..core.units import Size, parse_size
from ..inputs import int_or_none as num
from ..inputs import size_bytes
from ..lazyre import lazy

_SIZE = r"[\d.]+ (?:bytes|B|KiB|MiB|GiB|TiB|KB|MB|GB)"
_UNITS = {"bytes": 1, "B": 1, "KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30, "TiB": 1 << 40,
          "KB": 1 << 10, "MB": 1 << 20, "GB": 1 << 30}

# the head ("NPU out of memory. ") is optional: reports often quote only the part with the numbers
_NPU = lazy(
    r"(?:NPU out of memory\. )?Tried to allocate (?P<req>" + _SIZE + r") \(NPU (?P<dev>\d+); (?P<total>" + _SIZE + r") total capacity; "
    r"(?P<alloc>" + _SIZE + r") already allocated; (?P<active>" + _SIZE + r") current active; (?P<free>" + _SIZE + r") free; "
    r"(?:(?P<allowed>" + _SIZE + r") allowed; )?(?P<reserved>" + _SIZE + r") reserved in total by PyTorch\)(?P<tail>\.?)"
)
# the same text cut short (issue titles, truncated log lines): whatever fields survive
_NPU_PARTIAL = lazy(
    r"NPU out of memory\. Tried to allocate (?P<req>" + _SIZE + r") \(NPU (?P<dev>\d+); (?P<total>" + _SIZE + r") total capacity;"
    r"(?: (?P<alloc>" + _SIZE + r") already allocated;)?(?: (?P<active>" + _SIZE + r") current active;)?"
    r"(?: (?P<free>" + _SIZE + r") free;)?"
)
_NPU_FRACTION = lazy(r"NPU out of memory\. Allocation was preemptively rejected because it would exceed per_process_memory_fraction limit\.(?: Requested size: (?P<req>" + _SIZE + r"))?")
_NPU_HUGE = lazy(r"NPU out of memory\. Tried to allocate more than 1EB memory")
_NPU_WORKSPACE = lazy(
    r"NPU out of memory\. NPUWorkspaceAllocator tried to allocate (?P<req>" + _SIZE + r") ?\(NPU (?P<dev>\d+); (?P<total>" + _SIZE + r") total capacity; (?P<free>" + _SIZE + r") free\)"
)
_NPU_GE = lazy(r"NPU out of memory\. device id: (?P<dev>\d+)")
_HOST_PIN = lazy(r"Malloc pin memory failed, host out of memory, R[r]?ied to allocate size: ?(?P<req>[\w. ]+)")
_CUDA_OLD = lazy(
    r"(?:(?P<flavor>CUDA|HIP) out of memory\. )?Tried to allocate (?P<req>" + _SIZE + r") \(GPU (?P<dev>\d+); (?P<total>" + _SIZE + r") total capacity; "
    r"(?P<alloc>" + _SIZE + r") already allocated; (?P<free>" + _SIZE + r") free; "
    r"(?:(?P<cached>" + _SIZE + r") cached|(?:(?P<allowed>" + _SIZE + r") allowed; )?(?P<reserved>" + _SIZE + r") reserved in total by PyTorch)\)"
)
_CUDA_NEW = lazy(
    r"(?:(?P<flavor>CUDA|HIP) out of memory\. )?Tried to allocate (?P<req>" + _SIZE + r")\. GPU (?P<dev>\d+) has a total capac(?:i)?ty of (?P<total>" + _SIZE + r") "
    r"of which (?P<free>" + _SIZE + r") is free\.(?P<middle>.*?)Of the allocated memory (?P<alloc>" + _SIZE + r") is allocated by PyTorch, "
    r"(?:with (?P<private>" + _SIZE + r") allocated in private pools \(e\.g\., CUDA Graphs\), )?and (?P<unalloc>" + _SIZE + r") is reserved by PyTorch but unallocated"
)
_CUDA_BARE = lazy(r"(?:CUDA|HIP) out of memory\.")
# the caching allocator's message retyped or re-wrapped by hand (a doc's "Tried to allocated",
# "current activate", a line break inside the parentheses): each field read on its own
# (the lookbehind keeps a size field linear on long digit runs)
_LOOSE_FIELDS = {
    "req": lazy(r"Tried to allocated? (?P<v>" + _SIZE + r")"),
    "dev": lazy(r"\((?P<flavor>NPU|GPU) (?P<v>\d+);"),
    "total": lazy(r"(?<![\d.])(?P<v>" + _SIZE + r") total capacity"),
    "alloc": lazy(r"(?<![\d.])(?P<v>" + _SIZE + r") already allocated"),
    "free": lazy(r"(?<![\d.])(?P<v>" + _SIZE + r") free\b"),
    "reserved": lazy(r"(?<![\d.])(?P<v>" + _SIZE + r") reserved in total by PyTorch"),
}
# a summary printed over lines by a serving framework (vLLM PR 37428,
# https://github.com/vllm-project/vllm/pull/37428): "GPU has 19.53 GiB total, 329.87 MiB free.",
# "PyTorch allocated: 18.40 GiB", "Reserved but unallocated: 402.27 MiB"
_SUMMARY_FIELDS = {
    "total": lazy(r"(?<![\d.])(?P<v>" + _SIZE + r") total,"),
    "alloc": lazy(r"PyTorch allocated: (?P<v>" + _SIZE + r")"),
    "unalloc": lazy(r"Reserved but unallocated: (?P<v>" + _SIZE + r")"),
}
# 2.1+ CUDA text: every process on the GPU ("Process 445260 has 36.53 GiB memory in use."),
# or only this one ("Including non-PyTorch memory, this process has 74.08 GiB memory in use.")
_CUDA_PROCESS = lazy(r"Process (?P<pid>\d+) has (?P<size>" + _SIZE + r") memory in use")
_CUDA_SELF = lazy(r"this process has (?P<size>" + _SIZE + r") memory in use")
_CUDA_ALLOWED = lazy(r"(?<![\d.])(?P<allowed>" + _SIZE + r") allowed;")  # lookbehind: linear on digit runs
_EXCEPTION = lazy(r"(?P<exc>(?:torch\.(?:cuda\.)?)?OutOfMemoryError|RuntimeError):\s*(?:NPU|CUDA|HIP) out of memory")


def size_to_bytes(text: Optional[str]) -> Optional[int]:
    if not text:
        return None
    number, _, unit = text.strip().partition(" ")
    try:
        return size_bytes(number, _UNITS.get(unit, 1))  # 1e400 GiB saturates, never overflows
    except ValueError:
        return None


@dataclass
class OomRecord:
    kind: str  # npu | npu_fraction | npu_huge | npu_workspace | npu_ge | host_pinned | cuda
    template: str  # npu_pre26 | npu_26 | npu_partial | cuda_cached | cuda_reserved | cuda_2x | loose | other
    text: str
    device: Optional[int] = None
    requested: Optional[int] = None  # bytes
    total: Optional[int] = None
    allocated: Optional[int] = None
    active: Optional[int] = None
    free: Optional[int] = None
    allowed: Optional[int] = None
    reserved: Optional[int] = None
    exception: Optional[str] = None  # RuntimeError | torch.OutOfMemoryError | torch.cuda.OutOfMemoryError
    private_pools: Optional[int] = None  # CUDA 2.2+: allocated in private pools (CUDA Graphs)
    process_in_use: Optional[int] = None  # CUDA 2.x: memory this process uses, PyTorch or not
    processes: List[Tuple[int, int]] = field(default_factory=list)  # CUDA 2.1: (pid, bytes) per process
    raw: Dict[str, str] = field(default_factory=dict)  # the printed sizes, for their rounding error

    @property
    def reserved_unallocated(self) -> Optional[int]:
        if self.reserved is None or self.allocated is None:
            return None
        return max(self.reserved - self.allocated, 0)

    @property
    def flavor(self) -> str:
        """``npu`` or ``cuda`` (ROCm's HIP texts are PyTorch's CUDA allocator)."""
        return "cuda" if self.kind == "cuda" else "npu"


def _sizes(m: "re.Match[str]", names: Tuple[str, ...]) -> Dict[str, str]:
    return {n: m.group(n) for n in names if m.group(n)}


def parse_oom(text: str) -> Optional[OomRecord]:
    """The OOM record in a line, or None."""
    if "out of memory" not in text and "Tried to allocate" not in text:
        return None
    exc_m = _EXCEPTION.search(text)
    exc = exc_m.group("exc") if exc_m else None
    m = _NPU.search(text)
    if m:
        return OomRecord(
            kind="npu", template="npu_26" if m.group("tail") == "." else "npu_pre26", text=text.strip(),
            device=num(m.group("dev")), requested=size_to_bytes(m.group("req")), total=size_to_bytes(m.group("total")),
            allocated=size_to_bytes(m.group("alloc")), active=size_to_bytes(m.group("active")),
            free=size_to_bytes(m.group("free")), allowed=size_to_bytes(m.group("allowed")),
            reserved=size_to_bytes(m.group("reserved")), exception=exc,
            raw=_sizes(m, ("req", "total", "alloc", "active", "free", "allowed", "reserved")),
        )
    m = _NPU_PARTIAL.search(text)
    if m:
        return OomRecord(
            kind="npu", template="npu_partial", text=text.strip(), device=num(m.group("dev")),
            requested=size_to_bytes(m.group("req")), total=size_to_bytes(m.group("total")),
            allocated=size_to_bytes(m.group("alloc")), active=size_to_bytes(m.group("active")),
            free=size_to_bytes(m.group("free")), exception=exc,
            raw=_sizes(m, ("req", "total", "alloc", "active", "free")),
        )
    m = _NPU_WORKSPACE.search(text)
    if m:
        return OomRecord(kind="npu_workspace", template="other", text=text.strip(), device=num(m.group("dev")),
                         requested=size_to_bytes(m.group("req")), total=size_to_bytes(m.group("total")),
                         free=size_to_bytes(m.group("free")), exception=exc, raw=_sizes(m, ("req", "total", "free")))
    m = _NPU_FRACTION.search(text)
    if m:
        return OomRecord(kind="npu_fraction", template="other", text=text.strip(), requested=size_to_bytes(m.group("req")),
                         exception=exc, raw=_sizes(m, ("req",)))
    if _NPU_HUGE.search(text):
        return OomRecord(kind="npu_huge", template="other", text=text.strip(), exception=exc)
    m = _NPU_GE.search(text)
    if m:
        return OomRecord(kind="npu_ge", template="other", text=text.strip(), device=num(m.group("dev")), exception=exc)
    m = _HOST_PIN.search(text)
    if m:
        return OomRecord(kind="host_pinned", template="other", text=text.strip(), exception=exc)
    m = _CUDA_NEW.search(text)
    if m:
        alloc = size_to_bytes(m.group("alloc")) or 0
        unalloc = size_to_bytes(m.group("unalloc")) or 0
        private = size_to_bytes(m.group("private")) or 0
        middle = m.group("middle") or ""
        allowed_m = _CUDA_ALLOWED.search(middle)
        self_m = _CUDA_SELF.search(middle)
        raw = _sizes(m, ("req", "total", "free", "alloc", "unalloc", "private"))
        if allowed_m:
            raw["allowed"] = allowed_m.group("allowed")
        return OomRecord(kind="cuda", template="cuda_2x", text=text.strip(), device=num(m.group("dev")),
                         requested=size_to_bytes(m.group("req")), total=size_to_bytes(m.group("total")),
                         # "allocated by PyTorch" includes private pools; "reserved but unallocated" is the
                         # rest of reserved outside them
                         allocated=alloc, free=size_to_bytes(m.group("free")), reserved=alloc + unalloc,
                         allowed=size_to_bytes(allowed_m.group("allowed")) if allowed_m else None,
                         exception=exc, private_pools=private or None,
                         process_in_use=size_to_bytes(self_m.group("size")) if self_m else None,
                         processes=[(num(p.group("pid")), size_to_bytes(p.group("size")) or 0)
                                    for p in _CUDA_PROCESS.finditer(middle)],
                         raw=raw)
    m = _CUDA_OLD.search(text)
    if m:
        cached = m.group("cached")
        raw = _sizes(m, ("req", "total", "alloc", "free", "allowed", "reserved"))
        alloc = size_to_bytes(m.group("alloc"))
        reserved = size_to_bytes(m.group("reserved"))
        if cached:
            # 1.0-1.3 printed amount_cached - amount_allocated as "cached": the unused part, not reserved
            # (PR 13751; https://github.com/pytorch/pytorch/blob/v1.1.0/c10/cuda/CUDACachingAllocator.cpp)
            raw["unalloc"] = cached
            reserved = (alloc or 0) + (size_to_bytes(cached) or 0)
        return OomRecord(kind="cuda", template="cuda_cached" if cached else "cuda_reserved", text=text.strip(),
                         device=num(m.group("dev")), requested=size_to_bytes(m.group("req")),
                         total=size_to_bytes(m.group("total")), allocated=alloc,
                         free=size_to_bytes(m.group("free")), allowed=size_to_bytes(m.group("allowed")),
                         reserved=reserved, exception=exc, raw=raw)
    loose = _parse_loose(text, exc)
    if loose is not None:
        return loose
    if "NPU out of memory" in text:
        return OomRecord(kind="npu", template="other", text=text.strip(), exception=exc)
    if _CUDA_BARE.search(text):
        return OomRecord(kind="cuda", template="other", text=text.strip(), exception=exc)
    return None


def _parse_loose(text: str, exc: Optional[str]) -> Optional[OomRecord]:
    """The fields of a hand-edited message, when it still names the request, the device and reserved."""
    found = {k: pat.search(text) for k, pat in _LOOSE_FIELDS.items()}
    if found["req"] is not None and found["dev"] is None and "Reserved but unallocated" in text:
        return _parse_summary(text, exc, found)
    if found["req"] is None or found["dev"] is None or found["reserved"] is None:
        return None
    raw = {k: m.group("v") for k, m in found.items() if m is not None and k != "dev"}
    kind = "npu" if found["dev"].group("flavor") == "NPU" else "cuda"
    return OomRecord(kind=kind, template="loose", text=text.strip(), device=num(found["dev"].group("v")),
                     requested=size_to_bytes(raw.get("req")), total=size_to_bytes(raw.get("total")),
                     allocated=size_to_bytes(raw.get("alloc")), free=size_to_bytes(raw.get("free")),
                     reserved=size_to_bytes(raw.get("reserved")), exception=exc, raw=raw)


def _parse_summary(text: str, exc: Optional[str], found: Dict[str, Optional["re.Match[str]"]]) -> Optional[OomRecord]:
    more = {k: pat.search(text) for k, pat in _SUMMARY_FIELDS.items()}
    if more["alloc"] is None or more["unalloc"] is None:
        return None
    raw = {k: m.group("v") for k, m in {**found, **more}.items() if m is not None and k in ("req", "free", "total", "alloc", "unalloc")}
    alloc = size_to_bytes(raw["alloc"]) or 0
    kind = "npu" if "NPU" in text else "cuda"
    return OomRecord(kind=kind, template="cuda_2x", text=text.strip(), requested=size_to_bytes(raw.get("req")),
                     total=size_to_bytes(raw.get("total")), allocated=alloc, free=size_to_bytes(raw.get("free")),
                     reserved=alloc + (size_to_bytes(raw["unalloc"]) or 0), exception=exc, raw=raw)


def continues(line: bytes) -> bool:
    """Whether a raw line may be an allocator message that goes on over the next lines
    (cheap and loose: ``WrappedOom.begin`` decides)."""
    return b"Tried to allocate" in line and b"reserved" not in line


class WrappedOom:
    """An allocator message broken over a few lines (a narrow terminal, a hand-wrapped paste):
    the lines after a cut "Tried to allocate ..." are joined until the message is whole."""

    LINES = 3

    def __init__(self) -> None:
        self.start = 0  # the line the message begins on
        self.text = ""
        self.left = 0

    def begin(self, lineno: int, text: str) -> None:
        """Start joining after ``text`` if it is a message cut before its end."""
        if "Tried to allocate" not in text:
            return
        rec = parse_oom(text)
        if rec is None or rec.reserved is None:
            self.start, self.text, self.left = lineno, text.strip(), self.LINES

    def feed(self, text: str) -> Optional[OomRecord]:
        """Join one more line; the record once the message is whole."""
        if not self.left:
            return None
        self.left -= 1
        self.text += " " + text.strip()
        rec = parse_oom(self.text)
        if rec is None or rec.reserved is None:
            return None
        self.left = 0
        return rec


def reading(rec: OomRecord) -> Reading:
    """The record's numbers for ``core.oom.judge``, each with its printing error."""
    def size(key: str, value: Optional[int]) -> Optional[Size]:
        parsed = parse_size(rec.raw.get(key))
        if parsed is not None:
            return parsed
        return Size(value) if value is not None else None

    reserved = size("reserved", rec.reserved)
    if rec.template in ("cuda_2x", "cuda_cached") and rec.allocated is not None:
        # the 2.x and the 1.0-1.3 ("cached") texts give the unused part, not reserved: carry both errors into reserved
        unalloc = parse_size(rec.raw.get("unalloc"))
        alloc = parse_size(rec.raw.get("alloc"))
        if unalloc is not None and alloc is not None:
            reserved = Size(rec.reserved or 0, unalloc.error + alloc.error)
    others = None
    if rec.processes and rec.total is not None:
        # the 2.1 text lists every process; ours is the one closest to what PyTorch reserved
        mine = min(rec.processes, key=lambda p: abs(p[1] - (rec.reserved or 0)))
        others = sum(b for pid, b in rec.processes if pid != mine[0])
    elif rec.process_in_use is not None and rec.total is not None and rec.free is not None:
        others = max(rec.total - rec.free - rec.process_in_use, 0)
    return Reading(
        requested=size("req", rec.requested), free=size("free", rec.free),
        allocated=size("alloc", rec.allocated), reserved=reserved, total=size("total", rec.total),
        allowed=size("allowed", rec.allowed), others=others,
    )


def classify(rec: OomRecord, framework_reserved: bool = False) -> str:
    """The shared category of an OOM record: ``oom_fragmentation`` when cached-but-unusable
    memory could have served the request, ``device_busy_permission`` when most of the device is
    held outside this process (``ascend-doctor oom`` names that case ``external``), else
    ``oom_capacity``. ``framework_reserved``: the text around it shows that the framework
    pre-reserves most of the device itself (KV cache, memory utilization)."""
    decision = decide(rec, framework_reserved)
    return decision.category if decision is not None else "oom_capacity"


def decide(rec: OomRecord, framework_reserved: bool = False) -> Optional[Decision]:
    """The judgement of an allocator record (None for kinds without the allocator's numbers)."""
    if rec.kind not in ("npu", "cuda", "npu_workspace"):
        return None
    return judge(replace(reading(rec), framework_reserved=framework_reserved))
