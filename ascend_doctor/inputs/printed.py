"""Printed Python data (``OrderedDict([('active.all.allocated', 0), ...])``, ``{'a': 1}``),
read by a small parser instead of ``ast.literal_eval``.

``literal_eval`` builds a full syntax tree first: an 8 MB printed dict costs gigabytes and
seconds, and deep nesting ends in RecursionError or a crashed C stack. This parser takes
one pass over the tokens with an explicit stack (no recursion), accepts only what a printed
``memory_stats()`` can hold -- dicts, lists, tuples, ``OrderedDict(...)``, strings, numbers,
``True``/``False``/``None`` -- bounds the depth and every number, and raises ``InputError``.
"""
from __future__ import annotations

import ast
import re
from collections import OrderedDict
from typing import Any, List, Optional

from .errors import InputError
from .limits import LIMITS
from .numbers import to_float, to_int

_TOKEN = re.compile(
    r"""\s*(?:
      (?P<od>(?:collections\.)?OrderedDict\()
    | (?P<open>[\[{(])
    | (?P<close>[\]})])
    | (?P<comma>,)
    | (?P<colon>:)
    | (?P<str>'(?:[^'\\\n]|\\.)*'|"(?:[^"\\\n]|\\.)*")
    | (?P<num>[-+]?(?:\d+\.?\d*(?:[eE][-+]?\d+)?|\.\d+(?:[eE][-+]?\d+)?))
    | (?P<word>True|False|None)
    )""",
    re.VERBOSE | re.DOTALL,
)
# the common shape, a flat dict of string keys and integers, checked whole by one regular
# expression and read by another, both at C speed
_KEY = r"'[^'\\\n]*'"
_INT = r"[-+]?\d+"
# (a repeated group in one fullmatch would keep a backtracking record per item: the items are
# removed by one substitution instead, and what is left must be the bare brackets)
_ITEM_OD = re.compile(r"\(\s*%s\s*,\s*%s\s*\)\s*(?:,\s*)?" % (_KEY, _INT))
_ITEM_D = re.compile(r"%s\s*:\s*%s\s*(?:,\s*)?" % (_KEY, _INT))
_BARE_OD = re.compile(r"\s*(?:collections\.)?OrderedDict\(\[\s*\]\)\s*")
_BARE_D = re.compile(r"\s*\{\s*\}\s*")
_PAIR = re.compile(r"'([^'\\\n]*)'\s*[:,]\s*(%s)" % _INT)
_WORDS = {"True": True, "False": False, "None": None}
_CLOSE_OF = {"[": "]", "{": "}", "(": ")", "O": ")"}


class _Frame:
    __slots__ = ("kind", "items", "colons", "want_value")

    def __init__(self, kind: str) -> None:
        self.kind = kind
        self.items: List[Any] = []
        self.colons = 0
        self.want_value = True  # after an opener, a comma or a colon


def _number(text: str, what: str) -> Any:
    if any(c in text for c in ".eE"):
        return to_float(text, what=f"{what}: number")
    return to_int(text, what=f"{what}: integer", signed=True)


def _build(frame: _Frame, what: str) -> Any:
    items = frame.items
    if frame.kind == "[":
        return items
    if frame.kind == "(":
        return tuple(items)
    if frame.kind == "{":
        if len(items) % 2 or frame.colons != len(items) // 2:
            raise InputError(f"{what}: a dict entry without 'key: value'")
        try:
            return dict(zip(items[0::2], items[1::2]))
        except TypeError:
            raise InputError(f"{what}: a dict key that is not a plain value") from None
    # OrderedDict(...): nothing, a list of pairs, or a dict
    if not items:
        return OrderedDict()
    if len(items) != 1:
        raise InputError(f"{what}: OrderedDict() takes one argument")
    arg = items[0]
    if isinstance(arg, dict):
        return OrderedDict(arg)
    if isinstance(arg, (list, tuple)) and all(isinstance(p, (list, tuple)) and len(p) == 2 for p in arg):
        try:
            return OrderedDict((k, v) for k, v in arg)
        except TypeError:
            raise InputError(f"{what}: an OrderedDict key that is not a plain value") from None
    raise InputError(f"{what}: OrderedDict() of something that is not key/value pairs")


def parse_printed(text: str, what: str = "printed data", max_depth: Optional[int] = None) -> Any:
    """The value a ``print()`` of plain data shows. Raises InputError (one line)."""
    limit = LIMITS.json_depth if max_depth is None else max_depth
    head = text.lstrip()[:1]
    if head in ("O", "c", "{"):
        item, bare = (_ITEM_D, _BARE_D) if head == "{" else (_ITEM_OD, _BARE_OD)
        if bare.fullmatch(item.sub("", text)):
            limit = LIMITS.int_digits + 1  # a sign and the digits: longer goes through to_int and fails there
            pairs = {k: int(v) if len(v) <= limit else to_int(v, what=f"{what}: integer", signed=True)
                     for k, v in (m.groups() for m in _PAIR.finditer(text))}
            return pairs if head == "{" else OrderedDict(pairs)
    stack: List[_Frame] = []
    result: Any = None
    have_result = False
    pos = 0
    n = len(text)

    def put(value: Any) -> None:
        nonlocal result, have_result
        if stack:
            top = stack[-1]
            if not top.want_value:
                raise InputError(f"{what}: a comma is missing at character {pos}")
            top.items.append(value)
            top.want_value = False
        elif have_result:
            raise InputError(f"{what}: more than one value at character {pos}")
        else:
            result, have_result = value, True

    while pos < n:
        m = _TOKEN.match(text, pos)
        if m is None:
            if text[pos:].strip() == "":
                break
            shown = text[pos:pos + 20].strip()[:20]
            raise InputError(f"{what}: unexpected {shown!r} at character {pos} (only dicts, lists, strings and numbers are read)")
        kind = m.lastgroup
        token = m.group(kind)
        pos = m.end()
        if kind in ("od", "open"):
            if stack and not stack[-1].want_value:
                raise InputError(f"{what}: a comma is missing at character {pos}")
            if not stack and have_result:
                raise InputError(f"{what}: more than one value at character {pos}")
            if len(stack) >= limit:
                raise InputError(f"{what}: nested more than {limit} levels deep")
            stack.append(_Frame("O" if kind == "od" else token))
        elif kind == "close":
            if not stack or _CLOSE_OF[stack[-1].kind] != token:
                raise InputError(f"{what}: unbalanced {token!r} at character {pos}")
            frame = stack.pop()
            if frame.want_value and frame.items and frame.kind != "(":
                pass  # a trailing comma, as Python allows
            value = _build(frame, what)
            put(value)
        elif kind == "comma":
            if not stack or stack[-1].want_value:
                raise InputError(f"{what}: unexpected ',' at character {pos}")
            stack[-1].want_value = True
        elif kind == "colon":
            top = stack[-1] if stack else None
            if top is None or top.kind != "{" or top.want_value or len(top.items) % 2 != 1:
                raise InputError(f"{what}: unexpected ':' at character {pos}")
            top.colons += 1
            top.want_value = True
        elif kind == "str":
            if len(token) > 1 and "\\" not in token:
                put(token[1:-1])
            else:
                try:
                    put(ast.literal_eval(token))  # one string token: linear, no nesting
                except (ValueError, SyntaxError):
                    raise InputError(f"{what}: a malformed string at character {pos}") from None
        elif kind == "num":
            put(_number(token, what))
        else:
            put(_WORDS[token])
    if stack:
        raise InputError(f"{what}: ends inside an unclosed {stack[-1].kind!r}")
    if not have_result:
        raise InputError(f"{what}: empty")
    return result


__all__ = ["parse_printed"]
