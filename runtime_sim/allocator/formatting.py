"""Size formatting exactly as the allocator's own ``format_size`` prints it."""
from __future__ import annotations

from .constants import GiB, KiB, MiB


def format_size(size: int) -> str:
    """``<= 1024`` -> ``N bytes``; then KiB / MiB / GiB with two decimals.

    The bounds are inclusive (exactly 1 MiB prints ``1024.00 KiB``), as in
    NPUCachingAllocator.cpp / CUDACachingAllocator.cpp.
    """
    if size <= KiB:
        return "%d bytes" % size
    if size <= MiB:
        return "%.2f KiB" % (size / KiB)
    if size <= GiB:
        return "%.2f MiB" % (size / MiB)
    return "%.2f GiB" % (size / GiB)
