"""Speed of the knowledge base: loading it, and matching candidate lines.

Triage calls ``KnowledgeBase.match`` only on candidate lines (errors, warnings with
codes); this measures that call on a corpus of such lines and puts it next to peers
measured in the same run:
  * naive: the same entries matched the obvious way - every regex and keyword group of
    every entry tried on every line (no triggers, no code index);
  * grep: ``grep -c -P`` with all KB patterns in one alternation over the same lines
    written to a file (C speed, but it only says "something matched", not what).
The corpus is every single-line example of the KB (real lines from public sources),
with pid and timestamp varied so nothing is cached, plus ERROR lines that match no
entry, in the proportion given by --miss. Reports medians of --runs repeats and the
triage throughput that the match rate allows when a given share of lines are candidates.

    python bench/kb_match.py [--runs 5] [--lines 20000] [--miss 0.5]
"""
from __future__ import annotations

import argparse
import random
import re
import shutil
import statistics
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Callable, List

MISSES = [
    "[ERROR] RUNTIME({pid},python):2026-08-04-06:53:{s:02d}.437.447 [stream.cc:1548]{tid} SyncWait:wait for stream {n} returned late",
    "[ERROR] GE({pid},python):2025-05-19-15:59:{s:02d}.739.753 [graph_builder.cc:288]{tid} Build: node add_{n} has no output desc",
    "[WARNING] HCCL({pid},python):2025-10-24-11:18:{s:02d}.597.044 [hccl_comm.cc:908] [{tid}]config {n} uses default value",
    "[ERROR] ASCENDCL({pid},python):2022-11-30-23:31:{s:02d}.729.325 [tensor.cpp:899]{tid} aclCheck: tensor {n} shape differs, retry",
]


def corpus(n_lines: int, miss: float, seed: int = 7) -> List[str]:
    from ascend_doctor import kb

    rng = random.Random(seed)
    hits = [ex.text for e in kb.load().entries for ex in e.examples if "\n" not in ex.text]
    out = []
    for i in range(n_lines):
        if rng.random() < miss:
            line = rng.choice(MISSES).format(pid=rng.randint(100, 99999), tid=rng.randint(100, 99999), s=i % 60, n=i)
        else:
            line = rng.choice(hits)
            line = re.sub(r"\((\d+),", lambda m: "(%d," % rng.randint(100, 99999), line, count=1)  # vary the pid
            line = re.sub(r"\.(\d{3})\.(\d{3})", lambda m: ".%03d.%03d" % (rng.randint(0, 999), rng.randint(0, 999)), line, count=1)
        out.append(line)
    return out


def naive_matcher() -> Callable[[str], int]:
    from ascend_doctor import kb
    from ascend_doctor.kb.codes import extract_codes

    base = kb.load()
    rules = [(e.rule, set(e.rule.codes)) for e in base.entries]

    def match(line: str) -> int:
        keys = set(extract_codes(line))
        hits = 0
        for rule, codes in rules:
            if any(v.regex.search(line) for v in rule.unless):
                continue
            if keys & codes or any(p.regex.search(line) for p in rule.patterns) or any(
                all(w in line for w in g) for g in rule.keywords
            ):
                hits += 1
        return hits

    return match


def median_rate(fn: Callable[[str], object], lines: List[str], runs: int) -> float:
    rates = []
    for _ in range(runs):
        t0 = time.perf_counter()
        for line in lines:
            fn(line)
        rates.append(len(lines) / (time.perf_counter() - t0))
    return statistics.median(rates)


def grep_rate(lines: List[str], runs: int) -> float:
    from ascend_doctor import kb

    grep = shutil.which("grep")
    if not grep:
        return float("nan")
    alternation = "|".join("(?:%s)" % re.sub(r"\?P<\w+>", "", p.regex.pattern) for e in kb.load().entries for p in e.rule.patterns)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "lines.log"
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")
        pattern = Path(tmp) / "pattern"
        pattern.write_text(alternation, encoding="utf-8")
        rates = []
        for _ in range(runs):
            t0 = time.perf_counter()
            res = subprocess.run([grep, "-c", "-P", "-f", str(pattern), str(path)], capture_output=True, timeout=300)
            if res.returncode not in (0, 1):
                return float("nan")
            rates.append(len(lines) / (time.perf_counter() - t0))
    return statistics.median(rates)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--lines", type=int, default=20000)
    ap.add_argument("--miss", type=float, default=0.5, help="share of candidate lines that match no entry")
    args = ap.parse_args()

    t0 = time.perf_counter()
    from ascend_doctor import kb

    base = kb.load()
    t_entries = time.perf_counter() - t0
    t0 = time.perf_counter()
    stats = base.stats()
    t_tables = time.perf_counter() - t0
    print(f"load: entries {t_entries * 1000:.0f} ms, code tables {t_tables * 1000:.0f} ms; {stats}")

    lines = corpus(args.lines, args.miss)
    mean_len = sum(len(line) + 1 for line in lines) / len(lines)
    ours = median_rate(base.match, lines, args.runs)
    naive = median_rate(naive_matcher(), lines, max(1, args.runs // 2))
    grep = grep_rate(lines, args.runs)
    print(f"corpus: {len(lines)} candidate lines, mean {mean_len:.0f} bytes, {args.miss:.0%} match nothing")
    print(f"kb.match   {ours:10.0f} lines/s  {ours * mean_len / 1e6:6.2f} MB/s of candidate lines")
    print(f"naive      {naive:10.0f} lines/s  {naive * mean_len / 1e6:6.2f} MB/s   ours/naive = {ours / naive:.1f}x")
    if grep == grep:
        print(f"grep -c -P {grep:10.0f} lines/s  {grep * mean_len / 1e6:6.2f} MB/s   ours/grep  = {ours / grep:.2f}x (grep only counts)")
    else:
        print("grep -P    not available or rejected the patterns")
    budget = 30.0  # MB/s triage must reach
    for share in (0.01, 0.05, 0.20):
        ceiling = ours * mean_len / share / 1e6
        print(f"  with {share:.0%} of lines candidates, matching alone allows {ceiling:8.0f} MB/s of log (goal {budget:.0f})")


if __name__ == "__main__":
    main()
