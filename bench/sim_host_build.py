"""How long runtime_sim takes to build a simulated host, per scenario.

Peer, measured in the same run: ``shutil.copytree`` of the finished tree (same files,
same symlinks), i.e. the cost of merely putting those bytes on disk; the ratio shows
what deciding and rendering the host adds on top. Wall clock, median of N runs.

    python bench/sim_host_build.py [--runs 9] [--scenario NAME ...]
"""
from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from runtime_sim.host import build  # noqa: E402
from runtime_sim.scenarios import names  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=9)
    ap.add_argument("--scenario", nargs="*", default=["healthy_910b", "healthy_310p", "container_no_device_nodes", "cann_too_new_for_driver"])
    args = ap.parse_args()
    unknown = [s for s in args.scenario if s.replace("-", "_") not in names()]
    if unknown:
        ap.error(f"unknown scenario(s): {', '.join(unknown)}")
    print(f"{'scenario':<28} {'build':>9} {'copytree':>9} {'ratio':>6}   files")
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        for name in args.scenario:
            builds, copies = [], []
            for i in range(args.runs):
                t0 = time.perf_counter()
                host = build(name, base / f"{name}-{i}")
                builds.append(time.perf_counter() - t0)
                t0 = time.perf_counter()
                shutil.copytree(host.root, base / f"{name}-{i}-copy", symlinks=True)
                copies.append(time.perf_counter() - t0)
            files = sum(1 for _ in host.root.rglob("*"))
            b, c = statistics.median(builds), statistics.median(copies)
            print(f"{name:<28} {b * 1000:7.1f}ms {c * 1000:7.1f}ms {b / c:5.1f}x   {files}")


if __name__ == "__main__":
    main()
