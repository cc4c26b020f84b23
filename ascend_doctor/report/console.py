"""Shared bits of the human-readable output: status marks, colours, the console."""
from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Optional, TextIO

from ..model import Status
from ..output import make_console as _make

if TYPE_CHECKING:  # rich is imported only when text output is rendered
    from rich.console import Console

MARKS = {
    Status.OK: ("✓", "green"),
    Status.WARN: ("!", "yellow"),
    Status.FAIL: ("✗", "red"),
    Status.SKIP: ("-", "dim"),
    Status.TIMEOUT: ("⏱", "magenta"),
    Status.ERROR: ("☠", "red"),
}
ASCII_MARKS = {Status.OK: "ok", Status.WARN: "!", Status.FAIL: "x", Status.SKIP: "-", Status.TIMEOUT: "T", Status.ERROR: "E"}


def make_console(stream: Optional[TextIO] = None) -> "Console":
    """A rich console that colours only a terminal (without NO_COLOR) and never wraps copied commands."""
    return _make(stream or sys.stdout)


def mark(status: Status, console: "Console") -> str:
    symbol, colour = MARKS[status]
    if console.encoding and "utf" not in console.encoding.lower():
        symbol = ASCII_MARKS[status]
    return f"[{colour}]{symbol}[/{colour}]"


def escape(text: str) -> str:
    """Text shown literally by rich, including a backslash before ``[`` (as in ``grep "\\[ERROR\\]"``)."""
    import re

    from rich.markup import escape as _escape

    return _escape(re.sub(r"(\\+)(?=\[)", lambda m: m.group(1) * 2, text))
