"""What the report says about a decision: its title, the evidence lines, the notes."""
from __future__ import annotations

from typing import Any, Dict, Optional

from ..core.oom import Decision, judge
from ..core.units import MiB, format_size
from ..parsers.oom_text import classify, reading
from .device_usage import DeviceUsage
from .message import LogFacts, OomHit
from .model import Diagnosis, EvidenceItem, Inputs, Numbers
from .stats import StatsFacts

PENDING_NOTE_BYTES = 512 * MiB  # freed memory still waiting for other streams worth a note
ROUNDING_NOTE_SHARE = 0.05  # rounding waste worth a note

NO_SNAPSHOT_HELP = ("impossible_size", "host_memory", "driver_alloc", "fraction_limit")

EXTRA_RULES = {
    "impossible_size": "the request is larger than any device: a corrupted size (a shape computed wrongly)",
    "host_memory": "pinned host memory, not device memory, ran out",
    "stats_stranded": "the statistics record an OOM and a large share of the cache stranded in split segments",
    "stats_not_stranded": "the statistics record an OOM with little of the cache stranded",
    "driver_alloc": "a device allocation below PyTorch (runtime, HCCL, another framework) failed",
    "driver_alloc_others": "a device allocation below PyTorch failed while other processes hold the device",
    "stranded": "no OOM yet, but a large share of the cache is stranded in split segments",
    "pressure": "no OOM yet, but the allocator reached the device limit and flushed its cache",
    "healthy": "no out-of-memory, no stranded memory, no cache flush",
}


def title_for(d: Decision, diag: Diagnosis, flavor: str) -> str:
    """The one-line verdict, with the numbers that make it (diag.numbers must be filled)."""
    n = diag.numbers
    dev = f" on device {diag.device}" if diag.device is not None else ""
    kind = "NPU" if flavor == "npu" else "GPU"
    q = format_size(n.get("requested"))
    if d.verdict == "oom_fragmentation":
        if d.rule == "stats_stranded":
            stranded = n.get("inactive_split") if n.get("inactive_split") is not None else n.get("reserved_unallocated")
            return (f"{kind} out of memory{dev} with {format_size(stranded)} of the cache stranded in "
                    "split segments: the pool is fragmented")
        held = format_size(n.get("reserved_unallocated"))
        if d.rule == "gap_plus_free_covers_request":
            return (f"{kind} out of memory{dev} although cached ({held}) plus free ({format_size(n.get('free'))}) "
                    f"memory covered the {q} request: the pool is fragmented")
        return f"{kind} out of memory{dev} although PyTorch's cache held {held} unused for a {q} request: the pool is fragmented"
    if d.verdict == "external":
        if d.rule.startswith("driver"):
            return f"a device allocation below PyTorch failed{dev} while other processes hold {format_size(n.get('other_processes'))}"
        held = n.get("outside_pytorch") if d.rule == "external" else n.get("other_processes")
        total = f" of {format_size(n.get('total'))}" if n.get("total") else ""
        return f"{kind} out of memory{dev}: {format_size(held)}{total} is held outside this PyTorch process"
    if d.rule == "fraction_limit":
        return f"{kind} out of memory{dev} at the per-process limit ({format_size(n.get('allowed'))} allowed)"
    if d.rule == "free_covers_request":
        return f"{kind} out of memory{dev} with {format_size(n.get('free'))} free: something other than the pool refused {q}"
    if d.rule == "impossible_size":
        return f"{kind} out of memory: a request larger than 1 EB (a corrupted tensor size)"
    if d.rule == "host_memory":
        return "host out of memory while pinning memory for the device"
    if d.rule == "driver_alloc":
        return f"a device allocation below PyTorch failed{dev} (runtime, HCCL or another framework): the device is full"
    if d.rule == "numbers_missing":
        return f"{kind} out of memory{dev}; the inputs have no numbers to tell why"
    if d.rule == "stats_not_stranded":
        return f"{kind} out of memory{dev} with little of the cache stranded: the job does not fit"
    return f"{kind} out of memory{dev}: the job needs more memory than the device offers ({q} requested)"


def collect_evidence(diag: Diagnosis, inputs: Inputs, hit: Optional[OomHit], nums: Numbers, snap_oom: Any, pool: str) -> None:
    """The lines a reader checks the verdict against: the message, log lines, summaries of stats/snapshot/npu-smi."""
    ev = diag.evidence
    log = inputs.log
    if hit is not None:
        ev.append(EvidenceItem("message", hit.where.text, hit.where.file, hit.where.line))
    if log is not None:
        for h in log.driver_ooms[:3]:
            ev.append(EvidenceItem("log", h.where.text[:300], h.where.file, h.where.line))
        if log.retries and log.first_retry is not None:
            w = log.first_retry
            ev.append(EvidenceItem("log", f"{log.retries} cache flush{'es' if log.retries != 1 else ''} before the "
                                   f"failure (\"Get a block from the existing pool failed ...\", first here)", w.file, w.line))
        for w, what in ((log.expandable_failed, "expandable segments were switched off by torch_npu"),
                        (log.conf_rejected, "the allocator setting was rejected")):
            if w is not None:
                ev.append(EvidenceItem("log", f"{what}: {w.text[:200]}", w.file, w.line))
        if log.alloc_conf is not None:
            var, value, w = log.alloc_conf
            ev.append(EvidenceItem("log", f"{var}={value}", w.file, w.line))
    stats = inputs.stats
    if stats is not None:
        parts = [f"{label} {format_size(v)}" for label, v in (("allocated", stats.allocated), ("reserved", stats.reserved))
                 if v is not None]
        if stats.inactive_split is not None:
            parts.append(f"non-releasable (inactive split) {format_size(stats.inactive_split)}")
        if stats.num_alloc_retries is not None:
            parts.append(f"{stats.num_alloc_retries} alloc retries")
        if stats.num_ooms is not None:
            parts.append(f"{stats.num_ooms} OOMs")
        if stats.max_split_size is not None:
            parts.append(f"max_split_size {format_size(stats.max_split_size)}")
        ev.append(EvidenceItem("stats", f"{stats.origin}: " + ", ".join(parts)))
    snap = inputs.snapshot
    if snap is not None:
        if not snap.segments:
            ev.append(EvidenceItem("snapshot", "no segments: the allocator held no memory when it was taken"))
        else:
            ev.append(EvidenceItem("snapshot", f"{len(snap.segments)} segments, {format_size(snap.reserved)} reserved, "
                                   f"{format_size(snap.free_total)} free inside them; largest free block in the {pool} "
                                   f"pool {format_size(snap.largest_free(pool))}"
                                   + (" (expandable segments)" if snap.expandable else "")))
            for seg in snap.pinned_segments():
                addr = f" at 0x{seg.address:x}" if seg.address is not None else ""
                ev.append(EvidenceItem("snapshot", f"segment{addr} of {format_size(seg.total)}: {seg.live_blocks} live "
                                       f"block{'s' if seg.live_blocks != 1 else ''} ({format_size(seg.allocated + seg.pending)}) "
                                       f"pin {format_size(seg.free)} free in {len(seg.free_blocks)} piece"
                                       f"{'s' if len(seg.free_blocks) != 1 else ''} (largest {format_size(seg.largest_free)})"))
        if snap_oom is not None:
            where = f" at {snap_oom.frame}" if snap_oom.frame else ""
            ev.append(EvidenceItem("snapshot", f"oom trace entry: {format_size(snap_oom.size)} requested, "
                                   f"{format_size(snap_oom.device_free)} free on the device{where}"))
    usage = inputs.usage
    if usage is not None:
        used = (f"HBM {format_size(usage.used)} used of {format_size(usage.total)}; " if usage.total else "")
        procs = ", ".join(f"pid {pid}{' (' + name + ')' if name else ''} {format_size(b)}"
                          + (" [this job]" if pid == usage.ours else "") for pid, name, b in usage.processes)
        ev.append(EvidenceItem("npu-smi", f"NPU {usage.npu_id}: {used}"
                               + (f"processes: {procs}" if procs else "no processes listed")))
        diag.others = [{"pid": pid, "name": name, "bytes": b} for pid, name, b in usage.others]


def add_notes(diag: Diagnosis, inputs: Inputs, log: Optional[LogFacts], hit: Optional[OomHit],
           stats: Optional[StatsFacts], nums: Numbers, pending: Optional[int], q: Optional[int],
           gap: Optional[int], conf: Dict[str, str], usage: Optional[DeviceUsage]) -> None:
    """Facts beside the verdict: other OOM events, pending frees, conflicting settings, stale inputs."""
    notes = diag.notes
    if log is not None and len(log.ooms) > 1 and hit is not None:
        def key(r: Any) -> Any:
            return (r.kind, r.device, r.requested, r.free, r.allocated, r.reserved)

        first = key(hit.record)
        distinct: Dict[Any, str] = {}
        for h in log.ooms:
            k = key(h.record)
            if k != first and k not in distinct:
                distinct[k] = (judge(reading(h.record)).verdict if h.record.kind in ("npu", "cuda")
                               else classify(h.record))
        copies = sum(1 for h in log.ooms if key(h.record) == first)
        if distinct:
            kinds: Dict[str, int] = {}
            for cat in distinct.values():
                kinds[cat] = kinds.get(cat, 0) + 1
            tally = ", ".join(f"{n} {k}" for k, n in sorted(kinds.items()))
            notes.append(f"{len(distinct) + 1} different out-of-memory events in the logs; analysed the first with "
                         f"numbers ({hit.where.file}:{hit.where.line}); the others read as: {tally}")
        elif copies > 1:
            notes.append(f"the same out-of-memory message appears {copies} times (console and plog copies, or ranks "
                         "that failed alike)")
    if pending is not None and pending >= PENDING_NOTE_BYTES:
        notes.append(f"{format_size(pending)} is freed but still waits for other streams (record_stream, HCCL): it "
                     "counts as reserved until those streams finish")
    req_b, alloc = nums.int("requested_bytes"), nums.int("allocated")
    if req_b and alloc and alloc - req_b >= ROUNDING_NOTE_SHARE * alloc:
        notes.append(f"rounding waste: {format_size(alloc - req_b)} of the allocated memory was never requested "
                     "(block rounding)")
    if "expandable_segments" in conf and ("max_split_size_mb" in conf or "garbage_collection_threshold" in conf):
        notes.append("the allocator setting combines expandable_segments with max_split_size_mb or "
                     "garbage_collection_threshold: torch_npu rejects that (6.0.rc3 and later) or turns expandable "
                     "segments off (earlier)")
    if stats is not None and stats.max_split_size is not None and diag.verdict == "oom_fragmentation":
        notes.append(f"max_split_size_mb is already set ({stats.max_split_size // MiB} MB): lower it below the "
                     "failing request, or switch to expandable segments")
    if hit is not None and stats is not None and stats.reserved is not None and hit.record.reserved:
        drift = abs(stats.reserved - hit.record.reserved)
        if drift > max(0.02 * hit.record.reserved, 64 * MiB):
            notes.append("the statistics were taken at another moment than the message (reserved differs by "
                         f"{format_size(drift)}): the message's numbers decide")
    if usage is not None:
        if usage.how == "pid" and usage.ours is None:
            notes.append("the failing process is no longer in the npu-smi table: every listed process is another one")
        elif usage.how in ("closest_to_reserved", "largest") and len(usage.processes) > 1:
            notes.append(f"npu-smi: pid {usage.ours} was taken as this job ({usage.how.replace('_', ' ')}); "
                         "pass --pid to say which it is")
        notes.append("npu-smi numbers NPUs physically; the message's device is the logical index "
                     "(they differ when ASCEND_RT_VISIBLE_DEVICES reorders devices)")
    if (diag.status == "oom" and inputs.snapshot is None and inputs.stats is None and diag.flavor == "npu"
            and diag.verdict in ("oom_fragmentation", "oom_capacity") and diag.rule not in NO_SNAPSHOT_HELP):
        notes.append("for block-level evidence, let torch_npu dump a snapshot at the next OOM "
                     "(OOM_SNAPSHOT_ENABLE=1, OOM_SNAPSHOT_PATH=dir) and pass it with --snapshot")
