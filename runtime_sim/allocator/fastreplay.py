"""The trace replay's fast path: the allocator's common case written out in one loop.

``replay`` (traces.py) uses it when the setting allows (see ``eligible``): the default tick
clock, no history, no cross-stream use, no max_split_size / garbage collection / lazy reclaim /
power-of-two rounding / 1 GiB pages. Then most events are a best-fit hit (malloc finds a cached
block, splits it) or a free (merge with free neighbours, back into the index). Those run in
``_stretch`` on the allocator's own structures, doing exactly what ``CachingAllocator.malloc`` /
``free`` do for these settings; every other event -- a miss (new segment or page, cache flush,
OOM), an odd size, empty_cache, non_torch -- ends the stretch and goes through the allocator's
public methods. tests/runtime_sim/test_allocator_fingerprint.py holds both paths to the same
decisions, numbers and texts.

Statistics inside a stretch are kept in local variables and written back to the allocator's
counters when the stretch ends: the current value, the highest value reached (peak) and the sum
of increases of allocation, allocated_bytes, requested_bytes, inactive_split and
inactive_split_bytes per pool (the sum of decreases follows from those). ``active`` and
``active_bytes`` move with allocation and allocated_bytes here (nothing waits on another stream,
so a block stops being active in the same call that frees it) and are written from them.
"""
from __future__ import annotations

from bisect import bisect_left, insort
from typing import Callable, Dict, List, Sequence, Tuple

from .blocks import Block
from .caching import CachingAllocator, TickClock
from .constants import MIN_BLOCK_SIZE, ONE_EXA_BYTES, ROUND_LARGE, SMALL_SIZE
from .errors import NPUOutOfMemoryError
from .stats import ARRAY_BASE

Event = Tuple[str, str, int, str]
_A = ARRAY_BASE["allocation"]
_AB = ARRAY_BASE["allocated_bytes"]
_RB = ARRAY_BASE["requested_bytes"]
_IS = ARRAY_BASE["inactive_split"]
_ISB = ARRAY_BASE["inactive_split_bytes"]
_ACT = ARRAY_BASE["active"]
_ACTB = ARRAY_BASE["active_bytes"]


def eligible(events: Sequence[Event], a: CachingAllocator) -> bool:
    cfg = a.config
    return (type(a.clock) is TickClock and not a._history and not a._events and not a._listeners
            and a._mss is None and a._no_divisions and not cfg.page_size_1g
            and not cfg.multi_stream_lazy_reclaim
            and not (a._allowed is not None and cfg.garbage_collection_threshold > 0.0)
            and not any(ev[0] == "record_stream" for ev in events))


def replay_events(events: Sequence[Event], a: CachingAllocator, stop_on_oom: bool,
                  on_oom: Callable[[NPUOutOfMemoryError, int, str], None]) -> int:
    """Run the events; returns how many ran (a failed malloc does not count). ``on_oom(exc,
    event_number, label)`` is told of each out-of-memory error."""
    live: Dict[str, Block] = {}
    run = 0
    i = 0
    n = len(events)
    while i < n:
        i, done = _stretch(events, i, a, live)
        run += done
        if i >= n:
            break
        op, key, nbytes, label = events[i]
        i += 1
        if op == "alloc":
            try:
                live[key] = a.malloc(nbytes)
            except NPUOutOfMemoryError as exc:
                on_oom(exc, i, label)
                if stop_on_oom:
                    break
                continue
        elif op == "free":
            block = live.pop(key, None)
            if block is not None:
                a.free(block)
        elif op == "empty_cache":
            a.empty_cache()
        elif op == "non_torch":
            a.set_non_torch_bytes(nbytes)
        else:
            raise ValueError("unknown trace event %r" % (op,))
        run += 1
    return run


def _write(v: List[int], base: int, s0: int, s: int, sm: int, si: int, l0: int, l: int, lm: int, li: int,
           tm: int) -> None:
    """Counters of one array back into the list: current, peak, sum of increases, sum of decreases."""
    for off, c0, c, m, inc in ((4, s0, s, sm, si), (8, l0, l, lm, li)):
        i = base + off
        v[i] = c
        if m > v[i + 1]:
            v[i + 1] = m
        v[i + 2] += inc
        v[i + 3] += inc - (c - c0)
    t0, t, inc = s0 + l0, s + l, si + li
    v[base] = t
    if tm > v[base + 1]:
        v[base + 1] = tm
    v[base + 2] += inc
    v[base + 3] += inc - (t - t0)


def _follow(v: List[int], base: int, s0: int, s: int, sm: int, si: int, l0: int, l: int, lm: int, li: int,
            tm: int) -> None:
    """An array that made the same moves as another (active as allocation): shift it by them."""
    for off, c0, c, m, inc in ((4, s0, s, sm, si), (8, l0, l, lm, li), (0, s0 + l0, s + l, tm, si + li)):
        i = base + off
        y0 = v[i]
        v[i] = y0 + (c - c0)
        if y0 + (m - c0) > v[i + 1]:
            v[i + 1] = y0 + (m - c0)
        v[i + 2] += inc
        v[i + 3] += inc - (c - c0)


def _stretch(events: Sequence[Event], start: int, a: CachingAllocator, live: Dict[str, Block]) -> Tuple[int, int]:
    """Run events from ``start`` while they take the common path; returns (index of the first
    event that does not, number of events run)."""
    clock = a.clock
    v = a._v
    active = a._active
    pad = a.pad
    expandable = a._expandable
    align = a.config.base_addr_aligned_size if "base_addr_aligned_kb" in a.profile.keys else 0
    small_pool, large_pool = a._small, a._large
    skeys, sblocks = small_pool._keys, small_pool._blocks
    lkeys, lblocks = large_pool._keys, large_pool._blocks
    tick, now = a._tick, clock.now
    # statistics of the stretch: <array>_<pool> current, _m highest, _i sum of increases; t = all
    A_s0 = A_s = A_s_m = v[_A + 4]
    A_l0 = A_l = A_l_m = v[_A + 8]
    AB_s0 = AB_s = AB_s_m = v[_AB + 4]
    AB_l0 = AB_l = AB_l_m = v[_AB + 8]
    RB_s0 = RB_s = RB_s_m = v[_RB + 4]
    RB_l0 = RB_l = RB_l_m = v[_RB + 8]
    IS_s0 = IS_s = IS_s_m = v[_IS + 4]
    IS_l0 = IS_l = IS_l_m = v[_IS + 8]
    ISB_s0 = ISB_s = ISB_s_m = v[_ISB + 4]
    ISB_l0 = ISB_l = ISB_l_m = v[_ISB + 8]
    A_t_m, AB_t_m, RB_t_m, IS_t_m, ISB_t_m = A_s + A_l, AB_s + AB_l, RB_s + RB_l, IS_s + IS_l, ISB_s + ISB_l
    A_s_i = A_l_i = AB_s_i = AB_l_i = RB_s_i = RB_l_i = IS_s_i = IS_l_i = ISB_s_i = ISB_l_i = 0
    n = len(events)
    j = start
    for j in range(start, n):
        op, key, nbytes, _label = events[j]
        if op == "alloc":
            if type(nbytes) is not int or nbytes <= 0 or nbytes >= ONE_EXA_BYTES:
                break
            rounded = nbytes + pad
            rounded = MIN_BLOCK_SIZE if rounded < MIN_BLOCK_SIZE else -(-rounded // MIN_BLOCK_SIZE) * MIN_BLOCK_SIZE
            if rounded <= SMALL_SIZE:
                small = True
                pool, keys, blocks = small_pool, skeys, sblocks
            else:
                small = False
                pool, keys, blocks = large_pool, lkeys, lblocks
            idx = bisect_left(keys, (0, rounded, -1))
            cnt = len(keys)
            if idx == cnt:
                break  # no cached block is big enough: malloc goes to the driver
            k = keys[idx]
            if k[0] != 0:
                break
            block = blocks[k]
            if block.expandable is not None:
                if not expandable:
                    break  # _get_free_block skips such blocks: let it
                # best fit counts the unmapped space right after a block as usable
                nx = block.next
                grow = block.size + (nx.size if nx is not None and not nx.mapped else 0)
                while block.expandable is not None and idx + 1 < cnt and keys[idx + 1][0] == 0:
                    cand = blocks[keys[idx + 1]]
                    nx = cand.next
                    cgrow = cand.size + (nx.size if nx is not None and not nx.mapped else 0)
                    if cgrow >= grow:
                        break
                    idx += 1
                    block, grow = cand, cgrow
                k = keys[idx]
            # a hit: from here on this event is the allocator's, exactly as malloc would do it
            tick += 1
            now += 1
            del keys[idx]
            del blocks[k]
            block.gc_count = 0
            seg = block.expandable
            if seg is not None and align and rounded >= ROUND_LARGE and block.address % align:
                offset = align - block.address % align
                if offset + rounded <= block.size:  # a leading sliver brings the block to the aligned address
                    sliver = block
                    block = Block(sliver.address + offset, sliver.size - offset, 0, pool, seg)
                    block.next = sliver.next
                    if block.next is not None:
                        block.next.prev = block
                    block.prev = sliver
                    sliver.next = block
                    sliver.size = offset
                    k = (sliver.stream, offset, sliver.address)
                    insort(keys, k)
                    blocks[k] = sliver
            remaining = block.size - rounded
            already_split = block.prev is not None or block.next is not None
            if remaining >= MIN_BLOCK_SIZE if (small or expandable) else remaining > SMALL_SIZE:
                rest = block
                block = Block(rest.address, rounded, 0, pool, seg)
                prev = rest.prev
                block.prev = prev
                if prev is not None:
                    prev.next = block
                block.next = rest
                rest.prev = block
                rest.address += rounded
                rest.size = remaining
                k = (rest.stream, remaining, rest.address)
                insort(keys, k)
                blocks[k] = rest
                if seg is None:
                    if already_split:
                        if small:
                            ISB_s -= rounded
                        else:
                            ISB_l -= rounded
                    else:
                        if small:
                            ISB_s += remaining
                            ISB_s_i += remaining
                            if ISB_s > ISB_s_m:
                                ISB_s_m = ISB_s
                            IS_s += 1
                            IS_s_i += 1
                            if IS_s > IS_s_m:
                                IS_s_m = IS_s
                        else:
                            ISB_l += remaining
                            ISB_l_i += remaining
                            if ISB_l > ISB_l_m:
                                ISB_l_m = ISB_l
                            IS_l += 1
                            IS_l_i += 1
                            if IS_l > IS_l_m:
                                IS_l_m = IS_l
                        x = ISB_s + ISB_l
                        if x > ISB_t_m:
                            ISB_t_m = x
                        x = IS_s + IS_l
                        if x > IS_t_m:
                            IS_t_m = x
            elif already_split and seg is None:
                if small:
                    ISB_s -= block.size
                    IS_s -= 1
                else:
                    ISB_l -= block.size
                    IS_l -= 1
            block.allocated = True
            block.requested_size = nbytes
            active[block.address] = block
            bsize = block.size
            if small:
                A_s += 1
                A_s_i += 1
                if A_s > A_s_m:
                    A_s_m = A_s
                AB_s += bsize
                AB_s_i += bsize
                if AB_s > AB_s_m:
                    AB_s_m = AB_s
                RB_s += nbytes
                RB_s_i += nbytes
                if RB_s > RB_s_m:
                    RB_s_m = RB_s
            else:
                A_l += 1
                A_l_i += 1
                if A_l > A_l_m:
                    A_l_m = A_l
                AB_l += bsize
                AB_l_i += bsize
                if AB_l > AB_l_m:
                    AB_l_m = AB_l
                RB_l += nbytes
                RB_l_i += nbytes
                if RB_l > RB_l_m:
                    RB_l_m = RB_l
            x = A_s + A_l
            if x > A_t_m:
                A_t_m = x
            x = AB_s + AB_l
            if x > AB_t_m:
                AB_t_m = x
            x = RB_s + RB_l
            if x > RB_t_m:
                RB_t_m = x
            live[key] = block
        elif op == "free":
            block = live.pop(key, None)
            if block is None:
                continue  # a free of an allocation that failed: nothing to do
            if block.size == 0 or active.get(block.address) is not block or not block.allocated:
                live[key] = block
                break
            tick += 1
            now += 1
            block.allocated = False
            pool = block.pool
            small = pool.is_small
            size = block.size
            requested = block.requested_size
            if small:
                A_s -= 1
                AB_s -= size
                RB_s -= requested
            else:
                A_l -= 1
                AB_l -= size
                RB_l -= requested
            # _free_block: merge with free neighbours of the segment, back into the index
            del active[block.address]
            keys, blocks = pool._keys, pool._blocks
            net_blocks = 0
            net_bytes = 0
            mapped = block.mapped
            prev = block.prev
            if (prev is not None and not prev.allocated and prev.event_count == 0 and not prev.stream_uses
                    and prev.mapped == mapped):
                k = (prev.stream, prev.size, prev.address)
                i = bisect_left(keys, k)
                if i == len(keys) or keys[i] != k:
                    raise AssertionError("block %r is not in the free index" % (prev,))
                del keys[i]
                del blocks[k]
                block.address = prev.address
                block.prev = prev.prev
                if block.prev is not None:
                    block.prev.next = block
                block.size += prev.size
                net_blocks -= 1
                net_bytes -= prev.size
            nxt = block.next
            if (nxt is not None and not nxt.allocated and nxt.event_count == 0 and not nxt.stream_uses
                    and nxt.mapped == mapped):
                k = (nxt.stream, nxt.size, nxt.address)
                i = bisect_left(keys, k)
                if i == len(keys) or keys[i] != k:
                    raise AssertionError("block %r is not in the free index" % (nxt,))
                del keys[i]
                del blocks[k]
                block.next = nxt.next
                if block.next is not None:
                    block.next.prev = block
                block.size += nxt.size
                net_blocks -= 1
                net_bytes -= nxt.size
            k = (block.stream, block.size, block.address)
            insort(keys, k)
            blocks[k] = block
            if block.prev is not None or block.next is not None:
                net_blocks += 1
                net_bytes += block.size
            if block.expandable is None:
                if small:
                    IS_s += net_blocks
                    ISB_s += net_bytes
                    if net_blocks > 0:
                        IS_s_i += net_blocks
                        if IS_s > IS_s_m:
                            IS_s_m = IS_s
                    if net_bytes > 0:
                        ISB_s_i += net_bytes
                        if ISB_s > ISB_s_m:
                            ISB_s_m = ISB_s
                else:
                    IS_l += net_blocks
                    ISB_l += net_bytes
                    if net_blocks > 0:
                        IS_l_i += net_blocks
                        if IS_l > IS_l_m:
                            IS_l_m = IS_l
                    if net_bytes > 0:
                        ISB_l_i += net_bytes
                        if ISB_l > ISB_l_m:
                            ISB_l_m = ISB_l
                if net_blocks > 0:
                    x = IS_s + IS_l
                    if x > IS_t_m:
                        IS_t_m = x
                if net_bytes > 0:
                    x = ISB_s + ISB_l
                    if x > ISB_t_m:
                        ISB_t_m = x
        else:
            break
    else:
        j = n  # every event ran
    a._tick, clock.now = tick, now
    _follow(v, _ACT, A_s0, A_s, A_s_m, A_s_i, A_l0, A_l, A_l_m, A_l_i, A_t_m)
    _follow(v, _ACTB, AB_s0, AB_s, AB_s_m, AB_s_i, AB_l0, AB_l, AB_l_m, AB_l_i, AB_t_m)
    _write(v, _A, A_s0, A_s, A_s_m, A_s_i, A_l0, A_l, A_l_m, A_l_i, A_t_m)
    _write(v, _AB, AB_s0, AB_s, AB_s_m, AB_s_i, AB_l0, AB_l, AB_l_m, AB_l_i, AB_t_m)
    _write(v, _RB, RB_s0, RB_s, RB_s_m, RB_s_i, RB_l0, RB_l, RB_l_m, RB_l_i, RB_t_m)
    _write(v, _IS, IS_s0, IS_s, IS_s_m, IS_s_i, IS_l0, IS_l, IS_l_m, IS_l_i, IS_t_m)
    _write(v, _ISB, ISB_s0, ISB_s, ISB_s_m, ISB_s_i, ISB_l0, ISB_l, ISB_l_m, ISB_l_i, ISB_t_m)
    return j, j - start
