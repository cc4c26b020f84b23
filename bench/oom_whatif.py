"""Speed of the OOM what-if replay (``ascend-doctor oom simulate``), in allocator events per second.

Usage: python bench/oom_whatif.py [--runs N] [--large-requests N] [--json] [--clock cpu|wall]

Traces: the three fragmentation traces of runtime_sim and a large generated one (the LLM
serving trace with ``--large-requests`` requests, 25000 by default: about 920k events, a
serving process's allocations over many hours). Each is replayed the way ``oom simulate``
replays it: compiled once (``runtime_sim.allocator.whatif_replay.compile_trace``), then under
each of its default settings (default, expandable_segments:True, max_split_size_mb with the
value it advises, garbage_collection_threshold:0.8), each on a fresh allocator built outside
the timed region by ``ascend_doctor.memory.whatif.build_allocator``.

Measured in the same run, over the same events:

* the peer: a plain loop -- tuple unpacking, a branch on the operation and a dict of live keys,
  the cost of walking the events in Python with no allocator at all;
* the previous what-if path (``replay`` through ``CachingAllocator``, every statistic and the
  snapshot state kept), for the fragmentation traces (``--reference-large`` adds the large one).

Per row: the median replay time of ``--runs`` runs; events/s = events / that time. Per trace,
"all settings" is the whole what-if: compiling plus every setting (events x settings / time).
CPU time by default (time.process_time: on a machine shared with other jobs, wall-clock time
measures the neighbours as much as the code); ``--clock wall`` uses time.perf_counter. The
goal is >= 1 M events/s for every row.
"""
from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Dict, List

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from ascend_doctor.memory.whatif import TraceInput, build_allocator, default_confs, simulate  # noqa: E402
from runtime_sim.allocator import list_traces, load_trace, parse_alloc_conf, replay  # noqa: E402
from runtime_sim.allocator.whatif_replay import compile_trace, replay_outcome  # noqa: E402

GOAL = 1_000_000
CLOCK = {"cpu": time.process_time, "wall": time.perf_counter}


def plain_loop(events) -> int:
    live: Dict[str, int] = {}
    n = 0
    for op, key, nbytes, _label in events:
        if op == "alloc":
            live[key] = nbytes
        elif op == "free":
            live.pop(key, None)
        n += 1
    return n


def _median_time(fn, runs: int, clock) -> float:
    times = []
    for _ in range(runs):
        t0 = clock()
        fn()
        times.append(clock() - t0)
    return statistics.median(times)


def measure_trace(name: str, trace, runs: int, clock, reference: bool) -> List[Dict[str, object]]:
    ti = TraceInput(name=name, capacity=trace.device_capacity_bytes, non_torch=trace.non_torch_bytes,
                    events=trace.events, source="runtime_sim")
    n = len(trace.events)
    # the settings as oom simulate resolves them (max_split_size_mb:{auto} gets its value)
    confs = [o.conf for o in simulate(ti, default_confs(None)) if o.error is None]
    loop_s = _median_time(lambda: plain_loop(trace.events), runs, clock)
    compile_s = _median_time(lambda: compile_trace(trace.events), runs, clock)
    compiled = compile_trace(trace.events)
    rows: List[Dict[str, object]] = []
    for conf in confs:
        parsed = parse_alloc_conf(conf)
        times, ref_times = [], []
        outcome = ""
        for _ in range(runs):
            alloc = build_allocator(ti, parsed)
            t0 = clock()
            result = replay_outcome(compiled, alloc)
            times.append(clock() - t0)
            outcome = "finishes" if result.completed else "OOM at event %d" % result.failed_event
        if reference:
            for _ in range(runs):
                alloc = build_allocator(ti, parsed)
                t0 = clock()
                replay(trace, alloc, stop_on_oom=False)
                ref_times.append(clock() - t0)
        med = statistics.median(times)
        ref = statistics.median(ref_times) if ref_times else None
        rows.append({"trace": name, "config": conf or "default", "events": n,
                     "replay_events_per_s": n / med, "plain_loop_events_per_s": n / loop_s,
                     "replay_over_loop": med / loop_s, "replay_median_s": med, "plain_loop_median_s": loop_s,
                     "previous_events_per_s": n / ref if ref else None,
                     "speedup_over_previous": ref / med if ref else None,
                     "outcome": outcome, "runs": runs})
    total = compile_s + sum(r["replay_median_s"] for r in rows)
    prev = [r["previous_events_per_s"] for r in rows]
    rows.append({"trace": name, "config": "all settings", "events": n * len(confs),
                 "replay_events_per_s": n * len(confs) / total, "plain_loop_events_per_s": n / loop_s,
                 "replay_over_loop": total / (loop_s * len(confs)), "replay_median_s": total,
                 "plain_loop_median_s": loop_s * len(confs), "compile_median_s": compile_s,
                 "previous_events_per_s": (n * len(confs) / sum(n / p for p in prev)) if all(prev) else None,
                 "speedup_over_previous": None, "outcome": "compile + %d settings" % len(confs), "runs": runs})
    last = rows[-1]
    if last["previous_events_per_s"]:
        last["speedup_over_previous"] = last["replay_events_per_s"] / last["previous_events_per_s"]
    return rows


def measure(runs: int, clock, large_requests: int, reference_large: bool) -> List[Dict[str, object]]:
    rows: List[Dict[str, object]] = []
    for name in list_traces():
        rows += measure_trace(name, load_trace(name), runs, clock, True)
    if large_requests:
        large = load_trace("llm_serving_kv_concat", requests=large_requests)
        rows += measure_trace("llm_serving x%d req" % large_requests, large, runs, clock, reference_large)
    return rows


def main(argv: List[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--large-requests", type=int, default=25000, help="requests of the large trace (0: none)")
    ap.add_argument("--reference-large", action="store_true", help="also time the previous path on the large trace")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--clock", choices=sorted(CLOCK), default="cpu")
    args = ap.parse_args(argv)
    if args.runs < 1:
        ap.error("--runs must be >= 1")
    if args.large_requests < 0:
        ap.error("--large-requests must be >= 0")
    rows = measure(args.runs, CLOCK[args.clock], args.large_requests, args.reference_large)
    settings_rows = [r for r in rows if r["config"] != "all settings"]
    slowest = min(r["replay_events_per_s"] for r in settings_rows)
    if args.json:
        print(json.dumps({"schema": 1, "benchmark": "oom_whatif", "clock": args.clock, "goal_events_per_s": GOAL,
                          "rows": rows, "slowest_row_events_per_s": slowest, "goal_met": slowest >= GOAL}, indent=2))
        return 0
    print("oom what-if replay, medians of %d runs (%s time); peer = plain loop over the same events; "
          "previous = replay() through CachingAllocator" % (args.runs, args.clock))
    print("%-24s %-34s %8s %12s %12s %7s %12s %8s  %s" % ("trace", "setting", "events", "replay ev/s", "loop ev/s",
                                                        "ratio", "previous", "speedup", "outcome"))
    for r in rows:
        prev = "%12.0f" % r["previous_events_per_s"] if r["previous_events_per_s"] else "%12s" % "-"
        speed = "%7.1fx" % r["speedup_over_previous"] if r["speedup_over_previous"] else "%8s" % "-"
        print("%-24s %-34s %8d %12.0f %12.0f %6.1fx %s %s  %s" % (
            r["trace"], r["config"], r["events"], r["replay_events_per_s"], r["plain_loop_events_per_s"],
            r["replay_over_loop"], prev, speed, r["outcome"]))
    print("ratio = replay time / plain-loop time over the same events (all settings: per setting)")
    print("goal %d events/s per setting: %s (slowest row %.0f events/s)" % (GOAL, "met" if slowest >= GOAL else "NOT met",
                                                                           slowest))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
