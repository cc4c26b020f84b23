"""Named predicates a KB pattern can require (``condition:`` in the data).

A regex can say *what* an out-of-memory message reports but not whether its numbers
mean fragmentation; these predicates read the captured numbers and ask the one OOM
decision the project has (``ascend_doctor.core.oom.judge``, also used by triage and
``ascend-doctor oom``), so that ``explain`` never disagrees with them. Each takes the
pattern's named groups (``req``, ``free``, ``alloc``, ``reserved``, ``total``,
``allowed``, or ``gap`` where the CUDA 2.x text prints reserved-but-unallocated) and
returns True when the entry applies. Names are the contract with the data files; the
loader refuses unknown names.
"""
from __future__ import annotations

from typing import Callable, Dict, Mapping, Optional

from ..core.oom import Decision, Reading, judge
from ..core.units import Size, parse_size


def _decide(groups: Mapping[str, Optional[str]]) -> Optional[Decision]:
    sizes: Dict[str, Size] = {}
    for key in ("req", "free", "alloc", "reserved", "total", "allowed", "gap"):
        if groups.get(key) is not None:
            size = parse_size(groups.get(key))
            if size is None:
                return None
            sizes[key] = size
    if "req" not in sizes or "free" not in sizes:
        return None
    reserved = sizes.get("reserved")
    if reserved is None and "gap" in sizes and "alloc" in sizes:
        a, g = sizes["alloc"], sizes["gap"]
        reserved = Size(a.value + g.value, a.error + g.error)
    return judge(Reading(requested=sizes["req"], free=sizes["free"], allocated=sizes.get("alloc"),
                         reserved=reserved, total=sizes.get("total"), allowed=sizes.get("allowed")))


def oom_fragmented(groups: Mapping[str, Optional[str]]) -> bool:
    d = _decide(groups)
    return d is not None and d.verdict == "oom_fragmentation"


def oom_external(groups: Mapping[str, Optional[str]]) -> bool:
    """Most of the device is held outside this allocator: that, not the pool, is the problem."""
    d = _decide(groups)
    return d is not None and d.verdict == "external"


def oom_capacity(groups: Mapping[str, Optional[str]]) -> bool:
    d = _decide(groups)
    return d is None or d.verdict == "oom_capacity"  # no numbers: the plain reading is the safe one


CONDITIONS: Dict[str, Callable[[Mapping[str, Optional[str]]], bool]] = {
    "oom_fragmented": oom_fragmented,
    "oom_external": oom_external,
    "oom_capacity": oom_capacity,
}
