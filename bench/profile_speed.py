"""`profile` throughput and memory on a generated profile of >= 1 GB, next to a plain `csv` read.

    python bench/profile_speed.py [--size-mb 1024] [--dir /tmp/ascend-doctor-profile-bench] [--runs 3]

The profile is written once (and reused) by runtime_sim's simulated profiler: torch_npu
``*_ascend_pt`` runs of a dispatch-bound decoding job (kernel_details.csv, task_time.csv,
trace_view.json, op_statistic.csv, step_trace_time.csv), as many runs as it takes to reach the
size. Each measurement runs in a fresh process with a warm page cache:

- ``profile``: ``ascend_doctor.profile.analyze`` on the whole tree (every CSV row and every
  timeline event is read and classified);
- the peer: the same files read with the ``csv`` module (``csv.reader`` over every row of every
  file, CSV and JSON alike), nothing else done with the rows.

Reported: medians of MB/s for both and their ratio, and the peak RSS of ``profile`` on one run
and on the whole tree (flat memory: it must not grow with the size).
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Dict, List

ROOT = Path(__file__).resolve().parents[1]
MARKER = "bench-profile.json"
STEPS_PER_RUN = 2000

PROFILE = """
import json, resource, sys, time
def _hwm_kb():
    # the high-water mark of this process's own memory (ru_maxrss would include the parent's
    # RSS at fork: Linux carries it across exec)
    try:
        with open("/proc/self/status") as fh:
            for line in fh:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
sys.path.insert(0, {root!r})
from ascend_doctor.profile import analyze
t = time.perf_counter()
doc = analyze({paths!r})
dt = time.perf_counter() - t
d = doc["devices"]
print(json.dumps({{"seconds": dt, "rss_kb": _hwm_kb(),
                  "devices": len(d), "tasks": sum(x["tasks"] for x in d), "first": (doc["findings"] or [{{}}])[0].get("id")}}))
"""

PEER = """
import csv, json, resource, sys, time
def _hwm_kb():
    # the high-water mark of this process's own memory (ru_maxrss would include the parent's
    # RSS at fork: Linux carries it across exec)
    try:
        with open("/proc/self/status") as fh:
            for line in fh:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
csv.field_size_limit(1 << 30)
t = time.perf_counter()
rows = 0
for p in {files!r}:
    with open(p, newline="", encoding="utf-8") as fh:
        for row in csv.reader(fh):
            rows += 1
dt = time.perf_counter() - t
print(json.dumps({{"seconds": dt, "rows": rows, "rss_kb": _hwm_kb()}}))
"""


def generate(dest: Path, size_mb: int) -> None:
    sys.path.insert(0, str(ROOT))
    from runtime_sim import profiler

    dest.mkdir(parents=True, exist_ok=True)
    written, i = 0, 0
    while written < size_mb * (1 << 20):
        t = time.perf_counter()
        (run,) = profiler.write("dispatch_bound", dest / f"job{i}", seed=i, pid=3000000 + i, params={"steps": STEPS_PER_RUN})
        size = sum(f.stat().st_size for f in run.rglob("*") if f.is_file())
        written += size
        i += 1
        print(f"  wrote {run.name}: {size / 1e6:.0f} MB in {time.perf_counter() - t:.0f} s ({written / (1 << 20):.0f} MB)", file=sys.stderr)
    (dest / MARKER).write_text(json.dumps({"size_mb": size_mb, "runs": i}), encoding="utf-8")


def files_of(paths: List[Path]) -> List[str]:
    out = []
    for p in paths:
        for f in sorted(p.rglob("*")):
            if f.is_file() and f.suffix in (".csv", ".json") and f.name != MARKER:
                out.append(str(f))
    return out


def child(code: str) -> Dict:
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=3600)
    if proc.returncode != 0:
        raise SystemExit(f"bench child failed: {proc.stderr.strip()[-400:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size-mb", type=int, default=1024)
    ap.add_argument("--dir", default="/tmp/ascend-doctor-profile-bench")
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args()
    dest = Path(args.dir)
    meta = dest / MARKER
    if not meta.is_file() or json.loads(meta.read_text())["size_mb"] != args.size_mb:
        print(f"generating a {args.size_mb} MB profile under {dest} (once) ...", file=sys.stderr)
        generate(dest, args.size_mb)
    jobs = sorted(p for p in dest.iterdir() if p.is_dir())
    files = files_of(jobs)
    total = sum(os.path.getsize(f) for f in files)
    one = files_of(jobs[:1])
    one_bytes = sum(os.path.getsize(f) for f in one)
    for f in files:  # warm the page cache
        with open(f, "rb") as fh:
            while fh.read(1 << 24):
                pass
    ours, peer = [], []
    for _ in range(args.runs):
        r = child(PROFILE.format(root=str(ROOT), paths=[str(dest)]))
        ours.append(total / r["seconds"] / 1e6)
        p = child(PEER.format(files=files))
        peer.append(total / p["seconds"] / 1e6)
    small = child(PROFILE.format(root=str(ROOT), paths=[str(jobs[0])]))
    ours_mb, peer_mb = statistics.median(ours), statistics.median(peer)
    print(f"profile of {len(jobs)} runs, {len(files)} files, {total / 1e6:.0f} MB ({r['tasks']} device tasks, first finding {r['first']})")
    print(f"profile:        {ours_mb:7.1f} MB/s (median of {args.runs})")
    print(f"csv.reader:     {peer_mb:7.1f} MB/s (plain read of the same files, {p['rows']} rows)")
    print(f"ratio:          {ours_mb / peer_mb:.2f} of the plain csv read")
    print(f"peak RSS:       {small['rss_kb'] / 1024:.0f} MB on {one_bytes / 1e6:.0f} MB (one run), "
          f"{r['rss_kb'] / 1024:.0f} MB on {total / 1e6:.0f} MB (all runs); csv.reader {p['rss_kb'] / 1024:.0f} MB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
