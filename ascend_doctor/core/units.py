"""Byte sizes as the allocators print them, and back.

Two printers matter: the caching allocator's ``format_size`` (``22.00 MiB``, two
decimals, binary units, ``N bytes`` up to 1 KiB) used in out-of-memory messages, and
``memory_summary()``'s table (``  12420 MB``, ``202300 KB``: integers floor-divided by
1024, so "MB" there means MiB). A parsed size keeps its printing error so that a
decision never hangs on the second decimal.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Optional

from ..inputs import LIMITS, saturate

KiB = 1 << 10
MiB = 1 << 20
GiB = 1 << 30

_UNITS = {
    "bytes": 1, "byte": 1, "b": 1,
    "kib": KiB, "kb": KiB, "k": KiB,
    "mib": MiB, "mb": MiB, "m": MiB,
    "gib": GiB, "gb": GiB, "g": GiB,
    "tib": 1 << 40, "tb": 1 << 40,
    "pb": 1 << 50,
}
_SIZE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([A-Za-z]+)\s*$")


@dataclass(frozen=True)
class Size:
    """A byte count read from text, with how far off the printing may be (bytes)."""

    value: int
    error: int = 0

    @property
    def low(self) -> int:
        return max(self.value - self.error, 0)

    @property
    def high(self) -> int:
        return self.value + self.error


def parse_size(text: Optional[str], floor_divided: bool = False) -> Optional[Size]:
    """``"22.00 MiB"`` -> Size; None when ``text`` is not a size.

    ``floor_divided``: the number was truncated (memory_summary), so the true value lies
    in ``[n, n + 1)`` units rather than within half a unit.
    """
    if not text:
        return None
    m = _SIZE.match(text)
    if not m:
        return None
    unit = _UNITS.get(m.group(2).lower())
    if unit is None:
        return None
    number = m.group(1)
    if len(number) > LIMITS.float_chars:
        return None  # no allocator prints a size of that many digits
    decimals = len(number.split(".")[1]) if "." in number else 0
    step = unit / (10 ** decimals)
    value = float(number) * unit
    if floor_divided:
        return Size(saturate(value + step / 2), int(step / 2) if unit > 1 else 0)
    return Size(saturate(round(value)), int(step / 2) if unit > 1 else 0)


def format_size(n: Optional[int]) -> str:
    """Bytes as the allocator prints them (two decimals, binary units); ``-`` for unknown."""
    if n is None:
        return "-"
    sign = "-" if n < 0 else ""
    n = abs(n)
    if n < KiB:
        return f"{sign}{n} bytes"
    if n < MiB:
        return f"{sign}{n / KiB:.2f} KiB"
    if n < GiB:
        return f"{sign}{n / MiB:.2f} MiB"
    return f"{sign}{n / GiB:.2f} GiB"


def ratio(a: Optional[int], b: Optional[int]) -> Optional[float]:
    """a / b rounded to 3 places, or None when either is unknown or b is 0."""
    if a is None or not b:
        return None
    return round(a / b, 3)
