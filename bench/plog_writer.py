"""Benchmark: how fast the simulated plog writer produces a multi-gigabyte log tree.

The writer builds a real-layout tree (``debug|run/plog/plog-<pid>_<ts>.log``, 20 MB
rotation) for several processes at ASCEND_GLOBAL_LOG_LEVEL=1 (INFO noise), every
line formatted, time-stamped and drawn from the seeded templates.

Peer, measured in the same run: writing the very same bytes with a plain Python loop
(``for line in lines: fh.write(line)``) into files of the same sizes — the cost of the
I/O alone, with nothing to compute. The ratio writer/peer says how much of the raw
write speed the simulation keeps. Medians of ``--repeat`` runs are printed.

    python bench/plog_writer.py            # 1 GiB tree, 8 processes, 3 runs
    python bench/plog_writer.py --mb 200 --repeat 1
"""
from __future__ import annotations

import argparse
import random
import resource
import shutil
import statistics
import sys
import time
from pathlib import Path
from typing import List, Tuple

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from runtime_sim.plog import FILE_MAX_BYTES, LogSettings, Noise, ProcessLog  # noqa: E402
from runtime_sim.plog.timefmt import SECOND, parse_start  # noqa: E402

MB = 1024 * 1024


def write_tree(out: Path, total_bytes: int, procs: int, seed: int) -> Tuple[float, int, List[Path]]:
    """Write the tree; returns (seconds, bytes, files)."""
    t0 = parse_start("2025-10-24 11:16:52")
    per_proc = total_bytes // procs
    files: List[Path] = []
    written = 0
    start = time.perf_counter()
    for i in range(procs):
        log = ProcessLog(out, 2111665 + i, "python3", LogSettings(global_level=1, file_num=1000))
        noise = Noise(log, random.Random(seed * 1000 + i), i % 8, [2111665 + i, 2111900 + i])
        ts = noise.open(noise.start(t0 + i * 7000))
        while log.bytes_written < per_proc:
            # ~5000 lines per simulated second; keep drawing until this process has its share
            noise.steady(ts, ts + 60 * SECOND, 200, max_lines=max(1000, (per_proc - log.bytes_written) // 170))
            ts += 60 * SECOND
        noise.exit(ts)
        log.close()
        written += log.bytes_written
        files.extend(log.paths)
    return time.perf_counter() - start, written, files


def peer_copy(files: List[Path], out: Path) -> Tuple[float, int]:
    """Write the same bytes with a plain per-line ``write`` loop; only the writes are timed."""
    out.mkdir(parents=True, exist_ok=True)
    elapsed = 0.0
    total = 0
    for n, path in enumerate(files):
        with open(path, encoding="ascii") as fh:
            lines = fh.readlines()
        start = time.perf_counter()
        with open(out / ("peer-%d.log" % n), "w", encoding="ascii", newline="\n") as dst:
            for line in lines:
                dst.write(line)
        elapsed += time.perf_counter() - start
        total += sum(len(line) for line in lines)
    return elapsed, total


def main(argv: List[str] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mb", type=int, default=1024, help="tree size in MiB (default 1024)")
    ap.add_argument("--procs", type=int, default=8, help="processes writing logs (default 8)")
    ap.add_argument("--repeat", type=int, default=3, help="runs; medians are reported (default 3)")
    ap.add_argument("--out", type=Path, default=ROOT / "bench" / "out" / "plog", help="scratch directory")
    ap.add_argument("--keep", action="store_true", help="keep the last tree")
    args = ap.parse_args(argv)
    if args.mb < 1 or args.procs < 1 or args.repeat < 1:
        print("plog_writer: --mb, --procs and --repeat must be positive", file=sys.stderr)
        return 2
    sim, peer = [], []
    for r in range(args.repeat):
        shutil.rmtree(args.out, ignore_errors=True)
        secs, nbytes, files = write_tree(args.out / "tree", args.mb * MB, args.procs, seed=r)
        biggest = max(p.stat().st_size for p in files)
        assert biggest <= FILE_MAX_BYTES, "rotation failed: %d bytes" % biggest
        psecs, pbytes = peer_copy(files, args.out / "peer")
        assert pbytes == nbytes
        sim.append(nbytes / MB / secs)
        peer.append(pbytes / MB / psecs)
        print("run %d: %.0f MiB in %d files (largest %.1f MiB): writer %.1f MiB/s, peer %.1f MiB/s"
              % (r + 1, nbytes / MB, len(files), biggest / MB, sim[-1], peer[-1]), file=sys.stderr)
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    w, p = statistics.median(sim), statistics.median(peer)
    print("plog writer: median %.1f MiB/s; peer (plain file.write loop, same bytes): median %.1f MiB/s; "
          "ratio writer/peer %.2f; tree %d MiB x %d runs; peak RSS %.0f MiB"
          % (w, p, w / p, args.mb, args.repeat, rss))
    if not args.keep:
        shutil.rmtree(args.out, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
