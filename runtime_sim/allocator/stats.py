"""Allocator statistics with the semantics and key names of ``memory_stats()``.

Each counter keeps current / peak / allocated (sum of increases) / freed (sum of
decreases), as ``c10::CachingAllocator::Stat`` does. Core counters exist per pool
type ``all`` / ``small_pool`` / ``large_pool``. ``flatten`` produces the sorted,
dot-joined keys that ``torch.npu.memory_stats()`` returns (torch_npu/npu/memory.py
walks the nested dict of Module.cpp ``THNPModule_memoryStats`` and sorts).
"""
from __future__ import annotations

from collections import OrderedDict
from typing import Dict, Iterable, List, Optional, Tuple

from .constants import UNLIMITED

POOL_TYPES = ("all", "small_pool", "large_pool")
ARRAY_STATS = (
    "allocation",
    "segment",
    "active",
    "inactive_split",
    "allocated_bytes",
    "reserved_bytes",
    "active_bytes",
    "inactive_split_bytes",
    "requested_bytes",
)


# Flat storage: one list of ints per device. Array ``a`` (index in ARRAY_STATS), pool type
# ``p`` (0 all, 1 small_pool, 2 large_pool) and field ``f`` (0 current, 1 peak, 2 allocated,
# 3 freed) live at ``(a * 3 + p) * 4 + f``; the two oversize counters follow the arrays.
# The allocator's hot path updates the list through ``add`` (one call for the aggregate and
# the pool) instead of one method call per Stat.
FIELDS = ("current", "peak", "allocated", "freed")
ALL, SMALL, LARGE = 0, 4, 8  # offsets of the pool types inside one array's 12 slots
ARRAY_BASE = {name: i * 12 for i, name in enumerate(ARRAY_STATS)}
_A, _AB, _ACT, _ACTB, _RB = (ARRAY_BASE[n] for n in ("allocation", "allocated_bytes", "active", "active_bytes",
                                                      "requested_bytes"))
OVERSIZE_ALLOCATIONS = len(ARRAY_STATS) * 12
OVERSIZE_SEGMENTS = OVERSIZE_ALLOCATIONS + 4
SLOTS = OVERSIZE_SEGMENTS + 4


def add(v: List[int], base: int, small: bool, amount: int) -> None:
    """Apply ``amount`` to the aggregate and to the block's pool of the array at ``base``
    (``Stat.update`` semantics: current, peak, sum of increases, sum of decreases)."""
    if amount > 0:
        c = v[base] + amount
        v[base] = c
        v[base + 2] += amount
        if c > v[base + 1]:
            v[base + 1] = c
        i = base + (4 if small else 8)
        c = v[i] + amount
        v[i] = c
        v[i + 2] += amount
        if c > v[i + 1]:
            v[i + 1] = c
    elif amount < 0:
        v[base] += amount
        v[base + 3] -= amount
        i = base + (4 if small else 8)
        v[i] += amount
        v[i + 3] -= amount


def on_alloc(v: List[int], small: bool, size: int, requested: int) -> None:
    """A block handed out: allocation +1, allocated_bytes +size, active +1, active_bytes
    +size, requested_bytes +requested, in the aggregate and the pool: the five ``add`` calls
    of the allocator written out in one function (same result; this runs once per malloc)."""
    p = 4 if small else 8
    c = v[_A] + 1
    v[_A] = c
    v[_A + 2] += 1
    if c > v[_A + 1]:
        v[_A + 1] = c
    j = _A + p
    c = v[j] + 1
    v[j] = c
    v[j + 2] += 1
    if c > v[j + 1]:
        v[j + 1] = c
    c = v[_AB] + size
    v[_AB] = c
    v[_AB + 2] += size
    if c > v[_AB + 1]:
        v[_AB + 1] = c
    j = _AB + p
    c = v[j] + size
    v[j] = c
    v[j + 2] += size
    if c > v[j + 1]:
        v[j + 1] = c
    c = v[_ACT] + 1
    v[_ACT] = c
    v[_ACT + 2] += 1
    if c > v[_ACT + 1]:
        v[_ACT + 1] = c
    j = _ACT + p
    c = v[j] + 1
    v[j] = c
    v[j + 2] += 1
    if c > v[j + 1]:
        v[j + 1] = c
    c = v[_ACTB] + size
    v[_ACTB] = c
    v[_ACTB + 2] += size
    if c > v[_ACTB + 1]:
        v[_ACTB + 1] = c
    j = _ACTB + p
    c = v[j] + size
    v[j] = c
    v[j + 2] += size
    if c > v[j + 1]:
        v[j + 1] = c
    if requested > 0:
        c = v[_RB] + requested
        v[_RB] = c
        v[_RB + 2] += requested
        if c > v[_RB + 1]:
            v[_RB + 1] = c
        j = _RB + p
        c = v[j] + requested
        v[j] = c
        v[j + 2] += requested
        if c > v[j + 1]:
            v[j + 1] = c


def on_release(v: List[int], small: bool, size: int, requested: int) -> None:
    """A block back in the pool: active -1, active_bytes -size, requested_bytes -requested."""
    p = 4 if small else 8
    v[_ACT] -= 1
    v[_ACT + 3] += 1
    v[_ACT + p] -= 1
    v[_ACT + p + 3] += 1
    if size > 0:
        v[_ACTB] -= size
        v[_ACTB + 3] += size
        v[_ACTB + p] -= size
        v[_ACTB + p + 3] += size
    if requested > 0:
        v[_RB] -= requested
        v[_RB + 3] += requested
        v[_RB + p] -= requested
        v[_RB + p + 3] += requested


def on_free(v: List[int], small: bool, size: int) -> None:
    """A block returned by its user: allocation -1, allocated_bytes -size."""
    p = 4 if small else 8
    v[_A] -= 1
    v[_A + 3] += 1
    v[_A + p] -= 1
    v[_A + p + 3] += 1
    if size > 0:
        v[_AB] -= size
        v[_AB + 3] += size
        v[_AB + p] -= size
        v[_AB + p + 3] += size


def add_one(v: List[int], i: int, amount: int) -> None:
    """Apply ``amount`` to the single counter at ``i`` (the oversize counters)."""
    if amount > 0:
        c = v[i] + amount
        v[i] = c
        v[i + 2] += amount
        if c > v[i + 1]:
            v[i + 1] = c
    elif amount < 0:
        v[i] += amount
        v[i + 3] -= amount


class Stat:
    """A view of one counter in the flat list (current / peak / allocated / freed)."""

    __slots__ = ("_v", "_i")

    def __init__(self, v: Optional[List[int]] = None, i: int = 0) -> None:
        self._v = v if v is not None else [0, 0, 0, 0]
        self._i = i

    current = property(lambda self: self._v[self._i], lambda self, x: self._v.__setitem__(self._i, x))
    peak = property(lambda self: self._v[self._i + 1], lambda self, x: self._v.__setitem__(self._i + 1, x))
    allocated = property(lambda self: self._v[self._i + 2], lambda self, x: self._v.__setitem__(self._i + 2, x))
    freed = property(lambda self: self._v[self._i + 3], lambda self, x: self._v.__setitem__(self._i + 3, x))

    def update(self, amount: int) -> None:
        add_one(self._v, self._i, amount)

    def as_dict(self) -> Dict[str, int]:
        i = self._i
        return {"current": self._v[i], "peak": self._v[i + 1],
                "allocated": self._v[i + 2], "freed": self._v[i + 3]}


class DeviceStats:
    """All counters of one device."""

    def __init__(self) -> None:
        self.v: List[int] = [0] * SLOTS
        self.arrays: Dict[str, Tuple[Stat, Stat, Stat]] = {
            name: (Stat(self.v, base + ALL), Stat(self.v, base + SMALL), Stat(self.v, base + LARGE))
            for name, base in ARRAY_BASE.items()
        }
        self.oversize_allocations = Stat(self.v, OVERSIZE_ALLOCATIONS)
        self.oversize_segments = Stat(self.v, OVERSIZE_SEGMENTS)
        self.num_alloc_retries = 0
        self.num_ooms = 0
        self.num_sync_all_streams = 0
        self.num_device_alloc = 0
        self.num_device_free = 0

    def update(self, name: str, is_small: bool, amount: int) -> None:
        """Apply ``amount`` to the aggregate and to the block's pool."""
        add(self.v, ARRAY_BASE[name], is_small, amount)

    def current(self, name: str, pool_type: str = "all") -> int:
        return self.v[ARRAY_BASE[name] + 4 * POOL_TYPES.index(pool_type)]

    def nested(self, scalars: Iterable[str], max_split_size: int,
               with_requested: bool) -> Dict[str, object]:
        out: Dict[str, object] = {}
        values = {
            "num_alloc_retries": self.num_alloc_retries,
            "num_ooms": self.num_ooms,
            "max_split_size": max_split_size,
            "num_sync_all_streams": self.num_sync_all_streams,
            "num_device_alloc": self.num_device_alloc,
            "num_device_free": self.num_device_free,
        }
        for key in scalars:
            out[key] = values[key]
        for name in ARRAY_STATS:
            if name == "requested_bytes" and not with_requested:
                continue
            out[name] = {ptype: stat.as_dict()
                         for ptype, stat in zip(POOL_TYPES, self.arrays[name])}
        out["oversize_allocations"] = self.oversize_allocations.as_dict()
        out["oversize_segments"] = self.oversize_segments.as_dict()
        return out

    def reset_peak(self) -> None:
        v = self.v
        for i in range(0, SLOTS, 4):
            v[i + 1] = v[i]

    def reset_accumulated(self) -> None:
        v = self.v
        for i in range(0, SLOTS, 4):
            v[i + 2] = 0
            v[i + 3] = 0
        self.num_alloc_retries = 0
        self.num_ooms = 0
        self.num_sync_all_streams = 0
        self.num_device_alloc = 0
        self.num_device_free = 0


def flatten(nested: Dict[str, object]) -> "OrderedDict[str, int]":
    """Nested stats -> sorted ``{"a.b.c": value}`` like torch_npu's memory_stats()."""
    result: List[Tuple[str, int]] = []

    def walk(prefix: str, obj: object) -> None:
        if isinstance(obj, dict):
            if prefix:
                prefix += "."
            for key, value in obj.items():
                walk(prefix + key, value)
        else:
            result.append((prefix, obj))  # type: ignore[arg-type]

    walk("", nested)
    result.sort()
    return OrderedDict(result)


__all__ = ["ARRAY_BASE", "ARRAY_STATS", "DeviceStats", "POOL_TYPES", "Stat", "UNLIMITED", "add", "add_one", "flatten", "on_alloc", "on_free", "on_release"]
