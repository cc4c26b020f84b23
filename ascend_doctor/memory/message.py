"""What logs say about memory: out-of-memory messages, cache flushes, allocator settings.

One scan collects, from pasted text or from files (directories, ``.gz``, tar archives
and stdin, read the way triage reads them), everything the OOM
verdict uses:

* every out-of-memory message (``parsers.oom_text``), with file, line and pid;
* failures below PyTorch's allocator: ``EL0004``, ``207001``, ``drvRetCode=6``,
  ``rtMalloc ... out of memory``, HCCL ``Failed to allocate resource[DeviceMemory]``;
* torch_npu's ``Get a block from the existing pool failed ...`` line, written once per
  cache flush (``num_alloc_retries``): the process had reached the device limit;
* the allocator setting in use (``PYTORCH_NPU_ALLOC_CONF=...``) and the warnings that
  say a setting was dropped (``expandable_segments setting failure ...``) or rejected.

The hint at the end of CUDA's message (``PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True``)
is advice, not a setting, and is not taken for one.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import BinaryIO, Iterable, List, Optional, Tuple

from ..inputs import int_or_none as num
from ..parsers.oom_text import OomRecord, WrappedOom, continues, parse_oom
from ..parsers.plog import parse_plog_line
from ..parsers.prefixes import strip_prefixes, unwrap
from ..triage.events import sniff_plog
from ..triage.reader import Counter, decode_line, looks_binary, scan_candidates
from ..triage.sources import InputError, tar_members, walk_inputs
from .errors import MemoryInputError

RETRY_TEXT = "Get a block from the existing pool failed"
_NEEDLES = (b"out of memory", b"Tried to allocate", RETRY_TEXT.encode(), b"ALLOC_CONF", b"expandable_segments", b"EL0004",
            b"207001", b"drvRetCode=6", b"DeviceMemory")
# plog files: every line that matters here is an [ERROR] line (the cache-flush line, the OOM
# text 26.x also logs, EL0004/207001/halMemAlloc); each needle costs one pass over the data
_PLOG_NEEDLES = (b"[ERROR]",)
# console captures that are mostly plog lines (ASCEND_SLOG_PRINT_TO_STDOUT): also the Python
# side, whose traceback line and allocator warnings carry no level
_CAPTURE_NEEDLES = (b"[ERROR]", b"out of memory", b"expandable_segments")
_CONF = re.compile(r"\b(?P<var>PYTORCH_NPU_ALLOC_CONF|PYTORCH_CUDA_ALLOC_CONF|PYTORCH_ALLOC_CONF)\s*[=:]\s*"
                   r"[\"']?(?P<value>[A-Za-z0-9_:,.\[\]>]+)")
_EXPANDABLE_FAILED = re.compile(r"expandable_segments setting failure, now change to")
_CONF_CONFLICT = re.compile(r"cannot be enabled with `expandable_segments`")
_BANNER_PID = re.compile(r"\(PID:(?P<pid>\d+), Device:(?P<dev>-?\d+), RankID:(?P<rank>-?\d+)\)")
_DRIVER_OOM = (
    ("el0004", re.compile(r"EL0004")),
    ("halmemalloc", re.compile(r"halMemAlloc failed: device_id=(?P<dev>\d+), size=(?P<size>\d+), .*?drvRetCode=6")),
    ("rtmalloc", re.compile(r"driver error:out of memory")),
    ("207001", re.compile(r"(?:ret\[207001\]|runtime result = 207001|error code is 207001)")),
    ("hccl_buffer", re.compile(r"Failed to allocate resource\[DeviceMemory\] with info \[size:(?P<size>\d+)\]")),
)
_MAX_TEXT_LINE = 64 << 10
_COMPLETE = ("npu_pre26", "npu_26", "cuda_cached", "cuda_reserved", "cuda_2x", "loose")


@dataclass(frozen=True)
class Where:
    """A line in an input: file (``<text>`` for pasted text), 1-based line, its text."""

    file: str
    line: int
    text: str


@dataclass
class OomHit:
    record: OomRecord
    where: Where
    pid: Optional[int] = None


@dataclass
class DriverOomHit:
    kind: str  # el0004 | halmemalloc | rtmalloc | 207001 | hccl_buffer
    where: Where
    size: Optional[int] = None
    device: Optional[int] = None


@dataclass
class LogFacts:
    """Everything one scan found, in input order."""

    ooms: List[OomHit] = field(default_factory=list)
    driver_ooms: List[DriverOomHit] = field(default_factory=list)
    retries: int = 0
    first_retry: Optional[Where] = None
    alloc_conf: Optional[Tuple[str, str, Where]] = None  # (variable, value, where)
    expandable_failed: Optional[Where] = None
    conf_rejected: Optional[Where] = None
    files: List[str] = field(default_factory=list)
    lines: int = 0
    skipped: List[Tuple[str, str]] = field(default_factory=list)

    @property
    def first_oom(self) -> Optional[OomHit]:
        """The first message with numbers (the one to analyse), else the first at all."""
        for hit in self.ooms:
            if hit.record.requested is not None:
                return hit
        return self.ooms[0] if self.ooms else None

    @property
    def has_content(self) -> bool:
        return bool(self.ooms or self.driver_ooms or self.retries or self.alloc_conf
                     or self.expandable_failed or self.conf_rejected)

    def merge(self, other: "LogFacts") -> None:
        self.ooms.extend(other.ooms)
        self.driver_ooms.extend(other.driver_ooms)
        if other.retries and self.first_retry is None:
            self.first_retry = other.first_retry
        self.retries += other.retries
        self.alloc_conf = self.alloc_conf or other.alloc_conf
        self.expandable_failed = self.expandable_failed or other.expandable_failed
        self.conf_rejected = self.conf_rejected or other.conf_rejected
        self.files.extend(other.files)
        self.lines += other.lines
        self.skipped.extend(other.skipped)


def _pid_of(raw: str, inner: str, prefix_pid: Optional[int]) -> Optional[int]:
    if prefix_pid is not None:
        return prefix_pid
    m = _BANNER_PID.search(raw)
    if m:
        return num(m.group("pid"))
    rec = parse_plog_line(raw)
    return rec.pid if rec is not None else None


def _scan_line(facts: LogFacts, name: str, lineno: int, raw: str) -> None:
    raw = unwrap(raw)
    inner, prefix = strip_prefixes(raw)
    text = inner.strip()
    where = Where(name, lineno, text[:2000])
    if "out of memory" in text or "Tried to allocate" in text:
        rec = parse_oom(text)
        if rec is not None:
            facts.ooms.append(OomHit(rec, where, _pid_of(raw, inner, prefix.pid)))
            return  # the hint inside the message is not a setting
    if RETRY_TEXT in text:
        facts.retries += 1
        if facts.first_retry is None:
            facts.first_retry = where
        return
    if "ALLOC_CONF" in text and facts.alloc_conf is None:
        m = _CONF.search(text)
        if m and "If reserved but unallocated memory is large" not in text:
            facts.alloc_conf = (m.group("var"), m.group("value"), where)
    if "expandable_segments" in text:
        if facts.expandable_failed is None and _EXPANDABLE_FAILED.search(text):
            facts.expandable_failed = where
        if facts.conf_rejected is None and _CONF_CONFLICT.search(text):
            facts.conf_rejected = where
    for kind, rx in _DRIVER_OOM:
        m = rx.search(text)
        if m:
            groups = m.groupdict()
            size = num(groups["size"]) if groups.get("size") else None
            dev = num(groups["dev"]) if groups.get("dev") else None
            facts.driver_ooms.append(DriverOomHit(kind, where, size, dev))
            break


def scan_text(text: str, name: str = "<text>") -> LogFacts:
    """Scan pasted text. A message broken over several lines (a terminal or an issue page
    wrapped it) is also tried joined into one line."""
    facts = LogFacts(files=[name])
    lines = text.splitlines()
    facts.lines = len(lines)
    for i, raw in enumerate(lines, 1):
        _scan_line(facts, name, i, raw[:_MAX_TEXT_LINE])
    complete = any(h.record.template in _COMPLETE for h in facts.ooms)
    if not complete and ("out of memory" in text or "Tried to allocate" in text):
        joined = " ".join(part.strip() for part in lines if part.strip())
        rec = parse_oom(joined)
        if rec is not None and rec.template in _COMPLETE:
            facts.ooms = [h for h in facts.ooms if h.record.template != "npu_partial"]
            inner, _ = strip_prefixes(joined)
            start = inner.find(" out of memory")
            line_no = next((i for i, raw in enumerate(lines, 1) if "out of memory" in raw or "Tried to" in raw), 1)
            shown = inner[max(start - 40, 0):].strip() if start >= 0 else inner
            facts.ooms.insert(0, OomHit(rec, Where(name, line_no, shown[:2000]), _pid_of(joined, inner, None)))
    return facts


def _joined(facts: LogFacts, name: str, wrapped: WrappedOom, rec: OomRecord) -> None:
    """A message read whole over several lines replaces what its first line gave alone."""
    first = [h for h in facts.ooms if h.where.line == wrapped.start and h.where.file == name]
    facts.ooms = [h for h in facts.ooms if h not in first]
    pid = first[0].pid if first else _pid_of(wrapped.text, wrapped.text, None)
    facts.ooms.append(OomHit(rec, Where(name, wrapped.start, wrapped.text[:2000]), pid))


class _Chained:
    """A stream whose first bytes were already read (to tell text from binary)."""

    def __init__(self, head: bytes, rest: BinaryIO) -> None:
        self.head = head
        self.rest = rest

    def read(self, n: int = -1) -> bytes:
        if self.head:
            out, self.head = self.head, b""
            return out
        return self.rest.read(n)


def scan_paths(paths: Iterable[str], stdin: Optional[BinaryIO] = None) -> LogFacts:
    """Scan log files, directories and archives (``-`` is stdin) for memory evidence.

    Raises MemoryInputError when a path does not exist or nothing in it is readable text.
    """
    paths = list(paths)
    try:
        walk = walk_inputs(paths, stdin=stdin)
    except InputError as exc:
        raise MemoryInputError(str(exc)) from None
    facts = LogFacts()

    def read(display: str, fh: BinaryIO, kind: Optional[str]) -> None:
        head = fh.read(1 << 16)
        if looks_binary(head):
            facts.skipped.append((display, "binary data, not a log"))
            return
        counter = Counter()
        part = LogFacts()
        if kind in ("plog", "device"):
            needles = _PLOG_NEEDLES
        elif sniff_plog(head[:16384]):
            needles = _CAPTURE_NEEDLES
        else:
            needles = _NEEDLES
        wrapped = WrappedOom()
        for lineno, raw in scan_candidates(_Chained(head, fh), counter, needles, more=continues):  # type: ignore[arg-type]
            text = decode_line(raw)
            whole = wrapped.feed(text)
            if whole is not None:
                _joined(part, display, wrapped, whole)
                continue
            _scan_line(part, display, lineno, text)
            wrapped.begin(lineno, strip_prefixes(text)[0])
        part.files = [display]
        part.lines = counter.lines
        facts.merge(part)

    for src in walk.sources:
        try:
            if src.kind_hint == "tar":
                for member, stream in tar_members(src, walk):
                    read(member.display, stream, member.kind_hint)  # type: ignore[arg-type]
                continue
            fh = src.open()
            try:
                read(src.display, fh, src.kind_hint)
            finally:
                if src.display != "<stdin>":
                    fh.close()
        except (OSError, EOFError) as exc:
            facts.skipped.append((src.display, f"unreadable ({exc})"))
    facts.skipped.extend((s.path, s.reason) for s in walk.skipped)
    if not facts.files:
        reasons = "; ".join(f"{p}: {r}" for p, r in facts.skipped[:3])
        raise MemoryInputError(f"no readable log text in {', '.join(paths)}" + (f" ({reasons})" if reasons else ""))
    return facts
