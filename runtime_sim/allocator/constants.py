"""Byte constants of the caching allocator (identical in torch_npu and PyTorch CUDA).

Source: top of torch_npu/csrc/core/npu/NPUCachingAllocator.cpp (Ascend/pytorch,
v2.1.0-7.2.0 .. master) and c10/cuda/CUDACachingAllocator.cpp (pytorch/pytorch).
"""
from __future__ import annotations

KiB = 1024
MiB = 1024 * KiB
GiB = 1024 * MiB

MIN_BLOCK_SIZE = 512            # every request is rounded to a multiple of this
SMALL_SIZE = 1 * MiB            # rounded size <= this goes to the small pool
SMALL_BUFFER = 2 * MiB          # small-pool segment size
MIN_LARGE_ALLOC = 10 * MiB      # large requests below this share a LARGE_BUFFER segment
LARGE_BUFFER = 20 * MiB         # default large segment; also the oversize rounding slack
ROUND_LARGE = 2 * MiB           # requests >= MIN_LARGE_ALLOC get a segment rounded to this
ALIGN_ROUND_LARGE = 16 * KiB    # default base_addr_aligned_kb (expandable segments)
EXTRA_LARGE_BUFFER = 1 * GiB    # segment/page granularity with page_size:1g

# roundup_power2_divisions keeps one division count per power-of-two interval
# from 1 MiB to 64 GiB (16 intervals).
ROUNDUP_POWER2_START = 1 * MiB
ROUNDUP_POWER2_INTERVALS = 16

# Requests at or above one exbibyte are refused before the allocator is asked.
ONE_EXA_BYTES = 1 << 60

# The unlimited max_split_size: the real allocator stores size_t max, and
# memory_stats() exports it through int64 as -1.
UNLIMITED = -1
