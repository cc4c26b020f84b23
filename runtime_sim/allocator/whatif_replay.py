"""The what-if replay: a trace through the caching allocator, for its outcome figures only.

``ascend-doctor oom simulate`` replays one trace under several settings and shows, per
setting, whether it runs out of memory (where, how often, the segment size it tried), the
peak reserved and allocated bytes, and the stranded bytes (inactive split) and the cache
(reserved - allocated) at the first OOM. ``replay`` (traces.py) gives all of that and much
more (every memory_stats() counter, the snapshot, the OOM text) by running every event
through :class:`CachingAllocator`, which costs several microseconds per event. This module
makes the same decisions as that allocator with state reduced to what the figures need:

* the trace is compiled once (``compile_trace``) into two parallel integer lists shared by
  every setting: for an allocation its own event number and its size, for a free the number
  of the allocation event that defined the key (the live blocks are a list indexed by that
  number, not a dict of string keys); the few other events go to a side table;
* per setting the sizes are rounded once per distinct size with the allocator's own
  ``_round_size`` (pad, 512 B, roundup_power2_divisions);
* a block is a small list ``[address, size, prev, next, key, pool, segment, age stamp,
  mapped, lead]``; each pool keeps its free mapped blocks as a sorted list of integer keys
  ``size << 64 | address`` (the best-fit order of (size, address) on stream 0), ending in a
  key larger than any request, and one dict maps a key to its block;
* the common events (a best-fit hit with its split, a free with its merges) run in one loop
  with everything in local variables; a miss (new segment or page mapping, garbage
  collection, max_split_size release, the flush-and-retry, the OOM), ``empty_cache`` and
  ``non_torch`` go to methods that mirror ``CachingAllocator`` step by step;
* statistics are kept only where a figure needs them: allocated bytes and its peak in the
  loop, reserved bytes and its peak in the slow paths; the inactive-split bytes are summed
  over the free blocks when they are read (at the first OOM or the end), which is the
  quantity the allocator's counter tracks; garbage-collection ages are kept as the number of
  large-pool searches since a block entered the free index (one counter, not one increment
  per free block per search).

What it does not model (``compile_trace`` returns None and the caller takes ``replay``):
``record_stream`` (cross-stream frees wait on events) and sizes that are not whole numbers
of bytes, 0 or more. The allocator must be fresh (nothing allocated yet).
tests/runtime_sim/test_allocator_whatif_replay.py holds the figures equal to ``replay``'s on
the fragmentation traces and on random traces under every setting the simulator has.
"""
from __future__ import annotations

from bisect import bisect_left, insort
from dataclasses import dataclass
from typing import Dict, List, Optional, Sequence, Tuple

from .caching import VA_BASE, VA_GUARD, CachingAllocator
from .constants import MIN_BLOCK_SIZE, ONE_EXA_BYTES, ROUND_LARGE, SMALL_BUFFER, SMALL_SIZE

Event = Tuple[str, str, int, str]

# the loops write these sizes as numbers (512, 1048576, 2097152)
if (MIN_BLOCK_SIZE, SMALL_SIZE, ROUND_LARGE) != (512, 1 << 20, 2 << 20):
    raise ImportError("whatif_replay's loops assume the allocator's 512 B / 1 MiB / 2 MiB constants")

# block record fields (lists are used for speed; the loops below write the numbers)
ADDR, SIZE, PREV, NEXT, KEY, POOL, SEG, STAMP, MAPPED, LEAD = range(10)
_SHIFT = 64  # free-index key = size << 64 | address (addresses stay far below 2**64)
# the last key of every free list: larger than any request, so a search never runs off the end
_END = (1 << 62) << _SHIFT

_EMPTY_CACHE, _NON_TORCH, _HUGE = "empty_cache", "non_torch", "huge"


@dataclass
class CompiledTrace:
    """A trace as integer lists (see the module docstring). ``sizes[i]`` is the requested
    size of an allocation event and 0 for every other event; ``codes[i]`` is ``i`` for an
    allocation and for a side-table event, and the defining allocation's number for a free."""

    events: Sequence[Event]
    codes: List[int]
    sizes: List[int]
    side: Dict[int, Tuple[str, int]]  # event number -> (empty_cache | non_torch | huge, value)
    previous: Dict[int, int]  # allocation number -> the key's previous defining allocation

    def __len__(self) -> int:
        return len(self.codes)


@dataclass
class WhatIfResult:
    """The figures of one replay; byte counts at the first OOM (or the end) unless peak_."""

    completed: bool
    events_total: int
    events_run: int
    num_ooms: int  # memory_stats()["num_ooms"] at the end
    failed_event: Optional[int] = None  # 1-based number of the first failing allocation
    failed_label: str = ""
    alloc_size: Optional[int] = None  # "Tried to allocate" of the first OOM (None: a request over 1 EiB)
    allocated: int = 0
    reserved: int = 0
    inactive_split_bytes: int = 0
    num_alloc_retries: int = 0
    device_free: int = 0
    peak_reserved: int = 0
    peak_allocated: int = 0

    @property
    def gap(self) -> int:
        return self.reserved - self.allocated


def compile_trace(events: Sequence[Event]) -> Optional[CompiledTrace]:
    """The integer form of a trace, or None when it has events this replay does not model."""
    codes: List[int] = []
    sizes: List[int] = []
    side: Dict[int, Tuple[str, int]] = {}
    previous: Dict[int, int] = {}
    defined: Dict[str, int] = {}
    code_append, size_append = codes.append, sizes.append
    for i, (op, key, nbytes, _label) in enumerate(events):
        if op == "alloc":
            if type(nbytes) is not int or nbytes < 0:
                return None
            if nbytes >= ONE_EXA_BYTES:  # refused before the allocator: the key keeps its block
                side[i] = (_HUGE, nbytes)
                code_append(i)
                size_append(0)
                continue
            before = defined.get(key)
            if before is not None:
                previous[i] = before
            defined[key] = i
            code_append(i)
            size_append(nbytes)  # 0: malloc(0) hands out an empty block, a later free is a no-op
        elif op == "free":
            # a free of a key never allocated pops nothing: point it at an event holding None
            code_append(defined.pop(key, i))
            size_append(0)
        elif op == "empty_cache" or op == "non_torch":
            if op == "non_torch" and type(nbytes) is not int:
                return None
            side[i] = (op, nbytes)
            code_append(i)
            size_append(0)
        else:
            return None  # record_stream, or an unknown operation (replay raises for it)
    return CompiledTrace(events, codes, sizes, side, previous)


def eligible(allocator: CachingAllocator) -> bool:
    """A fresh allocator on the default tick clock (the replay starts from its state)."""
    return (not allocator._active and not len(allocator._small) and not len(allocator._large)
            and not allocator._events and allocator._total_allocated == 0
            and not allocator._segments_expandable and allocator._va_next == VA_BASE)


def replay_outcome(trace: CompiledTrace, allocator: CachingAllocator, stop_on_oom: bool = False) -> WhatIfResult:
    """Replay a compiled trace with the settings of ``allocator`` (which is not changed)."""
    if not eligible(allocator):
        raise ValueError("the what-if replay starts from a fresh allocator")
    sim = _Sim(allocator)
    memo = {0: 0}
    round_size = allocator._round_size
    for size in set(trace.sizes):
        if size:
            memo[size] = round_size(size)
    rounded = [memo[s] for s in trace.sizes]
    if sim.expandable:
        return sim.run_expandable(trace, rounded, stop_on_oom)
    return sim.run_segments(trace, rounded, stop_on_oom)


class _Sim:
    """The allocator state behind the loops, and the rare paths as methods.

    Alignment slivers (expandable segments with base_addr_aligned_kb: the free bytes the
    allocator leaves before a block it moves to an aligned address, under 16 KiB) are free
    mapped blocks of the large pool that no search can return (every large-pool request is
    over 1 MiB) and that a cache flush cannot unmap (they are smaller than a page). A sliver
    sits right before the allocated block it was cut from (the block before it is not free
    and mapped, or they would have merged) until one of its two neighbours becomes free and
    mapped and absorbs it: that block when it is freed, or the block before it when that one
    is freed. (The block before a sliver is never an unmapped range: those end on page
    boundaries, pages are whole MiB, and a block starting there is already aligned; the slow
    paths assert it.) So a sliver is not a block here but a byte count, ``lead``, on the
    allocated block after it, given to whichever neighbour absorbs it. The decisions are the
    same, with one block and two index operations fewer per allocation.
    """

    def __init__(self, a: CachingAllocator):
        cfg = a.config
        self.a = a
        self.total = a.total
        self.non_torch = a.non_torch_bytes
        self.workspace = a.workspace_bytes
        self.allowed = a._allowed
        self.mss = cfg.max_split_size
        self.mnsr = cfg.max_non_split_rounding
        self.gc = a._allowed is not None and cfg.garbage_collection_threshold > 0.0
        self.gc_threshold = cfg.garbage_collection_threshold
        self.lazy = cfg.multi_stream_lazy_reclaim
        self.expandable = bool(cfg.expandable_segments)
        self.exp_page = cfg.expandable_page_size
        if cfg.base_addr_aligned_size > SMALL_SIZE:  # the parser allows up to 16 KiB
            raise ValueError("base_addr_aligned_kb above 1 MiB is not modelled here")
        self.va = a._va_next
        self.total_allocated = 0
        self.reserved = 0
        self.reserved_peak = 0
        self.retries = 0
        self.ooms = 0
        self.oom_alloc_size = 0
        self.calls = 0  # large-pool free-block searches so far (garbage-collection ages)
        self.skeys: List[int] = [_END]  # free mapped blocks of the small pool, sorted keys
        self.lkeys: List[int] = [_END]
        self.fb: Dict[int, list] = {_END: [0, 1 << 62, None, None, _END, None, None, 0, True, 0]}  # key -> block
        self.sun: List[int] = []  # unmapped ranges (expandable segments), sorted addresses
        self.lun: List[int] = []
        self.umap: Dict[int, list] = {}  # address -> unmapped range, both pools
        self.first: Optional[WhatIfResult] = None
        self.alloc_sizes: Dict[int, int] = {}

    # ------------------------------------------------------------------ small helpers
    def device_free(self) -> int:
        return max(0, self.total - self.non_torch - self.workspace - self.total_allocated)

    def _insert(self, b: list) -> None:
        k = b[SIZE] << _SHIFT | b[ADDR]
        insort(b[POOL], k)
        self.fb[k] = b
        b[KEY] = k
        b[STAMP] = self.calls

    def _remove(self, b: list) -> None:
        k = b[KEY]
        keys = b[POOL]
        i = bisect_left(keys, k)
        if i == len(keys) or keys[i] != k:
            raise AssertionError("block 0x%x is not in the free index" % b[ADDR])
        del keys[i]
        del self.fb[k]
        b[KEY] = None

    def _unmapped_list(self, b: list) -> List[int]:
        return self.sun if b[POOL] is self.skeys else self.lun

    def _insert_unmapped(self, b: list) -> None:
        insort(self._unmapped_list(b), b[ADDR])
        self.umap[b[ADDR]] = b

    def _remove_unmapped(self, b: list) -> None:
        lst = self._unmapped_list(b)
        i = bisect_left(lst, b[ADDR])
        if i == len(lst) or lst[i] != b[ADDR] or self.umap.get(b[ADDR]) is not b:
            raise AssertionError("range 0x%x is not in the unmapped index" % b[ADDR])
        del lst[i]
        del self.umap[b[ADDR]]

    def _reserve(self, nbytes: int) -> None:
        self.total_allocated += nbytes
        self.reserved += nbytes
        if self.reserved > self.reserved_peak:
            self.reserved_peak = self.reserved

    def _unreserve(self, nbytes: int) -> None:
        self.total_allocated -= nbytes
        self.reserved -= nbytes

    def _alloc_size(self, rounded: int) -> int:
        a = self.a
        if rounded <= SMALL_SIZE:
            return SMALL_BUFFER
        if a.config.page_size_1g:
            return -(-rounded // (1 << 30)) * (1 << 30)
        return a._allocation_size(rounded)

    @staticmethod
    def _releasable(b: list) -> bool:
        return b[SEG] is None and b[PREV] is None and b[NEXT] is None

    def _release_block(self, b: list) -> None:
        self._remove(b)
        self._unreserve(b[SIZE])

    # ------------------------------------------------------------------ the miss path
    def miss_segment(self, rounded: int, keys: List[int]) -> Optional[list]:
        """``miss`` without expandable segments, written out (with max_split_size most large
        requests come here: a new segment after an oversize cached one is released)."""
        if self.lazy or self.gc:
            return self.miss(rounded, keys)
        alloc_size = self.alloc_sizes.get(rounded)
        if alloc_size is None:
            alloc_size = self.alloc_sizes[rounded] = self._alloc_size(rounded)
        allowed = self.allowed
        used = self.total_allocated
        room = self.total - self.non_torch - self.workspace - used
        if alloc_size > room or (allowed is not None and used + alloc_size > allowed):
            mss = self.mss
            if mss is None:
                return self._flush_and_retry(rounded, keys, alloc_size)
            # _release_available_cached_blocks, its common case (one oversize block) written out
            key_size = rounded if rounded > mss else mss
            idx = bisect_left(keys, key_size << 64)
            k = keys[idx]
            fb = self.fb
            if k is _END:
                # no cached block is large enough: release oversize blocks, largest first
                released = 0
                idx -= 1
                while idx >= 0 and released < key_size:
                    k = keys[idx]
                    b = fb[k]
                    if b[1] < mss or b[6] is not None or b[2] is not None or b[3] is not None:
                        break
                    released += b[1]
                    del keys[idx]
                    del fb[k]
                    b[4] = None
                    idx -= 1
                self.total_allocated -= released
                self.reserved -= released
                if released < key_size:
                    return self._flush_and_retry(rounded, keys, alloc_size)
            else:
                b = fb[k]
                if b[6] is not None or b[2] is not None or b[3] is not None:
                    return self._flush_and_retry(rounded, keys, alloc_size)
                del keys[idx]
                del fb[k]
                b[4] = None
                self.total_allocated -= b[1]
                self.reserved -= b[1]
            used = self.total_allocated
            room = self.total - self.non_torch - self.workspace - used
            if alloc_size > room or (allowed is not None and used + alloc_size > allowed):
                return self._flush_and_retry(rounded, keys, alloc_size)
        address = self.va
        self.va = address + alloc_size + VA_GUARD
        self.total_allocated = used + alloc_size
        reserved = self.reserved = self.reserved + alloc_size
        if reserved > self.reserved_peak:
            self.reserved_peak = reserved
        return [address, alloc_size, None, None, None, keys, None, 0, True, 0]

    def _flush_and_retry(self, rounded: int, keys: List[int], alloc_size: int) -> Optional[list]:
        self.workspace = 0
        self._release_cached()
        self.retries += 1
        b = self._alloc_block(rounded, keys, alloc_size)
        if b is None:
            self.ooms += 1
            self.oom_alloc_size = alloc_size
        return b

    def miss(self, rounded: int, keys: List[int]) -> Optional[list]:
        """malloc after the best-fit search failed: garbage collection, the driver,
        the max_split_size release, the flush and retry. The block (out of the free
        index) or None for an OOM."""
        small = keys is self.skeys
        if self.lazy and not small:
            self.calls += 1  # lazy reclaim searches the pool a second time (and ages it)
        alloc_size = self._alloc_size(rounded)
        if self.gc:
            self._garbage_collect()
        b = self._alloc_block(rounded, keys, alloc_size)
        if b is None and self.mss is not None and self._release_available(rounded, keys):
            b = self._alloc_block(rounded, keys, alloc_size)
        if b is None:
            self.workspace = 0
            self._release_cached()
            self.retries += 1
            b = self._alloc_block(rounded, keys, alloc_size)
        if b is None:
            self.ooms += 1
            self.oom_alloc_size = alloc_size
        return b

    def _alloc_block(self, rounded: int, keys: List[int], alloc_size: int) -> Optional[list]:
        if self.allowed is not None and self.total_allocated + alloc_size > self.allowed:
            return None
        if self.expandable:
            return self._try_allocate_expandable(rounded, keys)
        if alloc_size > self.device_free():
            return None
        address = self.va
        self.va += alloc_size + VA_GUARD
        self._reserve(alloc_size)
        return [address, alloc_size, None, None, None, keys, None, 0, True, 0]

    def _release_available(self, rounded: int, keys: List[int]) -> bool:
        mss = self.mss
        key_size = max(rounded, mss)
        idx = bisect_left(keys, key_size << _SHIFT)
        if keys[idx] is _END:
            if idx == 0:
                return False
            released = 0
            idx -= 1
            while idx >= 0 and released < key_size:
                b = self.fb[keys[idx]]
                if b[SIZE] < mss or not self._releasable(b):
                    break
                released += b[SIZE]
                self._release_block(b)
                idx -= 1
            return released >= key_size
        b = self.fb[keys[idx]]
        if not self._releasable(b):
            return False
        self._release_block(b)
        return True

    def _release_cached(self) -> None:
        for keys in (self.lkeys, self.skeys):
            to_unmap = []
            for k in keys[:-1]:
                b = self.fb[k]
                if b[SEG] is not None:
                    to_unmap.append(b)
                elif b[PREV] is None and b[NEXT] is None:
                    self._release_block(b)
            for b in to_unmap:
                self._unmap_block(b)
                if not b[MAPPED] and b[PREV] is None and b[NEXT] is None:
                    self._remove_unmapped(b)  # the whole segment is unmapped: released

    def _garbage_collect(self) -> None:
        threshold = int(self.gc_threshold * self.allowed)
        if self.total_allocated <= threshold:
            return
        target = self.total_allocated - threshold
        calls = self.calls
        candidates = [b for b in (self.fb[k] for k in self.lkeys[:-1]) if self._releasable(b)]
        if not candidates:
            return
        total_age = float(sum(calls - b[STAMP] for b in candidates))
        count = len(candidates)
        reclaimed = 0
        freed = True
        while reclaimed < target and freed and count > 0:
            age_threshold = total_age / count
            freed = False
            for b in [self.fb[k] for k in self.lkeys[:-1]]:
                age = calls - b[STAMP]
                if self._releasable(b) and age >= age_threshold:
                    freed = True
                    reclaimed += b[SIZE]
                    total_age -= age
                    count -= 1
                    self._release_block(b)

    # ------------------------------------------------------------------ expandable segments
    @staticmethod
    def _allocatable(b: Optional[list]) -> bool:
        return b is not None and (not b[MAPPED] or b[KEY] is not None)

    def _try_allocate_expandable(self, rounded: int, keys: List[int]) -> Optional[list]:
        cand = self._find_expandable_block(keys, rounded)
        if not cand[MAPPED] and not self._map_block(cand, min(cand[SIZE], rounded)):
            return None
        while cand[SIZE] < rounded:
            nxt = cand[NEXT]
            if nxt is None:
                return None
            if not self._map_block(nxt, min(rounded - cand[SIZE], nxt[SIZE])):
                return None
            cand = nxt
        self._remove(cand)
        return cand

    def _find_expandable_block(self, keys: List[int], size: int) -> list:
        small = keys is self.skeys
        for address in list(self.sun if small else self.lun):
            cand = self.umap[address]
            if self._allocatable(cand[PREV]):
                cand = cand[PREV]
            room = 0
            b = cand
            while room < size and self._allocatable(b):
                room += b[SIZE]
                b = b[NEXT]
            if room < size and b is not None and b[LEAD]:
                raise AssertionError("a sliver after an unmapped range (see _Sim)")
            if room >= size:
                return cand
        page = SMALL_BUFFER if small else self.exp_page
        num_pages = -(-(self.total + self.total // 8) // page)
        base = self.va
        self.va += page * num_pages + VA_GUARD
        cand = [base, page * num_pages, None, None, None, keys, (base, page), 0, False, 0]
        self._insert_unmapped(cand)
        return cand

    def _merge(self, dst: list, src: Optional[list]) -> None:
        """_try_merge: ``src`` (a neighbour) joins ``dst`` if both are free and equally mapped."""
        if src is None:
            return
        if src[MAPPED] and src[KEY] is None:
            if src[LEAD] and dst[NEXT] is src:
                raise AssertionError("a sliver after a range being mapped or unmapped (see _Sim)")
            return
        if src[MAPPED] != dst[MAPPED]:
            return
        if src[MAPPED]:
            self._remove(src)
        else:
            self._remove_unmapped(src)
        if dst[PREV] is src:
            dst[ADDR] = src[ADDR]
            p = dst[PREV] = src[PREV]
            if p is not None:
                p[NEXT] = dst
        else:
            n = dst[NEXT] = src[NEXT]
            if n is not None:
                n[PREV] = dst
        dst[SIZE] += src[SIZE]

    def _map_block(self, to_map: list, size: int) -> bool:
        base, page = to_map[SEG]
        offset = to_map[ADDR] - base
        if offset % page:
            raise AssertionError("map must start on a page boundary")
        begin = offset // page
        end = -(-(offset + size) // page)
        mapped_size = (end - begin) * page
        if mapped_size == 0 or mapped_size > self.device_free():
            return False
        self._remove_unmapped(to_map)
        to_map[MAPPED] = True
        if mapped_size < to_map[SIZE]:
            after = to_map[NEXT]
            rest = [to_map[ADDR] + mapped_size, to_map[SIZE] - mapped_size, to_map, after, None,
                    to_map[POOL], to_map[SEG], 0, False, 0]
            to_map[NEXT] = rest
            if after is not None:
                after[PREV] = rest
            self._insert_unmapped(rest)
            to_map[SIZE] = mapped_size
        self._merge(to_map, to_map[PREV])
        self._merge(to_map, to_map[NEXT])
        self._insert(to_map)
        self._reserve(mapped_size)
        return True

    def _unmap_block(self, b: list) -> None:
        base, page = b[SEG]
        begin = -(-(b[ADDR] - base) // page)
        end = (b[ADDR] + b[SIZE] - base) // page
        if begin >= end:
            return
        self._remove(b)
        start = base + begin * page
        size = (end - begin) * page
        before = start - b[ADDR]
        if before > 0:
            prev = b[PREV]
            head = [b[ADDR], before, prev, b, None, b[POOL], b[SEG], 0, True, 0]
            if prev is not None:
                prev[NEXT] = head
            b[PREV] = head
            self._insert(head)
        after = b[SIZE] - (before + size)
        if after > 0:
            nxt = b[NEXT]
            tail = [start + size, after, b, nxt, None, b[POOL], b[SEG], 0, True, 0]
            if nxt is not None:
                nxt[PREV] = tail
            b[NEXT] = tail
            self._insert(tail)
        b[ADDR] = start
        b[SIZE] = size
        b[MAPPED] = False
        self._merge(b, b[PREV])
        self._merge(b, b[NEXT])
        self._insert_unmapped(b)
        self._unreserve(size)

    # ------------------------------------------------------------------ side events, capture
    def side_event(self, what: Tuple[str, int]) -> bool:
        """empty_cache / non_torch; True for a request over 1 EiB (an error, not an OOM)."""
        op, value = what
        if op == _EMPTY_CACHE:
            self.workspace = 0
            self._release_cached()
        elif op == _NON_TORCH:
            self.non_torch = max(0, value)
        else:
            return True
        return False

    def inactive_split_bytes(self) -> int:
        if self.expandable:
            return 0  # the allocator leaves expandable segments out of inactive_split
        return sum(b[SIZE] for b in self.fb.values() if b[PREV] is not None or b[NEXT] is not None)  # not _END

    def capture(self, trace: CompiledTrace, event: int, allocated: int, huge: bool) -> None:
        """The figures at the first OOM (``event`` is 0-based)."""
        self.first = self._figures(trace, allocated)
        self.first.completed = False
        self.first.failed_event = event + 1
        self.first.failed_label = trace.events[event][3]
        self.first.alloc_size = None if huge else self.oom_alloc_size

    def _figures(self, trace: CompiledTrace, allocated: int) -> WhatIfResult:
        return WhatIfResult(
            completed=True, events_total=len(trace), events_run=0, num_ooms=0,
            allocated=allocated, reserved=self.reserved, inactive_split_bytes=self.inactive_split_bytes(),
            num_alloc_retries=self.retries, device_free=self.device_free())

    def finish(self, trace: CompiledTrace, allocated: int, peak_allocated: int, run: int) -> WhatIfResult:
        result = self.first if self.first is not None else self._figures(trace, allocated)
        result.events_run = run
        result.num_ooms = self.ooms
        result.peak_reserved = self.reserved_peak
        result.peak_allocated = peak_allocated
        return result

    def failed(self, trace: CompiledTrace, live: list, c: int, allocated: int, huge: bool) -> None:
        """An allocation event that raised: the key keeps what it held before."""
        before = trace.previous.get(c)
        if before is not None:
            live[c] = live[before]
        if self.first is None:
            self.capture(trace, c, allocated, huge)

    # ------------------------------------------------------------------ the loops
    def run_segments(self, trace: CompiledTrace, rounded: List[int], stop: bool) -> WhatIfResult:
        """Without expandable segments: best fit over whole segments."""
        skeys, lkeys, fb = self.skeys, self.lkeys, self.fb
        mss, mnsr = self.mss, self.mnsr
        side = trace.side
        miss = self.miss_segment
        end = _END
        live: list = [None] * len(trace.codes)
        calls = 0
        ab = abpk = 0
        failed = 0
        for c, nb in zip(trace.codes, rounded):
            if nb:
                # malloc: best fit in the pool, else the miss path
                if nb <= 1048576:  # SMALL_SIZE
                    keys = skeys
                    small = True
                else:
                    keys = lkeys
                    small = False
                    calls += 1
                idx = bisect_left(keys, nb << 64)
                k = keys[idx]
                if k is not end and (mss is None or not ((k >> 64) >= mss if nb < mss else (k >> 64) >= nb + mnsr)):
                    del keys[idx]
                    b = fb.pop(k)
                    b[4] = None
                else:
                    self.calls = calls
                    b = miss(nb, keys)
                    calls = self.calls
                    if b is None:
                        failed += 1
                        self.failed(trace, live, c, ab, False)
                        if stop:
                            break
                        continue
                sz = b[1]
                rem = sz - nb
                if (rem >= 512) if small else (rem > 1048576 and (mss is None or nb < mss)):
                    # split: the front is handed out, the rest stays in the free index
                    p = b[2]
                    blk = [b[0], nb, p, b, None, keys, None, 0, True, 0]
                    if p is not None:
                        p[3] = blk
                    b[2] = blk
                    a2 = b[0] + nb
                    b[0] = a2
                    b[1] = rem
                    k = rem << 64 | a2
                    insort(keys, k)
                    fb[k] = b
                    b[4] = k
                    b[7] = calls
                    b = blk
                    sz = nb
                ab += sz
                if ab > abpk:
                    abpk = ab
                live[c] = b
            else:
                b = live[c]
                if b is None:
                    what = side.get(c)
                    if what is not None and self.side_event(what):
                        failed += 1  # a request over 1 EiB
                        self.failed(trace, live, c, ab, True)
                        if stop:
                            break
                    continue
                # free: merge with free neighbours, back into the free index
                live[c] = None
                sz = b[1]
                ab -= sz
                keys = b[5]
                p = b[2]
                if p is not None:
                    k = p[4]
                    if k is not None:
                        del keys[bisect_left(keys, k)]
                        del fb[k]
                        b[0] = p[0]
                        pp = b[2] = p[2]
                        if pp is not None:
                            pp[3] = b
                        sz += p[1]
                n = b[3]
                if n is not None:
                    k = n[4]
                    if k is not None:
                        del keys[bisect_left(keys, k)]
                        del fb[k]
                        nn = b[3] = n[3]
                        if nn is not None:
                            nn[2] = b
                        sz += n[1]
                b[1] = sz
                k = sz << 64 | b[0]
                insort(keys, k)
                fb[k] = b
                b[4] = k
                b[7] = calls
        else:
            return self.finish(trace, ab, abpk, len(trace.codes) - failed)
        # stopped at an OOM: events up to the failing one ran, except the failing ones
        self.calls = calls
        return self.finish(trace, ab, abpk, self.first.failed_event - failed)  # type: ignore[union-attr]

    def run_expandable(self, trace: CompiledTrace, rounded: List[int], stop: bool) -> WhatIfResult:
        """With expandable segments: best fit that counts the unmapped space after a block,
        the aligned-address sliver, splits down to 512 B."""
        skeys, lkeys, fb = self.skeys, self.lkeys, self.fb
        mss, mnsr = self.mss, self.mnsr
        align = self.a.config.base_addr_aligned_size if "base_addr_aligned_kb" in self.a.profile.keys else 0
        side = trace.side
        miss = self.miss
        end = _END
        big = ROUND_LARGE if align else _END  # the aligned sliver applies from 2 MiB, with align
        nomss = mss is None
        live: list = [None] * len(trace.codes)
        ab = abpk = 0
        failed = 0
        for c, nb in zip(trace.codes, rounded):
            if nb:
                keys = skeys if nb <= 1048576 else lkeys  # SMALL_SIZE
                idx = bisect_left(keys, nb << 64)
                k = keys[idx]
                if k is not end:
                    b = fb[k]
                    n = b[3]
                    if n is not None and not n[8]:
                        # best fit counts the unmapped range right after a block as usable: a
                        # later (larger) block that grows less is taken instead
                        grow = b[1] + n[1]
                        while True:
                            k2 = keys[idx + 1]
                            if (k2 >> 64) >= grow:
                                break  # its own size is already as large (always true for _END)
                            cand = fb[k2]
                            n = cand[3]
                            cgrow = cand[1] + n[1] if n is not None and not n[8] else cand[1]
                            if cgrow >= grow:
                                break
                            idx += 1
                            b = cand
                            k = k2
                            grow = cgrow
                    if nomss or not ((k >> 64) >= mss if nb < mss else (k >> 64) >= nb + mnsr):
                        del keys[idx]
                        del fb[k]
                        b[4] = None
                    else:
                        b = None
                else:
                    b = None
                if b is None:
                    b = miss(nb, keys)
                    if b is None:
                        failed += 1
                        self.failed(trace, live, c, ab, False)
                        if stop:
                            break
                        continue
                lead = 0
                if nb >= big and b[0] % align:  # ROUND_LARGE; big is beyond any size without align
                    offset = align - b[0] % align
                    if offset + nb <= b[1]:
                        # the block starts at the aligned address; the sliver before it stays
                        # free, as the lead of the block handed out (see _Sim)
                        b[0] += offset
                        b[1] -= offset
                        lead = offset
                sz = b[1]
                rem = sz - nb
                if rem >= 512:  # MIN_BLOCK_SIZE
                    p = b[2]
                    blk = [b[0], nb, p, b, None, keys, b[6], 0, True, lead]
                    if p is not None:
                        p[3] = blk
                    b[2] = blk
                    a2 = b[0] + nb
                    b[0] = a2
                    b[1] = rem
                    k = rem << 64 | a2
                    insort(keys, k)
                    fb[k] = b
                    b[4] = k
                    b = blk
                    sz = nb
                else:
                    b[9] = lead
                ab += sz
                if ab > abpk:
                    abpk = ab
                live[c] = b
            else:
                b = live[c]
                if b is None:
                    what = side.get(c)
                    if what is not None and self.side_event(what):
                        failed += 1
                        self.failed(trace, live, c, ab, True)
                        if stop:
                            break
                    continue
                live[c] = None
                sz = b[1]
                ab -= sz
                lead = b[9]
                if lead:  # the block takes back the sliver before it
                    b[0] -= lead
                    sz += lead
                    b[9] = 0
                keys = b[5]
                p = b[2]
                if p is not None:
                    k = p[4]
                    if k is not None:  # a free mapped neighbour (unmapped ones have no key)
                        del keys[bisect_left(keys, k)]
                        del fb[k]
                        b[0] = p[0]
                        pp = b[2] = p[2]
                        if pp is not None:
                            pp[3] = b
                        sz += p[1]
                n = b[3]
                if n is not None:
                    k = n[4]
                    if k is not None:
                        del keys[bisect_left(keys, k)]
                        del fb[k]
                        nn = b[3] = n[3]
                        if nn is not None:
                            nn[2] = b
                        sz += n[1]
                    elif n[9]:  # an allocated block with a sliver before it: that sliver joins
                        sz += n[9]
                        n[9] = 0
                b[1] = sz
                k = sz << 64 | b[0]
                insort(keys, k)
                fb[k] = b
                b[4] = k
        else:
            return self.finish(trace, ab, abpk, len(trace.codes) - failed)
        return self.finish(trace, ab, abpk, self.first.failed_event - failed)  # type: ignore[union-attr]


def reference_outcome(events: Sequence[Event], allocator: CachingAllocator, stop_on_oom: bool = False) -> WhatIfResult:
    """The same figures from ``replay`` (every event through the allocator): the fallback
    for traces ``compile_trace`` refuses, and the reference the tests compare against."""
    from .traces import Trace, replay

    trace = Trace(name="", title="", device_capacity_bytes=allocator.total,
                  non_torch_bytes=allocator.non_torch_bytes, events=list(events))
    r = replay(trace, allocator, stop_on_oom=stop_on_oom)
    return WhatIfResult(
        completed=r.completed, events_total=r.events_total, events_run=r.events_run,
        num_ooms=allocator.stats.num_ooms, failed_event=r.failed_event, failed_label=r.failed_label,
        alloc_size=r.error.fields.get("alloc_size") if r.error is not None else None,
        allocated=r.allocated, reserved=r.reserved, inactive_split_bytes=r.inactive_split_bytes,
        num_alloc_retries=r.num_alloc_retries, device_free=r.device_free, peak_reserved=r.peak_reserved,
        peak_allocated=r.peak_allocated)


def replay_settings(events: Sequence[Event], allocators: Sequence[CachingAllocator],
                    stop_on_oom: bool = False) -> List[WhatIfResult]:
    """One trace under several settings (one fresh allocator each), compiled once; the
    traces and allocators this replay does not model go through ``replay``."""
    compiled = compile_trace(events)
    return [replay_outcome(compiled, a, stop_on_oom) if compiled is not None and eligible(a)
            else reference_outcome(events, a, stop_on_oom) for a in allocators]


__all__ = ["CompiledTrace", "WhatIfResult", "compile_trace", "eligible", "reference_outcome", "replay_outcome",
           "replay_settings"]
