"""``torch.npu.memory_stats()`` (and CUDA's) in the shapes people save or paste.

Accepted, in a file or as text:

* JSON of the flat dict (``{"allocated_bytes.all.current": 123, ...}``), of the nested
  dict (``memory_stats_as_nested_dict()``), or an object holding one under ``stats`` /
  ``memory_stats`` (e.g. ``python -m runtime_sim.allocator replay --json``);
* the printed dict: ``OrderedDict([('active.all.allocated', 0), ...])`` or ``{...}``
  (read by the bounded parser of ``ascend_doctor.inputs.printed``: data only, nothing is
  executed, linear in the size, depth and numbers bounded);
* the ``memory_summary()`` table, anywhere in a text (torch_npu's "PyTorch NPU memory
  summary" and CUDA's). Its sizes are floor-divided integers ("1062 MB" is
  1062..1063 MiB), which the facts keep as an error margin.

Key names are the real flattened ones: the core arrays
``{allocation, segment, active, inactive_split, allocated_bytes, reserved_bytes,
active_bytes, inactive_split_bytes, requested_bytes}.{all,large_pool,small_pool}.
{current,peak,allocated,freed}`` and the scalars ``num_alloc_retries``, ``num_ooms``,
``max_split_size`` ... Older torch_npu lacks some keys; they read as unknown, not 0.
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import Any, BinaryIO, Dict, List, Optional

from ..core.units import parse_size
from ..inputs import LIMITS, InputError, os_message
from ..inputs import int_or_none as num
from ..inputs import json_depth, load_json, parse_printed, saturate
from .errors import MemoryInputError
from .input_file import open_input

ARRAYS = ("allocation", "segment", "active", "inactive_split", "allocated_bytes", "reserved_bytes",
          "active_bytes", "inactive_split_bytes", "requested_bytes")
POOLS = ("all", "large_pool", "small_pool")
FIELDS = ("current", "peak", "allocated", "freed")
SCALARS = ("num_alloc_retries", "num_ooms", "max_split_size", "num_sync_all_streams", "num_device_alloc",
           "num_device_free", "num_oom_rejections")
OVERSIZE = ("oversize_allocations", "oversize_segments")
_CORE = ("allocated_bytes.all.current", "reserved_bytes.all.current")

# memory_summary() row labels (torch/cuda/memory.py, torch_npu/npu/memory.py)
_SUMMARY_LABELS = {
    "allocated memory": "allocated_bytes",
    "active memory": "active_bytes",
    "requested memory": "requested_bytes",
    "gpu reserved memory": "reserved_bytes",
    "npu reserved memory": "reserved_bytes",
    "non-releasable memory": "inactive_split_bytes",
    "allocations": "allocation",
    "active allocs": "active",
    "gpu reserved segments": "segment",
    "npu reserved segments": "segment",
    "non-releasable allocs": "inactive_split",
    "oversize allocations": "oversize_allocations",
    "oversize gpu segments": "oversize_segments",
    "oversize npu segments": "oversize_segments",
}
_SUMMARY_HEAD = re.compile(r"PyTorch (?P<flavor>CUDA|NPU|XPU|MTIA)? ?memory summary, device ID (?P<dev>\d+)")
_SUMMARY_COUNTS = re.compile(r"(?:CUDA|NPU|GPU|XPU) OOMs:\s*(?P<ooms>\d+)\s*\|\s*\w+ retries:\s*(?P<retries>\d+)")
_SUMMARY_ROW = re.compile(r"^\|\s*(?P<label>[A-Za-z][A-Za-z -]*?)\s*\|(?P<cells>(?:[^|]*\|){4})")
_COUNT = re.compile(r"^\s*(?P<n>\d+)\s*(?P<unit>[KM]?)\s*$")


@dataclass
class StatsFacts:
    """Flattened statistics of one device, and how they were obtained."""

    values: Dict[str, int]
    origin: str  # memory_stats | memory_summary
    device: Optional[int] = None
    flavor: Optional[str] = None  # npu | cuda when the text says so
    errors: Dict[str, int] = field(default_factory=dict)  # printing error per key (memory_summary)
    unknown_keys: List[str] = field(default_factory=list)

    def get(self, key: str) -> Optional[int]:
        return self.values.get(key)

    def current(self, array: str, pool: str = "all") -> Optional[int]:
        return self.values.get(f"{array}.{pool}.current")

    @property
    def allocated(self) -> Optional[int]:
        return self.current("allocated_bytes")

    @property
    def reserved(self) -> Optional[int]:
        return self.current("reserved_bytes")

    @property
    def active(self) -> Optional[int]:
        return self.current("active_bytes")

    @property
    def inactive_split(self) -> Optional[int]:
        return self.current("inactive_split_bytes")

    @property
    def requested(self) -> Optional[int]:
        return self.current("requested_bytes")

    @property
    def segments(self) -> Optional[int]:
        return self.current("segment")

    @property
    def num_alloc_retries(self) -> Optional[int]:
        return self.values.get("num_alloc_retries")

    @property
    def num_ooms(self) -> Optional[int]:
        return self.values.get("num_ooms")

    @property
    def max_split_size(self) -> Optional[int]:
        """The configured max_split_size_mb in bytes; None when unlimited (exported as -1
        or SIZE_MAX) or not reported."""
        v = self.values.get("max_split_size")
        if v is None or v <= 0 or v >= (1 << 62):
            return None
        return v


def _flatten(obj: Dict[str, Any], prefix: str = "") -> Dict[str, Any]:
    if not prefix and not any(isinstance(v, dict) for v in obj.values()):
        return obj  # already flat (memory_stats() itself): no copy
    out: Dict[str, Any] = {}
    for key, value in obj.items():
        name = f"{prefix}{key}"
        if isinstance(value, dict):
            out.update(_flatten(value, name + "."))
        else:
            out[name] = value
    return out


def _known(key: str) -> bool:
    parts = key.split(".")
    if len(parts) == 1:
        return key in SCALARS
    if len(parts) == 2:
        return parts[0] in OVERSIZE and parts[1] in FIELDS
    return (len(parts) == 3 and parts[0] in ARRAYS and parts[1] in POOLS and parts[2] in FIELDS) or \
        key.startswith("reserved_bytes_by_private_pools.")


def stats_from_mapping(data: Any, origin: str = "memory_stats") -> StatsFacts:
    """Validate and flatten a memory_stats mapping. Raises MemoryInputError."""
    if not isinstance(data, dict):
        raise MemoryInputError(f"expected a dict of memory statistics, got {type(data).__name__}")
    if not any(k in data or k.split(".")[0] in data for k in _CORE):
        for wrapper in ("memory_stats", "stats"):
            if isinstance(data.get(wrapper), dict):
                return stats_from_mapping(data[wrapper], origin)
    flat = _flatten(data)
    values: Dict[str, int] = {}
    unknown: List[str] = []
    for key, value in flat.items():
        key = str(key)
        if not _known(key):
            if len(unknown) < 50:  # a sample is enough to say what the file is
                unknown.append(key[:80])
            continue
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise MemoryInputError(f"memory statistic {key} is {str(value)[:40]!r}, expected a number")
        if isinstance(value, float) and not math.isfinite(value):
            raise MemoryInputError(f"memory statistic {key} is {value}, expected a finite number")
        if value < 0 and key != "max_split_size":  # -1 there means "no limit"
            raise MemoryInputError(f"memory statistic {key} is {value}: a count of bytes or blocks is never "
                                   "negative (the dump is damaged or not from memory_stats())")
        values[key] = saturate(value) if value >= 0 else int(value)
    if not any(k in values for k in _CORE):
        sample = ", ".join(sorted(flat)[:3]) or "none"
        raise MemoryInputError("not torch.npu.memory_stats() output: no allocated_bytes.all.current or "
                               f"reserved_bytes.all.current key (found: {sample})")
    return StatsFacts(values=values, origin=origin, unknown_keys=unknown)


def _literal(text: str) -> Any:
    value = parse_printed(text.strip(), what="printed dict")
    if isinstance(value, list) and all(isinstance(p, (list, tuple)) and len(p) == 2 for p in value):
        try:
            return dict(value)
        except TypeError:
            return value
    return value


def _summary_value(cell: str, array: str) -> Optional[Any]:
    cell = cell.strip()
    if array.endswith("_bytes"):
        return parse_size(cell, floor_divided=True)
    m = _COUNT.match(cell)
    if not m:
        return None
    mult = {"": 1, "K": 1000, "M": 1000 ** 2}[m.group("unit")]
    n = num(m.group("n"))
    return None if n is None else n * mult


def parse_summary(text: str) -> List[StatsFacts]:
    """Every memory_summary() table in ``text``, in order."""
    tables: List[StatsFacts] = []
    current: Optional[StatsFacts] = None
    metric: Optional[str] = None
    for line in text.splitlines():
        line = line.strip()
        head = _SUMMARY_HEAD.search(line)
        if head:
            flavor = {"NPU": "npu", "CUDA": "cuda"}.get(head.group("flavor") or "CUDA")
            current = StatsFacts(values={}, origin="memory_summary", device=num(head.group("dev"), max_digits=6), flavor=flavor)
            tables.append(current)
            metric = None
            continue
        if current is None:
            # a pasted excerpt may start below the header: its rows still count
            row = _SUMMARY_ROW.match(line)
            if not row or row.group("label").strip().lower() not in _SUMMARY_LABELS:
                continue
            current = StatsFacts(values={}, origin="memory_summary")
            tables.append(current)
        counts = _SUMMARY_COUNTS.search(line)
        if counts:
            for key, group in (("num_ooms", "ooms"), ("num_alloc_retries", "retries")):
                value = num(counts.group(group))
                if value is not None:
                    current.values[key] = value
            continue
        row = _SUMMARY_ROW.match(line)
        if not row:
            continue
        label = row.group("label").strip().lower()
        if label in ("from large pool", "from small pool"):
            pool = "large_pool" if "large" in label else "small_pool"
        elif label in _SUMMARY_LABELS:
            metric = _SUMMARY_LABELS[label]
            pool = "all"
        else:
            continue
        if metric is None:
            continue
        cells = row.group("cells").split("|")[:4]
        for name, cell in zip(FIELDS, cells):
            parsed = _summary_value(cell, metric)
            if parsed is None:
                continue
            key = f"{metric}.{name}" if metric in OVERSIZE else f"{metric}.{pool}.{name}"
            if metric in OVERSIZE and pool != "all":
                continue
            if hasattr(parsed, "value"):
                current.values[key] = parsed.value
                current.errors[key] = parsed.error
            else:
                current.values[key] = parsed
    return [t for t in tables if any(k in t.values for k in _CORE)]


def _looks_like_summary(body: str) -> bool:
    for line in body.splitlines()[:200]:
        row = _SUMMARY_ROW.match(line.strip())
        if row and row.group("label").strip().lower() in _SUMMARY_LABELS:
            return True
    return False


def parse_stats_text(text: str, name: str = "stats", device: Optional[int] = None) -> StatsFacts:
    """Statistics from text in any accepted form. Raises MemoryInputError."""
    body = text.strip()
    if not body:
        raise MemoryInputError(f"{name}: empty")
    if "memory summary, device ID" in body or _looks_like_summary(body):
        tables = parse_summary(body)
        if not tables:
            raise MemoryInputError(f"{name}: a memory_summary() table without readable rows")
        if device is not None:
            for t in reversed(tables):
                if t.device == device:
                    return t
        return tables[-1]  # the last print is the one closest to the failure
    data: Any = None
    if body[0] in "{[":
        try:
            data = load_json(body, what=name)
        except InputError as exc:
            if json_depth(body) > LIMITS.json_depth or "not a number JSON allows" in str(exc) or "digits" in str(exc):
                raise MemoryInputError(str(exc)) from None
            data = None
    if data is None:
        try:
            data = _literal(body)
        except InputError as exc:
            raise MemoryInputError(f"{name}: neither JSON, a printed dict of memory_stats(), nor a "
                                   f"memory_summary() table ({str(exc).split(': ', 1)[-1]})") from None
    try:
        return stats_from_mapping(data)
    except MemoryInputError as exc:
        raise MemoryInputError(f"{name}: {exc}") from None


def load_stats(path: str, device: Optional[int] = None, max_bytes: int = 64 << 20,
               stdin: Optional[BinaryIO] = None) -> StatsFacts:
    """Read statistics from a file (``-`` is stdin). Raises MemoryInputError."""
    fh = open_input(path, "--stats", stdin)
    try:
        raw = fh.read(max_bytes + 1)
    except OSError as exc:
        raise MemoryInputError(os_message(f"--stats {path}", exc)) from None
    finally:
        if path != "-":
            fh.close()
    if isinstance(raw, str):  # a text stream standing in for stdin
        raw = raw.encode("utf-8", errors="replace")
    if len(raw) > max_bytes:
        raise MemoryInputError(f"--stats {path}: larger than {max_bytes >> 20} MB; not a memory_stats() dump")
    if b"\x00" in raw[:4096]:
        raise MemoryInputError(f"--stats {path}: binary data; memory_stats() is saved as JSON or text "
                               "(a pickled snapshot goes to --snapshot)")
    text = raw.decode("utf-8", errors="replace")
    return parse_stats_text(text, name=f"--stats {path}", device=device)
