"""``ascend-doctor oom`` on big inputs, next to a peer doing the least possible work.

    python bench/oom_analysis.py [--size-mb 512] [--dir /tmp/ascend-doctor-bench] [--runs 3]

1. Log scan: one plog file (``plog-<pid>_<ts>.log``) of INFO noise (runtime_sim's writer, real line shapes) with
   torch_npu's cache-flush lines spread through it and the OOM at the end, scanned by
   ``scan_paths`` (what ``oom --file`` does) and by ``grep -c "out of memory"`` in the same
   run. Reported: median MB/s of both and their ratio (aim >= 0.33, as for triage).
2. Snapshot: the serving trace's snapshot at its OOM with the full allocation history
   (runtime_sim replay, ``record_history``), its trace repeated to about 100k entries with
   Python frames, pickled; read by ``load_snapshot`` (restricted unpickler + facts) and
   by plain ``pickle.load`` of the same file (the peer). Reported: medians and ratio
   (aim <= 3x: the safety of refusing classes and the analysis must stay cheap).
Each measurement runs in a fresh process so page cache and imports are comparable.
"""
from __future__ import annotations

import argparse
import json
import pickle
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SECOND = 1_000_000
T0 = 1_760_000_000 * SECOND
RETRY = ('[ERROR] APP(4242,python3):2025-10-24-11:16:56.590.208 [log_inner.cpp:77]4242 build/CMakeFiles/'
         'torch_npu.dir/compiler_depend.ts:malloc:1147: "[PTA]:"Get a block from the existing pool failed. Try to '
         'free cached blocks and reallocate. This error log can be ignored."\n')


def make_log(path: Path, size_mb: int) -> None:
    sys.path.insert(0, str(REPO))
    import random

    from runtime_sim.allocator import load_trace, replay
    from runtime_sim.plog.files import LogSettings, ProcessLog
    from runtime_sim.plog.noise import Noise

    trace = load_trace("llm_serving_kv_concat")
    oom = replay(trace, trace.allocator()).error.console_line()
    work = path.parent / "gen"
    log = ProcessLog(work, 4242, "python3", LogSettings(global_level=1, file_num=1000))
    noise = Noise(log, random.Random(1), 0)
    ts = noise.start(T0)
    target = size_mb << 20
    written = 0
    while written < target:
        noise.steady(ts, ts + 3600 * SECOND, 2000, max_lines=20000)
        ts += 3600 * SECOND
        written = sum(p.stat().st_size for p in log.paths) if log.paths else 0
    log.close()
    with open(path, "wb") as out:
        for i, p in enumerate(sorted(log.paths)):
            data = p.read_bytes()
            out.write(data)
            out.write(RETRY.encode())  # flushes spread through the run
        out.write(("[ERROR] APP(4242,python3):2025-10-24-11:17:00.000.000 [log_inner.cpp:77]4242 " + oom + "\n").encode())
    for p in log.paths:
        p.unlink()


def make_snapshot(path: Path) -> None:
    sys.path.insert(0, str(REPO))
    from runtime_sim.allocator import load_trace, replay

    trace = load_trace("llm_serving_kv_concat")
    alloc = trace.allocator(record_history=True)
    replay(trace, alloc)
    snap = alloc.snapshot()
    frames = [{"filename": "/srv/app/serve.py", "line": 97, "name": "step"},
              {"filename": "/usr/lib/python3.10/site-packages/torch/nn/modules/module.py", "line": 1518,
               "name": "_call_impl"}]
    entries = snap["device_traces"][0]
    grown = []
    while len(grown) < 100_000:
        grown.extend(dict(e, frames=frames) for e in entries)
    snap["device_traces"][0] = grown[-100_000:]
    path.write_bytes(pickle.dumps(snap, protocol=4))


_SCAN = r"""
import json, sys, time
from ascend_doctor.memory.message import scan_paths
t = time.perf_counter(); f = scan_paths([sys.argv[1]]); dt = time.perf_counter() - t
print(json.dumps({"seconds": dt, "ooms": len(f.ooms), "retries": f.retries}))
"""
_SNAP = r"""
import json, pickle, sys, time
t = time.perf_counter()
if sys.argv[2] == "doctor":
    from ascend_doctor.memory.snapshot import load_snapshot
    s = load_snapshot(sys.argv[1]); n = len(s.oom_events)
else:
    with open(sys.argv[1], "rb") as fh:
        d = pickle.load(fh)
    n = len(d["segments"])
print(json.dumps({"seconds": time.perf_counter() - t, "n": n}))
"""


def child(code: str, *args: str) -> dict:
    out = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, timeout=3600, cwd=str(REPO))
    if out.returncode != 0:
        raise SystemExit(out.stderr)
    return json.loads(out.stdout)


def grep(path: Path) -> float:
    t = time.perf_counter()
    subprocess.run(["grep", "-c", "out of memory", str(path)], stdout=subprocess.DEVNULL, timeout=3600)
    return time.perf_counter() - t


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size-mb", type=int, default=512)
    ap.add_argument("--dir", default="/tmp/ascend-doctor-bench")
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args()
    base = Path(args.dir)
    base.mkdir(parents=True, exist_ok=True)
    log = base / f"oom-{args.size_mb}mb" / "plog-4242_20251024111652000.log"
    log.parent.mkdir(exist_ok=True)
    if not log.exists():
        print(f"writing {log} ...", file=sys.stderr)
        make_log(log, args.size_mb)
    snap = base / "oom-snapshot-100k.pickle"
    if not snap.exists():
        make_snapshot(snap)
    mb = log.stat().st_size / (1 << 20)
    grep(log)  # warm the page cache
    g = statistics.median(grep(log) for _ in range(args.runs))
    runs = [child(_SCAN, str(log)) for _ in range(args.runs)]
    s = statistics.median(r["seconds"] for r in runs)
    print(f"log: {mb:.0f} MB, {runs[0]['retries']} cache-flush lines, {runs[0]['ooms']} OOM line")
    print(f"grep -c 'out of memory' : median {g:.2f} s = {mb / g:8.1f} MB/s")
    print(f"oom --file scan         : median {s:.2f} s = {mb / s:8.1f} MB/s   ({args.runs} runs)")
    print(f"ratio scan/grep         : {g / s:.2f}  (aim >= 0.33)")
    smb = snap.stat().st_size / (1 << 20)
    peer = statistics.median(child(_SNAP, str(snap), "pickle")["seconds"] for _ in range(args.runs))
    ours = statistics.median(child(_SNAP, str(snap), "doctor")["seconds"] for _ in range(args.runs))
    print(f"snapshot: {smb:.1f} MB pickle, 100k trace entries")
    print(f"pickle.load             : median {peer:.3f} s")
    print(f"load_snapshot (safe)    : median {ours:.3f} s")
    print(f"ratio load_snapshot/pickle.load: {ours / peer:.2f}  (aim <= 3)")
    return 0 if runs[0]["ooms"] == 1 else 1


if __name__ == "__main__":
    sys.exit(main())
