"""A deterministic model of torch_npu's NPU caching allocator (one device).

The decisions follow ``DeviceCachingAllocator`` in
torch_npu/csrc/core/npu/NPUCachingAllocator.cpp of the profile's release branch
(round_size, get_pool, get_allocation_size, get_free_block, should_split,
alloc_block, release_available_cached_blocks, release_cached_blocks,
garbage_collect_cached_blocks, expandable segments map/unmap, free_block and the
statistics updates), including the quirks that matter for diagnosis:

* after the OOM retry flushes the cache the pool is not searched again, so a block
  freed only by that flush's event synchronisation is not used (pytorch#189504);
* ``Tried to allocate`` prints the segment size (``alloc_size``), not the request;
* inactive_split statistics exclude expandable segments.

The device is modelled as ``total`` bytes of which ``non_torch_bytes`` (HCCL,
runtime, other processes) and the workspace allocator's cache are not available;
a driver allocation succeeds iff it fits in what is left (HBM is behind an MMU,
so device-level contiguity does not matter). Virtual addresses are handed out by
a counter, so every run gives the same addresses.
"""
from __future__ import annotations

from bisect import bisect_left, insort
from collections import deque
from typing import Callable, Deque, Dict, List, NamedTuple, Optional, Tuple, Union

from .blocks import Block, BlockPool, ExpandableSegment
from .config import AllocatorConfig, parse_alloc_conf
from .constants import (EXTRA_LARGE_BUFFER, MIN_BLOCK_SIZE, MIN_LARGE_ALLOC, ONE_EXA_BYTES,
                        ROUND_LARGE, SMALL_BUFFER, SMALL_SIZE, MiB)
from .errors import NPUOutOfMemoryError
from .formatting import format_size
from .profiles import Profile, get_profile, message
from .stats import ARRAY_BASE, OVERSIZE_ALLOCATIONS, DeviceStats, add, add_one, flatten, on_alloc, on_free, on_release

# base indices of the statistics arrays in DeviceStats.v that the hot path updates directly
_INACTIVE_SPLIT = ARRAY_BASE["inactive_split"]
_INACTIVE_SPLIT_BYTES = ARRAY_BASE["inactive_split_bytes"]

VA_BASE = 0x12C000000000      # first segment address (NPU HBM addresses look like this)
VA_GUARD = 2 * MiB            # gap left between two segments' address ranges
LAZY_QUERY_SIZE = 512         # multi_stream_lazy_reclaim: reap events past this backlog


class AllocatorEvent(NamedTuple):
    """Something the real allocator would log; the runtime decides where it goes.

    kind ``retry``: the ASCEND_LOGE plog line before the cache flush (one per
    num_alloc_retries increment); ``oom``: the OOM text (26.x also logs it);
    ``warning``: a TORCH_NPU_WARN_ONCE text from the config.
    """

    kind: str
    level: str
    text: str
    tick: int


class TickClock:
    """Default event clock: one tick per allocator call.

    An event recorded for a stream completes ``latency`` ticks later. Any object
    with ``record(stream) -> handle``, ``query(handle) -> bool`` and
    ``synchronize(handle)`` (and optionally ``advance()`` and ``now``) can replace
    it, e.g. the simulated runtime's stream clock.
    """

    def __init__(self, latency: int = 1):
        self.now = 0
        self.latency = latency

    def advance(self) -> None:
        self.now += 1

    def record(self, stream: int) -> int:
        return self.now + self.latency

    def query(self, handle: int) -> bool:
        return self.now >= handle

    def synchronize(self, handle: int) -> None:
        return None


class _Request:
    __slots__ = ("size", "stream", "pool", "alloc_size", "block")

    def __init__(self, size: int, stream: int, pool: BlockPool, alloc_size: int):
        self.size = size
        self.stream = stream
        self.pool = pool
        self.alloc_size = alloc_size
        self.block: Optional[Block] = None


class CachingAllocator:
    """``CachingAllocator(device_capacity_bytes, conf, device=0, clock=None)``.

    ``conf`` is an :class:`AllocatorConfig` or a PYTORCH_NPU_ALLOC_CONF string
    (parsed with ``profile``; parse errors raise AllocConfError). Keyword options:
    ``profile`` (torch_npu release line, see profiles.py), ``non_torch_bytes``
    (device memory held outside this allocator), ``pad_bytes`` (override the
    profile's +32 B, e.g. 0 for Ascend950 with CANN >= 9.1.0),
    ``record_history`` (keep trace entries for snapshot()['device_traces']).
    """

    def __init__(self, device_capacity_bytes: int, conf: Union[str, AllocatorConfig, None] = "",
                 device: int = 0, clock: Optional[object] = None, *,
                 profile: Union[None, str, Profile] = None, non_torch_bytes: int = 0,
                 pad_bytes: Optional[int] = None, record_history: bool = False,
                 history_max_entries: int = 100000):
        if device_capacity_bytes <= 0:
            raise ValueError("device_capacity_bytes must be positive")
        if isinstance(conf, AllocatorConfig):
            if profile is not None and get_profile(profile) is not conf.profile:
                raise ValueError("profile %r differs from the config's profile %r"
                                 % (str(profile), conf.profile.name))
            self.config = conf
        else:
            self.config = parse_alloc_conf(conf or "", profile)
        self.profile: Profile = self.config.profile
        self.device = device
        self.total = int(device_capacity_bytes)
        self.non_torch_bytes = int(non_torch_bytes)
        self.workspace_bytes = 0
        self.pad = self.profile.pad_bytes if pad_bytes is None else int(pad_bytes)
        self.clock = clock if clock is not None else TickClock()
        self._advance = getattr(self.clock, "advance", None)
        self.stats = DeviceStats()
        self._v = self.stats.v
        # settings the hot path reads on every call (the config does not change after parsing)
        self._mss = self.config.max_split_size
        self._no_divisions = not any(self.config.roundup_power2_divisions)
        self._expandable = bool(self.config.expandable_segments)
        self._small = BlockPool(True)
        self._large = BlockPool(False)
        self._active: Dict[int, Block] = {}
        self._events: Dict[int, Deque[Tuple[object, Block]]] = {}
        self._segments_expandable: List[ExpandableSegment] = []
        self._va_next = VA_BASE
        self._total_allocated = 0  # bytes obtained from the "driver" (segments + mapped pages)
        self._allowed: Optional[int] = None
        self._listeners: List[Callable[[AllocatorEvent], None]] = []
        self._oom_observers: List[Callable[[int, int, int, int], None]] = []
        self.events: List[AllocatorEvent] = []
        self._history = record_history
        self._history_max = history_max_entries
        self._trace: List[Dict[str, object]] = []
        self._tick = 0
        fraction = self.config.per_process_memory_fraction
        if fraction is not None:
            self.set_per_process_memory_fraction(fraction)
        for text in self.config.warnings:
            self._emit("warning", "WARNING", text)

    # ------------------------------------------------------------------ public
    def malloc(self, size: int, stream: int = 0) -> Block:
        """Allocate ``size`` bytes on ``stream``; raises NPUOutOfMemoryError."""
        if not isinstance(size, int) or isinstance(size, bool):
            raise TypeError("size must be an int number of bytes, got %r" % (size,))
        if size < 0:
            raise ValueError("size must be >= 0")
        self._tick += 1
        if self._advance is not None:
            self._advance()
        if size >= ONE_EXA_BYTES:
            raise NPUOutOfMemoryError(message("oom_huge"), self.profile.oom_exception,
                                      {"requested": size})
        if size == 0:
            return Block(0, 0, stream, self._small)
        cfg = self.config
        if self._no_divisions:
            rounded = size + self.pad
            rounded = MIN_BLOCK_SIZE if rounded < MIN_BLOCK_SIZE else -(-rounded // MIN_BLOCK_SIZE) * MIN_BLOCK_SIZE
        else:
            rounded = self._round_size(size)
        if rounded <= SMALL_SIZE:
            pool = self._small
            alloc_size = SMALL_BUFFER
        else:
            pool = self._large
            if cfg.page_size_1g:
                alloc_size = -(-rounded // EXTRA_LARGE_BUFFER) * EXTRA_LARGE_BUFFER
            elif rounded < MIN_LARGE_ALLOC:
                alloc_size = cfg.large_segment_size
            else:
                alloc_size = -(-rounded // ROUND_LARGE) * ROUND_LARGE
        req = _Request(rounded, stream, pool, alloc_size)

        reaped = False
        if cfg.multi_stream_lazy_reclaim:
            if sum(len(q) for q in self._events.values()) > LAZY_QUERY_SIZE:
                self._process_events()
                reaped = True
        elif self._events:
            self._process_events()
        return self._malloc_search(req, size, reaped)

    def _malloc_search(self, req: _Request, size: int, reaped: bool = False) -> Block:
        """malloc after the request is rounded and completed events are reaped: best fit,
        then the driver, then the flush-and-retry chain; the OOM error when all fail."""
        cfg = self.config
        stream = req.stream
        pool = req.pool
        rounded = req.size
        found = self._get_free_block(req)
        if cfg.multi_stream_lazy_reclaim and not found and not reaped:
            self._process_events()
            found = self._get_free_block(req)
        if not found:
            if self._allowed is not None and cfg.garbage_collection_threshold > 0.0:
                self._garbage_collect()
            found = self._alloc_block(req, False) or (
                self._release_available_cached_blocks(req) and self._alloc_block(req, False))
        if not found:
            self._emit("retry", "ERROR", message("retry_log"))
            self.workspace_bytes = 0  # NPUWorkspaceAllocator::emptyCache before the flush
            self._release_cached_blocks()
            found = self._alloc_block(req, True)
        if not found:
            raise self._out_of_memory(req)

        block = req.block
        assert block is not None
        align = cfg.base_addr_aligned_size
        if (rounded >= ROUND_LARGE and cfg.expandable_segments and align
                and "base_addr_aligned_kb" in self.profile.keys and block.address % align):
            aligned = block.address + align - block.address % align
            offset = aligned - block.address
            if offset + rounded <= block.size:
                sliver = block
                body = Block(aligned, block.size - offset, stream, pool, block.expandable)
                body.next = sliver.next
                if body.next is not None:
                    body.next.prev = body
                body.prev = sliver
                sliver.next = body
                sliver.size = offset
                pool.insert(sliver)
                req.block = body
        split = self._should_split(req.block, rounded)
        return self._alloc_found_block(req, size, split)

    def free(self, block: Block) -> None:
        """Return a block; it is cached (or pending until its streams finish)."""
        if block.size == 0 and block.address == 0:
            return
        if self._active.get(block.address) is not block or not block.allocated:
            raise ValueError("free of a block that is not allocated: %r" % (block,))
        self._tick += 1
        if self._advance is not None:
            self._advance()
        block.allocated = False
        small = block.pool.is_small
        v = self._v
        on_free(v, small, block.size)
        if self._history:
            self._record("free_requested", block.address, block.requested_size, block.stream)
        if self._mss is not None and block.size >= self._mss:
            add_one(v, OVERSIZE_ALLOCATIONS, -1)
        if block.stream_uses:
            for stream in sorted(block.stream_uses):
                handle = self.clock.record(stream)
                block.event_count += 1
                self._events.setdefault(stream, deque()).append((handle, block))
            block.stream_uses.clear()
        else:
            self._free_block(block)

    def record_stream(self, block: Block, stream: int) -> None:
        """Mark a block as used on another stream (torch's Tensor.record_stream)."""
        if stream != block.stream:
            block.stream_uses.add(stream)

    def empty_cache(self) -> None:
        """torch.npu.empty_cache(): sync events, drop workspace, free whole segments."""
        self._step()
        self.workspace_bytes = 0
        self._release_cached_blocks()

    def set_per_process_memory_fraction(self, fraction: float) -> None:
        if not 0.0 <= fraction <= 1.0:
            raise ValueError("invalid fraction:%s. Please set within [0, 1]." % fraction)
        # 26.1.0 (per_process_memory_fraction in the config) leaves 1.0 unlimited;
        # older branches always set the limit.
        if fraction >= 1.0 and "per_process_memory_fraction" in self.profile.keys:
            self._allowed = None
        else:
            self._allowed = int(fraction * self.total)

    def set_non_torch_bytes(self, nbytes: int) -> None:
        """Memory used on the device outside this allocator (may change over time)."""
        self.non_torch_bytes = max(0, int(nbytes))

    def set_workspace_bytes(self, nbytes: int) -> None:
        """Bytes cached by the operator workspace allocator (dropped on OOM retry)."""
        self.workspace_bytes = max(0, int(nbytes))

    def device_free(self) -> int:
        """Free device memory as aclrtGetMemInfo(ACL_HBM_MEM) would report it."""
        used = self.non_torch_bytes + self.workspace_bytes + self._total_allocated
        return max(0, self.total - used)

    def mem_get_info(self) -> Tuple[int, int]:
        return self.device_free(), self.total

    def memory_allocated(self) -> int:
        return self.stats.current("allocated_bytes")

    def memory_reserved(self) -> int:
        return self.stats.current("reserved_bytes")

    def max_memory_allocated(self) -> int:
        return self.stats.arrays["allocated_bytes"][0].peak

    def max_memory_reserved(self) -> int:
        return self.stats.arrays["reserved_bytes"][0].peak

    def memory_stats(self) -> "Dict[str, int]":
        """``torch.npu.memory_stats()``: flattened, sorted keys of the profile."""
        return flatten(self.memory_stats_as_nested_dict())

    def memory_stats_as_nested_dict(self) -> Dict[str, object]:
        mss = self.config.max_split_size
        exported = -1 if mss is None else (mss - (1 << 64) if mss >= 1 << 63 else mss)
        return self.stats.nested(self.profile.stats_scalars, exported, self.profile.requested_bytes)

    def reset_peak_memory_stats(self) -> None:
        self.stats.reset_peak()

    def reset_accumulated_memory_stats(self) -> None:
        self.stats.reset_accumulated()

    def snapshot(self) -> Dict[str, object]:
        """``torch.npu.memory._snapshot()``: segments (sorted by address) and traces."""
        heads: List[Block] = self._small.blocks() + self._large.blocks() + list(self._active.values())
        segments = []
        total_active = 0
        for head in heads:
            if head.prev is not None and head.prev.mapped:
                continue
            seg_blocks = []
            total = allocated = active = requested = 0
            block: Optional[Block] = head
            address = head.address
            while block is not None and block.mapped:
                is_active = block.allocated or block.event_count > 0
                state = ("active_allocated" if block.allocated
                         else "active_pending_free" if is_active else "inactive")
                seg_blocks.append({"address": address, "size": block.size,
                                   "requested_size": block.requested_size,
                                   "state": state, "frames": []})
                address += block.size
                total += block.size
                if block.allocated:
                    allocated += block.size
                if is_active:
                    active += block.size
                    requested += block.requested_size
                block = block.next
            total_active += active
            segments.append({
                "device": self.device, "address": head.address, "total_size": total,
                "allocated_size": allocated, "active_size": active,
                "requested_size": requested, "stream": head.stream,
                "segment_type": "small" if head.pool.is_small else "large",
                "segment_pool_id": (0, 0), "is_expandable": head.expandable is not None,
                "frames": [], "blocks": seg_blocks,
            })
        segments.sort(key=lambda s: s["address"])
        self._record("snapshot", 0, total_active, 0)
        return {"segments": segments, "device_traces": [list(self._trace)]}

    def memory_snapshot(self) -> List[Dict[str, object]]:
        """``torch.npu.memory_snapshot()``: the segment list only."""
        return self.snapshot()["segments"]  # type: ignore[return-value]

    def record_memory_history(self, enabled: bool = True, max_entries: int = 100000) -> None:
        self._history = enabled
        self._history_max = max_entries
        if not enabled:
            self._trace = []

    def add_listener(self, fn: Callable[[AllocatorEvent], None]) -> None:
        """Receive retry / oom / warning events as they happen."""
        self._listeners.append(fn)

    def attach_out_of_memory_observer(self, fn: Callable[[int, int, int, int], None]) -> None:
        """``fn(device, alloc_size, allowed_or_total, device_free)`` before the OOM raise."""
        self._oom_observers.append(fn)

    def largest_free_block(self, pool: str = "large", stream: int = 0) -> int:
        """Size of the largest cached free block of a pool and stream."""
        best = 0
        for block in (self._large if pool == "large" else self._small).blocks():
            if block.stream == stream and block.size > best:
                best = block.size
        return best

    # ---------------------------------------------------------------- internals
    def _step(self) -> None:
        self._tick += 1
        if self._advance is not None:
            self._advance()

    def _emit(self, kind: str, level: str, text: str) -> None:
        event = AllocatorEvent(kind, level, text, self._tick)
        self.events.append(event)
        for fn in self._listeners:
            fn(event)

    def _record(self, action: str, addr: int, size: int, stream: int) -> None:
        if not self._history:
            return
        key = "device_free" if action == "oom" else "addr"
        self._trace.append({"action": action, key: addr, "size": size,
                            "stream": stream, "frames": []})
        if len(self._trace) > self._history_max:
            del self._trace[0]

    def _is_oversize(self, size: int) -> bool:
        mss = self.config.max_split_size
        return mss is not None and size >= mss

    def _round_size(self, size: int) -> int:
        size += self.pad
        if size < MIN_BLOCK_SIZE:
            return MIN_BLOCK_SIZE
        divisions = self.config.divisions_for(size)
        if divisions > 1 and size > MIN_BLOCK_SIZE * divisions:
            return _roundup_power2_next_division(size, divisions)
        return -(-size // MIN_BLOCK_SIZE) * MIN_BLOCK_SIZE

    def _allocation_size(self, size: int) -> int:
        if size <= SMALL_SIZE:
            return SMALL_BUFFER
        if size < MIN_LARGE_ALLOC:
            return self.config.large_segment_size
        return -(-size // ROUND_LARGE) * ROUND_LARGE

    def _should_split(self, block: Block, size: int) -> bool:
        remaining = block.size - size
        if block.pool.is_small or self.config.expandable_segments:
            return remaining >= MIN_BLOCK_SIZE
        mss = self.config.max_split_size
        return (mss is None or size < mss) and remaining > SMALL_SIZE

    def _get_free_block(self, req: _Request) -> bool:
        pool = req.pool
        cfg = self.config
        if self._allowed is not None and cfg.garbage_collection_threshold > 0.0:
            for block in pool.blocks():
                block.gc_count += 1
        keys = pool._keys
        stream = req.stream
        idx = bisect_left(keys, (stream, req.size, -1))
        n = len(keys)
        if idx == n or keys[idx][0] != stream:
            return False
        block = pool._blocks[keys[idx]]
        if block.expandable is not None:
            if cfg.expandable_segments:
                # best fit counts the unmapped space right after a block as usable
                def grow(b: Block) -> int:
                    nxt = b.next
                    return b.size + (nxt.size if nxt is not None and not nxt.mapped else 0)
                while (block.expandable is not None and idx + 1 < n
                       and pool.key_at(idx + 1)[0] == req.stream
                       and grow(pool.block_at(idx + 1)) < grow(block)):
                    idx += 1
                    block = pool.block_at(idx)
            else:
                idx += 1
                while idx < n and pool.block_at(idx).expandable is not None \
                        and pool.key_at(idx)[0] == req.stream:
                    idx += 1
                if idx == n or pool.key_at(idx)[0] != req.stream:
                    return False
                block = pool.block_at(idx)
        mss = self._mss
        if mss is not None:
            if req.size < mss and block.size >= mss:
                return False  # do not hand an oversize block to a normal request
            if req.size >= mss and block.size >= req.size + cfg.max_non_split_rounding:
                return False  # oversize reuse only within the rounding slack
        req.block = block
        block.gc_count = 0
        key = keys[idx]
        if key[2] != block.address or key[1] != block.size:
            raise AssertionError("block %r is not in the free index" % (block,))
        del keys[idx]
        del pool._blocks[key]
        return True

    def _alloc_block(self, req: _Request, is_retry: bool) -> bool:
        if is_retry:
            self.stats.num_alloc_retries += 1
        size = req.alloc_size
        if self._allowed is not None and self._total_allocated + size > self._allowed:
            return False
        if self.config.expandable_segments:
            req.block = self._try_allocate_expandable(req)
            return req.block is not None
        if size > self.device_free():
            return False
        address = self._reserve_va(size)
        self._total_allocated += size
        block = Block(address, size, req.stream, req.pool)
        small = req.pool.is_small
        self.stats.update("segment", small, 1)
        self.stats.update("reserved_bytes", small, size)
        if self._is_oversize(size):
            self.stats.oversize_segments.update(1)
        self.stats.num_device_alloc += 1
        self._record("segment_alloc", address, size, req.stream)
        req.block = block
        return True

    def _reserve_va(self, size: int) -> int:
        address = self._va_next
        self._va_next += size + VA_GUARD
        return address

    # expandable segments ----------------------------------------------------
    def _try_allocate_expandable(self, req: _Request) -> Optional[Block]:
        cand = self._find_expandable_block(req.stream, req.pool, req.size)
        if not cand.mapped and not self._map_block(cand, min(cand.size, req.size)):
            return None
        while cand.size < req.size:
            nxt = cand.next
            if nxt is None:
                return None
            if not self._map_block(nxt, min(req.size - cand.size, nxt.size)):
                return None
            cand = nxt
        req.pool.remove(cand)
        return cand

    @staticmethod
    def _allocatable(block: Optional[Block]) -> bool:
        return (block is not None and not block.allocated and block.event_count == 0
                and not block.stream_uses)

    def _find_expandable_block(self, stream: int, pool: BlockPool, size: int) -> Block:
        for cand in pool.unmapped_from(stream):
            if self._allocatable(cand.prev):
                cand = cand.prev  # type: ignore[assignment]
            room = 0
            b: Optional[Block] = cand
            while room < size and self._allocatable(b):
                room += b.size  # type: ignore[union-attr]
                b = b.next  # type: ignore[union-attr]
            if room >= size:
                return cand
        if pool.is_small:
            page = SMALL_BUFFER
        else:
            page = self.config.expandable_page_size
        num_pages = -(-(self.total + self.total // 8) // page)
        base = self._reserve_va(page * num_pages)
        seg = ExpandableSegment(base, page, num_pages, stream, pool.is_small)
        self._segments_expandable.append(seg)
        cand = Block(base, seg.size, stream, pool, seg, mapped=False)
        pool.insert_unmapped(cand)
        return cand

    def _map_block(self, to_map: Block, size: int) -> bool:
        seg = to_map.expandable
        assert seg is not None and not to_map.mapped and size <= to_map.size
        begin, end = seg.pages_to_map(to_map.address, size)
        mapped_size = (end - begin) * seg.page
        if mapped_size == 0:
            return False
        if mapped_size > self.device_free():
            return False  # aclrtMallocPhysical fails for a page: nothing is mapped
        seg.set_mapped(begin, end, True)
        pool = to_map.pool
        pool.remove_unmapped(to_map)
        to_map.mapped = True
        if mapped_size < to_map.size:
            rest = Block(to_map.address + mapped_size, to_map.size - mapped_size,
                         to_map.stream, pool, seg, mapped=False)
            rest.splice(to_map, to_map.next)
            pool.insert_unmapped(rest)
            to_map.size = mapped_size
        self._try_merge(to_map, to_map.prev, pool)
        self._try_merge(to_map, to_map.next, pool)
        pool.insert(to_map)
        self._total_allocated += mapped_size
        self.stats.update("reserved_bytes", pool.is_small, mapped_size)
        self.stats.num_device_alloc += 1
        self._record("segment_map", seg.base + begin * seg.page, mapped_size, to_map.stream)
        return True

    def _unmap_block(self, block: Block) -> None:
        seg = block.expandable
        assert seg is not None
        begin, end = seg.pages_to_unmap(block.address, block.size)
        if begin >= end:
            return
        pool = block.pool
        pool.remove(block)
        start = seg.base + begin * seg.page
        size = (end - begin) * seg.page
        before = start - block.address
        if before > 0:
            head = Block(block.address, before, block.stream, pool, seg)
            head.splice(block.prev, block)
            pool.insert(head)
        after = block.size - (before + size)
        if after > 0:
            tail = Block(start + size, after, block.stream, pool, seg)
            tail.splice(block, block.next)
            pool.insert(tail)
        block.address = start
        block.size = size
        block.mapped = False
        self._try_merge(block, block.prev, pool)
        self._try_merge(block, block.next, pool)
        pool.insert_unmapped(block)
        seg.set_mapped(begin, end, False)
        self._total_allocated -= size
        self.stats.update("reserved_bytes", pool.is_small, -size)
        self.stats.num_device_free += 1
        self._record("segment_unmap", start, size, block.stream)

    def _release_expandable_segment(self, block: Block) -> None:
        seg = block.expandable
        assert seg is not None and not block.mapped and block.size == seg.size
        block.pool.remove_unmapped(block)
        self._segments_expandable.remove(seg)

    # split / merge -------------------------------------------------------------
    def _try_merge(self, dst: Block, src: Optional[Block], pool: BlockPool) -> int:
        if (src is None or src.allocated or src.event_count > 0 or src.stream_uses
                or dst.mapped != src.mapped):
            return 0
        if src.mapped:
            key = (src.stream, src.size, src.address)
            keys = pool._keys
            idx = bisect_left(keys, key)
            if idx == len(keys) or keys[idx] != key:
                raise AssertionError("block %r is not in the free index" % (src,))
            del keys[idx]
            del pool._blocks[key]
        else:
            pool.remove_unmapped(src)
        if dst.prev is src:
            dst.address = src.address
            dst.prev = src.prev
            if dst.prev is not None:
                dst.prev.next = dst
        else:
            dst.next = src.next
            if dst.next is not None:
                dst.next.prev = dst
        dst.size += src.size
        return src.size

    def _alloc_found_block(self, req: _Request, orig_size: int, split: bool) -> Block:
        block = req.block
        assert block is not None
        pool = req.pool
        size = req.size
        small = pool.is_small
        v = self._v
        already_split = block.prev is not None or block.next is not None
        if split:
            rest = block
            block = Block(rest.address, size, req.stream, pool, rest.expandable)
            prev = rest.prev
            block.prev = prev
            if prev is not None:
                prev.next = block
            block.next = rest
            rest.prev = block
            rest.address += size
            rest.size -= size
            key = (rest.stream, rest.size, rest.address)
            insort(pool._keys, key)
            pool._blocks[key] = rest
            if block.expandable is None:
                if already_split:
                    add(v, _INACTIVE_SPLIT_BYTES, small, -size)
                else:
                    add(v, _INACTIVE_SPLIT_BYTES, small, rest.size)
                    add(v, _INACTIVE_SPLIT, small, 1)
        elif already_split and block.expandable is None:
            add(v, _INACTIVE_SPLIT_BYTES, small, -block.size)
            add(v, _INACTIVE_SPLIT, small, -1)
        block.allocated = True
        block.requested_size = orig_size
        if self._history:
            self._record("alloc", block.address, orig_size, block.stream)
        self._active[block.address] = block
        bsize = block.size
        on_alloc(v, small, bsize, orig_size)
        if self._mss is not None and bsize >= self._mss:
            add_one(v, OVERSIZE_ALLOCATIONS, 1)
        return block

    def _free_block(self, block: Block) -> None:
        assert not block.allocated and block.event_count == 0
        if self._history:
            self._record("free_completed", block.address, block.requested_size, block.stream)
        del self._active[block.address]
        pool = block.pool
        orig_size = block.size
        requested = block.requested_size
        net_blocks = 0
        net_bytes = 0
        try_merge = self._try_merge
        cand = block.prev
        if cand is not None and not cand.allocated:
            merged = try_merge(block, cand, pool)
            if merged:
                net_blocks -= 1
                net_bytes -= merged
        cand = block.next
        if cand is not None and not cand.allocated:
            merged = try_merge(block, cand, pool)
            if merged:
                net_blocks -= 1
                net_bytes -= merged
        key = (block.stream, block.size, block.address)
        insort(pool._keys, key)
        pool._blocks[key] = block
        if block.prev is not None or block.next is not None:
            net_blocks += 1
            net_bytes += block.size
        small = pool.is_small
        v = self._v
        if block.expandable is None:
            add(v, _INACTIVE_SPLIT, small, net_blocks)
            add(v, _INACTIVE_SPLIT_BYTES, small, net_bytes)
        on_release(v, small, orig_size, requested)

    # events ----------------------------------------------------------------
    def _process_events(self) -> None:
        for stream in sorted(self._events):
            queue = self._events[stream]
            while queue:
                handle, block = queue[0]
                if not self.clock.query(handle):
                    break
                queue.popleft()
                block.event_count -= 1
                if block.event_count == 0:
                    self._free_block(block)
            if not queue:
                del self._events[stream]

    def _synchronize_and_free_events(self) -> None:
        for stream in sorted(self._events):
            for handle, block in self._events[stream]:
                self.clock.synchronize(handle)
                block.event_count -= 1
                if block.event_count == 0:
                    self._free_block(block)
        self._events.clear()

    # releasing memory ------------------------------------------------------
    def _release_block(self, block: Block) -> None:
        assert block.expandable is None and not block.is_split()
        self._record("segment_free", block.address, block.size, block.stream)
        block.pool.remove(block)
        self._total_allocated -= block.size
        small = block.pool.is_small
        self.stats.update("segment", small, -1)
        self.stats.update("reserved_bytes", small, -block.size)
        if self._is_oversize(block.size):
            self.stats.oversize_segments.update(-1)
        self.stats.num_device_free += 1

    def _release_available_cached_blocks(self, req: _Request) -> bool:
        mss = self.config.max_split_size
        if mss is None:
            return False
        pool = req.pool
        key_size = max(req.size, mss)
        idx = pool.lower_bound(req.stream, key_size)
        if idx == len(pool) or pool.key_at(idx)[0] != req.stream:
            # no single block is big enough: free oversize blocks, largest first
            if idx == 0:
                return False
            released = 0
            idx -= 1
            while idx >= 0 and released < key_size:
                block = pool.block_at(idx)
                if block.size < mss or block.stream != req.stream or not self._releasable(block):
                    break
                released += block.size
                self._release_block(block)
                idx -= 1
            return released >= key_size
        block = pool.block_at(idx)
        if not self._releasable(block):
            return False
        self._release_block(block)
        return True

    @staticmethod
    def _releasable(block: Block) -> bool:
        return block.expandable is None and not block.is_split()

    def _release_cached_blocks(self) -> None:
        self._synchronize_and_free_events()
        self.stats.num_sync_all_streams += 1
        for pool in (self._large, self._small):
            to_unmap = []
            for block in pool.blocks():
                if block.expandable is not None:
                    to_unmap.append(block)
                elif not block.is_split():
                    self._release_block(block)
            for block in to_unmap:
                self._unmap_block(block)
                if not block.mapped and not block.is_split():
                    self._release_expandable_segment(block)

    def _garbage_collect(self) -> None:
        assert self._allowed is not None
        threshold = int(self.config.garbage_collection_threshold * self._allowed)
        if self._total_allocated <= threshold:
            return
        target = self._total_allocated - threshold
        candidates = [b for b in self._large.blocks() if self._releasable(b)]
        if not candidates:
            return
        total_age = float(sum(b.gc_count for b in candidates))
        count = len(candidates)
        reclaimed = 0
        freed = True
        while reclaimed < target and freed and count > 0:
            age_threshold = total_age / count
            freed = False
            for block in self._large.blocks():
                if self._releasable(block) and block.gc_count >= age_threshold:
                    freed = True
                    reclaimed += block.size
                    total_age -= block.gc_count
                    count -= 1
                    self._release_block(block)

    # the out-of-memory error -------------------------------------------------
    def _out_of_memory(self, req: _Request) -> NPUOutOfMemoryError:
        free = self.device_free()
        allowed_info = format_size(self._allowed) + " allowed; " if self._allowed is not None else ""
        self.stats.num_ooms += 1
        self._record("oom", free, req.size, req.stream)
        for fn in self._oom_observers:
            fn(self.device, req.alloc_size, self._allowed if self._allowed is not None else self.total, free)
        allocated = self.stats.current("allocated_bytes")
        active = self.stats.current("active_bytes")
        reserved = self.stats.current("reserved_bytes")
        fields = {"alloc_size": req.alloc_size, "rounded_size": req.size, "device": self.device,
                  "total": self.total, "allocated": allocated, "active": active,
                  "free": free, "reserved": reserved,
                  "allowed": self._allowed if self._allowed is not None else -1}
        if self.profile.flavor == "cuda":
            text = message(self.profile.oom_template, alloc=format_size(req.alloc_size),
                           device=self.device, total=format_size(self.total),
                           free=format_size(free), in_use=format_size(self.total - free),
                           allowed=allowed_info, allocated=format_size(allocated),
                           unallocated=format_size(reserved - allocated))
        else:
            text = message(self.profile.oom_template, alloc=format_size(req.alloc_size),
                           device=self.device, total=format_size(self.total),
                           allocated=format_size(allocated), active=format_size(active),
                           free=format_size(free), allowed=allowed_info,
                           reserved=format_size(reserved))
        self._emit("oom", "ERROR", text)
        return NPUOutOfMemoryError(text, self.profile.oom_exception, fields)


def _roundup_power2_next_division(size: int, divisions: int) -> int:
    if size & (size - 1) == 0:
        return size
    floor = 1 << (size.bit_length() - 1)
    step = floor >> (divisions.bit_length() - 1)
    if step == 0:
        return floor << 1
    base = size & ~(step - 1)
    return size if base == size else base + step


__all__ = ["AllocatorEvent", "CachingAllocator", "TickClock", "VA_BASE"]
