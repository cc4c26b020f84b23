"""Triage throughput on one large console log (a serving framework's stdout), next to ``grep -c ERROR``.

    python bench/console_throughput.py [--size-mb 100] [--dir /tmp/ascend-doctor-bench] [--runs 3]

A plog tree is scanned for a few needles (bench/triage_throughput.py); a console log is read
line by line, because tracebacks, CANN error blocks and wrapped messages span lines. The log
is written once from the shapes of real vLLM / vLLM-Ascend lines (vllm-omni#512 and #1199,
vllm-ascend#2396), with their numbers and request ids varied so that lines do not repeat
verbatim, and ends in one out-of-memory error. Reported: the median time of triage (the whole
process) and of ``grep -c ERROR`` on the same file in the same run, and their ratio.
"""
from __future__ import annotations

import argparse
import random
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from wall import wall  # noqa: E402

SHAPES = [
    "INFO {mm}-{dd} {t} [shm_broadcast.py:289] vLLM message queue communication handle: Handle(local_reader_ranks=[0], "
    "buffer_handle=(1, 10485760, 10, 'psm_{hex8}'), local_subscribe_addr='ipc:///tmp/{hex8}-6118-4d18-9764-9af842ed91f2')",
    "WARNING {mm}-{dd} {t} [registry.py:582] Model architecture Qwen2_5OmniModel is already registered, and will be "
    "overwritten by the new model class vllm_ascend.models.qwen2_5_omni_thinker:AscendQwen2_5OmniThinkerForConditionalGeneration.",
    "> [Gloo] Rank {n} is connected to {n} peer ranks. Expected number of connected peer ranks is : {n}",
    "[Stage-0] INFO {mm}-{dd} {t} [npu_worker.py:57] Worker {n}: Initialized device and distributed environment.",
    "(VllmWorker rank={n} pid={pid}) INFO {mm}-{dd} {t} [multiproc_executor.py:492] request chatcmpl-{hex32} finished",
]
LAST = ("(VllmWorker rank=0 pid=1273) ERROR 08-28 07:44:50 [multiproc_executor.py:492] RuntimeError: NPU out of memory. "
        "Tried to allocate 2.00 GiB (NPU 0; 60.97 GiB total capacity; 58.10 GiB already allocated; 58.10 GiB current active; "
        "120.00 MiB free; 58.50 GiB reserved in total by PyTorch)\n")


def generate(path: Path, size_mb: int) -> None:
    rng = random.Random(7)
    hexa = "0123456789abcdef"
    written = 0
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8") as fh:
        while written < size_mb << 20:
            line = rng.choice(SHAPES).format(
                mm=f"{rng.randint(1, 12):02d}", dd=f"{rng.randint(1, 28):02d}",
                t=f"{rng.randint(0, 23):02d}:{rng.randint(0, 59):02d}:{rng.randint(0, 59):02d}",
                n=rng.randint(0, 15), pid=rng.randint(1000, 99999),
                hex8="".join(rng.choice(hexa) for _ in range(8)), hex32="".join(rng.choice(hexa) for _ in range(32))) + "\n"
            fh.write(line)
            written += len(line)
        fh.write(LAST)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size-mb", type=int, default=100)
    ap.add_argument("--dir", default="/tmp/ascend-doctor-bench")
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args()
    log = Path(args.dir) / f"console-{args.size_mb}mb.log"
    if not log.exists():
        generate(log, args.size_mb)
    mb = log.stat().st_size / (1 << 20)
    doctor = [sys.executable, "-m", "ascend_doctor", "triage", str(log)]
    grep = ["grep", "-c", "ERROR", str(log)]
    wall(grep)  # warm the page cache
    grep_s = statistics.median(wall(grep) for _ in range(args.runs))
    triage_s = statistics.median(wall(doctor, limit=3600) for _ in range(args.runs))
    print(f"console log: {mb:.0f} MB, {sum(1 for _ in log.open('rb'))} lines")
    print(f"grep -c ERROR : median {grep_s:.2f} s  = {mb / grep_s:8.1f} MB/s")
    print(f"ascend-doctor : median {triage_s:.2f} s  = {mb / triage_s:8.1f} MB/s   ({args.runs} runs, start-up included)")
    print(f"ratio triage/grep: {grep_s / triage_s:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
