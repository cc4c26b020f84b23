"""Each hostile input of issue #10 (tests/hardening/hostile.py) run by the CLI in a child
process: seconds and peak resident memory, next to the peer, the same interpreter
starting and exiting (``python -c pass``), all medians of --runs runs.

    python bench/hostile_inputs.py [--runs 3] [--only NAME]

The goal is "within a second and 200 MB" of work beyond starting Python; the table prints
the seconds above the peer, and the peak MB of the child.
"""
from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from tests.hardening.hostile import CASES  # noqa: E402
from tests.hardening.runner import run_case  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--only", default=None)
    args = ap.parse_args()
    peer = []
    for _ in range(args.runs):
        t = time.monotonic()
        subprocess.run([sys.executable, "-c", "import ascend_doctor.cli"], check=True)
        peer.append(time.monotonic() - t)
    base = statistics.median(peer)
    print(f"peer: python -c 'import ascend_doctor.cli' {base:.2f} s (median of {args.runs})")
    print(f"{'input':34} {'exit':>4} {'s':>6} {'s-peer':>7} {'peak MB':>8}  result")
    worst_s = worst_mb = 0.0
    for name, build in CASES.items():
        if args.only and args.only not in name:
            continue
        secs, mbs = [], []
        for _ in range(args.runs):
            with tempfile.TemporaryDirectory() as d:
                case = build(Path(d))
                out = run_case(case, timeout=120)
            secs.append(out.seconds)
            mbs.append(out.max_rss_mb)
        s, mb = statistics.median(secs), statistics.median(mbs)
        worst_s, worst_mb = max(worst_s, s - base), max(worst_mb, mb)
        last = (out.stderr.strip().splitlines() or out.stdout.strip().splitlines() or [""])[-1]
        print(f"{name:34} {out.code:>4} {s:>6.2f} {s - base:>7.2f} {mb:>8.0f}  {last[:90]}")
    print(f"worst: {worst_s:.2f} s above the peer, {worst_mb:.0f} MB peak")
    return 0


if __name__ == "__main__":
    sys.exit(main())
