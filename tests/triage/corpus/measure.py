"""Triage every case of the real-failure corpus and measure it, per part (PROTOCOL.md).

    python -m tests.triage.corpus.measure [--part dev|test] [--misses]
    python -m tests.triage.corpus.measure --fresh FILE [FILE ...]

prints top-1 category accuracy, the rate of "no incidents", and the confusion matrix for
each part. The test part is for measuring only: read its misses to record them, never to
write a rule (PROTOCOL.md, "The split").

``--fresh`` triages a collection round that is not in ``cases/`` yet (files in the same
format), before any rule is written from it: the figure for both parts together, the
development misses by name, the test misses only counted (PROTOCOL.md, "Fresh cases").
"""
from __future__ import annotations

import io
import json
import sys
from collections import Counter, defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Dict, List, Optional

import yaml

from ascend_doctor.model import CATEGORIES

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from split import part as part_of  # noqa: E402



@dataclass
class Outcome:
    case: Dict[str, str]
    part: str
    got: str  # a category, or "none"
    title: str
    kb: Optional[str]
    runner_up: Optional[str]

    @property
    def right(self) -> bool:
        return self.got == self.case["category"]


def load_cases(paths: Optional[List[Path]] = None) -> List[Dict[str, str]]:
    cases: List[Dict[str, str]] = []
    for path in paths if paths is not None else sorted((HERE / "cases").glob("*.yaml")):
        for case in yaml.safe_load(path.read_text(encoding="utf-8")) or []:
            case["file"] = path.name
            cases.append(case)
    return cases


def triage_case(case: Dict[str, str]) -> Outcome:
    from ascend_doctor.commands.triage import run_triage

    out = io.StringIO()
    run_triage(["-"], fmt="json", out=out, err=io.StringIO(), stdin=io.BytesIO(case["paste"].encode("utf-8")))
    doc = json.loads(out.getvalue() or "{}")
    incidents = doc.get("incidents") or []
    if not incidents:
        return Outcome(case, part_of(case["url"]), "none", "", None, None)
    top = incidents[0]
    runner = (top.get("runner_up") or {}).get("category")
    return Outcome(case, part_of(case["url"]), top["category"], top["title"], top.get("kb"), runner)


def measure(cases: Optional[List[Dict[str, str]]] = None) -> List[Outcome]:
    return [triage_case(c) for c in (cases if cases is not None else load_cases())]


def kb_cited_urls() -> set:
    """Every thread the knowledge base cites (an example's source or a link). Some test cases
    come from threads that entries older than the corpus already cited; they are reported apart."""
    root = HERE.parents[2] / "ascend_doctor" / "kb" / "data" / "rules"
    urls = set()
    for path in root.glob("*.yaml"):
        for entry in (yaml.safe_load(path.read_text(encoding="utf-8")) or {}).get("entries") or []:
            urls.update(str(x.get("source", "")).strip() for x in entry.get("examples") or [])
            urls.update(str(u).strip() for u in entry.get("links") or [])
    return urls


def by_default(outcomes: List[Outcome]) -> int:
    """Right answers that are "Unrecognised error" on a case of `other`: right without knowing anything."""
    return sum(o.right and o.title == "Unrecognised error" for o in outcomes)


def summary(outcomes: List[Outcome], part: str) -> Dict[str, object]:
    mine = [o for o in outcomes if o.part == part]
    n = len(mine)
    right = sum(o.right for o in mine)
    none = sum(o.got == "none" for o in mine)
    confusion: Dict[str, Counter] = defaultdict(Counter)
    for o in mine:
        confusion[o.case["category"]][o.got] += 1
    runner_right = sum(not o.right and o.runner_up == o.case["category"] for o in mine)
    cited = kb_cited_urls()
    unseen = [o for o in mine if o.case["url"].strip() not in cited]
    named = [o for o in mine if o.case["category"] != "other"]
    return {"named": len(named), "named_right": sum(o.right for o in named), "by_default": by_default(mine),
            "unseen": len(unseen), "unseen_right": sum(o.right for o in unseen), "part": part, "cases": n, "right": right, "accuracy": right / n if n else 0.0,
            "none": none, "none_rate": none / n if n else 0.0, "confusion": confusion,
            "runner_right": runner_right, "top2": (right + runner_right) / n if n else 0.0}


def render(s: Dict[str, object]) -> str:
    lines = [f"{s['part']}: {s['right']}/{s['cases']} top-1 category right ({100 * s['accuracy']:.1f} %), "
             f"'no incidents' on {s['none']} ({100 * s['none_rate']:.1f} %); the runner-up is right on "
             f"{s['runner_right']} of the {s['cases'] - s['right']} misses (top-2 {100 * s['top2']:.1f} %)"]
    if s["by_default"]:
        lines.append(f"  {s['by_default']} of the right answers are 'Unrecognised error' on a case of `other` (right by default); "
                     f"on the {s['named']} cases of the nine named categories: {s['named_right']} right "
                     f"({100 * s['named_right'] / max(s['named'], 1):.1f} %)")
    if s["unseen"] < s["cases"]:
        lines.append(f"  on the {s['unseen']} cases from threads the knowledge base does not cite: {s['unseen_right']} right "
                     f"({100 * s['unseen_right'] / max(s['unseen'], 1):.1f} %)")
    confusion = s["confusion"]
    cols = list(CATEGORIES) + ["none"]
    short = {c: c.replace("device_busy_permission", "busy").replace("version_mismatch", "version")
             .replace("unsupported_op", "unsupp").replace("oom_fragmentation", "oom_frag").replace("oom_capacity", "oom_cap")
             .replace("driver_init", "driver").replace("aicore_exec", "aicore").replace("hccl_comm", "hccl") for c in cols}
    lines.append("  want \\ got   " + " ".join(f"{short[c]:>8}" for c in cols))
    for want in CATEGORIES:
        row = confusion.get(want)
        if not row:
            continue
        lines.append(f"  {short[want]:<12} " + " ".join(f"{row.get(c, 0) or '.':>8}" for c in cols))
    return "\n".join(lines)


def fresh(paths: List[Path]) -> List[str]:
    """The report on a round that is not in the corpus yet."""
    known = {c["id"] for c in load_cases()}
    cases = load_cases(paths)
    repeated = sorted(c["id"] for c in cases if c["id"] in known)
    if repeated:
        return ["already in the corpus: " + ", ".join(repeated)]
    outcomes = measure(cases)
    right = sum(o.right for o in outcomes)
    none = sum(o.got == "none" for o in outcomes)
    lines = [f"fresh: {right}/{len(outcomes)} top-1 category right "
             f"({100 * right / len(outcomes) if outcomes else 0:.1f} %), 'no incidents' on {none}, "
             f"{by_default(outcomes)} right by default ('Unrecognised error' on a case of `other`)"]
    for p in ("dev", "test"):
        mine = [o for o in outcomes if o.part == p]
        lines.append(f"  {p}: {sum(o.right for o in mine)}/{len(mine)}")
    lines += [f"  MISS {o.case['id']}: want {o.case['category']} got {o.got} ({o.kb or o.title})"
              for o in outcomes if o.part == "dev" and not o.right]
    return lines


def main(argv: List[str]) -> int:
    if argv[:1] == ["--fresh"]:
        paths = [Path(a) for a in argv[1:]]
        missing = [str(p) for p in paths if not p.is_file()]
        if not paths or missing:
            print("--fresh takes the case files of a new round" + (": not a file: " + ", ".join(missing) if missing else ""),
                  file=sys.stderr)
            return 2
        report = fresh(paths)
        print("\n".join(report))
        return 2 if report[0].startswith("already") else 0
    if any(a in ("-h", "--help") for a in argv) or any(a.startswith("-") and a not in ("--part", "--misses") for a in argv):
        print(__doc__.strip())  # never measure (and print the test part) on a mistyped request
        return 0 if any(a in ("-h", "--help") for a in argv) else 2
    if "--part" in argv and argv[argv.index("--part") + 1:argv.index("--part") + 2] not in (["dev"], ["test"]):
        print("--part takes dev or test", file=sys.stderr)
        return 2
    outcomes = measure()
    parts = [argv[argv.index("--part") + 1]] if "--part" in argv else ["dev", "test"]
    for p in parts:
        print(render(summary(outcomes, p)))
        if "--misses" in argv:
            for o in outcomes:
                if o.part == p and not o.right:
                    print(f"  MISS {o.case['id']}: want {o.case['category']} got {o.got} ({o.kb or o.title})")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
