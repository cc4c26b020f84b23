"""From the facts of every input to one verdict, the numbers behind it, and the fix.

Verdicts: ``oom_fragmentation`` (the cache held enough, in pieces), ``oom_capacity``
(the job does not fit, or a limit refused), ``external`` (the device is held by memory
PyTorch does not own), ``none`` (no out-of-memory and no warning sign).
Status: ``oom`` (an out-of-memory happened), ``at_risk`` (none yet, but the statistics
show stranded memory or cache flushes at the device limit), ``healthy``.

Where the numbers come from, in order of preference: the out-of-memory message (what the
allocator saw when it failed), the statistics, the snapshot; npu-smi only for capacity
and for the other processes on the device. Each number's source is reported.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Dict, List, Optional, Tuple

from ..core.oom import CLOSE_TEXT, RULE_TEXT, Decision, Reading, judge
from ..core.units import GiB, MiB, Size, format_size, ratio
from ..parsers.oom_text import reading
from .advice import (
    Plan,
    ReleaseInfo,
    parse_conf,
    plan_capacity,
    plan_external,
    plan_fragmentation,
    release_from_template,
)
from .device_usage import DeviceUsage
from .explanation import EXTRA_RULES, add_notes, collect_evidence, title_for
from .message import LogFacts, OomHit
from .model import Diagnosis, Inputs, Numbers
from .snapshot import SnapshotFacts
from .stats import StatsFacts

# Suggested defaults: stranded memory worth a warning
STRANDED_WARN_BYTES = GiB
STRANDED_WARN_SHARE = 0.10

_KB = {
    ("oom_fragmentation", "npu"): "oom.npu_fragmentation", ("oom_fragmentation", "cuda"): "oom.cuda_fragmentation",
    ("oom_capacity", "npu"): "oom.npu_capacity", ("oom_capacity", "cuda"): "oom.cuda_capacity",
    ("external", "npu"): "oom.npu_external", ("external", "cuda"): "oom.cuda_capacity",
}


def _message_numbers(nums: Numbers, hit: OomHit) -> Reading:
    r = reading(hit.record)
    for key, size in (("requested", r.requested), ("free", r.free), ("allocated", r.allocated),
                      ("reserved", r.reserved), ("total", r.total), ("allowed", r.allowed)):
        nums.put(key, size, "message")
    if hit.record.active is not None:
        nums.put("active", hit.record.active, "message")
    return r


@dataclass
class Gathered:
    """The numbers of one analysis (each with its source in ``nums``) and what follows from them."""

    nums: Numbers
    reading: Optional[Reading]  # the out-of-memory message's own numbers
    snap_oom: Any  # the snapshot's last out-of-memory event, if any
    pool: str  # "small" (requests up to 1 MiB) or "large": the pool the request came from
    others: Optional[int]  # bytes held by other processes on the device
    requested: Optional[int] = None
    total: Optional[int] = None
    reserved: Optional[int] = None
    free: Optional[int] = None
    allocated: Optional[int] = None
    active: Optional[int] = None
    outside: Optional[int] = None  # device memory PyTorch does not own (from the message)
    gap: Optional[int] = None  # reserved - allocated: cached but unused
    pending: Optional[int] = None  # freed but waiting for its stream


def analyze(inputs: Inputs) -> Diagnosis:
    """One diagnosis from whatever inputs are given (at least one): gather the numbers,
    decide, plan the fix, explain."""
    log = inputs.log
    hit = log.first_oom if log is not None else None
    rec = hit.record if hit is not None else None
    flavor = _flavor(rec, inputs.stats)
    g = gather(inputs, hit)

    diag = Diagnosis(verdict="none", status="healthy", title="", rule="", rule_text="", device=_device(inputs, rec),
                     flavor=flavor)
    diag.inputs = _inputs(inputs)
    collect_evidence(diag, inputs, hit, g.nums, g.snap_oom, g.pool)
    decision = decide(inputs, rec, g)
    _record_numbers(diag, inputs, g)
    conf, expandable_on = _allocator_conf(inputs)
    release = inputs.release or (release_from_template(rec.template) if rec is not None else None)
    diag.release = release.text if release is not None else None

    _explain(diag, decision, inputs, g, flavor)
    _plan(diag, g.requested, flavor, release, conf, expandable_on, log, inputs.usage, g.gap, g.free, g.total,
          g.allocated)
    diag.kb = _kb(diag, flavor, log)
    add_notes(diag, inputs, log, hit, inputs.stats, g.nums, g.pending, g.requested, g.gap, conf, inputs.usage)
    return diag


def _device(inputs: Inputs, rec: Any) -> Optional[int]:
    """The device judged: as given, else the message's, the snapshot's, the statistics', a driver line's."""
    if inputs.device is not None:
        return inputs.device
    if rec is not None and rec.device is not None:
        return rec.device
    if inputs.snapshot is not None and inputs.snapshot.device is not None:
        return inputs.snapshot.device
    if inputs.stats is not None and inputs.stats.device is not None:
        return inputs.stats.device
    if inputs.log is not None and rec is None:
        return next((h.device for h in inputs.log.driver_ooms if h.device is not None), None)
    return None


def _flavor(rec: Any, stats: Optional[StatsFacts]) -> str:
    if rec is not None and rec.kind != "host_pinned":
        return rec.flavor
    return stats.flavor if stats and stats.flavor else "npu"


def gather(inputs: Inputs, hit: Optional[OomHit]) -> Gathered:
    """Every number the inputs give, the first source in order of preference keeping each:
    the message, the snapshot's OOM event, the statistics, the snapshot, npu-smi."""
    stats, snap, usage = inputs.stats, inputs.snapshot, inputs.usage
    nums = Numbers()
    reading = _message_numbers(nums, hit) if hit is not None else None
    snap_oom = snap.oom_events[-1] if snap is not None and snap.oom_events else None
    if snap_oom is not None:
        nums.put("requested", snap_oom.size, "snapshot")
        nums.put("free", snap_oom.device_free, "snapshot")
    if stats is not None:
        _stats_numbers(nums, stats)
    segments = snap is not None and bool(snap.segments)
    if segments:
        _snapshot_numbers(nums, snap)
    if usage is not None:
        nums.put("total", usage.total, "npu-smi")

    q = nums.int("requested")
    pool = "small" if q is not None and q <= MiB else "large"
    if segments:
        stream = snap_oom.stream if snap_oom is not None else None
        nums.put("largest_free_block", snap.largest_free(pool, stream), "snapshot")
        nums.put("free_in_cache", snap.free_total, "snapshot")
        nums.put("releasable", snap.releasable, "snapshot")
    others: Optional[int] = None
    if usage is not None and usage.processes:
        others = usage.others_bytes
    elif reading is not None and reading.others is not None:
        others = reading.others
    nums.put("other_processes", others, "npu-smi" if usage is not None and usage.processes else "message")

    g = Gathered(nums=nums, reading=reading, snap_oom=snap_oom, pool=pool, others=others, requested=q,
                 total=nums.int("total"), reserved=nums.int("reserved"), free=nums.int("free"),
                 allocated=nums.int("allocated"), active=nums.int("active"))
    _derive(g, snap if segments else None)
    return g


def _stats_numbers(nums: Numbers, stats: StatsFacts) -> None:
    err = stats.errors
    for key, stat in (("allocated", "allocated_bytes.all.current"), ("reserved", "reserved_bytes.all.current"),
                      ("active", "active_bytes.all.current")):
        v = stats.get(stat)
        nums.put(key, Size(v, err.get(stat, 0)) if v is not None else None, "stats")
    nums.put("inactive_split", stats.inactive_split, "stats")
    nums.put("requested_bytes", stats.requested, "stats")


def _snapshot_numbers(nums: Numbers, snap: SnapshotFacts) -> None:
    nums.put("allocated", snap.allocated, "snapshot")
    nums.put("reserved", snap.reserved, "snapshot")
    nums.put("active", snap.active, "snapshot")
    nums.put("inactive_split", snap.nonreleasable, "snapshot")
    nums.put("requested_bytes", snap.requested, "snapshot")


def _derive(g: Gathered, snap: Optional[SnapshotFacts]) -> None:
    """What follows from the gathered numbers: memory outside PyTorch, the cache gap, pending frees.
    ``snap`` is the snapshot when it has segments."""
    total, reserved, free, allocated = g.total, g.reserved, g.free, g.allocated
    if total is not None and reserved is not None and free is not None and g.nums.sources.get("total") == "message":
        g.outside = max(total - reserved - free, 0)
    if reserved is not None and allocated is not None:
        g.gap = max(reserved - allocated, 0)
    if g.active is not None and allocated is not None:
        g.pending = max(g.active - allocated, 0)
    if g.pending is None and snap is not None:
        g.pending = snap.pending


_MESSAGE_KIND_RULE = {"npu_fraction": "fraction_limit", "npu_huge": "impossible_size",
                      "host_pinned": "host_memory", "npu_ge": "numbers_missing"}


def decide(inputs: Inputs, rec: Any, g: Gathered) -> Optional[Decision]:
    """The verdict and the rule that gave it, or None when no out-of-memory happened."""
    stats, snap, log = inputs.stats, inputs.snapshot, inputs.log
    if rec is not None and rec.kind in _MESSAGE_KIND_RULE:
        return Decision("oom_capacity", _MESSAGE_KIND_RULE[rec.kind])
    if g.requested is not None:
        nums = g.nums
        return judge(Reading(requested=nums.get("requested"), free=nums.get("free"), allocated=nums.get("allocated"),
                             reserved=nums.get("reserved"), total=nums.get("total"), allowed=nums.get("allowed"),
                             others=g.others))
    if rec is not None:
        return _from_stats(stats, snap) if (stats or snap) else Decision("oom_capacity", "numbers_missing")
    if stats is not None and (stats.num_ooms or 0) > 0:
        return _from_stats(stats, snap)
    if log is not None and log.driver_ooms:
        return _driver(log, inputs.usage, g.requested)
    return None


def _record_numbers(diag: Diagnosis, inputs: Inputs, g: Gathered) -> None:
    """The numbers, their sources, the ratios and the counts the diagnosis reports."""
    stats, snap, log = inputs.stats, inputs.snapshot, inputs.log
    nums, q, gap = g.nums, g.requested, g.gap
    stranded = nums.int("inactive_split")
    diag.numbers = {
        "requested": q, "free": g.free, "total": g.total, "allowed": nums.int("allowed"), "allocated": g.allocated,
        "active": g.active, "reserved": g.reserved, "reserved_unallocated": gap, "pending_free": g.pending,
        "inactive_split": stranded, "largest_free_block": nums.int("largest_free_block"),
        "free_in_cache": nums.int("free_in_cache"), "releasable": nums.int("releasable"),
        "outside_pytorch": g.outside, "other_processes": g.others, "requested_bytes": nums.int("requested_bytes"),
    }
    diag.sources = {k: v for k, v in nums.sources.items() if k in diag.numbers}
    diag.ratios = {
        "gap_over_request": ratio(gap, q), "fragmentation": ratio(stranded, g.reserved),
        "cache_unused": ratio(gap, g.reserved),
        "external_fragmentation": snap.external_fragmentation(g.pool) if snap is not None else None,
    }
    if stats is not None and stats.segments is not None:
        segments: Optional[int] = stats.segments
    else:
        segments = len(snap.segments) if snap is not None else None
    diag.counts = {
        "num_alloc_retries": stats.num_alloc_retries if stats is not None else None,
        "num_ooms": stats.num_ooms if stats is not None else None,
        "cache_flush_lines": log.retries if log is not None else None, "segments": segments,
        "oom_messages": len(log.ooms) if log is not None else None,
    }


def _allocator_conf(inputs: Inputs) -> Tuple[Dict[str, str], bool]:
    """The allocator settings in force (given, else from the log) and whether expandable segments were on."""
    log, snap = inputs.log, inputs.snapshot
    conf = parse_conf(inputs.alloc_conf or (log.alloc_conf[1] if log is not None and log.alloc_conf else None))
    expandable_on = bool(snap is not None and snap.expandable) or (
        conf.get("expandable_segments", "").lower() == "true" and not (log and log.expandable_failed))
    return conf, expandable_on


def _explain(diag: Diagnosis, decision: Optional[Decision], inputs: Inputs, g: Gathered, flavor: str) -> None:
    """Status, verdict, rule, its text and the title: from the decision, else from the warning signs."""
    if decision is None:
        stats = inputs.stats
        _risk(diag, g.nums.int("inactive_split"), g.reserved, stats.num_alloc_retries if stats is not None else None,
              inputs.log.retries if inputs.log is not None else None, inputs.log, stats, inputs.snapshot)
        return
    diag.status = "oom"
    diag.verdict, diag.rule = decision.verdict, decision.rule
    diag.rule_text = RULE_TEXT.get(decision.rule, EXTRA_RULES.get(decision.rule, ""))
    diag.title = title_for(decision, diag, flavor)
    gap, q = g.gap, g.requested
    if decision.close_to is not None:
        diag.notes.append(f"a close call; the other reading is {CLOSE_TEXT[decision.close_to]}")
    if decision.fragmented_too and gap is not None and q is not None:
        diag.notes.append(f"the cache is fragmented too: reserved - allocated ({format_size(gap)}) covers the "
                          f"request ({format_size(q)}); see the fragmentation advice once the device is free")


def _from_stats(stats: Optional[StatsFacts], snap: Optional[SnapshotFacts]) -> Decision:
    """An OOM known from the statistics alone (no request size). After the OOM retry
    flushed the whole free segments, what stays reserved but unallocated is stranded, so
    reserved - allocated stands in when inactive_split is not reported."""
    stranded = stats.inactive_split if stats is not None and stats.inactive_split is not None else (
        snap.nonreleasable if snap is not None and snap.segments else None)
    reserved = stats.reserved if stats is not None and stats.reserved is not None else (
        snap.reserved if snap is not None and snap.segments else None)
    allocated = stats.allocated if stats is not None and stats.allocated is not None else (
        snap.allocated if snap is not None and snap.segments else None)
    if stranded is None and reserved is not None and allocated is not None:
        stranded = max(reserved - allocated, 0)
    if stranded is None:
        return Decision("oom_capacity", "numbers_missing")
    if stranded >= STRANDED_WARN_BYTES or (reserved and stranded >= STRANDED_WARN_SHARE * reserved):
        return Decision("oom_fragmentation", "stats_stranded")
    return Decision("oom_capacity", "stats_not_stranded")


def _driver(log: LogFacts, usage: Optional[DeviceUsage], q: Optional[int]) -> Decision:
    if usage is not None and usage.others_bytes >= max(q or 0, GiB):
        return Decision("external", "driver_alloc_others")
    return Decision("oom_capacity", "driver_alloc")


def _risk(diag: Diagnosis, stranded: Optional[int], reserved: Optional[int], retries: Optional[int],
          log_retries: Optional[int], log: Optional[LogFacts], stats: Optional[StatsFacts],
          snap: Optional[SnapshotFacts]) -> None:
    flushes = max(retries or 0, log_retries or 0)
    is_stranded = stranded is not None and (stranded >= STRANDED_WARN_BYTES or
                                            (reserved and stranded >= STRANDED_WARN_SHARE * reserved))
    if is_stranded:
        diag.status, diag.verdict, diag.rule = "at_risk", "oom_fragmentation", "stranded"
        share = f" ({stranded / reserved:.0%} of reserved)" if reserved else ""
        diag.title = f"no out-of-memory yet, but {format_size(stranded)} of the cache is stranded in split segments{share}"
    elif flushes:
        diag.status, diag.verdict, diag.rule = "at_risk", "oom_capacity", "pressure"
        diag.title = (f"no out-of-memory yet, but the allocator hit the device limit and flushed its cache "
                      f"{flushes} time{'s' if flushes != 1 else ''}")
    else:
        diag.status, diag.verdict, diag.rule = "healthy", "none", "healthy"
        where = ", ".join(log.files[:3]) if log is not None and log.files else "the input"
        diag.title = (f"no out-of-memory and no sign of memory pressure in {where}" if stats is None and snap is None
                      else "no out-of-memory, no stranded memory, no cache flush")
    diag.rule_text = EXTRA_RULES[diag.rule]


def _plan(diag: Diagnosis, q: Optional[int], flavor: str, release: Optional[ReleaseInfo], conf: Dict[str, str],
          expandable_on: bool, log: Optional[LogFacts], usage: Optional[DeviceUsage], gap: Optional[int],
          free: Optional[int], total: Optional[int], allocated: Optional[int]) -> None:
    if diag.verdict == "oom_fragmentation":
        refused = bool(log is not None and log.expandable_failed)
        diag.plan = plan_fragmentation(q, flavor, release, conf, expandable_on, refused)
    elif diag.verdict == "external":
        others = [p[0] for p in usage.others] if usage is not None else []
        same: Optional[bool] = None
        if others or diag.rule in ("external_processes", "driver_alloc_others"):
            same = False
        elif usage is not None and usage.processes:
            same = True  # npu-smi lists only this job on the device
        diag.plan = plan_external(flavor, release, diag.device, others, same_process=same)
    elif diag.verdict == "oom_capacity":
        rule = diag.rule
        if rule == "driver_alloc":
            diag.plan = plan_external(flavor, release, diag.device, [], same_process=True)
            return
        shortfall = None
        if q is not None and free is not None:
            shortfall = max(q - free - (gap or 0), 0) or None
        diag.plan = plan_capacity(rule, flavor, release, diag.device, shortfall)
    else:
        diag.plan = Plan([], "Nothing to fix. To watch a long-running service, save torch.npu.memory_stats() "
                             "now and then and run ascend-doctor oom --stats on it.", [])


def _kb(diag: Diagnosis, flavor: str, log: Optional[LogFacts]) -> Optional[str]:
    if diag.status != "oom" and diag.verdict != "oom_fragmentation":
        return None
    if diag.rule.startswith("driver"):
        kinds = {h.kind for h in log.driver_ooms} if log is not None else set()
        return "oom.hccl_buffer" if kinds == {"hccl_buffer"} else "oom.driver_alloc"
    return _KB.get((diag.verdict, flavor))


def _inputs(inputs: Inputs) -> List[str]:
    out: List[str] = []
    if inputs.log is not None:
        out.extend(f"log:{f}" for f in inputs.log.files)
    if inputs.stats is not None:
        out.append(f"stats:{inputs.stats.origin}")
    if inputs.snapshot is not None:
        out.append(f"snapshot:{inputs.snapshot.layout}")
    if inputs.usage is not None:
        out.append("npu-smi")
    return out


