"""Events to incidents: group by process and time, pick what each incident is, order them.

An incident is one process's failure: the events of one process (``origin`` tree +
pid, else the file + rank) that are no more than ``GAP_S`` apart. Within it the
headline is found the way a person reads a plog: start at the first line that is not a
mere wrapper, and among what happened in the next seconds take the line that says the
most (a generic ``Task run failed`` gives way to the ``notify wait timeout`` reported
with it). Incidents are then linked: across ranks by ``ranks.analyse`` (HCCL's own
verdicts, then the first non-timeout error, then who waited for whom) and inside one
job by the knowledge base's causal edges; the root cause comes first.

Three refinements:
- a CPU-fallback warning is not part of any failure: each operator gets one incident
  (counted over processes and ranks) with the ``advisory`` role, placed after every
  failure of the input;
- context lines whose signal ``attach``es to a category (torch_npu's cache flushes) are
  summed into a note on that process's incident of the category (an out-of-memory
  error), with the first of them as evidence; without such an incident they become a
  job-level note, never an incident;
- a failure printed both on the console without a pid and in one process's plog (an
  out-of-memory error raised in Python and logged by the allocator) is one incident,
  kept on the plog side: see ``merge_console_duplicates``.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Tuple

from ..parsers.oom_text import classify as classify_oom
from .events import Event
from .knowledge import ROLE_ORDER, Knowledge, RuleRef, Verdict

GAP_S = 3600.0  # longer than HCCL_EXEC_TIMEOUT's default 1836 s, so a wait and its timeout stay together
WINDOW_S = 10.0  # lines reported together with the first failure
_MAX_UNTIMED_CAUSES = 64  # untimed incidents tried as causes of timed ones (a console log may hold thousands)
_MAX_EVENTS_KEPT = 60
_MAX_EVIDENCE = 8

Scope = Tuple[str, Optional[int], Optional[int]]  # (origin, pid, rank-when-no-pid)


@dataclass
class Attachment:
    """Context lines of one kind summed up on an incident (e.g. allocator cache flushes)."""

    signal: RuleRef
    count: int
    first: Optional[str]
    last: Optional[str]
    evidence: Tuple[str, int, str]

    def note(self) -> str:
        return self.signal.attach_note.format(count=self.count, first=self.first or "time not logged",
                                              last=self.last or "time not logged").strip()


@dataclass
class Incident:
    events: List[Event]
    verdicts: List[Verdict]
    headline: Event
    verdict: Verdict
    scope: Scope
    pid: Optional[int] = None
    device: Optional[int] = None
    rank: Optional[int] = None
    first_seen: Optional[str] = None
    last_seen: Optional[str] = None
    count: int = 0
    caused_by: Optional["Incident"] = None
    notes: List[str] = field(default_factory=list)
    synthetic: bool = False
    evidence_override: Optional[List[Tuple[str, int, str]]] = None
    title: Optional[str] = None  # this incident's own title (the signal's headline), else the verdict's
    attachments: List[Attachment] = field(default_factory=list)

    @property
    def role(self) -> str:
        return self.verdict.role

    @property
    def epoch(self) -> float:
        e = self.headline.epoch
        return e if e is not None else math.inf

    def codes(self) -> List[str]:
        out: List[str] = []
        for ev in [self.headline] + self.events:
            for c in ev.codes:
                if c.value not in out and c.family in ("acl", "cann", "torch_npu", "hccl", "runtime_inner", "ts", "npu_smi", "drv"):
                    out.append(c.value if c.family in ("acl", "cann", "torch_npu") else f"{c.family}:{c.value}")
        return out[:12]

    @property
    def display_title(self) -> str:
        return self.title or self.verdict.title

    def all_notes(self) -> List[str]:
        return self.notes + [a.note() for a in self.attachments]

    def evidence(self) -> List[Tuple[str, int, str]]:
        if self.evidence_override is not None:
            return self.evidence_override
        out: List[Tuple[str, int, str]] = []
        seen = set()
        room = _MAX_EVIDENCE - len(self.attachments)
        for ev in [self.headline] + sorted(self.events, key=_time_key):
            for ln, text in ev.evidence[: (6 if ev is self.headline else 2)]:
                key = (ev.file, ln)
                if key in seen or len(out) >= room:
                    continue
                seen.add(key)
                out.append((ev.file, ln, text[:600]))
        for att in self.attachments:
            if (att.evidence[0], att.evidence[1]) not in seen:
                out.append(att.evidence)
        return out


def _time_key(ev: Event) -> Tuple[float, str, int]:
    e = ev.epoch
    return (e if e is not None else math.inf, ev.file, ev.line)


def scope_events(events: List[Event], pid_origins: Dict[int, List[str]]) -> Dict[Scope, List[Event]]:
    """Events by the process they belong to; console events join the plog tree that holds their pid."""
    out: Dict[Scope, List[Event]] = {}
    for ev in events:
        origin = ev.origin
        if ev.pid is not None:
            trees = pid_origins.get(ev.pid, [])
            if ev.kind == "console" and len(trees) == 1:
                origin = trees[0]
            key: Scope = (origin, ev.pid, None)
        else:
            key = (origin, None, ev.rank)
        out.setdefault(key, []).append(ev)
    return out


def build_incidents(groups: Dict[Scope, List[Event]], knowledge: Knowledge, notes: Optional[List[str]] = None) -> List[Incident]:
    """Incidents of every scope, then one advisory incident per fallen-back operator.

    ``notes`` collects what context lines said where no incident could carry it.
    """
    incidents: List[Incident] = []
    fallbacks: Dict[str, List[Event]] = {}
    for scope, evs in groups.items():
        kept = []
        for e in evs:
            if e.fallback_op is not None:
                fallbacks.setdefault(e.fallback_op, []).append(e)
            elif e.kind != "hccl" or e.level == "ERROR":
                kept.append(e)
        if not kept:
            continue
        for part in _split_by_time(kept):
            inc = _make_incident(scope, part, knowledge, notes)
            if inc is not None:
                incidents.append(inc)
    for op, evs in fallbacks.items():
        incidents.append(_fallback_incident(op, evs, knowledge))
    _framework_reservation(incidents, groups, knowledge)
    return incidents


FRAMEWORK_RESERVATION = "oom.framework_reservation"


def _framework_reservation(incidents: List[Incident], groups: Dict[Scope, List[Event]], knowledge: Knowledge) -> None:
    """An out-of-memory error read as fragmentation is capacity when the same input shows the
    framework reserving its own share of the device (the setting, not the allocator, is the fix)."""
    origins = {scope[0] for scope, evs in groups.items()
               for e in evs if e.fallback_op is None and knowledge.resolve(e).kb_id == FRAMEWORK_RESERVATION}
    if not origins:
        return

    for inc in incidents:
        oom = inc.headline.oom
        if inc.verdict.category != "oom_fragmentation" or oom is None or inc.scope[0] not in origins:
            continue
        category = classify_oom(oom, framework_reserved=True)
        if category != inc.verdict.category:
            inc.verdict = Verdict(**{**inc.verdict.__dict__, "category": category})
            inc.notes.append("the framework reserves its own share of the device (its memory-utilization / "
                             "memory-fraction setting is in the input): the cached-but-unused memory is not the cause; "
                             "lower that share or the KV cache")


def _split_by_time(evs: List[Event]) -> List[List[Event]]:
    timed = sorted((e for e in evs if e.epoch is not None), key=_time_key)
    untimed = [e for e in evs if e.epoch is None]
    parts: List[List[Event]] = []
    last = None
    for ev in timed:
        t = ev.epoch
        assert t is not None
        if last is None or t - last > GAP_S:
            parts.append([])
        parts[-1].append(ev)
        last = t
    if untimed:
        if parts:
            parts[-1].extend(untimed)  # a console error without a time belongs to the process's last failure
        else:
            parts.append(untimed)
    return parts


def _make_incident(scope: Scope, evs: List[Event], knowledge: Knowledge, notes: Optional[List[str]] = None) -> Optional[Incident]:
    verdicts = [knowledge.resolve(e) for e in evs]
    pairs = [(e, v) for e, v in zip(evs, verdicts) if v.role != "context"]
    attachable = [(e, v) for e, v in zip(evs, verdicts) if v.role == "context" and v.signal.attach_categories]
    if not pairs:
        if attachable and notes is not None:
            _note_unattached(scope, attachable, notes)
        return None
    pairs.sort(key=lambda p: _time_key(p[0]))
    main = [p for p in pairs if p[1].role in ("root", "symptom")] or pairs
    anchor_t = main[0][0].epoch
    window = [p for p in main if anchor_t is None or p[0].epoch is None or p[0].epoch - anchor_t <= WINDOW_S]
    headline, verdict = max(window, key=lambda p: (p[1].weight, -_time_key(p[0])[0]))
    # another line of the same failure that the KB names as the cause of the headline's entry
    # explains it (a communication kernel whose fault reads like a plain AI Core exception)
    cause = next((p for p in main if knowledge.explains(p[1].kb_id, verdict.kb_id)), None)
    if cause is not None:
        headline, verdict = cause
    inc = Incident(
        events=[e for e, _ in pairs][:_MAX_EVENTS_KEPT], verdicts=[v for _, v in pairs][:_MAX_EVENTS_KEPT],
        headline=headline, verdict=verdict, scope=scope,
    )
    inc.count = sum(e.count for e, _ in pairs)
    inc.pid = scope[1] if scope[1] is not None else _first(e.pid for e, _ in pairs)
    inc.rank = _first([headline.rank] + [e.rank for e, _ in pairs])
    inc.device = _first([headline.device] + [e.device for e, _ in pairs])
    times = [e.ts for e, _ in pairs if e.ts] + [e.last_ts for e, _ in pairs if e.last_ts]
    inc.first_seen = min(times) if times else None
    inc.last_seen = max(times) if times else None
    if attachable:
        _attach(inc, attachable)
    return inc


def _attach(inc: Incident, context: List[Tuple[Event, Verdict]]) -> None:
    """Sum up context lines that tell something about this incident (only those before its headline)."""
    limit = inc.headline.epoch
    by_signal: Dict[str, List[Event]] = {}
    signals: Dict[str, RuleRef] = {}
    for ev, v in context:
        if inc.verdict.category not in v.signal.attach_categories:
            continue
        if limit is not None and ev.epoch is not None and ev.epoch > limit:
            continue
        by_signal.setdefault(v.signal.id, []).append(ev)
        signals[v.signal.id] = v.signal
    for sid, evs in by_signal.items():
        evs.sort(key=_time_key)
        first = evs[0]
        stamps = [e.last_ts or e.ts for e in evs if e.last_ts or e.ts]
        inc.attachments.append(Attachment(
            signal=signals[sid], count=sum(e.count for e in evs), first=first.ts,
            last=max(stamps) if stamps else None, evidence=(first.file, first.line, first.text[:600]),
        ))


def _note_unattached(scope: Scope, context: List[Tuple[Event, Verdict]], notes: List[str]) -> None:
    by_signal: Dict[str, int] = {}
    titles: Dict[str, str] = {}
    for ev, v in context:
        by_signal[v.signal.id] = by_signal.get(v.signal.id, 0) + ev.count
        titles[v.signal.id] = v.signal.title
    where = f"pid {scope[1]}" if scope[1] is not None else scope[0]
    for sid, n in by_signal.items():
        notes.append(f"{titles[sid]}: {n} line(s) in {where}, with no failure of that process near them")


def _fallback_incident(op: str, evs: List[Event], knowledge: Knowledge) -> Incident:
    """One operator that ran on the CPU, counted over every process and rank that said so."""
    evs = sorted(evs, key=_time_key)
    verdicts = [knowledge.resolve(e) for e in evs]
    verdict = verdicts[0]
    if verdict.role != "advisory":  # the parser saw the warning form: whatever matched, the job went on
        verdict = Verdict(**{**verdict.__dict__, "role": "advisory"})
    head = evs[0]
    inc = Incident(events=evs[:_MAX_EVENTS_KEPT], verdicts=verdicts[:_MAX_EVENTS_KEPT], headline=head, verdict=verdict,
                   scope=(head.origin, None, None))
    inc.count = sum(e.count for e in evs)
    template = verdict.signal.headline
    inc.title = template.format(op=op) if template else None
    ranks = sorted({e.rank for e in evs if e.rank is not None})
    pids = sorted({e.pid for e in evs if e.pid is not None})
    inc.rank = ranks[0] if len(ranks) == 1 else None
    inc.pid = pids[0] if len(pids) == 1 else None
    devices = {e.device for e in evs if e.device is not None}
    inc.device = devices.pop() if len(devices) == 1 else None
    if len(ranks) > 1:
        inc.notes.append(f"reported by {len(ranks)} ranks ({', '.join(map(str, ranks))})")
    elif len(pids) > 1:
        inc.notes.append(f"reported by {len(pids)} processes")
    times = [e.ts for e in evs if e.ts]
    inc.first_seen = min(times) if times else None
    inc.last_seen = max(times) if times else None
    return inc


def relate_fallbacks(incidents: List[Incident]) -> None:
    """Cross-reference a fallen-back operator and a failure that names it (the CPU had no kernel either)."""
    advisories = [i for i in incidents if i.role == "advisory" and i.headline.fallback_op]
    if not advisories:
        return
    for fail in incidents:
        if fail.role == "advisory" or fail.synthetic:
            continue
        text = fail.headline.match_text
        for adv in advisories:
            op = adv.headline.fallback_op
            if f"'{op}'" in text or f" {op} " in text:
                fail.notes.append(f"torch_npu had sent {op} to the CPU as a fallback before this failure "
                                  f"({adv.headline.file}:{adv.headline.line})")
                adv.notes.append("the fallback did not hold: a failure of this operator is reported above")


def _oom_key(inc: Incident) -> Optional[Tuple[object, ...]]:
    oom = inc.headline.oom
    if oom is None or oom.requested is None:
        return None  # without numbers two reports cannot be told to be the same one
    return (oom.kind, oom.device, oom.requested, oom.total, oom.allocated, oom.active, oom.free, oom.reserved)


def merge_console_duplicates(incidents: List[Incident]) -> List[Incident]:
    """Fold a pid-less console report into the one process incident that reports the same failure.

    Today that is an out-of-memory error with the same numbers (the exception text and
    the allocator's plog line); when several processes match, nothing is merged and the
    console report simply sorts after them (it has no time).
    """
    keyed: Dict[Tuple[object, ...], List[Incident]] = {}
    for inc in incidents:
        key = _oom_key(inc) if inc.pid is not None and not inc.synthetic else None
        if key is not None:
            keyed.setdefault(key, []).append(inc)
    if not keyed:
        return incidents
    out: List[Incident] = []
    for inc in incidents:
        key = _oom_key(inc) if inc.pid is None and inc.headline.kind == "console" else None
        owners = [o for o in keyed.get(key, []) if _compatible(o, inc)] if key is not None else []
        if len(owners) != 1:
            out.append(inc)
            continue
        owner = owners[0]
        owner.events = (owner.events + inc.events)[:_MAX_EVENTS_KEPT]
        owner.verdicts = (owner.verdicts + inc.verdicts)[:_MAX_EVENTS_KEPT]
        owner.count += inc.count
        have = {a.signal.id for a in owner.attachments}
        owner.attachments.extend(a for a in inc.attachments if a.signal.id not in have)
        owner.notes.append(f"also reported on the console ({inc.headline.file}:{inc.headline.line})")
    return out


def _compatible(a: Incident, b: Incident) -> bool:
    for x, y in ((a.rank, b.rank), (a.device, b.device)):
        if x is not None and y is not None and x != y:
            return False
    return True


def _first(values) -> Optional[int]:
    for v in values:
        if v is not None:
            return v
    return None


def link_by_kb(incidents: List[Incident], knowledge: Knowledge) -> None:
    """An incident the KB says is an effect of an earlier one (within GAP_S) is attributed to it."""
    by_time = sorted((i for i in incidents if i.role != "advisory"), key=lambda i: i.epoch)
    # a line without a time (a compiler's message in a console paste) may be the cause of a timed one
    # of the same input: it counts as earlier (untimed incidents sort last, so they are not in by_time[:i])
    untimed = [i for i in by_time if i.epoch == math.inf and i.verdict.kb_id is not None][:_MAX_UNTIMED_CAUSES]
    for i, effect in enumerate(by_time):
        if effect.caused_by is not None or effect.verdict.kb_id is None:
            continue
        earlier = by_time[:i]
        if effect.epoch != math.inf:
            earlier = earlier + [u for u in untimed if u.scope[0] == effect.scope[0]]
        for cause in earlier:
            if cause is effect or cause.caused_by is effect:
                continue
            if cause.epoch != math.inf and effect.epoch - cause.epoch > GAP_S:
                continue
            if knowledge.explains(cause.verdict.kb_id, effect.verdict.kb_id):
                effect.caused_by = cause
                break


def order_incidents(incidents: List[Incident], first: Optional[Incident]) -> List[Incident]:
    """Root cause first: the job analysis's pick, then causes by role and time, then their effects,
    then the advisories (warnings the job survived), most repeated first."""
    advisories = [i for i in incidents if i.role == "advisory" and i is not first]
    failures = [i for i in incidents if i.role != "advisory"]
    roots = [i for i in failures if i.caused_by is None and i is not first]
    # a recognised cause outranks a line no rule explains, whatever their times
    roots.sort(key=lambda i: (not i.verdict.recognised and not i.synthetic, ROLE_ORDER.get(i.role, 9), i.epoch, -i.verdict.weight))
    ordered: List[Incident] = ([first] if first is not None else []) + roots
    placed = set(id(i) for i in ordered)
    rest = [i for i in failures if id(i) not in placed]
    rest.sort(key=lambda i: (i.epoch, ROLE_ORDER.get(i.role, 9)))
    advisories.sort(key=lambda i: (-i.count, i.epoch, i.headline.file, i.headline.line))
    return ordered + rest + advisories
