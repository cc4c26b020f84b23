"""Triage throughput and memory on a generated plog tree, next to ``grep -c ERROR``.

    python bench/triage_throughput.py [--size-mb 1024] [--dir /tmp/ascend-doctor-bench] [--runs 3]

The tree is written once (and reused) with runtime_sim's plog writer: eight processes
(ranks 0-7) logging INFO noise from real line shapes, rank 5 hitting an AI Core exception
halfway, the other ranks timing out in HCCL 1836 s later. Each measurement runs in a
fresh process; the page cache is warmed first so both tools read from memory. Reported:
median MB/s of triage (the whole child process, start-up included) and of ``grep -r -c ERROR``
over the same files in the same run,
their ratio, and triage's peak RSS on one process's files and on the whole tree.
"""
from __future__ import annotations

import argparse
import json
import random
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import List

sys.path.insert(0, str(Path(__file__).resolve().parent))
from wall import wall  # noqa: E402

RANKS = 8
CULPRIT = 5
SECOND = 1_000_000
T0 = 1_760_000_000 * SECOND
MARKER = "bench-tree.json"

# bodies of real lines: RT docs/zh/FAQ (AI Core), hicann/hccl task_exec_stage.md (timeout),
# hicann/hccl debug_thinking.md (rank map)
AICORE = ("davinic_kernel_task.cc:1143", "{tid} PrintErrorInfoForDavinciTask:[INIT][DEFAULT]Aicore kernel execute failed, device_id={dev}, stream_id=2, report_stream_id=2, task_id=1, flip_num=0, fault kernel_name=Add_ee98c6628030785f610b924ab1557b31_high_performance_210000000")
TIMEOUT = ("task_exception_handler.cc:908", " [{tid}][TaskExecStage][Timeout][Host]Task run failed, base information is streamID:[2], taskID[21], tag[AllReduce_127.10.0.1%enp_60000_0_1761275812718970], AlgType(level 0-1-2):[fullmesh-ring-NHR].")
LOCAL_RANK = ("hccl_communicator_attrs.cc:330", " [{tid}][LocalRank Key Info]userRank[{rank}] hostIp[127.0.0.1] devicePhyId[{dev}] server[127.0.0.1] deviceIp[0.0.0.0] superPodId[0] useSuperPodMode[0] isStandardCard[0]")


def generate(root: Path, size_mb: int) -> None:
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from runtime_sim.plog.files import LogSettings, ProcessLog
    from runtime_sim.plog.noise import Noise

    per_rank = size_mb * (1 << 20) // RANKS
    settings = LogSettings(global_level=1, file_num=1000)  # INFO debug logs, keep every rolled file
    for rank in range(RANKS):
        pid = 10000 + rank
        log = ProcessLog(root, pid, "python3", settings)
        rng = random.Random(rank)
        noise = Noise(log, rng, rank)
        ts = noise.start(T0)
        src, body = LOCAL_RANK
        log.run("INFO", "HCCL", src, body.format(tid=pid, rank=rank, dev=rank), ts)
        written = 0
        step = 3600 * SECOND
        half = False
        while written < per_rank:
            noise.steady(ts, ts + step, 2000, max_lines=20000)
            ts += step
            written = sum(p.stat().st_size for p in log.paths) if log.paths else 0
            if not half and written >= per_rank // 2:
                half = True
                if rank == CULPRIT:
                    s, b = AICORE
                    log.debug("ERROR", "RUNTIME", s, b.format(tid=pid, dev=rank), ts)
                else:
                    s, b = TIMEOUT
                    log.debug("ERROR", "HCCL", s, b.format(tid=pid), ts + 1836 * SECOND)
        noise.exit(ts)
        log.close()
    (root / MARKER).write_text(json.dumps({"size_mb": size_mb, "ranks": RANKS}))


def files_of(root: Path) -> List[Path]:
    return sorted(p for p in root.rglob("*.log") if p.is_file())


_CHILD = r"""
import json, resource, sys, time
from ascend_doctor.triage.engine import triage_paths
t = time.perf_counter()
r = triage_paths(sys.argv[1:])
dt = time.perf_counter() - t
first = r.incidents[0] if r.incidents else None
print(json.dumps({"seconds": dt, "bytes": r.stats.bytes, "rss_kb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss,
                  "incidents": len(r.incidents), "first_rank": r.job.first_rank, "method": r.job.method,
                  "category": first.verdict.category if first else None}))
"""


def run_triage(paths: List[str]) -> dict:
    t = time.perf_counter()
    out = subprocess.run([sys.executable, "-c", _CHILD] + paths, capture_output=True, text=True, timeout=3600,
                         cwd=str(Path(__file__).resolve().parents[1]))
    wall = time.perf_counter() - t
    if out.returncode != 0:
        raise SystemExit(out.stderr)
    doc = json.loads(out.stdout)
    doc["wall"] = wall  # start-up (interpreter, imports, knowledge base) included
    return doc


def run_grep(root: Path) -> float:
    return wall(["grep", "-r", "-c", "ERROR", str(root)], limit=3600)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size-mb", type=int, default=1024)
    ap.add_argument("--dir", default="/tmp/ascend-doctor-bench")
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args()
    root = Path(args.dir) / f"tree-{args.size_mb}mb"
    if not (root / MARKER).exists():
        print(f"writing a {args.size_mb} MB plog tree under {root} ...", file=sys.stderr)
        t = time.perf_counter()
        generate(root, args.size_mb)
        print(f"  done in {time.perf_counter() - t:.0f} s", file=sys.stderr)
    files = files_of(root)
    total = sum(p.stat().st_size for p in files)
    mb = total / (1 << 20)
    run_grep(root)  # warm the page cache
    grep_s = statistics.median(run_grep(root) for _ in range(args.runs))
    triage_runs = [run_triage([str(root)]) for _ in range(args.runs)]
    triage_s = statistics.median(r["wall"] for r in triage_runs)
    one = [str(p) for p in files if "-10000_" in p.name]
    small = run_triage(one)
    big = triage_runs[-1]
    print(f"tree: {len(files)} files, {mb:.0f} MB ({args.size_mb} MB asked), {RANKS} ranks")
    print(f"grep -r -c ERROR : median {grep_s:.2f} s  = {mb / grep_s:8.1f} MB/s")
    print(f"ascend-doctor    : median {triage_s:.2f} s  = {mb / triage_s:8.1f} MB/s   ({args.runs} runs, start-up included)")
    print(f"ratio triage/grep: {grep_s / triage_s:.2f}  (aim >= 0.33)")
    print(f"peak RSS: {small['rss_kb'] / 1024:.0f} MB on {small['bytes'] / (1 << 20):.0f} MB (one rank), "
          f"{big['rss_kb'] / 1024:.0f} MB on {big['bytes'] / (1 << 20):.0f} MB (all ranks)")
    print(f"found: {big['incidents']} incidents, first failing rank {big['first_rank']} ({big['method']}), "
          f"category {big['category']}; expected rank {CULPRIT}")
    return 0 if big["first_rank"] == CULPRIT else 1


if __name__ == "__main__":
    sys.exit(main())
