"""``ascend-doctor fleet REPORT...``: what differs across nodes, and which to fix first.

Inputs: `check --json` files, bundles, or directories holding them (walked; *.json and
*.tar.gz). Exit codes: 0 every node runs the majority stack and passes its checks, 1 some
node differs or fails a check, 2 bad input (a missing path, no readable report), 3
internal error.
"""
from __future__ import annotations

import json
import sys
from typing import List, Optional, TextIO

from ..errors import UsageError
from ..fleet.compare import FIELDS, LABEL, compare
from ..fleet.load import FleetInputError, Skipped, collect_paths, load_report, name_nodes
from .common import output_format


def run_fleet(paths: List[str], fmt: str = "text", json_flag: bool = False, verbose: int = 0,
              stream: Optional[TextIO] = None) -> int:
    fmt = output_format(fmt, json_flag)
    out = stream or sys.stdout
    if not paths:
        raise UsageError("give node reports: `check --json` files, bundles or directories of them")
    try:
        files, skipped = collect_paths(paths)
    except FleetInputError as exc:
        raise UsageError(str(exc)) from None
    nodes = []
    for path in files:
        node, why = load_report(path)
        if node is None:
            skipped.append(Skipped(path, why or "unreadable"))
        else:
            nodes.append(node)
    if not nodes:
        first = f" ({skipped[0].path}: {skipped[0].reason})" if skipped else ""
        raise UsageError(f"no node report among {', '.join(paths)}{first}")
    name_nodes(nodes)
    report = compare(nodes)
    if fmt == "json":
        doc = report.to_json()
        doc["skipped"] = [{"path": s.path, "reason": s.reason} for s in skipped]
        out.write(json.dumps(doc, indent=2) + "\n")
    elif fmt == "md":
        out.write(render_md(report, skipped))
    else:
        out.write(render_text(report, skipped, verbose))
    return 1 if report.to_fix else 0


def _majority_line(report) -> str:
    parts = []
    for f in FIELDS:
        if f in report.majority:
            value, count = report.majority[f]
            parts.append(f"{LABEL[f]} {value}" + ("" if count == len(report.nodes) else f" ({count}/{len(report.nodes)})"))
    return " · ".join(parts) or "no versions in the reports"


def _problems(v) -> List[str]:
    n = v.node
    bits = [d.text() for d in v.differs]
    if n.unhealthy:
        bits.append("unhealthy " + ", ".join(n.unhealthy[:4]) + (" ..." if len(n.unhealthy) > 4 else ""))
    for f in n.failing:
        bits.append(f"{f['status']} {f['id']}")
    return bits


def LABEL_OF(field_name: str) -> str:
    return LABEL[field_name]


def render_text(report, skipped, verbose: int = 0) -> str:
    n = len(report.nodes)
    to_fix = report.to_fix
    lines = [f"ascend-doctor fleet: {n} node{'s' if n != 1 else ''}",
             f"majority stack: {_majority_line(report)}",
             *[f"no majority for {LABEL_OF(f)}: " + " and ".join(vals) + f" on {report.majority[f][1]} nodes each (the first is the reference)"
               for f, vals in report.ties.items()],
             f"{len(report.clean)} node{'s' if len(report.clean) != 1 else ''} run it and pass every check"
             + (f"; {len(to_fix)} differ or fail:" if to_fix else ".")]
    if to_fix:
        lines.append("")
        lines.append("fix first:")
        width = max(len(v.node.name) for v in to_fix)
        for i, v in enumerate(to_fix, 1):
            probs = _problems(v)
            lines.append(f"  {i:>2}. {v.node.name:<{width}}  {probs[0] if probs else ''}")
            for p in probs[1:]:
                lines.append(f"      {'':<{width}}  {p}")
            if verbose:
                for f in v.node.failing:
                    lines.append(f"      {'':<{width}}    {f['id']}: {f['summary']}")
                lines.append(f"      {'':<{width}}    report: {v.node.path}")
        from collections import Counter

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


def render_md(report, skipped) -> str:
    n = len(report.nodes)
    lines = [f"### ascend-doctor fleet: {n} nodes", "", f"**Majority stack:** {_majority_line(report)}", "",
             f"{len(report.clean)} nodes run it and pass every check."]
    to_fix = report.to_fix
    if to_fix:
        lines += ["", "| # | node | what differs or fails |", "|---|---|---|"]
        for i, v in enumerate(to_fix, 1):
            lines.append(f"| {i} | `{v.node.name}` | " + "; ".join(p.replace("|", "\\|") for p in _problems(v)) + " |")
    if skipped:
        lines += ["", "Skipped: " + "; ".join(f"`{s.path}` ({s.reason})" for s in skipped[:10])]
    return "\n".join(lines) + "\n"
