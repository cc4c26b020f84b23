"""Find the literal a regex cannot match without, so a cheap ``in`` test can skip it.

Only text outside groups, classes and alternations counts, and a character followed
by a quantifier that allows zero repeats is dropped. Conservative: when in doubt the
run is cut, so the literal returned is always required by the regex.
"""
from __future__ import annotations

import re
from typing import List, Optional

_META = set(".^$*+?{}[]\\|()")
_ESCAPED_LITERAL = set(".^$*+?{}[]\\|()-/ :=,'\"#%&@!<>~`;_")
# Escapes that stand for a literal character in the target text.
_ESCAPE_CHARS = {"t": "\t", "n": "\n"}
MIN_TRIGGER = 4


def required_literal(pattern: str) -> Optional[str]:
    """The longest literal substring every match must contain (lower-cased), or None."""
    if pattern.startswith("(?i)"):
        pattern = pattern[4:]
    elif re.match(r"^\(\?[aiLmsux-]+\)", pattern):
        return None  # other inline flags change meaning; do not guess
    runs: List[str] = []
    current: List[str] = []
    depth = 0
    i = 0
    n = len(pattern)

    def cut() -> None:
        if current:
            runs.append("".join(current))
            current.clear()

    while i < n:
        c = pattern[i]
        if c == "\\" and i + 1 < n:
            nxt = pattern[i + 1]
            if depth == 0 and (nxt in _ESCAPED_LITERAL or nxt in _ESCAPE_CHARS):
                literal = _ESCAPE_CHARS.get(nxt, nxt)
                i += 2
                if _followed_by_optional(pattern, i):
                    cut()
                else:
                    if i < n and pattern[i] in "+*?{":
                        current.append(literal)
                        cut()
                    else:
                        current.append(literal)
                continue
            cut()  # \d, \s, \b ... are classes or anchors
            i += 2
            continue
        if c == "[":
            cut()
            i = _skip_class(pattern, i)
            i = _skip_quantifier(pattern, i)
            continue
        if c == "(":
            cut()
            depth += 1
            i += 1
            continue
        if c == ")":
            depth = max(depth - 1, 0)
            i += 1
            i = _skip_quantifier(pattern, i)
            continue
        if c == "|":
            if depth == 0:
                return None  # top-level alternation: no single required literal
            i += 1
            continue
        if depth > 0:
            i += 1
            continue
        if c in _META:
            cut()
            i += 1
            continue
        i += 1
        if _followed_by_optional(pattern, i):
            cut()
        elif i < n and pattern[i] in "+{":
            current.append(c)
            cut()
        else:
            current.append(c)
    cut()
    best = max(runs, key=len, default="")
    if len(best) < MIN_TRIGGER:
        return None
    return best.lower()


def _followed_by_optional(pattern: str, i: int) -> bool:
    if i >= len(pattern):
        return False
    if pattern[i] in "?*":
        return True
    if pattern[i] == "{":
        body = pattern[i + 1 : pattern.find("}", i)]
        return body.startswith("0") or body.startswith(",")
    return False


def _skip_class(pattern: str, i: int) -> int:
    i += 1
    if i < len(pattern) and pattern[i] == "^":
        i += 1
    if i < len(pattern) and pattern[i] == "]":
        i += 1
    while i < len(pattern) and pattern[i] != "]":
        i += 2 if pattern[i] == "\\" else 1
    return i + 1


def _skip_quantifier(pattern: str, i: int) -> int:
    if i < len(pattern) and pattern[i] in "*+?":
        i += 1
    elif i < len(pattern) and pattern[i] == "{":
        i = pattern.find("}", i) + 1 or len(pattern)
    if i < len(pattern) and pattern[i] == "?":
        i += 1
    return i
