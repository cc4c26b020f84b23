"""fleet's output: the JSON document (docs/output.md's envelope), text and Markdown."""
from __future__ import annotations

from collections import Counter
from typing import Any, Dict, List

from .. import output
from .compare import FIELDS, LABEL


def to_json(report: Any, skipped: List[Any]) -> Dict[str, Any]:
    doc = report.to_json()
    doc["skipped"] = [{"path": s.path, "reason": s.reason} for s in skipped]
    summary = {"nodes": len(report.nodes), "clean": len(report.clean), "differ_or_fail": len(report.to_fix),
               "skipped": len(skipped), "fix_first": doc["fix_first"][0] if doc["fix_first"] else None}
    return output.envelope(summary, doc)


def _majority_line(report: Any) -> str:
    parts = []
    for f in FIELDS:
        if f in report.majority:
            value, count = report.majority[f]
            parts.append(f"{LABEL[f]} {value}" + ("" if count == len(report.nodes) else f" ({count}/{len(report.nodes)})"))
    return " · ".join(parts) or "no versions in the reports"


def _problems(v: Any) -> List[str]:
    n = v.node
    bits = [d.text() for d in v.differs]
    if n.unhealthy:
        bits.append("unhealthy " + ", ".join(n.unhealthy[:4]) + (" ..." if len(n.unhealthy) > 4 else ""))
    for f in n.failing:
        bits.append(f"{f['status']} {f['id']}")
    return bits


def render_text(report: Any, skipped: List[Any], verbose: int = 0) -> str:
    n = len(report.nodes)
    to_fix = report.to_fix
    lines = [f"ascend-doctor fleet: {n} node{'s' if n != 1 else ''}",
             f"majority stack: {_majority_line(report)}",
             *[f"no majority for {LABEL[f]}: " + " and ".join(vals) + f" on {report.majority[f][1]} nodes each (the first is the reference)"
               for f, vals in report.ties.items()],
             f"{len(report.clean)} node{'s' if len(report.clean) != 1 else ''} run it and pass every check"
             + (f"; {len(to_fix)} differ or fail:" if to_fix else ".")]
    if to_fix:
        lines.append("")
        lines.append("fix first:")
        rows = []
        for i, v in enumerate(to_fix, 1):
            cell = _problems(v) or [""]
            if verbose:
                cell += [f"  {f['id']}: {f['summary']}" for f in v.node.failing] + [f"  report: {v.node.path}"]
            rows.append((f"{i}.", v.node.name, "\n".join(cell)))
        lines += output.table_lines(None, rows, right=(0,))
        failing = Counter(f["id"] for v in report.nodes for f in v.node.failing)
        if failing:
            lines.append("")
            lines.append("failing checks: " + ", ".join(f"{cid} on {c} node{'s' if c != 1 else ''}" for cid, c in failing.most_common()))
    if skipped:
        lines.append("")
        lines.append(f"skipped {len(skipped)} input{'s' if len(skipped) != 1 else ''}:")
        for s in skipped[:10]:
            lines.append(f"  {s.path}: {s.reason}")
    return "\n".join(lines) + "\n"


def render_md(report: Any, skipped: List[Any]) -> str:
    n = len(report.nodes)
    lines = [*output.md_heading("fleet", f"{n} nodes"), f"**Majority stack:** {_majority_line(report)}", "",
             f"{len(report.clean)} nodes run it and pass every check."]
    to_fix = report.to_fix
    if to_fix:
        lines.append("")
        lines += output.md_table(["#", "node", "what differs or fails"],
                                 [(i, f"`{v.node.name}`", "; ".join(_problems(v))) for i, v in enumerate(to_fix, 1)])
    if skipped:
        lines += ["", "Skipped: " + "; ".join(f"`{s.path}` ({s.reason})" for s in skipped[:10])]
    return "\n".join(lines) + "\n"
