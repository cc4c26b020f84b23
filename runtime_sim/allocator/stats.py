"""Allocator statistics with the semantics and key names of ``memory_stats()``.

Each counter keeps current / peak / allocated (sum of increases) / freed (sum of
decreases), as ``c10::CachingAllocator::Stat`` does. Core counters exist per pool
type ``all`` / ``small_pool`` / ``large_pool``. ``flatten`` produces the sorted,
dot-joined keys that ``torch.npu.memory_stats()`` returns (torch_npu/npu/memory.py
walks the nested dict of Module.cpp ``THNPModule_memoryStats`` and sorts).
"""
from __future__ import annotations

from collections import OrderedDict
from typing import Dict, Iterable, List, Tuple

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


class Stat:
    __slots__ = ("current", "peak", "allocated", "freed")

    def __init__(self) -> None:
        self.current = 0
        self.peak = 0
        self.allocated = 0
        self.freed = 0

    def update(self, amount: int) -> None:
        if amount == 0:
            return
        self.current += amount
        if self.current > self.peak:
            self.peak = self.current
        if amount > 0:
            self.allocated += amount
        else:
            self.freed -= amount

    def as_dict(self) -> Dict[str, int]:
        return {"current": self.current, "peak": self.peak,
                "allocated": self.allocated, "freed": self.freed}


class DeviceStats:
    """All counters of one device."""

    def __init__(self) -> None:
        self.arrays: Dict[str, Tuple[Stat, Stat, Stat]] = {
            name: (Stat(), Stat(), Stat()) for name in ARRAY_STATS
        }
        self.oversize_allocations = Stat()
        self.oversize_segments = Stat()
        self.num_alloc_retries = 0
        self.num_ooms = 0
        self.num_sync_all_streams = 0
        self.num_device_alloc = 0
        self.num_device_free = 0

    def update(self, name: str, is_small: bool, amount: int) -> None:
        """Apply ``amount`` to the aggregate and to the block's pool."""
        arr = self.arrays[name]
        arr[0].update(amount)
        arr[1 if is_small else 2].update(amount)

    def current(self, name: str, pool_type: str = "all") -> int:
        return self.arrays[name][POOL_TYPES.index(pool_type)].current

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
        for arr in self.arrays.values():
            for stat in arr:
                stat.peak = stat.current
        for stat in (self.oversize_allocations, self.oversize_segments):
            stat.peak = stat.current

    def reset_accumulated(self) -> None:
        for arr in self.arrays.values():
            for stat in arr:
                stat.allocated = 0
                stat.freed = 0
        for stat in (self.oversize_allocations, self.oversize_segments):
            stat.allocated = 0
            stat.freed = 0
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


__all__ = ["ARRAY_STATS", "DeviceStats", "POOL_TYPES", "Stat", "UNLIMITED", "flatten"]
