"""Linear traversal of loaded data: a structure shared many times (a pickle's memo lets one
list appear in every segment) is visited once."""
from __future__ import annotations

from typing import Any, Callable, Dict, TypeVar

T = TypeVar("T")


class Seen:
    """Results per object identity: ``seen.once(obj, compute)`` computes for a given list or
    dict once and hands the same result out again. The objects are kept alive while the
    cache lives, so an identity is never reused for another object."""

    def __init__(self) -> None:
        self._cache: Dict[int, Any] = {}
        self._keep: list = []

    def once(self, obj: Any, compute: Callable[[Any], T]) -> T:
        key = id(obj)
        if key in self._cache:
            return self._cache[key]
        value = compute(obj)
        self._cache[key] = value
        self._keep.append(obj)
        return value


__all__ = ["Seen"]
