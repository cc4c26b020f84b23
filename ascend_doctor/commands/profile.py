"""``ascend-doctor profile DIR...`` and ``ascend-doctor profile compare BASE NEW``.

Exit codes: 0 no finding, 1 findings (compare: always 0 unless the input is bad), 2 bad input
(a missing path, or no profiling output under it), 3 internal error.
"""
from __future__ import annotations

import sys
from typing import List, Optional, TextIO

from ..errors import UsageError
from ..profile import ProfileInputError, analyze, compare, render
from .common import output_format


def run_profile(paths: List[str], fmt: str = "text", json_flag: bool = False, verbose: int = 0,
                out: Optional[TextIO] = None) -> int:
    out = out or sys.stdout
    fmt = output_format(fmt, json_flag)
    if not paths:
        raise UsageError("profile: give a profiling directory (a *_ascend_pt or PROF_* tree, or their parent)")
    if paths[0] == "compare":
        rest = paths[1:]
        if len(rest) != 2:
            raise UsageError("profile compare: give exactly two profiles, BASE and NEW")
        try:
            doc = compare([rest[0]], [rest[1]])
        except ProfileInputError as exc:
            raise UsageError(f"profile compare: {exc}") from None
        if fmt == "json":
            out.write(render.render_json(doc) + "\n")
        elif fmt == "md":
            out.write(render.render_compare_md(doc))
        else:
            out.write(render.render_compare_text(doc, verbose))
        return 0
    try:
        doc = analyze(paths)
    except ProfileInputError as exc:
        raise UsageError(f"profile: {exc}") from None
    if fmt == "json":
        out.write(render.render_json(doc) + "\n")
    elif fmt == "md":
        out.write(render.render_md(doc))
    else:
        out.write(render.render_text(doc, verbose))
    return 1 if doc["findings"] else 0
