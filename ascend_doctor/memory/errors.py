"""The one error the memory package raises for input it cannot analyse."""
from __future__ import annotations


class MemoryInputError(ValueError):
    """An input that cannot be analysed (not a snapshot, stats with unknown keys, ...)."""
