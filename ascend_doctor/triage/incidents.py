"""Events to incidents: group by process and time, pick what each incident is, order them.

An incident is one process's failure: the events of one process (``origin`` tree +
pid, else the file + rank) that are no more than ``GAP_S`` apart. Within it the
headline is found the way a person reads a plog: start at the first line that is not a
mere wrapper, and among what happened in the next seconds take the line that says the
most (a generic ``Task run failed`` gives way to the ``notify wait timeout`` reported
with it). Incidents are then linked: across ranks by ``ranks.analyse`` (HCCL's own
verdicts, then the first non-timeout error, then who waited for whom) and inside one
job by the knowledge base's causal edges; the root cause comes first.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Tuple

from .events import Event
from .knowledge import Knowledge, Verdict
from .signals import ROLE_ORDER

GAP_S = 3600.0  # longer than HCCL_EXEC_TIMEOUT's default 1836 s, so a wait and its timeout stay together
WINDOW_S = 10.0  # lines reported together with the first failure
_MAX_EVENTS_KEPT = 60
_MAX_EVIDENCE = 8

Scope = Tuple[str, Optional[int], Optional[int]]  # (origin, pid, rank-when-no-pid)


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

    def evidence(self) -> List[Tuple[str, int, str]]:
        if self.evidence_override is not None:
            return self.evidence_override
        out: List[Tuple[str, int, str]] = []
        seen = set()
        for ev in [self.headline] + sorted(self.events, key=_time_key):
            for ln, text in ev.evidence[: (6 if ev is self.headline else 2)]:
                key = (ev.file, ln)
                if key in seen:
                    continue
                seen.add(key)
                out.append((ev.file, ln, text[:600]))
                if len(out) >= _MAX_EVIDENCE:
                    return out
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


def build_incidents(groups: Dict[Scope, List[Event]], knowledge: Knowledge) -> List[Incident]:
    incidents: List[Incident] = []
    for scope, evs in groups.items():
        evs = [e for e in evs if e.kind != "hccl" or e.level == "ERROR"]
        if not evs:
            continue
        for part in _split_by_time(evs):
            inc = _make_incident(scope, part, knowledge)
            if inc is not None:
                incidents.append(inc)
    return incidents


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


def _make_incident(scope: Scope, evs: List[Event], knowledge: Knowledge) -> Optional[Incident]:
    verdicts = [knowledge.resolve(e) for e in evs]
    pairs = [(e, v) for e, v in zip(evs, verdicts) if v.role != "context"]
    if not pairs:
        return None
    pairs.sort(key=lambda p: _time_key(p[0]))
    main = [p for p in pairs if p[1].role in ("root", "symptom")] or pairs
    anchor_t = main[0][0].epoch
    window = [p for p in main if anchor_t is None or p[0].epoch is None or p[0].epoch - anchor_t <= WINDOW_S]
    headline, verdict = max(window, key=lambda p: (p[1].weight, -_time_key(p[0])[0]))
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
    return inc


def _first(values) -> Optional[int]:
    for v in values:
        if v is not None:
            return v
    return None


def link_by_kb(incidents: List[Incident], knowledge: Knowledge) -> None:
    """An incident the KB says is an effect of an earlier one (within GAP_S) is attributed to it."""
    by_time = sorted(incidents, key=lambda i: i.epoch)
    for i, effect in enumerate(by_time):
        if effect.caused_by is not None or effect.verdict.kb_id is None:
            continue
        for cause in by_time[:i]:
            if cause is effect or cause.caused_by is effect:
                continue
            if effect.epoch - cause.epoch > GAP_S:
                continue
            if knowledge.explains(cause.verdict.kb_id, effect.verdict.kb_id):
                effect.caused_by = cause
                break


def order_incidents(incidents: List[Incident], first: Optional[Incident]) -> List[Incident]:
    """Root cause first: the job analysis's pick, then causes by role and time, then their effects."""
    roots = [i for i in incidents if i.caused_by is None and i is not first]
    roots.sort(key=lambda i: (ROLE_ORDER.get(i.role, 9), i.epoch, -i.verdict.weight))
    ordered: List[Incident] = ([first] if first is not None else []) + roots
    placed = set(id(i) for i in ordered)
    rest = [i for i in incidents if id(i) not in placed]
    rest.sort(key=lambda i: (i.epoch, ROLE_ORDER.get(i.role, 9)))
    return ordered + rest
