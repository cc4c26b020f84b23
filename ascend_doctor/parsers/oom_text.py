"""Out-of-memory messages of torch_npu and of PyTorch on CUDA, with their numbers.

Templates (shared/reference/formats-plog-errors.md §4.4, memory-fragmentation.md §2):
torch_npu caching allocator (``...reserved in total by PyTorch) If reserved`` before
26.0.0, ``...PyTorch).If reserved`` after), the fraction-limit rejection, the 1 EB
guard, the workspace allocator, GE's first-op ``NPU out of memory. device id: N``,
pinned host memory (``Rried`` is in the original); CUDA's "cached" (1.0-1.3),
"reserved in total" (1.4-2.0) and "GPU d has a total capacity" (2.1+) forms.

``classify`` applies the decision rules of memory-fragmentation.md §2.4 to the
numbers: cached-but-unusable memory at least as large as the request means
fragmentation; otherwise the device is full (capacity).
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Optional

_SIZE = r"[\d.]+ (?:bytes|B|KiB|MiB|GiB|TiB|KB|MB|GB)"
_UNITS = {"bytes": 1, "B": 1, "KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30, "TiB": 1 << 40,
          "KB": 1 << 10, "MB": 1 << 20, "GB": 1 << 30}

_NPU = re.compile(
    r"NPU out of memory\. Tried to allocate (?P<req>" + _SIZE + r") \(NPU (?P<dev>\d+); (?P<total>" + _SIZE + r") total capacity; "
    r"(?P<alloc>" + _SIZE + r") already allocated; (?P<active>" + _SIZE + r") current active; (?P<free>" + _SIZE + r") free; "
    r"(?:(?P<allowed>" + _SIZE + r") allowed; )?(?P<reserved>" + _SIZE + r") reserved in total by PyTorch\)(?P<tail>\.?)"
)
_NPU_FRACTION = re.compile(r"NPU out of memory\. Allocation was preemptively rejected because it would exceed per_process_memory_fraction limit\.(?: Requested size: (?P<req>" + _SIZE + r"))?")
_NPU_HUGE = re.compile(r"NPU out of memory\. Tried to allocate more than 1EB memory")
_NPU_WORKSPACE = re.compile(
    r"NPU out of memory\. NPUWorkspaceAllocator tried to allocate (?P<req>" + _SIZE + r") ?\(NPU (?P<dev>\d+); (?P<total>" + _SIZE + r") total capacity; (?P<free>" + _SIZE + r") free\)"
)
_NPU_GE = re.compile(r"NPU out of memory\. device id: (?P<dev>\d+)")
_HOST_PIN = re.compile(r"Malloc pin memory failed, host out of memory, R[r]?ied to allocate size: ?(?P<req>[\w. ]+)")
_CUDA_OLD = re.compile(
    r"CUDA out of memory\. Tried to allocate (?P<req>" + _SIZE + r") \(GPU (?P<dev>\d+); (?P<total>" + _SIZE + r") total capacity; "
    r"(?P<alloc>" + _SIZE + r") already allocated; (?P<free>" + _SIZE + r") free; "
    r"(?:(?P<cached>" + _SIZE + r") cached|(?:(?P<allowed>" + _SIZE + r") allowed; )?(?P<reserved>" + _SIZE + r") reserved in total by PyTorch)\)"
)
_CUDA_NEW = re.compile(
    r"CUDA out of memory\. Tried to allocate (?P<req>" + _SIZE + r")\. GPU (?P<dev>\d+) has a total capac(?:i)?ty of (?P<total>" + _SIZE + r") "
    r"of which (?P<free>" + _SIZE + r") is free\..*?Of the allocated memory (?P<alloc>" + _SIZE + r") is allocated by PyTorch, "
    r"(?:with (?P<private>" + _SIZE + r") allocated in private pools \(e\.g\., CUDA Graphs\), )?and (?P<unalloc>" + _SIZE + r") is reserved by PyTorch but unallocated"
)
_CUDA_BARE = re.compile(r"CUDA out of memory\.")


def size_to_bytes(text: Optional[str]) -> Optional[int]:
    if not text:
        return None
    num, _, unit = text.strip().partition(" ")
    try:
        return int(float(num) * _UNITS.get(unit, 1))
    except ValueError:
        return None


@dataclass
class OomRecord:
    kind: str  # npu | npu_fraction | npu_huge | npu_workspace | npu_ge | host_pinned | cuda
    template: str  # npu_pre26 | npu_26 | cuda_cached | cuda_reserved | cuda_2x | other
    text: str
    device: Optional[int] = None
    requested: Optional[int] = None  # bytes
    total: Optional[int] = None
    allocated: Optional[int] = None
    active: Optional[int] = None
    free: Optional[int] = None
    allowed: Optional[int] = None
    reserved: Optional[int] = None

    @property
    def reserved_unallocated(self) -> Optional[int]:
        if self.reserved is None or self.allocated is None:
            return None
        return max(self.reserved - self.allocated, 0)


def parse_oom(text: str) -> Optional[OomRecord]:
    """The OOM record in a line, or None."""
    if "out of memory" not in text:
        return None
    m = _NPU.search(text)
    if m:
        return OomRecord(
            kind="npu", template="npu_26" if m.group("tail") == "." else "npu_pre26", text=text.strip(),
            device=int(m.group("dev")), requested=size_to_bytes(m.group("req")), total=size_to_bytes(m.group("total")),
            allocated=size_to_bytes(m.group("alloc")), active=size_to_bytes(m.group("active")),
            free=size_to_bytes(m.group("free")), allowed=size_to_bytes(m.group("allowed")),
            reserved=size_to_bytes(m.group("reserved")),
        )
    m = _NPU_WORKSPACE.search(text)
    if m:
        return OomRecord(kind="npu_workspace", template="other", text=text.strip(), device=int(m.group("dev")),
                         requested=size_to_bytes(m.group("req")), total=size_to_bytes(m.group("total")),
                         free=size_to_bytes(m.group("free")))
    m = _NPU_FRACTION.search(text)
    if m:
        return OomRecord(kind="npu_fraction", template="other", text=text.strip(), requested=size_to_bytes(m.group("req")))
    if _NPU_HUGE.search(text):
        return OomRecord(kind="npu_huge", template="other", text=text.strip())
    m = _NPU_GE.search(text)
    if m:
        return OomRecord(kind="npu_ge", template="other", text=text.strip(), device=int(m.group("dev")))
    m = _HOST_PIN.search(text)
    if m:
        return OomRecord(kind="host_pinned", template="other", text=text.strip())
    m = _CUDA_NEW.search(text)
    if m:
        alloc = size_to_bytes(m.group("alloc")) or 0
        unalloc = size_to_bytes(m.group("unalloc")) or 0
        private = size_to_bytes(m.group("private")) or 0
        return OomRecord(kind="cuda", template="cuda_2x", text=text.strip(), device=int(m.group("dev")),
                         requested=size_to_bytes(m.group("req")), total=size_to_bytes(m.group("total")),
                         allocated=alloc, free=size_to_bytes(m.group("free")), reserved=alloc + private + unalloc)
    m = _CUDA_OLD.search(text)
    if m:
        cached = m.group("cached")
        return OomRecord(kind="cuda", template="cuda_cached" if cached else "cuda_reserved", text=text.strip(),
                         device=int(m.group("dev")), requested=size_to_bytes(m.group("req")),
                         total=size_to_bytes(m.group("total")), allocated=size_to_bytes(m.group("alloc")),
                         free=size_to_bytes(m.group("free")), allowed=size_to_bytes(m.group("allowed")),
                         reserved=size_to_bytes(m.group("reserved") or cached))
    if "NPU out of memory" in text:
        return OomRecord(kind="npu", template="other", text=text.strip())
    if _CUDA_BARE.search(text):
        return OomRecord(kind="cuda", template="other", text=text.strip())
    return None


def classify(rec: OomRecord) -> str:
    """``oom_fragmentation`` when cached-but-unusable memory could have served the request, else ``oom_capacity``."""
    gap = rec.reserved_unallocated
    req = rec.requested
    if gap is None or req is None:
        return "oom_capacity"
    if rec.free is not None and rec.free >= req:
        return "oom_capacity"  # not the pool: a fraction limit or another allocator refused
    if rec.total and rec.reserved is not None and rec.free is not None and rec.reserved + rec.free < rec.total // 2:
        return "oom_capacity"  # most of the device is held outside this allocator (another process, HCCL, weights)
    if gap >= req:
        return "oom_fragmentation"
    if rec.free is not None and gap + rec.free >= req and gap >= (1 << 30):
        return "oom_fragmentation"  # memory exists but not in one piece
    return "oom_capacity"
