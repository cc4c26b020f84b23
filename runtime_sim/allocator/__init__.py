"""Simulated NPU caching allocator (torch_npu's NPUCachingAllocator, deterministic).

What it reproduces, per torch_npu release line ("profile", see profiles.py and
data/profiles.yaml): the PYTORCH_NPU_ALLOC_CONF parser with the real rules and
error texts; small/large pools, the +32 B pad and 512 B rounding, 2 MiB / 20 MiB
segments, best fit, split rules, inactive-split ("stranded") blocks, the
free-whole-segments-and-retry path on OOM, max_split_size_mb,
garbage_collection_threshold, expandable_segments, roundup_power2_divisions,
page_size:1g, base_addr_aligned_kb; ``memory_stats()`` with the real flattened
keys, ``snapshot()`` with the real structure, and the real OOM text of the
profile (``...PyTorch) If reserved`` up to 7.3.x as RuntimeError,
``...PyTorch).If reserved`` from 26.0.0 as torch.OutOfMemoryError).

Stable API (other parts of runtime_sim call these)::

    from runtime_sim.allocator import (
        CachingAllocator, AllocatorConfig, parse_alloc_conf, AllocConfError,
        NPUOutOfMemoryError, ErrorContext, load_trace, list_traces, replay,
        get_profile, format_size)

    conf = parse_alloc_conf("expandable_segments:True", profile="7.2.0")
    alloc = CachingAllocator(64 * 2**30, conf, device=0, clock=None,
                             non_torch_bytes=3 * 2**30)
    block = alloc.malloc(size, stream=0)      # -> Block(.address, .size, .requested_size)
    alloc.record_stream(block, stream=1)      # optional cross-stream use
    alloc.free(block)
    alloc.empty_cache()
    alloc.memory_stats()                      # OrderedDict "allocated_bytes.all.current" ...
    alloc.snapshot()                          # {"segments": [...], "device_traces": [[...]]}
    alloc.mem_get_info()                      # (free, total) as aclrtGetMemInfo reports
    alloc.set_per_process_memory_fraction(0.9)
    alloc.set_non_torch_bytes(n); alloc.set_workspace_bytes(n)
    alloc.add_listener(fn)                    # fn(AllocatorEvent(kind, level, text, tick))

    try: alloc.malloc(huge)
    except NPUOutOfMemoryError as e:
        str(e)            # the real message
        e.python_type     # "RuntimeError" or "torch.OutOfMemoryError"
        e.console_line()  # "RuntimeError: NPU out of memory. Tried to allocate ..."
        e.fields          # the numbers behind it (bytes)

    trace = load_trace("training_varlen")     # also llm_serving_kv_concat, video_diffusion
    result = replay(trace, trace.allocator("expandable_segments:True"))
    result.completed, result.failed_event, result.oom_message, result.gap

Events the runtime should log (``AllocatorEvent.kind``): ``retry`` -- the plog
ERROR line "Get a block from the existing pool failed. Try to free cached blocks
and reallocate. This error log can be ignored." written once per cache flush;
``oom`` -- the OOM text; ``warning`` -- TORCH_NPU_WARN_ONCE texts of the config.

``clock``: by default one logical tick per malloc/free and cross-stream frees
complete one tick later. Pass any object with ``record(stream) -> handle``,
``query(handle) -> bool`` and ``synchronize(handle)`` (optionally ``advance()``)
to drive pending frees from the simulated runtime's streams instead.

Deterministic: same inputs, same addresses, numbers and texts; no wall clock
(error banners take their timestamp from :class:`ErrorContext`).
"""
from __future__ import annotations

from .blocks import Block
from .caching import AllocatorEvent, CachingAllocator, TickClock
from .config import AllocatorConfig, parse_alloc_conf
from .errors import AllocConfError, ErrorContext, NPUOutOfMemoryError, format_banner
from .formatting import format_size
from .profiles import Profile, UnknownProfileError, get_profile, profile_names
from .traces import ReplayResult, Trace, UnknownTraceError, list_traces, load_trace, replay

__all__ = [
    "AllocConfError",
    "AllocatorConfig",
    "AllocatorEvent",
    "Block",
    "CachingAllocator",
    "ErrorContext",
    "NPUOutOfMemoryError",
    "Profile",
    "ReplayResult",
    "TickClock",
    "Trace",
    "UnknownProfileError",
    "UnknownTraceError",
    "format_banner",
    "format_size",
    "get_profile",
    "list_traces",
    "load_trace",
    "parse_alloc_conf",
    "profile_names",
    "replay",
]
