"""How long `ascend-doctor check` (quick tier) takes on a simulated healthy 910B host.

Peer, measured in the same run: `python -m torch.utils.collect_env` (the report users
paste today), when torch is installed. Both are timed as whole commands, wall clock,
median of N runs; the machine is noisy, so read the ratio, not the absolute numbers.

    python bench/check_speed.py [--runs 7] [--scenario healthy-910b]
"""
from __future__ import annotations

import argparse
import importlib.util
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import List


def timed(argv: List[str], runs: int) -> List[float]:
    out = []
    for _ in range(runs):
        t0 = time.perf_counter()
        subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=300)
        out.append(time.perf_counter() - t0)
    return out


def in_process(root: Path, env_file: Path, runs: int) -> List[float]:
    from ascend_doctor.checks.base import Options
    from ascend_doctor.checks.runner import run_checks
    from ascend_doctor.commands.common import make_host

    out = []
    for _ in range(runs):
        t0 = time.perf_counter()
        run_checks(make_host(root, env_file), Options())
        out.append(time.perf_counter() - t0)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--scenario", default="healthy-910b")
    args = ap.parse_args()

    import runtime_sim

    with tempfile.TemporaryDirectory() as tmp:
        built = runtime_sim.build(args.scenario, Path(tmp))
        root, env_file = Path(built.root), Path(built.env_file)
        cli = [sys.executable, "-m", "ascend_doctor", "check", "--root", str(root), "--env-file", str(env_file), "--json"]
        whole = timed(cli, args.runs)
        inner = in_process(root, env_file, args.runs)
        print(f"scenario {args.scenario}, {args.runs} runs each, medians:")
        print(f"  ascend-doctor check (whole command)      {statistics.median(whole) * 1000:8.0f} ms")
        print(f"  ascend-doctor check (checks only)        {statistics.median(inner) * 1000:8.0f} ms")
        if importlib.util.find_spec("torch") is None:
            print("  python -m torch.utils.collect_env       (torch not installed: no peer measured)")
            return
        peer = timed([sys.executable, "-m", "torch.utils.collect_env"], max(3, args.runs // 2))
        print(f"  python -m torch.utils.collect_env        {statistics.median(peer) * 1000:8.0f} ms")
        print(f"  ratio collect_env / check                {statistics.median(peer) / statistics.median(whole):8.1f}x")


if __name__ == "__main__":
    main()
