"""Recording the ops of a 7B-parameter decoder built from its config, on CPU, without weights.

Subject: ``record_ops(mode="fake")`` around building the LLaMA-7B-shaped decoder of
examples/opcheck/decoder.py (6.7e9 parameters, 32 layers) and one forward pass
(``--train``: forward + backward of the LM loss), batch 1 x ``--seq`` tokens.
Peers, measured in the same run on the same model and input:
- ``meta``: the same build + forward under plain ``torch.device('meta')``, not recorded;
- ``fake``: the same build + forward under plain ``FakeTensorMode``, not recorded.
Each variant runs in its own child process (so peak memory is its own), ``--runs`` times;
the table shows medians of the in-process time (build + forward) and of peak RSS
(``ru_maxrss``, including the ~0.3 GB of an imported torch), and the ratio to each peer.
Goal from the issue: under 15 s and under 2 GB.

    python bench/opcheck_record.py [--runs 3] [--seq 2048] [--train]
"""
from __future__ import annotations

import argparse
import json
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Dict, List

REPO = Path(__file__).resolve().parents[1]
VARIANTS = ("record-fake", "meta", "fake")


def child(variant: str, seq: int, train: bool) -> Dict[str, Any]:
    import importlib.util

    import torch

    spec = importlib.util.spec_from_file_location("decoder", REPO / "examples" / "opcheck" / "decoder.py")
    dec = importlib.util.module_from_spec(spec)
    sys.modules["decoder"] = dec  # dataclasses look their module up here
    spec.loader.exec_module(dec)
    ops = None
    t0 = time.perf_counter()
    if variant == "record-fake":
        from ascend_doctor.opcheck.recorder import record_ops

        with record_ops(mode="fake") as rec:
            dec.run(dec.build("7b"), seq=seq, train=train)
        ops = {"distinct": len(rec.ops), "calls": sum(rec.ops.values())}
    else:
        if variant == "meta":
            ctx = torch.device("meta")
        else:
            from torch._subclasses.fake_tensor import FakeTensorMode

            ctx = FakeTensorMode(allow_non_fake_inputs=True)
        with ctx:
            dec.run(dec.build("7b"), seq=seq, train=train)
    seconds = time.perf_counter() - t0
    return {
        "variant": variant,
        "seconds": seconds,
        "maxrss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        "ops": ops,
        "params": dec.param_count(dec.CONFIGS["7b"]),
        "torch": torch.__version__,
    }


def run_child(variant: str, seq: int, train: bool) -> Dict[str, Any]:
    argv = [sys.executable, "-W", "ignore", __file__, "--child", variant, "--seq", str(seq)] + (["--train"] if train else [])
    p = subprocess.run(argv, capture_output=True, text=True, timeout=900, cwd=REPO)
    if p.returncode != 0:
        raise SystemExit(f"{variant} failed:\n{p.stderr[-2000:]}")
    return json.loads(p.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--seq", type=int, default=2048)
    ap.add_argument("--train", action="store_true")
    ap.add_argument("--child", choices=VARIANTS, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        print(json.dumps(child(args.child, args.seq, args.train)))
        return
    results: Dict[str, List[Dict[str, Any]]] = {v: [] for v in VARIANTS}
    for _ in range(args.runs):
        for v in VARIANTS:  # interleaved, so machine noise hits all variants alike
            results[v].append(run_child(v, args.seq, args.train))
    med = {v: (statistics.median(r["seconds"] for r in rs), statistics.median(r["maxrss_mb"] for r in rs)) for v, rs in results.items()}
    first = results["record-fake"][0]
    work = "forward+backward" if args.train else "forward"
    print(f"7B decoder ({first['params'] / 1e9:.2f}e9 params), batch 1 x {args.seq} tokens, {work}; "
          f"torch {first['torch']}; median of {args.runs} runs, each in its own process")
    print(f"recorded: {first['ops']['distinct']} distinct ops, {first['ops']['calls']} calls")
    print(f"{'variant':<14} {'time s':>8} {'peak RSS MB':>12}")
    for v in VARIANTS:
        print(f"{v:<14} {med[v][0]:>8.2f} {med[v][1]:>12.0f}")
    rt, rm = med["record-fake"]
    for peer in ("meta", "fake"):
        pt, pm = med[peer]
        print(f"record-fake / {peer:<5}: time x{rt / pt:.2f}, peak memory x{rm / pm:.2f}")
    verdict = "meets" if rt < 15 and rm < 2048 else "MISSES"
    print(f"goal (< 15 s, < 2 GB): {verdict} ({rt:.1f} s, {rm / 1024:.2f} GB)")


if __name__ == "__main__":
    main()
