"""Speed of the OOM what-if replay (``ascend-doctor oom simulate``), in allocator events per second.

Usage: python bench/oom_whatif.py [--runs N] [--json]

Each fragmentation trace of runtime_sim is replayed through the simulated caching allocator
exactly as ``oom simulate`` does it (``runtime_sim.allocator.replay`` with stop_on_oom=False,
the allocator built outside the timed region) under the default setting and under
expandable_segments:True. The peer, measured in the same run over the same events, is a
plain loop: tuple unpacking, a branch on the operation and a dict of live keys -- the cost of
walking the events in Python with no allocator at all. The goal is >= 1 M events/s for the
replay. Numbers are medians of ``--runs`` runs of CPU time (time.process_time: on a machine
shared with other jobs, wall-clock time measures the neighbours as much as the code);
``--clock wall`` uses time.perf_counter instead.
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

from runtime_sim.allocator import list_traces, load_trace, replay  # noqa: E402

CONFS = (("default", ""), ("expandable", "expandable_segments:True"))


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


GOAL = 1_000_000
CLOCK = {"cpu": time.process_time, "wall": time.perf_counter}


def measure(runs: int, clock=time.process_time) -> List[Dict[str, object]]:
    rows: List[Dict[str, object]] = []
    for name in list_traces():
        trace = load_trace(name)
        n = len(trace)
        peer = []
        for _ in range(runs):
            t0 = clock()
            plain_loop(trace.events)
            peer.append(clock() - t0)
        peer_med = statistics.median(peer)
        for label, conf in CONFS:
            times = []
            outcome = ""
            for _ in range(runs):
                alloc = trace.allocator(conf)
                t0 = clock()
                result = replay(trace, alloc, stop_on_oom=False)
                times.append(clock() - t0)
                outcome = "finishes" if result.completed else "OOM at event %d" % result.failed_event
            med = statistics.median(times)
            rows.append({"trace": name, "config": label, "events": n, "replay_events_per_s": n / med,
                         "plain_loop_events_per_s": n / peer_med, "replay_over_loop": med / peer_med,
                         "replay_median_s": med, "plain_loop_median_s": peer_med, "outcome": outcome, "runs": runs})
    return rows


def main(argv: List[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--clock", choices=sorted(CLOCK), default="cpu")
    args = ap.parse_args(argv)
    if args.runs < 1:
        ap.error("--runs must be >= 1")
    rows = measure(args.runs, CLOCK[args.clock])
    total_events = sum(r["events"] for r in rows)
    total_replay = sum(r["replay_median_s"] for r in rows)
    total_loop = sum(r["plain_loop_median_s"] for r in rows)
    overall = {"replay_events_per_s": total_events / total_replay, "plain_loop_events_per_s": total_events / total_loop,
               "replay_over_loop": total_replay / total_loop}
    if args.json:
        print(json.dumps({"schema": 1, "benchmark": "oom_whatif", "clock": args.clock, "goal_events_per_s": GOAL,
                          "rows": rows, "overall": overall}, indent=2))
        return 0
    print("oom what-if replay, medians of %d runs (%s time); peer = plain loop over the same events" % (args.runs, args.clock))
    print("%-22s %-10s %7s %14s %14s %7s  %s" % ("trace", "config", "events", "replay ev/s", "loop ev/s", "ratio", "outcome"))
    for r in rows:
        print("%-22s %-10s %7d %14.0f %14.0f %6.1fx  %s" % (r["trace"], r["config"], r["events"], r["replay_events_per_s"],
                                                          r["plain_loop_events_per_s"], r["replay_over_loop"], r["outcome"]))
    print("overall: replay %.0f events/s, plain loop %.0f events/s, replay takes %.1fx the loop's time"
          % (overall["replay_events_per_s"], overall["plain_loop_events_per_s"], overall["replay_over_loop"]))
    slowest = min(r["replay_events_per_s"] for r in rows)
    print("goal %d events/s: %s (slowest row %.0f events/s)" % (GOAL, "met" if slowest >= GOAL else "NOT met", slowest))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
