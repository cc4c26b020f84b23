"""From a stream of lines to events: one record per thing that went wrong (or that
names a rank), with where it was seen.

Two readers share the parsers:
- plog files (``[LEVEL] MODULE(...)`` on nearly every line) are scanned for the few
  lines that can matter; every such line stands alone.
- anything else (console captures, pasted output, stdin) is read line by line through
  the prefix stripper and the streaming parsers (CANN blocks, Python tracebacks), and
  records that sit next to each other in the same process (a traceback's last line, the
  torch_npu call and banner, the ``[Error]:`` hint, the CANN block) are merged into one
  event, because together they describe one failure. Warnings that are not part of a
  failure (torch_npu's CPU-fallback notice, the allocator's cache-flush line) stand alone.

A console capture that mostly holds plog lines is scanned like a plog file, for
``[ERROR]`` and for the fallback notice; its lines that are not plog lines go through the
console line reader.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import BinaryIO, Callable, Dict, Iterator, List, Optional, Tuple

from ..lazyre import lazy
from ..parsers.cann_error import CannBlock, CannBlockParser
from ..parsers.codes import Code, find_codes
from ..parsers.error_shapes import looks_like_error
from ..parsers.hccl import HcclRecord, parse_hccl_line
from ..parsers.oom_text import OomRecord, WrappedOom, parse_oom
from ..parsers.plog import PlogLine, parse_plog_line, ts_to_epoch
from ..parsers.prefixes import strip_prefixes, unwrap
from ..parsers.stack_text import StackLine
from ..parsers.torch_npu_error import TorchNpuRecord, parse_torch_npu_line
from ..parsers.traceback import PyTraceback, TracebackParser
from .reader import Counter, decode_line, iter_lines, scan_candidates
from .sources import Source

# the plog keyword that marks the log framework's initialisation in a process
# (https://github.com/hicann/oam-tools/blob/master/docs/zh/asys/FAQ.md): a second one in the same
# process's run log means the job was resumed in place, and errors from before it belong to the earlier life
RESTART_MARK = "attr init success"
# plog lines worth a look besides [ERROR]: HCCL's run-log verdicts and rank maps (run logs only:
# HCCL writes them there at its fixed INFO level, so debug logs are searched for errors alone)
ERROR_NEEDLES = (b"[ERROR]",)
PLOG_NEEDLES = ERROR_NEEDLES + (b"crimer rank", b"LocalRank Key Info", b"Entry-HcclCommInitRootInfo", b"_TIMEOUT set by",
                                 RESTART_MARK.encode())
# stderr warnings worth a look in console captures scanned as plog (never in plog files themselves)
CONSOLE_NEEDLES = (b"CAUTION: The operator",)
EVENT_NEEDLES = (b"[EVENT]",)
_MERGE_GAP = 3  # console records this many lines apart or closer belong together
_MAX_EVIDENCE = 12
_DEVICE = lazy(r"(?:device_id=|deviceId[=\[]|device is |devid=|Device:|device id: |NPU )(\d+)")
_DIGITS = lazy(r"0x[0-9a-fA-F]+|\d+")


@dataclass
class Event:
    kind: str  # plog | console | hccl
    text: str  # the line that says most
    file: str
    line: int
    origin: str
    ts: Optional[str] = None  # plog-format timestamp
    pid: Optional[int] = None
    device: Optional[int] = None
    rank: Optional[int] = None
    module: Optional[str] = None
    level: Optional[str] = None
    codes: List[Code] = field(default_factory=list)
    detail: str = ""  # further text for matching (a CANN block, the exception message)
    evidence: List[Tuple[int, str]] = field(default_factory=list)
    hccl: List[HcclRecord] = field(default_factory=list)
    oom: Optional[OomRecord] = None
    end_line: int = 0
    count: int = 1
    last_ts: Optional[str] = None
    worker: Optional[str] = None
    worker_pid: Optional[int] = None  # pid printed by a launcher prefix: a hint, not the process itself
    has_banner: bool = False  # holds torch_npu's [ERROR] ... ERRmmccc line (the end of one report)
    opens_report: bool = False  # a raised exception or NPU call failure: the start of a report
    first_error: Optional[str] = None  # the CANN block's first recorded error
    exc_type: Optional[str] = None
    operator: Optional[str] = None
    fallback_op: Optional[str] = None  # the operator of a CPU-fallback warning
    standalone: bool = False  # never merged with neighbouring records (a warning, not part of a failure)

    @property
    def epoch(self) -> Optional[float]:
        return ts_to_epoch(self.ts)

    @property
    def match_text(self) -> str:
        return self.text + ("\n" + self.detail if self.detail else "")

    @property
    def code_values(self) -> List[str]:
        return [c.value for c in self.codes]

    def signature(self) -> str:
        """What stays the same when this error repeats: module, function and text without numbers."""
        if self.fallback_op is not None:
            return f"fallback|{self.fallback_op}"  # one per operator: digits tell conv2d from conv3d
        head = self.first_error or self.text
        return f"{self.kind}|{self.module or ''}|{_DIGITS.sub('#', head)[:240]}"


def sniff_plog(sample: bytes) -> bool:
    """Whether most lines of a sample are plog lines (so the fast scan applies)."""
    lines = [ln for ln in sample.split(b"\n")[:60] if ln.strip()]
    if len(lines) > 1:
        lines = lines[:-1]  # the last one may be cut
    if not lines:
        return False
    hits = sum(1 for ln in lines if ln[:1] == b"[" and b"):" in ln[:80] and parse_plog_line(ln[:300].decode("utf-8", "replace")) is not None)
    return hits * 2 >= len(lines)


Claim = Callable[..., bool]  # Knowledge.mentions(text, matched=False)


def extract(source: Source, stream: BinaryIO, counter: Counter, plog_mode: bool, claim: Optional[Claim] = None) -> Iterator[Event]:
    """Events of one stream. ``claim`` tells whether a console line no parser took names
    something the knowledge base knows (its codes and literals); such lines, and lines with
    the generic shape of an error, become events of their own: no error line goes unread."""
    if plog_mode:
        needles = ERROR_NEEDLES if source.log_class in ("debug", "security") else PLOG_NEEDLES
        if source.kind_hint == "device" or source.log_class not in ("debug", "security"):
            needles = needles + EVENT_NEEDLES  # device-side daemons report faults as EVENT lines
        if _is_capture(source):
            needles = needles + CONSOLE_NEEDLES
        yield from _plog_events(source, scan_candidates(stream, counter, needles), claim)
    else:
        yield from _console_events(source, iter_lines(stream, counter), claim)


# ------------------------------------------------------------------ plog files
def plog_event(source: Source, lineno: int, text: str, rec: PlogLine, claim: Optional[Claim] = None) -> Optional[Event]:
    if rec.level != "ERROR" and RESTART_MARK in rec.body:
        pid = source.pid if source.kind_hint == "device" and source.pid is not None else rec.pid
        return Event(kind="marker", text=rec.body.strip(), file=source.display, line=lineno, origin=source.origin,
                     ts=rec.ts, pid=pid, level=rec.level, end_line=lineno)
    hrec = parse_hccl_line(rec.body) if rec.module in ("HCCL", "HCCP") or "rank" in rec.body else None
    # of the device's event stream (EVENT level) only what the knowledge base knows is a failure record
    known_event = rec.level == "EVENT" and claim is not None and claim(rec.body, matched=True)
    if rec.level != "ERROR" and hrec is None and not known_event:
        return None
    # device logs carry the host process's pid in their file name; the line's pid is the device side's
    pid = source.pid if source.kind_hint == "device" and source.pid is not None else rec.pid
    m = _DEVICE.search(rec.body)
    device = int(m.group(1)) if m else source.device
    if hrec is not None and hrec.device is not None and hrec.kind == "task_failed":
        device = hrec.device
    ev = Event(
        kind="plog" if rec.level == "ERROR" or known_event else "hccl",
        text=text[rec.prefix_end:].strip(),
        file=source.display, line=lineno, origin=source.origin, ts=rec.ts, pid=pid, device=device,
        module=rec.module, level=rec.level, codes=find_codes(rec.body), end_line=lineno,
        rank=rec.hccl_rank,
    )
    if hrec is not None:
        ev.hccl.append(hrec)
    ev.first_error = f"{rec.func + ':' if rec.func else ''}{rec.message}" if rec.message else None
    ev.oom = parse_oom(rec.body)
    ev.evidence.append((lineno, ev.text))
    return ev


def _is_capture(source: Source) -> bool:
    """Console output, stdin or a pasted file (not a file of a plog tree)."""
    return source.log_class is None and source.kind_hint not in ("plog", "device")


def _plog_events(source: Source, lines: Iterator[Tuple[int, bytes]], claim: Optional[Claim] = None) -> Iterator[Event]:
    capture = _is_capture(source)
    for lineno, raw in lines:
        text = decode_line(raw)
        rec = parse_plog_line(text)
        if rec is None:
            if text.startswith("[EVENT]"):  # an event line in a device module's own layout (IMP, ...)
                ev = _generic_event(source, lineno, text, None, None, None, claim)
                if ev is not None:
                    yield _finish(ev)
            elif capture:  # a torch_npu banner or warning between the plog lines of a console capture
                inner, prefix = strip_prefixes(text)
                ev = _line_event(source, lineno, inner, prefix.pid, prefix.rank, prefix.worker, claim)
                if ev is not None:
                    yield _finish(ev)
            continue
        ev = plog_event(source, lineno, text, rec, claim)
        if ev is not None:
            yield ev


# ------------------------------------------------------------------ console text
class _Assembler:
    """Merges records that are close together in one file and process into one event."""

    def __init__(self, source: Source) -> None:
        self.source = source
        self.current: Optional[Event] = None

    def add(self, ev: Event) -> List[Event]:
        if ev.standalone:
            return self.flush() + [_finish(ev)]
        cur = self.current
        if cur is not None and cur.has_banner and ev.opens_report:
            cur = None  # torch_npu prints the call, then its banner: a new call after a banner is a new failure
        if cur is not None and ev.line <= cur.end_line + _MERGE_GAP and ev.end_line >= cur.line - _MERGE_GAP and _same_process(cur, ev):
            _merge(cur, ev)
            return []
        done = self.flush()
        self.current = ev
        return done

    def flush(self) -> List[Event]:
        cur, self.current = self.current, None
        return [_finish(cur)] if cur is not None else []


def _finish(ev: Event) -> Event:
    # a launcher's pid stands for the process when the record itself names none
    if ev.pid is None and ev.worker_pid is not None:
        ev.pid = ev.worker_pid
    return ev


def _same_process(a: Event, b: Event) -> bool:
    if a.pid is not None and b.pid is not None and a.pid != b.pid:
        return False
    if a.rank is not None and b.rank is not None and a.rank != b.rank:
        return False
    return True


def _merge(into: Event, ev: Event) -> None:
    # the record that tells more becomes the headline: a CANN first error or a plog line beats a wrapper
    into.line = min(into.line, ev.line)
    into.end_line = max(into.end_line, ev.end_line)
    for attr in ("ts", "pid", "device", "rank", "module", "level", "oom", "first_error", "exc_type", "operator", "worker", "worker_pid"):
        if getattr(into, attr) is None and getattr(ev, attr) is not None:
            setattr(into, attr, getattr(ev, attr))
    seen = {c.key for c in into.codes}
    into.codes.extend(c for c in ev.codes if c.key not in seen)
    into.hccl.extend(ev.hccl)
    into.has_banner = into.has_banner or ev.has_banner
    into.detail = (into.detail + "\n" + ev.text + ("\n" + ev.detail if ev.detail else "")).strip()[:20000]
    have = {ln for ln, _ in into.evidence}
    for ln, t in ev.evidence:
        if ln not in have and len(into.evidence) < _MAX_EVIDENCE:
            into.evidence.append((ln, t))
            have.add(ln)
    into.evidence.sort()


def _attach(wrapped: WrappedOom, rec: OomRecord, lineno: int, text: str, asm: "_Assembler") -> bool:
    """Give a message joined over lines to the event that holds its first line; False if none does."""
    ev = asm.current
    if ev is None or not ev.line <= wrapped.start <= ev.end_line:
        return False
    ev.oom = rec
    if rec.device is not None and ev.device is None:
        ev.device = rec.device
    ev.end_line = max(ev.end_line, lineno)
    if len(ev.evidence) < _MAX_EVIDENCE:
        ev.evidence.append((lineno, text.strip()))
    return True


def _console_events(source: Source, lines: Iterator[Tuple[int, bytes]], claim: Optional[Claim] = None) -> Iterator[Event]:
    cann = CannBlockParser()
    tbs = TracebackParser()
    asm = _Assembler(source)
    wrapped = WrappedOom()
    stack = StackLine()
    stated = 0
    ctx: Dict[int, Tuple[Optional[int], Optional[int], Optional[str]]] = {}  # lineno -> prefix pid/rank/worker
    for lineno, raw in lines:
        raw_text = decode_line(raw)
        if raw_text.strip():
            source.last_line = (lineno, raw_text.strip())
            if lineno <= _CODE_LINE_MAX and _ECODE.search(raw_text):
                source.code_line = source.last_line
        for text_part in _split_escaped(raw_text):
            text, prefix = strip_prefixes(text_part)
            if prefix:
                ctx[lineno] = (prefix.pid, prefix.rank, prefix.worker)
                if len(ctx) > 256:
                    ctx.pop(next(iter(ctx)))
            records: List[Event] = []
            for block in cann.feed(lineno, text):
                records.append(_block_event(source, block, ctx))
            for tb in tbs.feed(lineno, text):
                ev = _traceback_event(source, tb, ctx)
                if ev is not None:
                    records.append(ev)
            ev = None
            whole = wrapped.feed(text)
            if whole is not None and not _attach(wrapped, whole, lineno, text, asm):
                # the message's first line was no event by itself (a retyped head): the joined text is
                ev = _line_event(source, wrapped.start, wrapped.text, prefix.pid, prefix.rank, prefix.worker, claim, prefix.level)
                if ev is not None:
                    ev.end_line = lineno
                else:
                    whole = None
            if whole is None:
                ev = _line_event(source, lineno, text, prefix.pid, prefix.rank, prefix.worker, claim, prefix.level)
            if ev is not None:
                records.append(ev)
            for rec in sorted(records, key=lambda e: e.line):
                for done in asm.add(rec):
                    yield done
            if whole is None:
                wrapped.begin(lineno, text)
            if stated < _MAX_STACK_FACTS:
                for fact in stack.read(lineno, text):
                    stated += 1  # a version the input names: judged with the others at the end (triage.stack)
                    yield Event(kind="stack", text=fact.text, file=source.display, line=lineno, origin=source.origin,
                                module=fact.component, detail=fact.version)
    for block in cann.close():
        for done in asm.add(_block_event(source, block, ctx)):
            yield done
    for tb in tbs.close():
        ev = _traceback_event(source, tb, ctx)
        if ev is not None:
            for done in asm.add(ev):
                yield done
    yield from asm.flush()


_MAX_STACK_FACTS = 64
_QUIET = ("INFO", "DEBUG")  # a framework logger's levels for lines that report no failure
_CODE_LINE_MAX = 200  # a paste's lines (triage.engine.PASTE_MAX_LINES)
_ECODE = lazy(r"\b[EW][0-9A-Z]\d{4}\b")


def _split_escaped(text: str) -> List[str]:
    text = unwrap(text)
    if "\n" in text:  # a Docker record whose log held several lines
        return [p for part in text.split("\n") for p in _split_escaped(part)]
    # JSON-escaped tracebacks put a whole error on one line with literal \n between its lines
    if "\\n" in text and ("[ERROR]" in text or "Error" in text or "error code" in text):
        return [part.replace('\\"', '"').replace("\\t", "\t") for part in text.split("\\n")]
    return [text]


def _prefix_ctx(ctx: Dict[int, Tuple[Optional[int], Optional[int], Optional[str]]], line: int) -> Tuple[Optional[int], Optional[int], Optional[str]]:
    return ctx.get(line, (None, None, None))


def _block_event(source: Source, block: CannBlock, ctx: Dict[int, Tuple[Optional[int], Optional[int], Optional[str]]]) -> Event:
    ppid, prank, worker = _prefix_ctx(ctx, block.start_line)
    head = block.lines[0][1].strip() if block.lines else block.code
    first = block.first_error
    codes = find_codes(block.text)
    if not any(c.value == block.code for c in codes):
        codes.insert(0, Code("cann", block.code, block.code))
    else:
        codes.sort(key=lambda c: c.value != block.code)
    text = head if not block.header else f"{block.code}: {first}" if first else head
    ev = Event(kind="console", text=text, file=source.display, line=block.start_line, end_line=block.end_line,
               origin=source.origin, ts=block.ts, pid=block.pid, worker_pid=ppid, rank=prank, worker=worker,
               codes=codes, detail=block.text[:20000], first_error=f"{block.code} {first}" if first else block.code)
    for ln, t in block.lines[:8]:
        ev.evidence.append((ln, t.strip()))
    for line in [first] + block.traceback[:20]:
        h = parse_hccl_line(line) if line else None
        if h is not None:
            ev.hccl.append(h)
    if "remote rank" in block.text and not ev.hccl:
        h = parse_hccl_line(block.text.replace("\n", " "))
        if h is not None:
            ev.hccl.append(h)
    ev.oom = parse_oom(block.text) if "memory" in block.text else None
    return ev


def _generic_event(source: Source, lineno: int, text: str, ppid: Optional[int], prank: Optional[int], worker: Optional[str],
                   claim: Optional[Claim], level: Optional[str] = None) -> Optional[Event]:
    """A line no parser claims: an event when it has an error's shape or a KB entry explains it
    (on a line its logger calls INFO or DEBUG, an entry more specific than a class's words)."""
    stripped = text.strip()
    if not stripped or stripped.startswith(("File \"", "Traceback (most recent call last)")):
        return None  # traceback frames belong to the traceback parser
    if stripped.startswith("[EVENT]"):  # the device's event stream: only what the KB explains
        if claim is None or not claim(stripped, matched=True):
            return None
    elif level in _QUIET or level == "WARNING":
        # the logger says it is no failure: only what the knowledge base explains counts (at INFO or
        # DEBUG, more than a broad class's words: "... not supported - using ACL graph mode" is news)
        if claim is None or not claim(stripped, matched=True, specific=level in _QUIET):
            return None
    elif not (looks_like_error(stripped) or (claim is not None and claim(stripped, matched=True))):
        return None  # a line with no error's shape counts when an entry explains it, not for a shared word
    ev = Event(kind="console", text=stripped, file=source.display, line=lineno, end_line=lineno, origin=source.origin,
               worker_pid=ppid, rank=prank, worker=worker, codes=find_codes(stripped))
    m = _DEVICE.search(stripped)
    if m:
        ev.device = int(m.group(1)) if len(m.group(1)) < 6 else None
    ev.evidence.append((lineno, stripped))
    return ev


def _traceback_event(source: Source, tb: PyTraceback, ctx: Dict[int, Tuple[Optional[int], Optional[int], Optional[str]]]) -> Optional[Event]:
    if tb.exc_type is None and not tb.exc_message:
        return None
    ppid, prank, worker = _prefix_ctx(ctx, tb.exc_line or tb.end_line)
    line = tb.exc_line or tb.end_line
    text = tb.summary
    ev = Event(kind="console", text=text, file=source.display, line=line, end_line=line, origin=source.origin,
               worker_pid=ppid, rank=prank, worker=worker, codes=find_codes(text), exc_type=tb.exc_type, opens_report=True)
    last = tb.last_frame
    if last is not None:
        ev.detail = f'File "{last.file}", line {last.line}, in {last.func}'
        ev.evidence.append((tb.start_line, f"Traceback ({tb.frame_count} frames), last: {ev.detail}"))
    ev.evidence.append((line, text))
    ev.oom = parse_oom(text)
    return ev


def _line_event(source: Source, lineno: int, text: str, ppid: Optional[int], prank: Optional[int], worker: Optional[str],
                claim: Optional[Claim] = None, level: Optional[str] = None) -> Optional[Event]:
    """A single console line that is an error record by itself (or names a rank)."""
    if not text.strip():
        return None
    if "[" in text and "):" in text:
        rec = parse_plog_line(text)
        if rec is not None:
            ev = plog_event(source, lineno, text, rec, claim)
            if ev is not None:
                ev.worker_pid = ppid
                ev.rank = ev.rank if ev.rank is not None else prank
                ev.worker = worker
            return ev
    tn: Optional[TorchNpuRecord] = parse_torch_npu_line(text)
    # the message is often pasted from "Tried to allocate" on, without its head
    oom = parse_oom(text) if ("out of memory" in text or "Tried to allocate" in text) else None
    hrec = parse_hccl_line(text) if ("rank" in text or "Cluster Exception" in text) else None
    smi = ("dcmi module" in text or "npu-smi" in text) and "ret is" in text
    if tn is None and oom is None and hrec is None and not smi:
        return _generic_event(source, lineno, text, ppid, prank, worker, claim, level)
    if tn is not None and tn.kind == "hint" and tn.text == "":
        return None
    ev = Event(kind="console", text=text.strip(), file=source.display, line=lineno, end_line=lineno, origin=source.origin,
               worker_pid=ppid, rank=prank, worker=worker, codes=find_codes(text), oom=oom)
    if hrec is not None:
        ev.hccl.append(hrec)
    if tn is not None:
        if tn.kind in ("call", "aclnn", "async_inner", "device_fault"):
            ev.opens_report = True
        if tn.kind == "cpu_fallback":
            ev.fallback_op = tn.operator
            ev.level = "WARNING"
        if tn.kind in ("cpu_fallback", "cache_flush"):
            ev.standalone = True
        if tn.kind == "banner":
            ev.has_banner = True
            ev.pid = tn.pid
            ev.device = tn.device
            ev.rank = tn.rank if tn.rank is not None else prank
            ev.ts = tn.ts + ".000.000" if tn.ts else None
            ev.level = "ERROR"
        elif tn.kind in ("watchdog", "watchdog_exit"):
            ev.rank = tn.rank
        if tn.operator:
            ev.operator = tn.operator
        if tn.kind == "call" and tn.call_kind in ("HCCL",) and tn.code is not None:
            ev.codes = [c for c in ev.codes if not (c.family == "acl" and c.value == tn.code)]
    if oom is not None and oom.device is not None:
        ev.device = oom.device
    ev.evidence.append((lineno, text.strip()))
    return ev
