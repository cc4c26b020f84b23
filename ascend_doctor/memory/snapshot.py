"""Memory snapshots: what the caching allocator held, block by block.

Accepted:

* ``torch.npu.memory._snapshot()`` / ``torch.cuda.memory._snapshot()``:
  ``{"segments": [...], "device_traces": [[...], ...]}`` -- pickled by
  ``_dump_snapshot(path)`` or by torch_npu's OOM dump (``OOM_SNAPSHOT_ENABLE``), or saved as JSON;
* ``memory_snapshot()``: the segment list alone; old torch_npu builds report only
  ``device, address, total_size, allocated_size, active_size, segment_type`` and blocks
  with ``size`` and ``state``.

A pickle is read with an unpickler that builds plain data only and refuses every
class or function a file names (a snapshot has none), so a hostile file cannot run code;
before that, ``ascend_doctor.inputs.check_pickle`` walks its opcodes against a byte, memo
and object budget, so it cannot make the unpickler allocate more than its size warrants.
JSON is read with a depth limit. The loaded data is traversed once: a block list or frame
list that a pickle's memo shares between many segments or trace entries is summed once.

Facts per device: reserved, allocated, pending-free, the largest free block per pool
and stream (what a request could get without a new segment), free memory pinned inside
partly used segments (non-releasable: no flush can return it), whole free segments
(released by the OOM retry), expandable segments, and the ``oom`` trace entries
(request size, device free memory and the Python frames at the failure).
"""
from __future__ import annotations

import io
import pickle
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any, BinaryIO, Dict, List, Optional, Tuple

from ..inputs import os_message
from ..inputs import LIMITS, InputError, Seen, check_pickle, load_json, saturate
from .errors import MemoryInputError
from .input_file import open_input

STATES = {"active_allocated": "allocated", "active_pending_free": "pending",
          "active_awaiting_free": "pending", "inactive": "free"}


class _PlainUnpickler(pickle.Unpickler):
    """Builds dicts, lists, tuples, strings and numbers; refuses any named global except the
    list/dict builders TorchScript's pickler may emit, which are mapped to plain ones."""

    _ALLOWED = {
        ("collections", "OrderedDict"): OrderedDict,
        ("torch.jit._pickle", "build_intlist"): list,
        ("torch.jit._pickle", "build_doublelist"): list,
        ("torch.jit._pickle", "build_boollist"): list,
        ("torch.jit._pickle", "build_genericlist"): list,
        ("torch.jit._pickle", "build_stringlist"): list,
        ("torch.jit._pickle", "restore_type_tag"): lambda value, _tag=None: value,
    }

    def find_class(self, module: str, name: str) -> Any:
        found = self._ALLOWED.get((module, name))
        if found is None:
            raise pickle.UnpicklingError(f"refusing {module}.{name}: a memory snapshot holds only plain data")
        return found


@dataclass
class SegmentView:
    address: Optional[int]
    total: int
    pool: str  # large | small (or what the file says)
    stream: Optional[int]
    expandable: bool
    allocated: int = 0
    pending: int = 0
    free: int = 0
    requested: Optional[int] = None
    live_blocks: int = 0
    free_blocks: List[int] = field(default_factory=list)  # may be shared with other segments: never mutated
    largest: Optional[int] = None  # max(free_blocks), computed once per shared list
    blocks: List[Tuple[int, str]] = field(default_factory=list)  # (size, allocated|pending|free) in address order; shared too

    @property
    def largest_free(self) -> int:
        return self.largest if self.largest is not None else max(self.free_blocks, default=0)

    @property
    def whole_free(self) -> bool:
        return self.live_blocks == 0


@dataclass
class OomEntry:
    """A ``device_traces`` entry with action ``oom``: the rounded request and device free memory."""

    size: int
    device_free: Optional[int]
    stream: Optional[int]
    frame: Optional[str] = None  # the first frame outside torch: "file.py:97 in step"


@dataclass
class SnapshotFacts:
    device: Optional[int]
    devices: List[int]
    layout: str  # snapshot | segments
    segments: List[SegmentView] = field(default_factory=list)
    oom_events: List[OomEntry] = field(default_factory=list)
    trace_actions: Dict[str, int] = field(default_factory=dict)

    @property
    def reserved(self) -> int:
        return sum(s.total for s in self.segments)

    @property
    def allocated(self) -> int:
        return sum(s.allocated for s in self.segments)

    @property
    def pending(self) -> int:
        return sum(s.pending for s in self.segments)

    @property
    def active(self) -> int:
        return self.allocated + self.pending

    @property
    def free_total(self) -> int:
        return sum(s.free for s in self.segments)

    @property
    def nonreleasable(self) -> int:
        """Free bytes inside partly used, fixed-size segments: no flush returns them."""
        return sum(s.free for s in self.segments if not s.whole_free and not s.expandable)

    @property
    def releasable(self) -> int:
        return sum(s.free for s in self.segments if s.whole_free or s.expandable)

    @property
    def expandable(self) -> bool:
        return any(s.expandable for s in self.segments)

    @property
    def requested(self) -> Optional[int]:
        parts = [s.requested for s in self.segments]
        if not parts or any(p is None for p in parts):
            return None
        return sum(p for p in parts if p is not None)

    def largest_free(self, pool: str = "large", stream: Optional[int] = None) -> int:
        return max((s.largest_free for s in self.segments if s.pool == pool and (stream is None or s.stream in (None, stream))),
                   default=0)

    def free_in(self, pool: str = "large") -> int:
        return sum(s.free for s in self.segments if s.pool == pool)

    def external_fragmentation(self, pool: str = "large") -> Optional[float]:
        """1 - largest free block / all free memory of the pool (0: one piece)."""
        total = self.free_in(pool)
        if not total:
            return None
        return round(1 - self.largest_free(pool) / total, 3)

    def pinned_segments(self, limit: int = 3) -> List[SegmentView]:
        """Partly used segments holding the most free memory: where the fragments are."""
        pinned = [s for s in self.segments if not s.whole_free and not s.expandable and s.free]
        return sorted(pinned, key=lambda s: (-s.free, s.address or 0))[:limit]


def _int(value: Any, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise MemoryInputError(f"not a memory snapshot: {what} is {str(value)[:40]!r}, expected an integer")
    if value < 0:
        raise MemoryInputError(f"not a memory snapshot: {what} is {value}, a size is never negative")
    return saturate(value)


def _frame_text(frames: Any) -> Optional[str]:
    if not isinstance(frames, list):
        return None
    picked = None
    for fr in frames:
        if not isinstance(fr, dict):
            continue
        filename = str(fr.get("filename", ""))
        if picked is None:
            picked = fr
        if filename and "/torch/" not in filename and "/torch_npu/" not in filename and not filename.startswith("??"):
            picked = fr
            break
    if picked is None:
        return None
    return f"{picked.get('filename', '?')}:{picked.get('line', '?')} in {picked.get('name', '?')}"


def _blocks(blocks: List[Any], index: int) -> Tuple[int, int, int, int, List[int], int, bool, int, List[Tuple[int, str]]]:
    """(allocated, pending, free, live blocks, free block sizes, requested, has_requested, largest
    free block, (size, state) of each block in order) of one block list; computed once per list
    object however many segments share it."""
    allocated = pending = free = live = requested = 0
    has_requested = True
    free_blocks: List[int] = []
    order: List[Tuple[int, str]] = []
    for b in blocks:
        if not isinstance(b, dict) or "size" not in b or "state" not in b:
            raise MemoryInputError(f"not a memory snapshot: a block of segment {index} lacks size/state")
        size = _int(b["size"], "block size")
        state = STATES.get(str(b["state"])[:64])
        if state is None:
            raise MemoryInputError(f"not a memory snapshot: unknown block state {str(b['state'])[:40]!r}")
        order.append((size, state))
        if state == "allocated":
            allocated += size
            live += 1
            if isinstance(b.get("requested_size"), int) and not isinstance(b.get("requested_size"), bool):
                requested += saturate(b["requested_size"])
            else:
                has_requested = False
        elif state == "pending":
            pending += size
            live += 1
        else:
            free += size
            free_blocks.append(size)
    return allocated, pending, free, live, free_blocks, requested, has_requested, max(free_blocks, default=0), order


def _segment(raw: Any, index: int, seen: Optional[Seen] = None) -> Tuple[Optional[int], SegmentView]:
    if not isinstance(raw, dict):
        raise MemoryInputError(f"not a memory snapshot: segment {index} is {type(raw).__name__}, expected a dict")
    if "total_size" not in raw or "blocks" not in raw:
        raise MemoryInputError(f"not a memory snapshot: segment {index} has no total_size/blocks")
    blocks = raw["blocks"]
    if not isinstance(blocks, list):
        raise MemoryInputError(f"not a memory snapshot: blocks of segment {index} is not a list")
    device = raw.get("device")
    seg = SegmentView(
        address=raw.get("address") if isinstance(raw.get("address"), int) else None,
        total=_int(raw["total_size"], "total_size"),
        pool=str(raw.get("segment_type", "large")),
        stream=raw.get("stream") if isinstance(raw.get("stream"), int) else None,
        expandable=bool(raw.get("is_expandable", False)),
    )
    seen = seen or Seen()
    allocated, pending, free, live, free_blocks, requested, has_requested, largest, order = seen.once(
        blocks, lambda bl: _blocks(bl, index))
    seg.allocated, seg.pending, seg.free, seg.live_blocks = allocated, pending, free, live
    seg.free_blocks, seg.largest, seg.blocks = free_blocks, largest, order  # shared, not copied
    seg.requested = requested if has_requested and seg.allocated else (0 if has_requested else None)
    return (device if isinstance(device, int) else None), seg


def _trace(trace: List[Any], seen: Seen) -> Tuple[Dict[str, int], List[OomEntry]]:
    counts: Dict[str, int] = {}
    oom_list: List[OomEntry] = []
    for entry in trace:
        if not isinstance(entry, dict):
            continue
        action = str(entry.get("action"))[:64]
        counts[action] = counts.get(action, 0) + 1
        size = entry.get("size")
        if action == "oom" and isinstance(size, int) and not isinstance(size, bool) and size >= 0:
            free = entry.get("device_free")
            frames = entry.get("frames")
            oom_list.append(OomEntry(
                size=saturate(size), device_free=saturate(free) if isinstance(free, int) and free >= 0 else None,
                stream=entry.get("stream") if isinstance(entry.get("stream"), int) else None,
                frame=seen.once(frames, _frame_text) if isinstance(frames, list) else None))
    return counts, oom_list


def snapshot_facts(data: Any, device: Optional[int] = None) -> SnapshotFacts:
    """Facts from a loaded snapshot object (dict or segment list). Raises MemoryInputError."""
    traces: List[Any] = []
    if isinstance(data, dict):
        if "segments" not in data:
            keys = ", ".join(sorted(map(str, data))[:4]) or "none"
            raise MemoryInputError(f"not a memory snapshot: no 'segments' key (found: {keys})")
        segments_raw = data["segments"]
        traces = data.get("device_traces") or []
        layout = "snapshot"
    elif isinstance(data, list):
        segments_raw = data
        layout = "segments"
    else:
        raise MemoryInputError(f"not a memory snapshot: top level is {type(data).__name__}")
    if not isinstance(segments_raw, list) or not isinstance(traces, list):
        raise MemoryInputError("not a memory snapshot: 'segments' and 'device_traces' must be lists")
    if not segments_raw:
        raise MemoryInputError("the snapshot holds no segments: it was taken before the allocator reserved "
                               "any memory, or in another process; take it at the failure "
                               "(torch.npu.memory._dump_snapshot() in the except block, or OOM_SNAPSHOT_ENABLE=1)")
    seen = Seen()
    per_device: Dict[Optional[int], List[SegmentView]] = {}
    for i, raw in enumerate(segments_raw):
        dev, seg = _segment(raw, i, seen)
        per_device.setdefault(dev, []).append(seg)
    ooms: Dict[int, List[OomEntry]] = {}
    actions: Dict[int, Dict[str, int]] = {}
    for dev_index, trace in enumerate(traces):
        if not isinstance(trace, list):
            continue
        # a trace list shared by several devices (a pickle memo) is counted once
        counts, oom_list = seen.once(trace, lambda t: _trace(t, seen))
        if oom_list:
            ooms[dev_index] = oom_list
        actions[dev_index] = counts
    devices = sorted(d for d in per_device if d is not None)
    if device is None:
        if len(per_device) == 1:
            device = next(iter(per_device))
        elif ooms:
            device = max(ooms)
        elif per_device:
            device = max(per_device, key=lambda d: sum(s.total for s in per_device[d]))
    elif device not in per_device and per_device:
        listed = ", ".join(str(d) for d in devices) or "none"
        raise MemoryInputError(f"the snapshot has no segments of device {device} (devices: {listed})")
    trace_dev = device if device is not None else 0
    return SnapshotFacts(device=device, devices=devices, layout=layout, segments=per_device.get(device, []),
                         oom_events=ooms.get(trace_dev, []), trace_actions=actions.get(trace_dev, {}))


def _load_stream(fh: BinaryIO, name: str) -> Any:
    data = fh.read(LIMITS.snapshot_bytes + 1)
    if len(data) > LIMITS.snapshot_bytes:
        raise MemoryInputError(f"{name}: larger than {LIMITS.snapshot_bytes >> 20} MB (the limit for a snapshot)")
    head = data[:1]
    if head in (b"{", b"["):
        try:
            return load_json(data, what=name)
        except InputError as exc:
            raise MemoryInputError(str(exc)) from None
    if head == b"\x80" or head in (b"(", b"]", b"}"):
        try:
            check_pickle(data, what="pickle")
        except InputError as exc:
            reason = str(exc).split(": ", 1)[-1]
            raise MemoryInputError(f"{name}: not a readable pickle ({reason})") from None
        try:
            return _PlainUnpickler(io.BytesIO(data)).load()
        except MemoryInputError:
            raise
        except pickle.UnpicklingError as exc:
            text = str(exc)
            raise MemoryInputError(f"{name}: {text}" if text.startswith("refusing")
                                   else f"{name}: not a readable pickle ({text})") from None
        except (EOFError, ValueError, TypeError, AttributeError, IndexError, KeyError, RecursionError,
                MemoryError, OverflowError) as exc:
            raise MemoryInputError(f"{name}: not a readable pickle ({type(exc).__name__})") from None
    raise MemoryInputError(f"{name}: not a memory snapshot (expected a pickle from _dump_snapshot() or JSON)")


def load_snapshot(path: str, device: Optional[int] = None, stdin: Optional[BinaryIO] = None) -> SnapshotFacts:
    """Read a snapshot file (pickle or JSON; ``-`` is stdin). Raises MemoryInputError."""
    name = f"--snapshot {path}"
    fh = open_input(path, "--snapshot", stdin)
    try:
        data = _load_stream(fh, name)
    except OSError as exc:
        raise MemoryInputError(os_message(name, exc)) from None
    finally:
        if path != "-":
            fh.close()
    try:
        return snapshot_facts(data, device)
    except MemoryInputError as exc:
        raise MemoryInputError(f"{name}: {exc}") from None
