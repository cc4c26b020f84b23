"""OOM what-if: replay one allocation trace through the simulated caching allocator under
several PYTORCH_NPU_ALLOC_CONF settings and compare peak reserved, stranded bytes and
whether it runs out of memory.

Traces come in three forms:

* the name of a runtime_sim fragmentation trace (``training_varlen``, ``llm_serving_kv_concat``,
  ``video_diffusion``);
* a trace file (JSON): ``{"format": "ascend-doctor.alloc-trace", "device_capacity_bytes": N,
  "non_torch_bytes": N, "events": [["alloc", key, nbytes, label], ["free", key, 0, label], ...]}``
  -- the event tuples of ``runtime_sim.allocator.traces`` (also ``record_stream``,
  ``empty_cache``, ``non_torch``); ``write_trace`` writes one;
* a memory snapshot with history (``torch.npu.memory._record_memory_history()`` then
  ``_dump_snapshot()``, or torch_npu's ``OOM_SNAPSHOT_ENABLE=1`` dump; pickle or JSON): its
  ``device_traces`` ``alloc`` / ``free_completed`` entries become alloc / free events keyed by
  address, and an ``oom`` entry becomes the allocation that failed (its rounded size); the
  allocator's own segment and map entries are not replayed: the simulated allocator makes
  those decisions again. The device size is the free memory plus the reserved
  memory at the OOM entry, unless ``capacity`` is given.

The simulated allocator is ``runtime_sim.allocator`` (imported lazily, only here): a model of
torch_npu's NPUCachingAllocator per release line. Its decisions, not a real device, make
the numbers: they say which setting helps, not how many bytes a real run will reserve.
The replay is ``runtime_sim.allocator.whatif_replay``: the trace is compiled once for every
setting, and each setting runs the allocator's decisions on compact state that keeps only
the figures shown here (about 1 M events per second per setting on a shared 2-core machine,
bench/oom_whatif.py); a trace with ``record_stream`` events goes through the full ``replay``.
"""
from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Sequence, Tuple

from ..core.units import format_size
from ..inputs import os_message
from ..output import envelope, md_heading, md_table, table_lines
from .advice import max_split_mb
from .errors import MemoryInputError
from .input_file import open_input
from .snapshot import _load_stream

TRACE_FORMAT = "ascend-doctor.alloc-trace"
OPS = ("alloc", "free", "record_stream", "empty_cache", "non_torch")
MAX_EVENTS = 50_000_000
GC_CONF = "garbage_collection_threshold:0.8"


@dataclass
class TraceInput:
    name: str
    capacity: int
    non_torch: int
    events: List[Tuple[str, str, int, str]]
    source: str  # runtime_sim | trace-file | snapshot
    notes: List[str] = field(default_factory=list)


@dataclass
class Outcome:
    conf: str
    completed: bool
    ooms: int
    first_oom_event: Optional[int]
    first_oom_label: str
    tried_to_allocate: Optional[int]
    peak_reserved: int
    peak_allocated: int
    stranded: int  # inactive_split_bytes at the first OOM, or at the end
    cached_unused: int  # reserved - allocated at the same moment
    alloc_retries: int
    seconds: float
    error: Optional[str] = None  # the setting was refused (as torch_npu refuses it)
    notes: List[str] = field(default_factory=list)

    def to_json(self) -> Dict[str, Any]:
        return dict(self.__dict__)


def _int(value: Any, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise MemoryInputError(f"{what}: must be a whole number of bytes, 0 or more (got {value!r})")
    return value


def trace_from_doc(doc: Any, name: str) -> TraceInput:
    """A trace file (dict with ``events``) or a snapshot (dict with ``device_traces``)."""
    if isinstance(doc, dict) and "events" in doc:
        events_raw = doc["events"]
        if not isinstance(events_raw, list):
            raise MemoryInputError(f"{name}: 'events' must be a list")
        if len(events_raw) > MAX_EVENTS:
            raise MemoryInputError(f"{name}: more than {MAX_EVENTS} events")
        events: List[Tuple[str, str, int, str]] = []
        for i, ev in enumerate(events_raw):
            if not isinstance(ev, (list, tuple)) or len(ev) not in (3, 4) or ev[0] not in OPS:
                raise MemoryInputError(f"{name}: event {i + 1}: expected [op, key, nbytes(, label)] with op in {', '.join(OPS)}")
            events.append((ev[0], str(ev[1]), _int(ev[2], f"{name}: event {i + 1} nbytes"), str(ev[3]) if len(ev) == 4 else ""))
        cap = doc.get("device_capacity_bytes")
        return TraceInput(name=str(doc.get("name") or name), capacity=_int(cap, f"{name}: device_capacity_bytes") if cap is not None else 0,
                          non_torch=_int(doc.get("non_torch_bytes", 0), f"{name}: non_torch_bytes"), events=events, source="trace-file")
    if isinstance(doc, dict) and isinstance(doc.get("device_traces"), list):
        return _from_history(doc, name)
    raise MemoryInputError(f"{name}: neither an allocation trace (with 'events') nor a memory snapshot with 'device_traces'")


def _from_history(doc: Dict[str, Any], name: str) -> TraceInput:
    traces = doc["device_traces"]
    per_device = [t for t in traces if isinstance(t, list)]
    device = max(range(len(per_device)), key=lambda d: len(per_device[d])) if per_device else 0
    entries = per_device[device] if per_device else []
    if not entries:
        raise MemoryInputError(f"{name}: the snapshot has no allocation history (record it with "
                               "torch.npu.memory._record_memory_history() before the run, or OOM_SNAPSHOT_ENABLE=1)")
    has_completed = any(isinstance(e, dict) and e.get("action") == "free_completed" for e in entries)
    free_action = "free_completed" if has_completed else "free_requested"
    events: List[Tuple[str, str, int, str]] = []
    live: Dict[str, int] = {}
    orphan_frees = 0
    oom_free: Optional[int] = None
    for i, e in enumerate(entries):
        if not isinstance(e, dict):
            continue
        action = e.get("action")
        if action == "alloc":
            key = str(e.get("addr"))
            size = _int(e.get("size"), f"{name}: trace entry {i + 1} size")
            events.append(("alloc", key, size, f"history entry {i + 1}"))
            live[key] = size
        elif action == free_action:
            key = str(e.get("addr"))
            if live.pop(key, None) is None:
                orphan_frees += 1
                continue
            events.append(("free", key, 0, f"history entry {i + 1}"))
        elif action == "oom":
            # the failing request (its rounded size): replayed as the allocation that failed
            size = e.get("size")
            if isinstance(size, int) and not isinstance(size, bool) and size > 0:
                events.append(("alloc", f"oom{i}", size, f"history entry {i + 1} (the request that ran out of memory)"))
            free = e.get("device_free")
            if oom_free is None and isinstance(free, int) and not isinstance(free, bool) and free >= 0:
                oom_free = free
    notes = [f"device {device}: {len(events)} events from {len(entries)} history entries"]
    if orphan_frees:
        notes.append(f"the history starts mid-run: {orphan_frees} free(s) of blocks allocated before it were dropped, "
                     "so the replay starts with less memory in use than the real run")
    capacity = 0
    if oom_free is not None:
        reserved = 0
        for seg in doc.get("segments") or []:
            if isinstance(seg, dict) and seg.get("device", device) == device and isinstance(seg.get("total_size"), int):
                reserved += seg["total_size"]
        if reserved:
            capacity = reserved + oom_free
            notes.append(f"device size taken as reserved + free at the OOM ({capacity} bytes); --capacity overrides it")
    return TraceInput(name=name, capacity=capacity, non_torch=0, events=events, source="snapshot", notes=notes)


def load_input(spec: str, capacity: Optional[int] = None, non_torch: Optional[int] = None) -> TraceInput:
    """A runtime_sim trace name or a file (trace JSON, snapshot pickle/JSON)."""
    from runtime_sim.allocator import list_traces, load_trace

    if spec in list_traces():
        t = load_trace(spec)
        ti = TraceInput(name=t.name, capacity=t.device_capacity_bytes, non_torch=t.non_torch_bytes,
                        events=list(t.events), source="runtime_sim", notes=[t.title])
    else:
        fh = open_input(spec, "TRACE")
        try:
            data = _load_stream(fh if fh.seekable() else _buffer(fh), f"TRACE {spec}")
        except OSError as exc:
            raise MemoryInputError(os_message(f"TRACE {spec}", exc)) from None
        finally:
            if spec != "-":
                fh.close()
        ti = trace_from_doc(data, spec)
    if capacity is not None:
        ti.capacity = capacity
    if non_torch is not None:
        ti.non_torch = non_torch
    if ti.capacity <= 0:
        raise MemoryInputError(f"TRACE {spec}: the device size is not known: give --capacity (e.g. 64GiB)")
    if ti.non_torch >= ti.capacity:
        raise MemoryInputError(f"TRACE {spec}: --non-torch ({ti.non_torch} bytes) leaves nothing of the device")
    return ti


def _buffer(fh):
    import io

    return io.BytesIO(fh.read())


def write_trace(path: str, name: str, capacity: int, non_torch: int, events: Sequence[Tuple[str, str, int, str]]) -> None:
    with open(path, "w", encoding="utf-8") as fh:
        json.dump({"format": TRACE_FORMAT, "name": name, "device_capacity_bytes": capacity,
                   "non_torch_bytes": non_torch, "events": [list(e) for e in events]}, fh)


def default_confs(profile: Optional[str]) -> List[str]:
    from runtime_sim.allocator import get_profile

    keys = get_profile(profile).keys if profile else get_profile("7.3.0").keys
    confs = [""]
    if "expandable_segments" in keys:
        confs.append("expandable_segments:True")
    confs.append("max_split_size_mb:{auto}")
    confs.append(GC_CONF)
    return confs


def build_allocator(trace: TraceInput, parsed: Any, notes: Optional[List[str]] = None) -> Any:
    """A fresh simulated allocator for one setting (``parsed``: an AllocatorConfig), as
    ``simulate`` replays it: under garbage_collection_threshold without a memory fraction,
    the fraction is set to 1.0 (the collector acts only under one)."""
    from runtime_sim.allocator import CachingAllocator

    notes = notes if notes is not None else []
    alloc = CachingAllocator(trace.capacity, parsed, non_torch_bytes=trace.non_torch)
    if parsed.garbage_collection_threshold > 0 and parsed.per_process_memory_fraction is None:
        alloc.set_per_process_memory_fraction(1.0)
        if alloc._allowed is None:
            notes.append("garbage collection needs per_process_memory_fraction below 1 on this release")
        else:
            notes.append("memory fraction 1.0 set so that garbage collection can act")
    return alloc


def simulate(trace: TraceInput, confs: Sequence[str], profile: Optional[str] = None) -> List[Outcome]:
    """Replay the trace under each setting (``{auto}`` in a max_split_size_mb value becomes the
    value the doctor advises for the default's first failing request)."""
    from runtime_sim.allocator import AllocConfError, UnknownProfileError, parse_alloc_conf
    from runtime_sim.allocator.whatif_replay import compile_trace, eligible, reference_outcome, replay_outcome

    compiled = compile_trace(trace.events)  # once for every setting; None: the full replay
    outcomes: List[Outcome] = []
    auto_mb: Optional[int] = None
    for conf in confs:
        notes: List[str] = []
        if "{auto}" in conf:
            if auto_mb is None:
                first = next((o for o in outcomes if o.tried_to_allocate), None)
                auto_mb = max_split_mb(first.tried_to_allocate if first else None) or 512
                notes.append("value chosen from the default's failing request" if first else "no failing request: 512 MB")
            conf = conf.replace("{auto}", str(auto_mb))
        try:
            parsed = parse_alloc_conf(conf, profile)
        except UnknownProfileError as exc:
            raise MemoryInputError(str(exc).splitlines()[0]) from None
        except AllocConfError as exc:
            outcomes.append(Outcome(conf, False, 0, None, "", None, 0, 0, 0, 0, 0, 0.0,
                                    error=str(exc).splitlines()[0]))
            continue
        alloc = build_allocator(trace, parsed, notes)
        start = time.perf_counter()
        if compiled is not None and eligible(alloc):
            result = replay_outcome(compiled, alloc, stop_on_oom=False)
        else:
            result = reference_outcome(trace.events, alloc, stop_on_oom=False)
        seconds = time.perf_counter() - start
        outcomes.append(Outcome(
            conf=conf, completed=result.completed, ooms=result.num_ooms, first_oom_event=result.failed_event,
            first_oom_label=result.failed_label, tried_to_allocate=result.alloc_size,
            peak_reserved=result.peak_reserved, peak_allocated=result.peak_allocated,
            stranded=result.inactive_split_bytes, cached_unused=result.reserved - result.allocated,
            alloc_retries=result.num_alloc_retries, seconds=seconds, notes=notes))
    return outcomes


def report(trace: TraceInput, outcomes: List[Outcome], profile: Optional[str]) -> Dict[str, Any]:
    best = next((o for o in outcomes if o.completed and o.error is None), None)
    finishes = [o.conf or "default" for o in outcomes if o.completed and o.error is None]
    summary = {"settings": len(outcomes), "finish": len(finishes), "oom": sum(1 for o in outcomes if not o.completed),
               "best": (best.conf or "default") if best else None}
    return envelope(summary, {
        "trace": {"name": trace.name, "source": trace.source, "events": len(trace.events),
                  "device_capacity_bytes": trace.capacity, "non_torch_bytes": trace.non_torch, "notes": trace.notes},
        "profile": profile,
        "results": [o.to_json() for o in outcomes],
        "finishes": finishes,
        "advice": (f"PYTORCH_NPU_ALLOC_CONF={best.conf}" if best and best.conf else
                   ("the default finishes" if best else "no setting finishes: the trace needs more memory than the device has")),
    })


def render_text(doc: Dict[str, Any]) -> str:
    t = doc["trace"]
    lines = [f"oom simulate: {t['name']} ({t['source']}, {t['events']} events) on a {format_size(t['device_capacity_bytes'])} device"
             + (f", {format_size(t['non_torch_bytes'])} held outside PyTorch" if t["non_torch_bytes"] else "")
             + (f", torch_npu {doc['profile']} allocator" if doc["profile"] else "")]
    lines += [f"  {n}" for n in t["notes"]]
    head = ("setting", "outcome", "peak reserved", "stranded", "reserved-allocated", "retries")
    rows = []
    for r in doc["results"]:
        if r["error"]:
            rows.append((r["conf"] or "default", f"refused: {r['error'][:60]}", "-", "-", "-", "-"))
            continue
        outcome = "finishes" if r["completed"] else f"OOM at event {r['first_oom_event']} ({r['ooms']} OOMs)"
        rows.append((r["conf"] or "default", outcome, format_size(r["peak_reserved"]), format_size(r["stranded"]),
                     format_size(r["cached_unused"]), str(r["alloc_retries"])))
    lines.append("")
    lines += table_lines(head, rows, right=(2, 3, 4, 5))
    lines.append("")
    lines.append("  stranded = inactive split bytes (free, but pinned inside partly used segments) at the first OOM, or at the end")
    for r in doc["results"]:
        if not r["completed"] and r["first_oom_label"]:
            lines.append(f"  {r['conf'] or 'default'}: first OOM at {r['first_oom_label']} (Tried to allocate {format_size(r['tried_to_allocate'] or 0)})")
        for n in r["notes"]:
            lines.append(f"  {r['conf'] or 'default'}: {n}")
    lines.append(f"  advice: {doc['advice']}")
    return "\n".join(lines) + "\n"


def render_md(doc: Dict[str, Any]) -> str:
    t = doc["trace"]
    rows = []
    for r in doc["results"]:
        if r["error"]:
            rows.append((r["conf"] or "default", f"refused: {r['error']}", "", "", "", ""))
            continue
        outcome = "finishes" if r["completed"] else f"OOM at event {r['first_oom_event']} ({r['ooms']} OOMs)"
        rows.append((r["conf"] or "default", outcome, format_size(r["peak_reserved"]), format_size(r["stranded"]),
                     format_size(r["cached_unused"]), r["alloc_retries"]))
    lines = [*md_heading("oom simulate", t["name"]),
             f"{t['events']} events, {format_size(t['device_capacity_bytes'])} device.", ""]
    lines += md_table(("setting", "outcome", "peak reserved", "stranded", "reserved - allocated", "retries"), rows,
                      right=(2, 3, 4, 5))
    lines += ["", f"Advice: {doc['advice']}"]
    return "\n".join(lines) + "\n"
