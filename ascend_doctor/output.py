"""What every verb's output has in common: the JSON envelope, text tables, Markdown headings and tables.

Each domain keeps its own renderer (``report/check_report.py``, ``triage/render.py``,
``memory/render.py``, ...); they all build their documents and tables here, so that the
contracts in docs/output.md hold in every verb:

- JSON: ``{"schema": 1, "tool": {"name", "version"}, "summary": {...}, <the verb's payload>}``;
- Markdown: the first line is ``# ascend-doctor VERB`` (`` · subject`` when there is one);
- text tables: ``rich.table`` without borders, columns aligned, no ANSI codes unless the
  stream is a terminal and ``NO_COLOR`` is unset; off a terminal nothing is wrapped, so the
  output piped to a file does not depend on the width of the terminal it was run from.

This module sits at the bottom of the layers (it imports only ``ascend_doctor.model``), and
rich is imported only when a table is drawn: the one-line answers of ``triage`` and
``explain`` never pay for it.
"""
from __future__ import annotations

import json
import os
import sys
from typing import TYPE_CHECKING, Any, Dict, Iterable, List, Optional, Sequence, TextIO

from . import __version__
from .model import SCHEMA

if TYPE_CHECKING:  # rich is imported only when a table or a styled line is drawn
    from rich.console import Console
    from rich.table import Table

TOOL = "ascend-doctor"
# the width a table may take off a terminal: wide enough that no cell is ever folded
UNBOUNDED = 10_000
RESERVED = ("schema", "tool", "summary")


# ---------------------------------------------------------------------------- JSON
def tool() -> Dict[str, str]:
    return {"name": TOOL, "version": __version__}


def envelope(summary: Dict[str, Any], payload: Dict[str, Any]) -> Dict[str, Any]:
    """The document a verb prints for ``--json``: schema, tool and summary first, then the
    verb's own fields (a ``schema``/``tool``/``summary`` in ``payload`` is replaced)."""
    if not isinstance(summary, dict):
        raise TypeError(f"summary must be an object, not {type(summary).__name__}")
    doc: Dict[str, Any] = {"schema": SCHEMA, "tool": tool(), "summary": summary}
    doc.update((k, v) for k, v in payload.items() if k not in RESERVED)
    return doc


def dumps(doc: Dict[str, Any], indent: Optional[int] = 2) -> str:
    """The JSON text of ``doc`` with its final newline (UTF-8 kept as it is)."""
    return json.dumps(doc, indent=indent, ensure_ascii=False) + "\n"


def counts(values: Iterable[Any], keys: Sequence[str] = ()) -> Dict[str, int]:
    """{value: how many}, with every one of ``keys`` present (0 when absent), in that order."""
    out: Dict[str, int] = {k: 0 for k in keys}
    for v in values:
        key = str(v)
        out[key] = out.get(key, 0) + 1
    return out


# ---------------------------------------------------------------------------- Markdown
def md_heading(verb: str, subject: Optional[str] = None) -> List[str]:
    """The first lines of every verb's Markdown: ``# ascend-doctor VERB[ · subject]`` and a blank line."""
    return [f"# {TOOL} {verb}" + (f" · {subject}" if subject else ""), ""]


def md_cell(text: Any) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def md_table(headers: Sequence[str], rows: Iterable[Sequence[Any]], right: Sequence[int] = ()) -> List[str]:
    """A GitHub Markdown table (``right``: indexes of right-aligned columns), no blank line around it."""
    out = ["| " + " | ".join(md_cell(h) for h in headers) + " |",
           "|" + "".join("---:|" if i in right else "---|" for i in range(len(headers)))]
    out += ["| " + " | ".join(md_cell(c) for c in row) + " |" for row in rows]
    return out


# ---------------------------------------------------------------------------- text
def plain(stream: Optional[TextIO] = None) -> bool:
    """True when ``stream`` gets no colour: not a terminal, or NO_COLOR / TERM=dumb is set."""
    stream = stream or sys.stdout
    if os.environ.get("NO_COLOR") or os.environ.get("TERM") == "dumb":
        return True
    try:
        return not stream.isatty()
    except (AttributeError, ValueError):
        return True


def text_width(stream: Optional[TextIO] = None) -> int:
    """The width a table may take on ``stream``: the terminal's, or unbounded off a terminal."""
    stream = stream or sys.stdout
    try:
        tty = stream.isatty()
    except (AttributeError, ValueError):
        tty = False
    if not tty:
        return UNBOUNDED
    import shutil

    return max(40, shutil.get_terminal_size((100, 24)).columns)


def make_console(stream: Optional[TextIO] = None) -> "Console":
    """A rich console for ``stream``: styles only on a terminal without NO_COLOR, never wraps a
    printed line (copied commands stay whole), unbounded width off a terminal."""
    from rich.console import Console

    stream = stream or sys.stdout
    no_style = plain(stream)
    return Console(file=stream, highlight=False, soft_wrap=True, emoji=False,
                   color_system=None if no_style else "auto", no_color=no_style,
                   width=text_width(stream) if no_style else None)


def table(headers: Optional[Sequence[str]], rows: Iterable[Sequence[Any]], right: Sequence[int] = (),
          markup: bool = False, min_widths: Sequence[int] = ()) -> "Table":
    """A borderless rich table: two spaces between columns, the last column folds on a narrow
    terminal, the others never wrap. ``headers`` None: no header row. Cells are plain text
    unless ``markup`` (then rich markup, already escaped by the caller). ``min_widths``: the
    least width of the first columns (to line up several tables one after the other)."""
    from rich.table import Table
    from rich.text import Text

    rows = [list(r) for r in rows]
    ncols = len(headers) if headers else max((len(r) for r in rows), default=0)
    t = Table(box=None, show_header=bool(headers), header_style="", pad_edge=False, padding=(0, 1),
              show_edge=False, expand=False)
    for i in range(ncols):
        last = i == ncols - 1
        t.add_column(str(headers[i]) if headers else "", justify="right" if i in right else "left",
                     no_wrap=not last, overflow="fold", min_width=min_widths[i] if i < len(min_widths) else None)
    for r in rows:
        cells = [("" if c is None else str(c)) for c in r] + [""] * (ncols - len(r))
        t.add_row(*(c if markup else Text(c) for c in cells))
    return t


def _lines(console: "Console", renderable: Any, width: int) -> List[List[Any]]:
    """The rendered lines of ``renderable`` as segment lists, without the trailing padding."""
    from rich.segment import Segment

    options = console.options.update(width=width, no_wrap=False)
    out = []
    for line in console.render_lines(renderable, options, pad=False):
        segs = [s for s in line if not s.control]
        while segs and not segs[-1].text.strip():
            segs.pop()
        if segs:
            last = segs[-1]
            segs[-1] = Segment(last.text.rstrip(), last.style)
        out.append(segs)
    return out


def table_lines(headers: Optional[Sequence[str]], rows: Iterable[Sequence[Any]], right: Sequence[int] = (),
                indent: int = 2, stream: Optional[TextIO] = None) -> List[str]:
    """The table as plain lines (no ANSI codes), each indented by ``indent`` spaces; fit to the
    terminal when ``stream`` (default stdout) is one."""
    import io

    from rich.console import Console

    width = text_width(stream) - indent
    console = Console(file=io.StringIO(), color_system=None, no_color=True, highlight=False, emoji=False,
                      width=width, legacy_windows=False)
    t = table(headers, rows, right=right)
    return [" " * indent + "".join(s.text for s in segs) for segs in _lines(console, t, width)]


def print_table(console: "Console", headers: Optional[Sequence[str]], rows: Iterable[Sequence[Any]],
                right: Sequence[int] = (), indent: int = 2, markup: bool = True, min_widths: Sequence[int] = ()) -> None:
    """Print the table on ``console`` (its styles kept when it has any), indented by ``indent``."""
    from rich.text import Text

    width = max(20, console.width - indent)
    t = table(headers, rows, right=right, markup=markup, min_widths=min_widths)
    for segs in _lines(console, t, width):
        line = Text(" " * indent)
        for s in segs:
            line.append(s.text, s.style)
        console.print(line, soft_wrap=True)
