"""Each hostile input of issue #10 (tests/hardening/hostile.py) run by the CLI in a child
process: seconds and peak resident memory, next to the peer, the same command on a small
benign input of the same kind (a one-line plog, a normal OOM line, an empty stats dump ...),
which costs what the verb costs to start (imports, knowledge base). Medians of --runs runs.

    python bench/hostile_inputs.py [--runs 3] [--only NAME]

The goal is "within a second and 200 MB": the table prints the seconds above the peer and
the child's peak resident memory (VmHWM).
"""
from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from tests.hardening.hostile import CASES, OOM_LINE, Case, _plog, _w  # noqa: E402
from tests.hardening.runner import run_case  # noqa: E402


def benign(case: Case, d: Path) -> Case:
    """The same verb on a small valid input: the peer."""
    a = case.argv
    if case.program == "python":
        return Case(["-m", "runtime_sim", "list"] if a[1] == "runtime_sim" else ["-m", "runtime_sim.allocator", "traces"],
                    (0,), "", program="python")
    verb = a[0]
    if verb == "triage":
        return Case(["triage", str(_w(d / "plog" / "plog-216_20260724025100000.log", _plog()))], (0, 1), "")
    if verb == "explain":
        return Case(["explain", "507035"], (0,), "")
    if verb == "check":
        env = _w(d / "env", "PATH=/usr/bin\n")
        return Case(["check", "--root", str(d), "--env-file", str(env), "--only", "env", "--json"], (0, 1), "")
    if verb == "opcheck":
        m = _w(d / "ops.json", '{"schema": 1, "ops": ["aten::mm"]}')
        return Case(["opcheck", "compare", str(m), "--from", "2.1.0.post13", "--to", "2.4.0.post2"], (0, 1), "")
    if "--snapshot" in a:
        snap = _w(d / "snap.json", '{"segments": [{"device": 0, "total_size": 2097152, "blocks": '
                                   '[{"size": 2097152, "state": "inactive"}]}]}')
        return Case(["oom", "--snapshot", str(snap)], (0, 1), "")
    if "--stats" in a:
        st = _w(d / "stats.json", '{"allocated_bytes.all.current": 1, "reserved_bytes.all.current": 2}')
        return Case(["oom", "--stats", str(st)], (0, 1), "")
    if "--file" in a:
        return Case(["oom", "--file", str(_w(d / "w.log", OOM_LINE.format(dev="0", free="19.79 MiB") + "\n"))], (0, 1), "")
    return Case(["oom", OOM_LINE.format(dev="0", free="19.79 MiB")], (0, 1), "")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--only", default=None)
    args = ap.parse_args()
    print(f"{'input':34} {'exit':>4} {'s':>6} {'peer s':>7} {'s-peer':>7} {'peak MB':>8}  result")
    peers = {}
    worst_s = worst_mb = 0.0
    for name, build in CASES.items():
        if args.only and args.only not in name:
            continue
        secs, mbs, base_s = [], [], []
        for _ in range(args.runs):
            with tempfile.TemporaryDirectory() as d:
                case = build(Path(d))
                out = run_case(case, timeout=120)
                key = (case.program, case.argv[0] if case.program == "doctor" else case.argv[1],
                       next((o for o in ("--snapshot", "--stats", "--file") if o in case.argv), ""))
                if len(peers.get(key, [])) < args.runs:
                    with tempfile.TemporaryDirectory() as d2:
                        peers.setdefault(key, []).append(run_case(benign(case, Path(d2)), timeout=120).seconds)
                base_s = peers[key]
            secs.append(out.seconds)
            mbs.append(out.max_rss_mb)
        s, mb, base = statistics.median(secs), statistics.median(mbs), statistics.median(base_s)
        worst_s, worst_mb = max(worst_s, s - base), max(worst_mb, mb)
        last = (out.stderr.strip().splitlines() or out.stdout.strip().splitlines() or [""])[-1]
        print(f"{name:34} {out.code:>4} {s:>6.2f} {base:>7.2f} {s - base:>7.2f} {mb:>8.0f}  {last[:80]}")
    print(f"worst: {worst_s:.2f} s above the peer, {worst_mb:.0f} MB peak")
    return 0


if __name__ == "__main__":
    sys.exit(main())
