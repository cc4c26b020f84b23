"""Numbers read from text, bounded: digits, finiteness, sign.

Python's ``int()`` on a string of more than 4,300 digits raises (3.11+) or takes quadratic
time (3.9/3.10); ``float("1e400")`` is ``inf`` and ``int(inf)`` raises OverflowError. Every
number the doctor reads from a file, a log line, an environment variable or a paste goes
through ``to_int`` / ``to_float``, which check the text first and raise ``InputError``
(one line), and byte sizes go through ``size_bytes``, which saturates instead of failing.
"""
from __future__ import annotations

import math
from typing import Optional, Union

from .errors import InputError
from .limits import LIMITS

_DIGITS = frozenset("0123456789")
_HEX = frozenset("0123456789abcdefABCDEF")


def _shown(text: str) -> str:
    return text if len(text) <= 24 else text[:12] + "…" + text[-6:] + f" ({len(text)} chars)"


def to_int(text: Union[str, bytes], what: str = "number", max_digits: Optional[int] = None,
           signed: bool = False, base: int = 10, minimum: Optional[int] = None,
           maximum: Optional[int] = None) -> int:
    """``text`` as an int, or InputError: at most ``max_digits`` digits (default
    ``LIMITS.int_digits``), a sign only when ``signed``, base 10 or 16 (``0x`` allowed)."""
    if isinstance(text, bytes):
        text = text.decode("ascii", errors="replace")
    limit = LIMITS.int_digits if max_digits is None else max_digits
    if base == 10 and minimum is None and maximum is None and text.isascii() and text.isdigit() and len(text) <= limit:
        return int(text)  # the common case: plain digits
    s = text.strip().replace("_", "") if isinstance(text, str) else ""
    body = s
    negative = False
    if body[:1] in "+-" and body:
        if not signed:
            raise InputError(f"{what} {_shown(s)!r}: expected a number without a sign")
        negative = body[0] == "-"
        body = body[1:]
    digits = _DIGITS
    if base == 16:
        if body[:2].lower() == "0x":
            body = body[2:]
        digits = _HEX
    elif base != 10:
        raise ValueError("base must be 10 or 16")
    if not body or not set(body) <= digits:
        raise InputError(f"{what} {_shown(s)!r}: not a number")
    if len(body.lstrip("0")) > limit:
        raise InputError(f"{what} {_shown(s)}: more than {limit} digits")
    value = int(body, base)
    value = -value if negative else value
    if minimum is not None and value < minimum:
        raise InputError(f"{what} {value}: below {minimum}")
    if maximum is not None and value > maximum:
        raise InputError(f"{what} {value}: above {maximum}")
    return value


def int_or_none(text: Optional[Union[str, bytes]], **kwargs) -> Optional[int]:
    """``to_int``, but None for missing, malformed or over-long text (for optional fields)."""
    if text is None:
        return None
    try:
        return to_int(text, **kwargs)
    except InputError:
        return None


def to_float(text: Union[str, bytes], what: str = "number", finite: bool = True, signed: bool = True) -> float:
    """``text`` as a float: at most ``LIMITS.float_chars`` characters, finite unless told,
    non-negative unless ``signed``. Raises InputError."""
    if isinstance(text, bytes):
        text = text.decode("ascii", errors="replace")
    s = text.strip()
    if len(s) > LIMITS.float_chars:
        raise InputError(f"{what} {_shown(s)}: longer than {LIMITS.float_chars} characters")
    try:
        value = float(s)
    except ValueError:
        raise InputError(f"{what} {_shown(s)!r}: not a number") from None
    if finite and not math.isfinite(value):
        raise InputError(f"{what} {s!r}: not a finite number")
    if not signed and value < 0:
        raise InputError(f"{what} {s!r}: negative")
    return value


def saturate(value: Union[int, float], cap: Optional[int] = None) -> int:
    """A byte count clamped to ``[0, cap]`` (default ``LIMITS.size_cap``); inf and NaN saturate
    to the cap and to 0."""
    top = LIMITS.size_cap if cap is None else cap
    if isinstance(value, float):
        if math.isnan(value) or value <= 0:
            return 0
        if value >= top:
            return top
        return int(value)
    return 0 if value < 0 else (top if value > top else value)


def size_bytes(number: str, unit: int = 1) -> int:
    """``number`` (decimal text such as ``22.00`` or ``1e400``) times ``unit`` bytes, saturated at
    ``LIMITS.size_cap``. Raises InputError for text that is not a non-negative number."""
    value = to_float(number, what="size", finite=False, signed=False)
    if math.isnan(value):
        raise InputError(f"size {number!r}: not a number")
    return saturate(value * unit)


__all__ = ["to_int", "int_or_none", "to_float", "saturate", "size_bytes"]
