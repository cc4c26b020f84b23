"""Named predicates a KB pattern can require (``condition:`` in the data).

A regex can say *what* an out-of-memory message reports but not whether its numbers
mean fragmentation; these functions read the captured numbers and decide. Each takes
the pattern's named groups and returns True when the entry applies. Names are the
contract with the data files; the loader refuses unknown names.

Decision rules for the caching-allocator OOM text (Q = requested, F = free,
G = reserved - allocated, C = total): F >= Q means the pool is not the reason;
G >= Q means the cache holds enough but in pieces that are too small (fragmentation);
G + F >= Q > max(G, F) means memory exists but not in one piece (fragmentation-assisted);
reserved + F far below C means most of the device is used outside this allocator; that
reading wins over a small gap, because freeing the other user's memory is the fix.
"""
from __future__ import annotations

import re
from typing import Callable, Dict, Mapping, Optional, Tuple

_UNITS = {"bytes": 1, "b": 1, "kib": 1 << 10, "mib": 1 << 20, "gib": 1 << 30, "tib": 1 << 40}
_SIZE = re.compile(r"^\s*([\d.]+)\s*([A-Za-z]+)\s*$")

# "far below" for reserved + free against the device total
_EXTERNAL_SHARE = 0.5


def parse_size(text: Optional[str]) -> Optional[float]:
    """Bytes in a size the allocators print (``22.00 MiB``, ``512 bytes``); None if unreadable."""
    parsed = _parse(text)
    return parsed[0] if parsed else None


def _parse(text: Optional[str]) -> Optional[Tuple[float, float]]:
    """(bytes, rounding error): sizes are printed with 2 decimals, so 1.24 GiB is +-0.005 GiB."""
    if not text:
        return None
    m = _SIZE.match(text)
    if not m:
        return None
    unit = _UNITS.get(m.group(2).lower())
    if unit is None:
        return None
    try:
        value = float(m.group(1))
    except ValueError:
        return None
    decimals = len(m.group(1).split(".")[1]) if "." in m.group(1) else 0
    return value * unit, 0.5 * 10 ** (-decimals) * unit


def _numbers(groups: Mapping[str, Optional[str]]) -> Optional[Dict[str, float]]:
    out: Dict[str, float] = {}
    err: Dict[str, float] = {}
    for key in ("req", "alloc", "free", "reserved", "total", "gap"):
        if groups.get(key) is not None:
            parsed = _parse(groups.get(key))
            if parsed is None:
                return None
            out[key], err[key] = parsed
    if "req" not in out or "free" not in out:
        return None
    if "gap" in out:
        out["gap_lo"], out["gap_hi"] = out["gap"] - err["gap"], out["gap"] + err["gap"]
        if "reserved" not in out and "alloc" in out:
            out["reserved"] = out["alloc"] + out["gap"]  # the 2.x CUDA text gives the gap, not reserved
    else:
        if "reserved" not in out or "alloc" not in out:
            return None
        gap = out["reserved"] - out["alloc"]
        slack = err["reserved"] + err["alloc"]
        out["gap"] = max(gap, 0.0)
        out["gap_lo"], out["gap_hi"] = max(gap - slack, 0.0), max(gap + slack, 0.0)
    return out


def _external(n: Dict[str, float]) -> bool:
    if "total" not in n or "reserved" not in n:
        return False
    return n["reserved"] + n["free"] < _EXTERNAL_SHARE * n["total"]


def oom_external(groups: Mapping[str, Optional[str]]) -> bool:
    """Most of the device is held outside this allocator: that, not the pool, is the problem."""
    n = _numbers(groups)
    return n is not None and n["free"] < n["req"] and _external(n)


def oom_fragmented(groups: Mapping[str, Optional[str]]) -> bool:
    n = _numbers(groups)
    if n is None or _external(n):
        return False
    q, f, lo, hi = n["req"], n["free"], n["gap_lo"], n["gap_hi"]
    if f >= q:
        return False
    # judged on the smallest gap the rounded numbers allow, so 2-decimal noise never decides
    return lo >= q or (lo + f >= q > max(hi, f))


def oom_capacity(groups: Mapping[str, Optional[str]]) -> bool:
    n = _numbers(groups)
    if n is None:
        return True  # numbers missing: the plain reading (not enough memory) is the safe one
    return not oom_fragmented(groups) and not oom_external(groups)


CONDITIONS: Dict[str, Callable[[Mapping[str, Optional[str]]], bool]] = {
    "oom_fragmented": oom_fragmented,
    "oom_external": oom_external,
    "oom_capacity": oom_capacity,
}
