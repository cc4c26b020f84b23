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
import sys
import tempfile
import time
from pathlib import Path
from typing import Dict, List

sys.path.insert(0, str(Path(__file__).resolve().parent))
from wall import wall  # noqa: E402


def timed(argv: List[str], runs: int) -> List[float]:
    return [wall(argv) for _ in range(runs)]


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

    import compileall

    import runtime_sim

    compileall.compile_dir(str(Path(__file__).resolve().parents[1] / "ascend_doctor"), quiet=1)  # as installed
    with tempfile.TemporaryDirectory() as tmp:
        built = runtime_sim.build(args.scenario, Path(tmp))
        root, env_file = Path(built.root), Path(built.env_file)
        cli = [sys.executable, "-m", "ascend_doctor", "check", "--root", str(root), "--env-file", str(env_file)]
        commands = {"check --json": cli + ["--json"], "check (text)": cli}
        if importlib.util.find_spec("torch") is not None:
            commands["collect_env"] = [sys.executable, "-m", "torch.utils.collect_env"]
        times: Dict[str, List[float]] = {k: [] for k in commands}
        for _ in range(args.runs):  # interleaved: a burst of load hits every command alike
            for name, argv in commands.items():
                times[name] += timed(argv, 1)
        inner = in_process(root, env_file, args.runs)
        med = {k: statistics.median(v) for k, v in times.items()}
        print(f"scenario {args.scenario}, {args.runs} interleaved runs each, medians:")
        print(f"  ascend-doctor check --json (whole command) {med['check --json'] * 1000:8.0f} ms")
        print(f"  ascend-doctor check, text  (whole command) {med['check (text)'] * 1000:8.0f} ms")
        print(f"  ascend-doctor check (checks only)          {statistics.median(inner) * 1000:8.0f} ms")
        if "collect_env" not in med:
            print("  python -m torch.utils.collect_env         (torch not installed: no peer measured)")
            return
        print(f"  python -m torch.utils.collect_env          {med['collect_env'] * 1000:8.0f} ms")
        print(f"  ratio collect_env / check --json           {med['collect_env'] / med['check --json']:8.1f}x")
        print(f"  ratio collect_env / check, text            {med['collect_env'] / med['check (text)']:8.1f}x")


if __name__ == "__main__":
    main()
