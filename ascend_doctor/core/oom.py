"""The decision rules for one out-of-memory event.

Q = the size the allocator tried to get (``Tried to allocate`` prints the segment size),
F = free device memory, A = allocated, R = reserved, G = R - A (cached but unused),
C = device capacity, L = the per-process limit ("allowed"), N = memory held outside
this allocator (other processes, HCCL buffers, runtime, other frameworks).

In order:
1. external -- F < Q and the device is mostly held by someone else: R + F < C / 2, or
   other processes are known to hold at least Q and more than G. Freeing their memory
   is the fix, so this wins even when the cache is fragmented too (that is reported).
2. fraction limit -- L is set and R + Q > L while G < Q: the process's own cap is full.
3. free covers the request -- F >= Q: the pool did not fail for lack of memory; a limit
   or another allocator refused (capacity, with a note).
4. fragmentation -- G >= Q: after the allocator flushed every whole free segment, the
   cache still held at least Q, only in pieces too small or in the wrong pool/stream.
5. fragmentation-assisted -- G + F >= Q > max(G, F) and G is a real share of the request
   (at least Q/2 or 1 GiB), so rounding noise on a full device is not called fragmentation.
   Both fragmentation rules also need G to be a real share of the reservation (at least
   FRAG_MIN_SHARE of R): a few percent of slack in a nearly full pool is what any busy
   cache holds, not stranded memory, and a serving engine that reserved most of the card
   for its KV cache runs out like that for lack of capacity.
6. capacity -- otherwise: live tensors plus the request exceed what the device offers.

When the text around the error shows that the framework itself reserves most of the device
(``gpu_memory_utilization``, ``mem_fraction_static``, a KV-cache pool), ``framework_reserved``
says so and a fragmentation reading becomes capacity: the fix is the reservation setting.

Every comparison uses the pessimistic end of the printed numbers (two decimals), so a
verdict never rests on the rounding of the message. This module is pure and cheap:
triage calls it for every out-of-memory line.
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Optional

from .units import GiB, Size

VERDICTS = ("oom_capacity", "oom_fragmentation", "external")
EXTERNAL_SHARE = 0.5  # R + F below this share of C: most of the device belongs to others
ASSIST_MIN_SHARE = 0.5  # G must cover this share of Q (or ASSIST_MIN_BYTES) to count
ASSIST_MIN_BYTES = GiB
FRAG_MIN_SHARE = 0.03  # G below this share of R is ordinary slack (block rounding, split remainders), not a fragmented pool

RULE_TEXT = {
    "external": "free < request, and most of the device is held outside this PyTorch process",
    "external_processes": "free < request, and other processes on the device hold more than the request",
    "fraction_limit": "the per-process memory limit (allowed) is reached, and the cache cannot cover the request",
    "free_covers_request": "free memory covers the request: a limit or another allocator refused it",
    "gap_covers_request": "reserved - allocated covers the request: the cache held enough, but not in one piece",
    "gap_plus_free_covers_request": "reserved - allocated + free covers the request, neither alone does",
    "no_room": "allocated + request exceed what the device offers this process",
    "slack_only": "reserved - allocated covers the request but is a small share of the reservation: a full pool, not a fragmented one",
    "framework_reservation": "the framework reserves most of the device itself (memory utilization / KV cache): its setting leaves too little",
    "numbers_missing": "the inputs carry no numbers to compare (paste the whole message, or add --stats / --snapshot)",
}


# why the other reading was close, by the verdict it was close to
CLOSE_TEXT = {
    "oom_fragmentation": "fragmentation: cached-but-unused plus free memory covered the request",
    "oom_capacity": "capacity: the stranded share of the pool is small",
}


@dataclass(frozen=True)
class Reading:
    """The numbers one decision reads. Unknown values are None."""

    requested: Optional[Size] = None
    free: Optional[Size] = None
    allocated: Optional[Size] = None
    reserved: Optional[Size] = None
    total: Optional[Size] = None
    allowed: Optional[Size] = None
    others: Optional[int] = None  # bytes other processes hold on the device (npu-smi, CUDA text)
    framework_reserved: bool = False  # the job's framework pre-reserves device memory (KV cache, utilization)


@dataclass(frozen=True)
class Decision:
    verdict: str
    rule: str
    fragmented_too: bool = False  # the gap covers the request although another rule decided
    close_to: Optional[str] = None  # the verdict the numbers nearly gave (a close call), else None

    @property
    def category(self) -> str:
        """The shared taxonomy's name: memory held by someone else is the device being busy."""
        if self.verdict == "external":
            return "device_busy_permission"
        return "oom_fragmentation" if self.verdict == "oom_fragmentation" else "oom_capacity"


def gap_of(r: Reading) -> Optional[Size]:
    """reserved - allocated, with the printing error of both."""
    if r.reserved is None or r.allocated is None:
        return None
    value = max(r.reserved.value - r.allocated.value, 0)
    return Size(value, r.reserved.error + r.allocated.error)


def judge(r: Reading) -> Decision:
    """Apply the rules above to one out-of-memory event, and say when it was a close call:
    capacity although the cached-but-unused memory plus free memory covered the request (the
    gap was too small a share to call it fragmentation), fragmentation although the gap was
    barely a real share, or a verdict that overrode a fragmented pool."""
    d = _decide(r)
    close = None
    gap = gap_of(r)
    if r.requested is not None and gap is not None:
        q = r.requested.value
        together = gap.high + (r.free.high if r.free is not None else 0) >= q
        if d.verdict == "oom_capacity" and (d.fragmented_too or (d.rule in ("no_room", "slack_only") and together)):
            close = "oom_fragmentation"
        elif d.verdict == "oom_fragmentation" and r.reserved is not None and gap.low < 2 * FRAG_MIN_SHARE * r.reserved.value:
            close = "oom_capacity"
        elif d.verdict == "external" and d.fragmented_too:
            close = "oom_fragmentation"
    return replace(d, close_to=close) if close else d


def _decide(r: Reading) -> Decision:
    if r.requested is None:
        return Decision("oom_capacity", "numbers_missing")
    q = r.requested.value
    gap = gap_of(r)
    gap_lo = gap.low if gap is not None else 0
    gap_hi = gap.high if gap is not None else 0
    free_lo = r.free.low if r.free is not None else None
    free_hi = r.free.high if r.free is not None else None
    if r.allowed is not None and r.reserved is not None and free_lo is not None:
        room = max(r.allowed.value - r.reserved.value, 0)
        free_lo, free_hi = min(free_lo, room), min(free_hi, room)  # type: ignore[type-var]
    real_gap = gap is not None and (r.reserved is None or gap_lo >= FRAG_MIN_SHARE * r.reserved.value)
    fragmented = gap is not None and gap_lo >= q and real_gap

    short = free_hi is not None and free_hi < q
    if short or free_hi is None:
        if (r.total is not None and r.reserved is not None and r.free is not None
                and r.reserved.high + r.free.high < EXTERNAL_SHARE * r.total.low):
            return Decision("external", "external", fragmented)
        if r.others is not None and r.others >= q and r.others > gap_hi:
            return Decision("external", "external_processes", fragmented)
    if (r.allowed is not None and r.reserved is not None and not fragmented
            and r.reserved.value + q > r.allowed.value):
        return Decision("oom_capacity", "fraction_limit")
    if free_lo is not None and free_lo >= q:
        return Decision("oom_capacity", "free_covers_request", fragmented)
    if fragmented:
        if r.framework_reserved:
            return Decision("oom_capacity", "framework_reservation", True)
        return Decision("oom_fragmentation", "gap_covers_request")
    if gap is not None and free_lo is not None:
        enough_together = gap_lo + free_lo >= q
        real_share = gap_lo >= min(ASSIST_MIN_SHARE * q, ASSIST_MIN_BYTES) and real_gap
        if enough_together and real_share and max(gap_hi, free_hi or 0) < q:
            if r.framework_reserved:
                return Decision("oom_capacity", "framework_reservation", True)
            return Decision("oom_fragmentation", "gap_plus_free_covers_request")
    if gap is not None and gap_lo >= q and not real_gap:
        return Decision("oom_capacity", "slack_only")
    return Decision("oom_capacity", "no_room")
