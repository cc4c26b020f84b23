"""Speed of compat_matrix: the version grammar, loading the data, and one stack query.

Peers, measured in the same run:
  * grammar: ``packaging.version.Version`` on the same strings (only those it accepts);
  * data load: a bare ``yaml.load`` (C loader when present) of the same YAML files, i.e.
    the floor for any YAML-backed table, against our load + parse + index;
  * query: one ``evaluate`` of a six-component stack, against parsing its six versions.
Medians of N repeats; read the ratios, the machine is noisy.

    python bench/compat_matrix_speed.py [--runs 15]
"""
from __future__ import annotations

import argparse
import statistics
import time
from typing import Callable, List

STRINGS = [
    ("8.0.RC1", "cann"), ("8.0.0", "cann"), ("8.5.0", "cann"), ("9.1.0", "cann"), ("8.3.RC1", "cann"),
    ("24.1.rc2", "driver"), ("23.0.3", "driver"), ("25.2.0", "driver"), ("26.0.rc2", "driver"),
    ("7.1.0.11.220", "firmware"), ("7.7.0.1.231", "firmware"),
    ("2.1.0.post10", "torch_npu"), ("2.4.0rc1", "torch_npu"), ("2.9.0.post6", "torch_npu"),
    ("2.4.0", "torch"), ("3.10.12", "python"), ("6.0.rc3", "torch_npu_release"), ("26.1.0", "torch_npu_release"),
]


def median_ms(fn: Callable[[], object], runs: int, inner: int = 1) -> float:
    times: List[float] = []
    for _ in range(runs):
        t0 = time.perf_counter()
        for _ in range(inner):
            fn()
        times.append((time.perf_counter() - t0) / inner)
    return statistics.median(times) * 1000


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=15)
    args = ap.parse_args()

    import yaml
    from packaging.version import Version as Pep440

    from compat_matrix import evaluate, parse_version
    from compat_matrix.tables import DATA_DIR, DATA_FILES, clear_cache, load_matrix

    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    ours = median_ms(lambda: [parse_version(s, k) for s, k in STRINGS], args.runs, inner=200)
    peer = median_ms(lambda: [Pep440(s) for s, _ in STRINGS], args.runs, inner=200)
    print("%d runs, medians" % args.runs)
    print("  grammar, %d strings      ours %7.3f ms   packaging %7.3f ms   ratio %.2f"
          % (len(STRINGS), ours, peer, ours / peer))

    def ours_load() -> None:
        clear_cache()
        load_matrix()

    def peer_load() -> None:
        for name in DATA_FILES:
            with open(DATA_DIR / (name + ".yaml"), encoding="utf-8") as fh:
                yaml.load(fh, Loader=loader)

    lo, lp = median_ms(ours_load, args.runs), median_ms(peer_load, args.runs)
    print("  data load (cold)         ours %7.1f ms   yaml.load %7.1f ms   ratio %.2f" % (lo, lp, lo / lp))

    load_matrix()
    stack = {"chip": "910B3", "driver": "24.1.rc2", "firmware": "7.3.0.1.231", "cann": "8.0.0",
             "python": "3.10", "torch": "2.4.0", "torch_npu": "2.4.0.post2"}
    q = median_ms(lambda: evaluate(stack), args.runs, inner=50)
    p = median_ms(lambda: [parse_version(v, k) for k, v in stack.items() if k != "chip"], args.runs, inner=50)
    print("  evaluate, 7 components   ours %7.3f ms   parsing only %7.3f ms   ratio %.1f" % (q, p, q / p))


if __name__ == "__main__":
    main()
