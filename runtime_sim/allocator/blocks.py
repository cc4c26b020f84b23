"""Blocks, block pools and expandable segments (the allocator's data structures).

A pool keeps its free mapped blocks ordered by (stream, size, address) -- the
best-fit index -- and, for expandable segments, its unmapped ranges ordered by
(stream, address), like ``BlockPool::blocks`` / ``BlockPool::unmapped``. Blocks
must be taken out of an index before their size or address changes.
"""
from __future__ import annotations

from bisect import bisect_left, insort
from typing import Dict, List, Optional, Set, Tuple

Key = Tuple[int, int, int]


class Block:
    """A slice of a segment. Handed to callers by ``CachingAllocator.malloc``.

    ``address`` / ``size`` are the block as the allocator sees it (rounded);
    ``requested_size`` is what the caller asked for.
    """

    __slots__ = ("address", "size", "requested_size", "stream", "pool", "allocated",
                 "mapped", "prev", "next", "event_count", "gc_count", "expandable",
                 "stream_uses")

    def __init__(self, address: int, size: int, stream: int, pool: "BlockPool",
                 expandable: Optional["ExpandableSegment"] = None, mapped: bool = True):
        self.address = address
        self.size = size
        self.requested_size = 0
        self.stream = stream
        self.pool = pool
        self.allocated = False
        self.mapped = mapped
        self.prev: Optional[Block] = None
        self.next: Optional[Block] = None
        self.event_count = 0
        self.gc_count = 0
        self.expandable = expandable
        self.stream_uses: Set[int] = set()

    def is_split(self) -> bool:
        return self.prev is not None or self.next is not None

    def splice(self, before: Optional["Block"], after: Optional["Block"]) -> None:
        """Insert this block between two neighbours of a segment."""
        if before is not None:
            before.next = self
        self.prev = before
        if after is not None:
            after.prev = self
        self.next = after

    def key(self) -> Key:
        return (self.stream, self.size, self.address)

    def __repr__(self) -> str:
        state = "allocated" if self.allocated else ("pending" if self.event_count else "free")
        return "Block(0x%x, %d, %s%s)" % (self.address, self.size, state,
                                          "" if self.mapped else ", unmapped")


class BlockPool:
    """Free blocks of one pool (small or large) across streams."""

    __slots__ = ("is_small", "_keys", "_blocks", "_ukeys", "_unmapped")

    def __init__(self, is_small: bool):
        self.is_small = is_small
        self._keys: List[Key] = []
        self._blocks: Dict[Key, Block] = {}
        self._ukeys: List[Tuple[int, int]] = []
        self._unmapped: Dict[Tuple[int, int], Block] = {}

    # free mapped blocks (best-fit index)
    def insert(self, block: Block) -> None:
        key = block.key()
        insort(self._keys, key)
        self._blocks[key] = block

    def remove(self, block: Block) -> None:
        key = block.key()
        idx = bisect_left(self._keys, key)
        if idx == len(self._keys) or self._keys[idx] != key:
            raise AssertionError("block %r is not in the free index" % (block,))
        del self._keys[idx]
        del self._blocks[key]

    def lower_bound(self, stream: int, size: int) -> int:
        return bisect_left(self._keys, (stream, size, -1))

    def key_at(self, idx: int) -> Key:
        return self._keys[idx]

    def block_at(self, idx: int) -> Block:
        return self._blocks[self._keys[idx]]

    def __len__(self) -> int:
        return len(self._keys)

    def blocks(self) -> List[Block]:
        """Free mapped blocks in index order (a copy; safe to mutate the pool)."""
        return [self._blocks[k] for k in self._keys]

    # unmapped ranges of expandable segments
    def insert_unmapped(self, block: Block) -> None:
        key = (block.stream, block.address)
        insort(self._ukeys, key)
        self._unmapped[key] = block

    def remove_unmapped(self, block: Block) -> None:
        key = (block.stream, block.address)
        idx = bisect_left(self._ukeys, key)
        if idx == len(self._ukeys) or self._ukeys[idx] != key:
            raise AssertionError("block %r is not in the unmapped index" % (block,))
        del self._ukeys[idx]
        del self._unmapped[key]

    def unmapped_from(self, stream: int) -> List[Block]:
        """Unmapped ranges of one stream, lowest address first."""
        idx = bisect_left(self._ukeys, (stream, -1))
        out: List[Block] = []
        while idx < len(self._ukeys) and self._ukeys[idx][0] == stream:
            out.append(self._unmapped[self._ukeys[idx]])
            idx += 1
        return out


class ExpandableSegment:
    """A reserved virtual range mapped page by page (aclrtReserveMemAddress + MapMem).

    Pages are all-or-nothing per map call, as in ``ExpandableSegment::map``:
    if the device cannot back every page of a request, nothing is mapped.
    """

    __slots__ = ("base", "page", "num_pages", "stream", "is_small", "mapped")

    def __init__(self, base: int, page: int, num_pages: int, stream: int, is_small: bool):
        self.base = base
        self.page = page
        self.num_pages = num_pages
        self.stream = stream
        self.is_small = is_small
        self.mapped = [False] * num_pages

    @property
    def size(self) -> int:
        return self.page * self.num_pages

    def pages_to_map(self, address: int, size: int) -> Tuple[int, int]:
        """Page range [begin, end) that a map of [address, address+size) needs."""
        offset = address - self.base
        if offset % self.page:
            raise AssertionError("map must start on a page boundary")
        begin = offset // self.page
        end = -(-(offset + size) // self.page)
        return begin, end

    def set_mapped(self, begin: int, end: int, value: bool) -> None:
        for i in range(begin, end):
            if self.mapped[i] == value:
                raise AssertionError("page %d of segment 0x%x already %s"
                                     % (i, self.base, "mapped" if value else "unmapped"))
            self.mapped[i] = value

    def pages_to_unmap(self, address: int, size: int) -> Tuple[int, int]:
        """Whole pages inside [address, address+size) (ceil the start, floor the end)."""
        begin = -(-(address - self.base) // self.page)
        end = (address + size - self.base) // self.page
        return begin, end


__all__ = ["Block", "BlockPool", "ExpandableSegment"]
