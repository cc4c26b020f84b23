"""JSON with a depth limit, bounded numbers and no NaN/Infinity.

``json.loads`` recurses once per nesting level (a few thousand ``[`` end in RecursionError,
deeper input can exhaust a thread's C stack), accepts ``NaN`` and ``Infinity`` and turns a
100,000-digit integer into an exception or a quadratic conversion. ``load_json`` measures
the nesting first in one linear pass that runs at C speed (strings are removed by one
regular expression, then brackets are counted), and only then parses, with number hooks
from ``numbers``.
"""
from __future__ import annotations

import json
import re
from itertools import accumulate
from typing import Any, Optional, Union

from .errors import InputError
from .limits import LIMITS
from .numbers import to_float, to_int

_STRING = re.compile(rb'"(?:[^"\\]|\\.)*"', re.DOTALL)
_NOT_BRACKET = bytes(c for c in range(256) if c not in b"[]{}")
_STEP = {ord("["): 1, ord("{"): 1, ord("]"): -1, ord("}"): -1}


def json_depth(data: Union[str, bytes]) -> int:
    """The deepest nesting of ``[``/``{`` outside strings (linear; no parsing)."""
    raw = data.encode("utf-8", errors="replace") if isinstance(data, str) else data
    brackets = _STRING.sub(b"", raw).translate(None, _NOT_BRACKET)
    if not brackets:
        return 0
    return max(accumulate(_STEP[b] for b in brackets))


def _constant(name: str) -> Any:
    raise InputError(f"{name} is not a number JSON allows (non-finite values are refused)")


def load_json(data: Union[str, bytes], what: str = "JSON", max_depth: Optional[int] = None) -> Any:
    """Parse JSON; InputError (one line) for invalid JSON, nesting deeper than ``max_depth``
    (default ``LIMITS.json_depth``), NaN/Infinity and over-long numbers."""
    limit = LIMITS.json_depth if max_depth is None else max_depth
    depth = json_depth(data)
    if depth > limit:
        raise InputError(f"{what}: nested {depth} levels deep (the limit is {limit})")
    text = data.decode("utf-8", errors="replace") if isinstance(data, bytes) else data
    try:
        return json.loads(
            text,
            parse_int=lambda s: to_int(s, what=f"{what}: integer", signed=True),
            parse_float=lambda s: to_float(s, what=f"{what}: number"),
            parse_constant=lambda c: _constant(f"{what}: {c}"),
        )
    except InputError:
        raise
    except RecursionError:  # pragma: no cover - the depth check comes first
        raise InputError(f"{what}: nested too deeply") from None
    except ValueError as exc:
        raise InputError(f"{what}: not JSON ({str(exc).splitlines()[0]})") from None


__all__ = ["load_json", "json_depth"]
