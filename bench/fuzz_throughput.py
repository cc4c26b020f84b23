"""The fuzz surfaces of tests/hardening/fuzz.py run for a while each: inputs per second, the
inputs that raised anything but the surface's own input error, and linearity.

    python bench/fuzz_throughput.py [--seconds 3] [--seed 1] [--only NAME]

Per surface:
  inputs/s    mutated real samples (random edits: inserted text, digit runs of up to
              6,000 digits, brackets nested thousands deep, deletions, repeats, cuts)
              run through the parser or loader, and the peer: ``splitlines()`` of the same
              inputs (the least any line reader does), both as medians of 3 rounds;
  x8 ratio    time for the seed repeated 8 times over time for the seed once (linear: ~8;
              quadratic: ~64), median of 5;
  bad         inputs that raised anything else (printed, with the exception).
"""
from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from tests.hardening.fuzz import EDITS, mutate, surfaces  # noqa: E402


def random_edits(rng: random.Random):
    alphabet = "0123456789[]{}(),:'\"\\\n |-=.xeE\x00é中"
    out = []
    for _ in range(rng.randint(0, 4)):
        payload = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 24)))
        out.append((rng.random(), rng.choice(EDITS), payload, rng.randint(0, 100)))
    return out


def grow(seed, k: int):
    if isinstance(seed, (bytes, bytearray)):
        return bytes(seed) * k
    return "\n".join([seed] * k)


def timed(fn, value) -> float:
    t = time.perf_counter()
    try:
        fn(value)
    except BaseException:  # noqa: BLE001 - timing only; errors are counted in the main loop
        pass
    return time.perf_counter() - t


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=3.0)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--only", default=None)
    args = ap.parse_args()
    rng = random.Random(args.seed)
    print(f"{'surface':34} {'inputs':>7} {'inputs/s':>9} {'peer/s':>9} {'x8 ratio':>8} {'bad':>4}")
    total_inputs = 0
    total_bad = 0
    for s in surfaces():
        if args.only and args.only not in s.name:
            continue
        seeds = s.seeds()
        rates, peers = [], []
        bad = []
        n_total = 0
        for _ in range(3):
            values = []
            deadline = time.perf_counter() + args.seconds / 3
            spent = 0.0
            n = 0
            while time.perf_counter() < deadline:
                value = mutate(rng.choice(seeds), random_edits(rng))
                values.append(value)
                t = time.perf_counter()
                try:
                    s.run(value)
                except s.allowed:
                    pass
                except Exception as exc:  # noqa: BLE001 - this is what the bench looks for
                    bad.append((type(exc).__name__, str(exc)[:120], repr(value)[:160]))
                spent += time.perf_counter() - t
                n += 1
            rates.append(n / spent if spent else float("inf"))
            t = time.perf_counter()
            for v in values:
                (v.splitlines() if isinstance(v, (str, bytes)) else None)
            peer = time.perf_counter() - t
            peers.append(len(values) / peer if peer else float("inf"))
            n_total += n
        big = max(seeds, key=len)
        ratios = []
        for _ in range(5):
            one = timed(s.run, grow(big, 1))
            eight = timed(s.run, grow(big, 8))
            ratios.append(eight / one if one else float("nan"))
        total_inputs += n_total
        total_bad += len(bad)
        print(f"{s.name:34} {n_total:>7} {statistics.median(rates):>9.0f} {statistics.median(peers):>9.0f} "
              f"{statistics.median(ratios):>8.1f} {len(bad):>4}")
        for name, msg, value in bad[:3]:
            print(f"    {name}: {msg}\n      input: {value}")
    print(f"total: {total_inputs} inputs, {total_bad} raised an error other than the surface's own")
    return 1 if total_bad else 0


if __name__ == "__main__":
    sys.exit(main())
