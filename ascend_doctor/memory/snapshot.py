"""Memory snapshots: what the caching allocator held, block by block.

Accepted (memory-fragmentation.md §3.2):

* ``torch.npu.memory._snapshot()`` / ``torch.cuda.memory._snapshot()``:
  ``{"segments": [...], "device_traces": [[...], ...]}`` -- pickled by
  ``_dump_snapshot(path)`` or by torch_npu's OOM dump (``OOM_SNAPSHOT_ENABLE``), or saved as JSON;
* ``memory_snapshot()``: the segment list alone; old torch_npu builds report only
  ``device, address, total_size, allocated_size, active_size, segment_type`` and blocks
  with ``size`` and ``state``.

A pickle is read with an unpickler that builds plain data only and refuses every
class or function a file names (a snapshot has none), so a hostile file cannot run code.

Facts per device: reserved, allocated, pending-free, the largest free block per pool
and stream (what a request could get without a new segment), free memory pinned inside
partly used segments (non-releasable: no flush can return it), whole free segments
(released by the OOM retry), expandable segments, and the ``oom`` trace entries
(request size, device free memory and the Python frames at the failure).
"""
from __future__ import annotations

import io
import json
import pickle
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any, BinaryIO, Dict, List, Optional, Tuple

from . import MemoryInputError

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
    free_blocks: List[int] = field(default_factory=list)
    blocks: List[Tuple[int, str]] = field(default_factory=list)  # (size, allocated|pending|free) in address order

    @property
    def largest_free(self) -> int:
        return max(self.free_blocks, default=0)

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
        return max((b for s in self.segments if s.pool == pool and (stream is None or s.stream in (None, stream))
                    for b in s.free_blocks), default=0)

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
        raise MemoryInputError(f"not a memory snapshot: {what} is {value!r}, expected an integer")
    return value


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


def _segment(raw: Any, index: int) -> Tuple[Optional[int], SegmentView]:
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
    requested = 0
    has_requested = True
    for b in blocks:
        if not isinstance(b, dict) or "size" not in b or "state" not in b:
            raise MemoryInputError(f"not a memory snapshot: a block of segment {index} lacks size/state")
        size = _int(b["size"], "block size")
        state = STATES.get(str(b["state"]))
        if state is None:
            raise MemoryInputError(f"not a memory snapshot: unknown block state {b['state']!r}")
        seg.blocks.append((size, state))
        if state == "allocated":
            seg.allocated += size
            seg.live_blocks += 1
            if isinstance(b.get("requested_size"), int):
                requested += b["requested_size"]
            else:
                has_requested = False
        elif state == "pending":
            seg.pending += size
            seg.live_blocks += 1
        else:
            seg.free += size
            seg.free_blocks.append(size)
    seg.requested = requested if has_requested and seg.allocated else (0 if has_requested else None)
    return (device if isinstance(device, int) else None), seg


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
    per_device: Dict[Optional[int], List[SegmentView]] = {}
    for i, raw in enumerate(segments_raw):
        dev, seg = _segment(raw, i)
        per_device.setdefault(dev, []).append(seg)
    ooms: Dict[int, List[OomEntry]] = {}
    actions: Dict[int, Dict[str, int]] = {}
    for dev_index, trace in enumerate(traces):
        if not isinstance(trace, list):
            continue
        counts: Dict[str, int] = {}
        for entry in trace:
            if not isinstance(entry, dict):
                continue
            action = str(entry.get("action"))
            counts[action] = counts.get(action, 0) + 1
            if action == "oom" and isinstance(entry.get("size"), int):
                free = entry.get("device_free")
                ooms.setdefault(dev_index, []).append(OomEntry(
                    size=entry["size"], device_free=free if isinstance(free, int) else None,
                    stream=entry.get("stream") if isinstance(entry.get("stream"), int) else None,
                    frame=_frame_text(entry.get("frames"))))
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
    head = fh.read(1)
    fh.seek(0)
    if head in (b"{", b"["):
        try:
            return json.load(fh)
        except ValueError as exc:
            raise MemoryInputError(f"{name}: not valid JSON ({exc})") from None
    if head == b"\x80" or head in (b"(", b"]", b"}"):
        try:
            return _PlainUnpickler(fh).load()
        except MemoryInputError:
            raise
        except pickle.UnpicklingError as exc:
            text = str(exc)
            raise MemoryInputError(f"{name}: {text}" if text.startswith("refusing")
                                   else f"{name}: not a readable pickle ({text})") from None
        except (EOFError, ValueError, TypeError, AttributeError, IndexError, KeyError, RecursionError) as exc:
            raise MemoryInputError(f"{name}: not a readable pickle ({type(exc).__name__})") from None
    raise MemoryInputError(f"{name}: not a memory snapshot (expected a pickle from _dump_snapshot() or JSON)")


def load_snapshot(path: str, device: Optional[int] = None, stdin: Optional[BinaryIO] = None) -> SnapshotFacts:
    """Read a snapshot file (pickle or JSON; ``-`` is stdin). Raises MemoryInputError."""
    from .input_file import open_input

    name = f"--snapshot {path}"
    fh = open_input(path, "--snapshot", stdin)
    try:
        stream: BinaryIO = fh
        if not fh.seekable():  # stdin or a pipe: the format is told from the first byte, then read again
            stream = io.BytesIO(fh.read())
        data = _load_stream(stream, name)
    except OSError as exc:
        raise MemoryInputError(f"{name}: {exc.strerror or exc}") from None
    finally:
        if path != "-":
            fh.close()
    try:
        return snapshot_facts(data, device)
    except MemoryInputError as exc:
        raise MemoryInputError(f"{name}: {exc}") from None
