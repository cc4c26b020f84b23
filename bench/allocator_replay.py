"""Replay speed of the simulated caching allocator, in events per second.

Usage: python bench/allocator_replay.py [--runs N] [--json]

Each of the three fragmentation traces is replayed through
``runtime_sim.allocator.CachingAllocator`` with the default config (until the
OOM, then on past it with stop_on_oom=False) and with expandable_segments:True,
and, as the peer measured in the same run, through a bump allocator: a dict of
live keys and a running address counter with no pools, no reuse and no stats --
the cost floor of replaying the same events in Python. The ratio says how many
times slower the modelled allocator decisions are than that floor. Numbers are
medians of ``--runs`` runs (wall clock, time.perf_counter).

This is the full replay (every memory_stats() counter, the snapshot, the OOM texts). The
what-if of ``oom simulate`` keeps only its figures and runs on
``runtime_sim.allocator.whatif_replay``: bench/oom_whatif.py measures that one.
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
from runtime_sim.allocator.traces import Trace  # noqa: E402


class BumpAllocator:
    """The peer: hands out increasing addresses, forgets freed memory."""

    def __init__(self) -> None:
        self.next = 0
        self.live: Dict[str, int] = {}
        self.in_use = 0

    def replay(self, trace: Trace) -> int:
        done = 0
        for op, key, nbytes, _label in trace.events:
            if op == "alloc":
                self.live[key] = nbytes
                self.next += (nbytes + 511) // 512 * 512
                self.in_use += nbytes
            elif op == "free":
                self.in_use -= self.live.pop(key, 0)
            done += 1
        return done


def _time(fn) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def measure(runs: int) -> List[Dict[str, object]]:
    rows: List[Dict[str, object]] = []
    for name in list_traces():
        trace = load_trace(name)
        events = len(trace)
        peer = [_time(lambda: BumpAllocator().replay(trace)) for _ in range(runs)]
        peer_med = statistics.median(peer)
        for label, conf in (("default", ""), ("expandable", "expandable_segments:True")):
            # the allocator is built outside the timed region
            times = []
            outcome = ""
            for _ in range(runs):
                alloc = trace.allocator(conf, profile="7.2.0")
                start = time.perf_counter()
                result = replay(trace, alloc, stop_on_oom=False)
                times.append(time.perf_counter() - start)
                ooms = alloc.memory_stats()["num_ooms"]
                outcome = "completed" if result.completed else "first OOM at event %d, %d OOMs" % (
                    result.failed_event, ooms)
            med = statistics.median(times)
            rows.append({
                "trace": name, "config": label, "events": events,
                "sim_events_per_s": events / med, "peer_events_per_s": events / peer_med,
                "slowdown_vs_peer": med / peer_med, "sim_median_s": med,
                "peer_median_s": peer_med, "outcome": outcome, "runs": runs,
            })
    return rows


def main(argv: List[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--json", action="store_true", help="print JSON instead of a table")
    args = parser.parse_args(argv)
    if args.runs < 1:
        parser.error("--runs must be >= 1")
    rows = measure(args.runs)
    if args.json:
        print(json.dumps({"schema": 1, "benchmark": "allocator_replay", "rows": rows}, indent=2))
        return 0
    print("allocator replay, medians of %d runs; peer = dict bump allocator (same events)" % args.runs)
    print("%-22s %-10s %7s %12s %12s %8s  %s" % ("trace", "config", "events", "sim ev/s",
                                                "peer ev/s", "ratio", "outcome"))
    for r in rows:
        print("%-22s %-10s %7d %12.0f %12.0f %7.1fx  %s" % (
            r["trace"], r["config"], r["events"], r["sim_events_per_s"], r["peer_events_per_s"],
            r["slowdown_vs_peer"], r["outcome"]))
    total_events = sum(r["events"] for r in rows)
    total_sim = sum(r["sim_median_s"] for r in rows)
    total_peer = sum(r["peer_median_s"] for r in rows)
    print("overall: sim %.0f events/s, peer %.0f events/s, sim is %.1fx slower than the peer"
          % (total_events / total_sim, total_events / total_peer, total_sim / total_peer))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
