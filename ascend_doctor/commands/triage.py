"""``ascend-doctor triage PATH...``: name the root cause of a failure from its logs.

Exit codes: 0 no incidents, 1 incidents found (an ``advisory`` one such as an operator
running on the CPU counts: it is the finding), 2 bad input (a missing path, or no log text
among the inputs: every one skipped, unreadable, empty, or a compressed file that decodes
to nothing; see "No text" in docs/inputs.md), 3 internal error.

What is not read is listed with its reason (``stats.skipped``): FIFOs, sockets, device
nodes and anything under /proc, /sys or /dev are never opened, and directory symlinks
leading out of a given directory are not followed (see ``triage.sources``). A pipe from
process substitution (``triage <(zcat old.log.gz)``) is read like ``-``.
"""
from __future__ import annotations

import sys
from typing import BinaryIO, List, Optional, TextIO

from ..triage import render
from ..triage.engine import triage_paths
from ..triage.knowledge import Knowledge
from ..triage.render import render_json
from ..triage.sources import InputError

FORMATS = ("text", "json", "md", "html")


def run_triage(
    paths: List[str],
    fmt: str = "text",
    out: Optional[TextIO] = None,
    err: Optional[TextIO] = None,
    stdin: Optional[BinaryIO] = None,
    verbose: int = 0,
) -> int:
    """Triage ``paths`` (files, directories, archives, ``-`` for stdin) and print the report."""
    out = out or sys.stdout
    err = err or sys.stderr
    if fmt not in FORMATS:
        err.write(f"ascend-doctor triage: unknown format {fmt!r} (choose {', '.join(FORMATS)})\n")
        return 2
    if not paths:
        err.write("ascend-doctor triage: give at least one log file or directory, or - for stdin\n")
        return 2
    try:
        report = triage_paths(paths, stdin=stdin, knowledge=Knowledge())
    except InputError as exc:
        err.write(f"ascend-doctor triage: {exc}\n")
        return 2
    if report.stats.bytes == 0:  # nothing to judge: see "No text" in docs/inputs.md
        parts = []
        if report.stats.skipped:
            why = [f"{s.path}: {s.reason}" for s in report.stats.skipped]
            parts.append("skipped: " + "; ".join(why[:5]) + (f"; {len(why) - 5} more" if len(why) > 5 else ""))
        if report.stats.files:
            n = report.stats.files
            parts.append("empty" if n == 1 and not parts else f"{n} file{'s' if n != 1 else ''} read, no text")
        more = f" ({'; '.join(parts)})" if parts else ""
        err.write(f"ascend-doctor triage: no readable log text in {', '.join(paths)}{more}\n")
        if fmt == "json":
            out.write(render_json(report) + "\n")
        return 2

    if fmt == "json":
        out.write(render.render_json(report) + "\n")
    elif fmt == "md":
        out.write(render.render_md(report))
    elif fmt == "html":
        from ..report.html import triage_html  # the page renderer, only for --format html

        out.write(triage_html(render.to_json(report)))
    else:
        out.write(render.render_text(report, verbose=verbose))
    return 1 if report.incidents else 0
