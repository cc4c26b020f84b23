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
from ..fleet.compare import compare
from ..fleet.load import FleetInputError, Skipped, collect_paths, load_report, name_nodes
from ..fleet.render import render_md, render_text, to_json
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
        out.write(json.dumps(to_json(report, skipped), indent=2) + "\n")
    elif fmt == "md":
        out.write(render_md(report, skipped))
    else:
        out.write(render_text(report, skipped, verbose))
    return 1 if report.to_fix else 0
