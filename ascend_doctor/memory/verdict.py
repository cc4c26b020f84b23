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

from typing import Dict, List, Optional

from ..core.oom import RULE_TEXT, Decision, Reading, judge
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


def analyze(inputs: Inputs) -> Diagnosis:
    """One diagnosis from whatever inputs are given (at least one)."""
    log = inputs.log
    hit = log.first_oom if log is not None else None
    rec = hit.record if hit is not None else None
    stats, snap, usage = inputs.stats, inputs.snapshot, inputs.usage
    device = inputs.device
    if device is None and rec is not None and rec.device is not None:
        device = rec.device
    if device is None and snap is not None:
        device = snap.device
    if device is None and stats is not None:
        device = stats.device
    if device is None and log is not None and rec is None:
        device = next((h.device for h in log.driver_ooms if h.device is not None), None)
    flavor = rec.flavor if rec is not None and rec.kind != "host_pinned" else (stats.flavor if stats and stats.flavor else "npu")

    nums = Numbers()
    reading = _message_numbers(nums, hit) if hit is not None else None
    snap_oom = snap.oom_events[-1] if snap is not None and snap.oom_events else None
    if snap_oom is not None:
        nums.put("requested", snap_oom.size, "snapshot")
        nums.put("free", snap_oom.device_free, "snapshot")
    if stats is not None:
        err = stats.errors
        for key, stat in (("allocated", "allocated_bytes.all.current"), ("reserved", "reserved_bytes.all.current"),
                          ("active", "active_bytes.all.current")):
            v = stats.get(stat)
            nums.put(key, Size(v, err.get(stat, 0)) if v is not None else None, "stats")
        nums.put("inactive_split", stats.inactive_split, "stats")
        nums.put("requested_bytes", stats.requested, "stats")
    if snap is not None and snap.segments:
        nums.put("allocated", snap.allocated, "snapshot")
        nums.put("reserved", snap.reserved, "snapshot")
        nums.put("active", snap.active, "snapshot")
        nums.put("inactive_split", snap.nonreleasable, "snapshot")
        nums.put("requested_bytes", snap.requested, "snapshot")
    if usage is not None:
        nums.put("total", usage.total, "npu-smi")

    q = nums.int("requested")
    pool = "small" if q is not None and q <= MiB else "large"
    if snap is not None and snap.segments:
        stream = snap_oom.stream if snap_oom is not None else None
        nums.put("largest_free_block", snap.largest_free(pool, stream), "snapshot")
        nums.put("free_in_cache", snap.free_total, "snapshot")
        nums.put("releasable", snap.releasable, "snapshot")
    others_bytes: Optional[int] = None
    if usage is not None and usage.processes:
        others_bytes = usage.others_bytes
    elif reading is not None and reading.others is not None:
        others_bytes = reading.others
    nums.put("other_processes", others_bytes, "npu-smi" if usage is not None and usage.processes else "message")

    total, reserved, free, allocated = nums.int("total"), nums.int("reserved"), nums.int("free"), nums.int("allocated")
    outside = None
    if total is not None and reserved is not None and free is not None and nums.sources.get("total") == "message":
        outside = max(total - reserved - free, 0)
    gap = max(reserved - allocated, 0) if reserved is not None and allocated is not None else None
    active = nums.int("active")
    pending = max(active - allocated, 0) if active is not None and allocated is not None else None
    if pending is None and snap is not None and snap.segments:
        pending = snap.pending

    diag = Diagnosis(verdict="none", status="healthy", title="", rule="", rule_text="", device=device, flavor=flavor)
    diag.inputs = _inputs(inputs)
    collect_evidence(diag, inputs, hit, nums, snap_oom, pool)

    decision: Optional[Decision] = None
    if rec is not None and rec.kind in ("npu_fraction", "npu_huge", "host_pinned", "npu_ge"):
        decision = Decision("oom_capacity", {"npu_fraction": "fraction_limit", "npu_huge": "impossible_size",
                                             "host_pinned": "host_memory", "npu_ge": "numbers_missing"}[rec.kind])
    elif q is not None:
        full = Reading(requested=nums.get("requested"), free=nums.get("free"), allocated=nums.get("allocated"),
                       reserved=nums.get("reserved"), total=nums.get("total"), allowed=nums.get("allowed"),
                       others=others_bytes)
        decision = judge(full)
    elif rec is not None:
        decision = _from_stats(stats, snap) if (stats or snap) else Decision("oom_capacity", "numbers_missing")
    elif (stats is not None and (stats.num_ooms or 0) > 0):
        decision = _from_stats(stats, snap)
    elif log is not None and log.driver_ooms:
        decision = _driver(log, usage, q)

    retries = stats.num_alloc_retries if stats is not None else None
    log_retries = log.retries if log is not None else None
    stranded = nums.int("inactive_split")
    diag.numbers = {
        "requested": q, "free": free, "total": total, "allowed": nums.int("allowed"), "allocated": allocated,
        "active": active, "reserved": reserved, "reserved_unallocated": gap, "pending_free": pending,
        "inactive_split": stranded, "largest_free_block": nums.int("largest_free_block"),
        "free_in_cache": nums.int("free_in_cache"), "releasable": nums.int("releasable"),
        "outside_pytorch": outside, "other_processes": others_bytes, "requested_bytes": nums.int("requested_bytes"),
    }
    diag.sources = {k: v for k, v in nums.sources.items() if k in diag.numbers}
    diag.ratios = {
        "gap_over_request": ratio(gap, q), "fragmentation": ratio(stranded, reserved),
        "cache_unused": ratio(gap, reserved),
        "external_fragmentation": snap.external_fragmentation(pool) if snap is not None else None,
    }
    diag.counts = {
        "num_alloc_retries": retries, "num_ooms": stats.num_ooms if stats is not None else None,
        "cache_flush_lines": log_retries, "segments": (stats.segments if stats is not None else None)
        if stats is not None and stats.segments is not None else (len(snap.segments) if snap is not None else None),
        "oom_messages": len(log.ooms) if log is not None else None,
    }
    conf_text = inputs.alloc_conf or (log.alloc_conf[1] if log is not None and log.alloc_conf else None)
    conf = parse_conf(conf_text)
    expandable_on = bool(snap is not None and snap.expandable) or (
        conf.get("expandable_segments", "").lower() == "true" and not (log and log.expandable_failed))
    release = inputs.release or (release_from_template(rec.template) if rec is not None else None)
    diag.release = release.text if release is not None else None

    if decision is not None:
        diag.status = "oom"
        diag.verdict, diag.rule = decision.verdict, decision.rule
        diag.rule_text = RULE_TEXT.get(decision.rule, EXTRA_RULES.get(decision.rule, ""))
        diag.title = title_for(decision, diag, flavor)
        if decision.fragmented_too and gap is not None and q is not None:
            diag.notes.append(f"the cache is fragmented too: reserved - allocated ({format_size(gap)}) covers the "
                              f"request ({format_size(q)}); see the fragmentation advice once the device is free")
    else:
        _risk(diag, stranded, reserved, retries, log_retries, log, stats, snap)

    _plan(diag, q, flavor, release, conf, expandable_on, log, usage, gap, free, total, allocated)
    diag.kb = _kb(diag, flavor, log)
    add_notes(diag, inputs, log, hit, stats, nums, pending, q, gap, conf, usage)
    return diag


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


