"""The triage run: inputs -> events -> incidents -> root cause, with what was read and skipped.

Memory stays flat however much is read: files are streamed (see ``reader``), repeated
errors are folded into one event with a count, the number of distinct events kept is
capped, and only small per-process tables (rank, device) grow with the number of
processes.
"""
from __future__ import annotations

import io
import time
from dataclasses import dataclass, field
from typing import BinaryIO, Dict, List, Optional, Tuple

from ..parsers.codes import find_codes
from ..parsers.stack_text import StackFact
from .events import Event, extract, sniff_plog
from .incidents import Incident, build_incidents, link_by_kb, merge_console_duplicates, order_incidents, relate_fallbacks, scope_events
from .knowledge import Knowledge
from .ranks import JobAnalysis, ProcessInfo, analyse
from .reader import Counter, looks_binary
from .sources import InputError, Skipped, Source, Walk, os_error_reason, tar_members, walk_inputs
from .stack import Located, latest, place
from .stack import judge as judge_stack

MAX_DISTINCT_EVENTS = 20000


@dataclass
class Stats:
    files: int = 0
    bytes: int = 0
    lines: int = 0
    events: int = 0
    seconds: float = 0.0
    truncated_lines: int = 0
    dropped_events: int = 0
    skipped: List[Skipped] = field(default_factory=list)
    skipped_count: int = 0

    def to_json(self) -> Dict[str, object]:
        return {
            "files": self.files, "bytes": self.bytes, "lines": self.lines, "events": self.events,
            "seconds": round(self.seconds, 3), "truncated_lines": self.truncated_lines,
            "dropped_events": self.dropped_events, "skipped_count": self.skipped_count,
            "skipped": [{"path": s.path, "reason": s.reason} for s in self.skipped],
        }


@dataclass
class TriageReport:
    stats: Stats
    incidents: List[Incident]
    job: JobAnalysis


class _Peeked(io.RawIOBase):
    """A stream whose first bytes were already read for sniffing."""

    def __init__(self, head: bytes, rest: BinaryIO) -> None:
        self._head = head
        self._rest = rest

    def readable(self) -> bool:
        return True

    def read(self, n: int = -1) -> bytes:  # type: ignore[override]
        if self._head:
            if n is None or n < 0 or n >= len(self._head):
                head, self._head = self._head, b""
                more = self._rest.read(n - len(head)) if n is not None and n > len(head) else (self._rest.read() if n is None or n < 0 else b"")
                return head + (more or b"")
            head, self._head = self._head[:n], self._head[n:]
            return head
        return self._rest.read(n)


class _Collector:
    def __init__(self, stats: Stats, claim=None) -> None:
        self.stats = stats
        self.claim = claim
        self.events: Dict[Tuple[str, Optional[int], Optional[int], str], Event] = {}
        self.hccl_context: List[Event] = []
        self.processes: Dict[Tuple[str, int], ProcessInfo] = {}
        self.pid_origins: Dict[int, List[str]] = {}
        self.starts: Dict[Tuple[str, int], List[float]] = {}  # log-framework start times per process
        self.stack: List[Located] = []  # versions the input names (triage.stack judges them)

    def add(self, ev: Event) -> None:
        if ev.kind == "stack":
            if len(self.stack) < 256:
                self.stack.append((ev.file, StackFact(ev.module or "", ev.detail, ev.line, ev.text)))
            return
        if ev.kind == "marker":  # a process (re)start: not an error, but it bounds which errors count
            if ev.pid is not None and ev.epoch is not None and len(self.starts.setdefault((ev.origin, ev.pid), [])) < 64:
                self.starts[(ev.origin, ev.pid)].append(ev.epoch)
            return
        self.stats.events += 1
        if ev.pid is not None and ev.kind != "console":
            trees = self.pid_origins.setdefault(ev.pid, [])
            if ev.origin not in trees and len(trees) < 8:
                trees.append(ev.origin)
        self._learn(ev)
        if ev.kind == "hccl" and ev.level != "ERROR":
            if len(self.hccl_context) < 5000 and any(r.kind != "rank_map" for r in ev.hccl):
                self.hccl_context.append(ev)
            return
        key = (ev.origin, ev.pid, ev.rank if ev.pid is None else None, ev.signature())
        seen = self.events.get(key)
        if seen is not None:
            seen.count += 1
            if ev.ts and (seen.last_ts is None or ev.ts > seen.last_ts):
                seen.last_ts = ev.ts
            if ev.ts and seen.ts and ev.ts < seen.ts:  # files are not read in time order: keep the earliest
                ev.count, ev.last_ts = seen.count, seen.last_ts
                self.events[key] = ev
            return
        if len(self.events) >= MAX_DISTINCT_EVENTS:
            self.stats.dropped_events += 1
            return
        self.events[key] = ev

    def merge(self, other: "_Collector") -> None:
        """Take in what another collector read (the other half of a tree read on a second core)."""
        st, ot = self.stats, other.stats
        st.files += ot.files
        st.bytes += ot.bytes
        st.lines += ot.lines
        st.events += ot.events
        st.truncated_lines += ot.truncated_lines
        st.dropped_events += ot.dropped_events
        for key, ev in other.events.items():
            seen = self.events.get(key)
            if seen is None:
                if len(self.events) >= MAX_DISTINCT_EVENTS:
                    st.dropped_events += ev.count
                    continue
                self.events[key] = ev
                continue
            count = seen.count + ev.count
            last = max((t for t in (seen.last_ts, ev.last_ts, seen.ts, ev.ts) if t), default=None)
            if ev.ts and seen.ts and ev.ts < seen.ts:  # keep the earliest occurrence as the event
                self.events[key] = seen = ev
            seen.count, seen.last_ts = count, last
        room = 5000 - len(self.hccl_context)
        self.hccl_context.extend(other.hccl_context[:max(room, 0)])
        for key, info in other.processes.items():
            mine = self.processes.setdefault(key, ProcessInfo())
            for attr in ("rank", "device", "ip", "rank_size"):
                if getattr(mine, attr) is None and getattr(info, attr) is not None:
                    setattr(mine, attr, getattr(info, attr))
        for pid, trees in other.pid_origins.items():
            mine_trees = self.pid_origins.setdefault(pid, [])
            for tree in trees:
                if tree not in mine_trees and len(mine_trees) < 8:
                    mine_trees.append(tree)
        for key, times in other.starts.items():
            self.starts.setdefault(key, []).extend(times[:64])
        self.stack.extend(other.stack[:max(256 - len(self.stack), 0)])

    def _learn(self, ev: Event) -> None:
        if ev.pid is None:
            return
        info = self.processes.setdefault((ev.origin, ev.pid), ProcessInfo())
        for rec in ev.hccl:
            if rec.kind == "rank_map" and rec.rank is not None:
                info.rank = rec.rank
                if rec.device is not None and info.device is None:
                    info.device = rec.device
                if rec.rank_size:
                    info.rank_size = rec.rank_size
        if ev.rank is not None and info.rank is None:
            info.rank = ev.rank
        if ev.device is not None and info.device is None:
            info.device = ev.device


def triage_paths(paths: List[str], stdin: Optional[BinaryIO] = None, knowledge: Optional[Knowledge] = None) -> TriageReport:
    """Triage files, directories, archives and ``-`` (stdin). Raises InputError for a missing path."""
    start = time.monotonic()
    walk = walk_inputs(paths, stdin=stdin)
    return triage_walk(walk, knowledge, start)


def triage_walk(walk: Walk, knowledge: Optional[Knowledge] = None, start: Optional[float] = None) -> TriageReport:
    """Triage sources already chosen (e.g. files read through a Host by the logs check)."""
    start = time.monotonic() if start is None else start
    stats = Stats()
    knowledge = knowledge or Knowledge()
    col = _Collector(stats, knowledge.mentions)
    mine, theirs = _split_for_two_cores(walk.sources)
    helper = _start_helper(theirs, knowledge) if theirs else None
    _read_sources(mine if helper is not None else walk.sources, col, walk)
    if helper is not None:
        other = helper.result()
        if other is None:  # the helper failed: read its share here, nothing is lost
            _read_sources(theirs, col, walk)
        else:
            collected, skipped, skipped_count = other
            col.merge(collected)
            for sk in skipped:
                walk.skip(sk.path, sk.reason)
            walk.skipped_count += max(skipped_count - len(skipped), 0)
    # the order the inputs were given in, whoever read them (stable: within a file, reading order)
    index = {src.display: i for i, src in enumerate(walk.sources)}
    col.hccl_context.sort(key=lambda e: index.get(e.file, len(index)))
    in_order = sorted(col.events.values(), key=lambda e: index.get(e.file, len(index)))
    quiet_notes: List[str] = []
    events = _drop_before_restart(in_order, col, quiet_notes)
    if not events:
        events = _paste_fallback(walk, stats)
    _apply_process_info(events, col)
    groups = scope_events(events, col.pid_origins)
    incidents = build_incidents(groups, knowledge, quiet_notes)
    for inc in incidents:
        info = col.processes.get((inc.scope[0], inc.pid)) if inc.pid is not None else None
        if info is not None:
            inc.rank = inc.rank if inc.rank is not None else info.rank
            inc.device = inc.device if inc.device is not None else info.device
    incidents = merge_console_duplicates(incidents)
    relate_fallbacks(incidents)
    # advisories (warnings the job survived) take no part in finding the rank that failed
    job = analyse([i for i in incidents if i.role != "advisory"], col.hccl_context, col.processes)
    job.notes.extend(quiet_notes[:20])
    link_by_kb(incidents, knowledge)
    ordered = order_incidents(incidents + ([job.first] if job.first is not None and job.first.synthetic else []), job.first)
    named = judge_stack(latest(col.stack, index), knowledge) if col.stack else None
    if named is not None:
        ordered = place(named, ordered)
    stats.skipped = walk.skipped
    stats.skipped_count = walk.skipped_count
    stats.seconds = time.monotonic() - start
    return TriageReport(stats=stats, incidents=ordered, job=job)


def _drop_before_restart(events: List[Event], col: "_Collector", notes: List[str]) -> List[Event]:
    """A process whose run log shows its logging starting twice was resumed in place: its errors from
    before the last start belong to the run that was abandoned, not to the failure being triaged."""
    last_start = {key: max(times) for key, times in col.starts.items() if len(times) > 1}
    if not last_start:
        return events
    kept: List[Event] = []
    dropped: Dict[Tuple[str, int], int] = {}
    for ev in events:
        key = next(((o, ev.pid) for o in [ev.origin] + col.pid_origins.get(ev.pid or -1, []) if (o, ev.pid) in last_start), None)
        if key is not None and ev.epoch is not None and ev.epoch < last_start[key]:
            dropped[key] = dropped.get(key, 0) + ev.count
            continue
        kept.append(ev)
    for (origin, pid), n in dropped.items():
        notes.append(f"pid {pid} restarted in place; {n} error line(s) from before its last start were left out")
    return kept


PASTE_MAX_LINES = 200


def _paste_fallback(walk: Walk, stats: Stats) -> List[Event]:
    """A short paste (text piped to stdin) in which nothing was recognised still gets an answer: its
    last line, as an unrecognised error. Someone who pastes a few lines into triage is asking about
    them, and "no incidents" would tell them nothing is wrong. Files and trees keep "no incidents":
    a clean log is a real answer."""
    pastes = [s for s in walk.sources if s.display == "<stdin>"]
    if len(walk.sources) != 1 or len(pastes) != 1 or stats.lines > PASTE_MAX_LINES:
        return []
    src = pastes[0]
    if src.last_line is None:
        return []
    # the last line that names a CANN error code says more than a closing sentence ("... timed out.")
    lineno, text = src.code_line or src.last_line
    ev = Event(kind="console", text=text[:2000], file=src.display, line=lineno, end_line=lineno, origin=src.origin,
               codes=find_codes(text[:2000]))
    ev.evidence.append((lineno, text[:600]))
    stats.events += 1
    return [ev]


def _apply_process_info(events: List[Event], col: _Collector) -> None:
    for ev in events:
        if ev.pid is None:
            continue
        info = col.processes.get((ev.origin, ev.pid))
        if info is None:
            for origin in col.pid_origins.get(ev.pid, []):
                info = col.processes.get((origin, ev.pid))
                if info is not None:
                    break
        if info is not None:
            if ev.rank is None:
                ev.rank = info.rank
            if ev.device is None:
                ev.device = info.device


def _read_sources(sources: List[Source], col: _Collector, walk: Walk) -> None:
    for src in sources:
        if src.kind_hint == "tar":
            for member, stream in tar_members(src, walk):
                _read_source(member, stream, col, walk)
            continue
        try:
            stream = src.open()
        except OSError as exc:
            walk.skip(src.display, os_error_reason(exc))
            continue
        try:
            _read_source(src, stream, col, walk)
        finally:
            if src.display != "<stdin>":
                stream.close()


# A large tree is read on two cores: a forked helper reads about half of the files (by size) while
# this process reads the rest, and the helper's collector is merged in (``_Collector.merge``). The
# split is by file, so each process sees whole files; what the engine decides afterwards does not
# depend on who read what. Small inputs, archives, stdin and machines with one core read here alone.
PARALLEL_MIN_BYTES = 64 << 20
HELPER_TIMEOUT_S = 3600.0


def _split_for_two_cores(sources: List[Source]) -> Tuple[List[Source], List[Source]]:
    import os

    plain = [s for s in sources if s.kind_hint != "tar" and s.display != "<stdin>" and s.size is not None]
    if (len(plain) < 2 or len(plain) != len(sources) or sum(s.size or 0 for s in plain) < PARALLEL_MIN_BYTES
            or (os.cpu_count() or 1) < 2 or not hasattr(os, "fork")):
        return list(sources), []
    mine: List[Source] = []
    theirs: List[Source] = []
    load = [0, 0]
    for src in sorted(plain, key=lambda s: -(s.size or 0)):  # greedy: biggest first to the lighter side
        side = 0 if load[0] <= load[1] else 1
        (mine if side == 0 else theirs).append(src)
        load[side] += src.size or 0
    order = {id(s): i for i, s in enumerate(sources)}
    mine.sort(key=lambda s: order[id(s)])
    theirs.sort(key=lambda s: order[id(s)])
    return mine, theirs


class _Helper:
    """A forked process reading some sources into its own collector; its result comes back pickled."""

    def __init__(self, process, conn) -> None:
        self.process, self.conn = process, conn

    def result(self):
        try:
            if self.conn.poll(HELPER_TIMEOUT_S):
                return self.conn.recv()
            return None
        except Exception:  # a broken helper (EOF, a bad pickle): the caller reads its share itself
            return None
        finally:
            self.conn.close()
            self.process.join(5)
            if self.process.is_alive():
                self.process.kill()
                self.process.join(5)


def _helper_main(sources: List[Source], knowledge: Knowledge, conn) -> None:
    stats = Stats()
    col = _Collector(stats, knowledge.mentions)
    walk = Walk()
    _read_sources(sources, col, walk)
    col.claim = None  # a bound method of the KB: not worth pickling back
    conn.send((col, walk.skipped, walk.skipped_count))
    conn.close()


def _start_helper(sources: List[Source], knowledge: Knowledge) -> Optional[_Helper]:
    try:
        import multiprocessing

        ctx = multiprocessing.get_context("fork")
        parent, child = ctx.Pipe(duplex=False)
        proc = ctx.Process(target=_helper_main, args=(sources, knowledge, child), daemon=True)
        proc.start()
        child.close()
        return _Helper(proc, parent)
    except (OSError, ValueError, ImportError):
        return None


def _read_source(src: Source, stream: BinaryIO, col: _Collector, walk: Walk) -> None:
    try:
        head = stream.read(1 << 16)
    except (OSError, EOFError) as exc:
        walk.skip(src.display, f"unreadable ({exc})")
        return
    if looks_binary(head):
        walk.skip(src.display, "binary data, not a text log")
        return
    counter = Counter()
    plog_mode = src.kind_hint in ("plog", "device") or sniff_plog(head[:16384])
    try:
        for ev in extract(src, _Peeked(head, stream), counter, plog_mode, col.claim):
            col.add(ev)
    except (OSError, EOFError) as exc:
        walk.skip(src.display, f"read stopped early ({exc})")
    if getattr(stream, "truncated", False):
        walk.skip(src.display, "read stopped early (compressed data ends before its end marker); read up to there")
    col.stats.files += 1
    col.stats.bytes += counter.bytes
    col.stats.lines += counter.lines
    col.stats.truncated_lines += counter.truncated


__all__ = ["triage_paths", "triage_walk", "TriageReport", "Stats", "InputError"]
