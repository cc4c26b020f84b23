"""Which rank failed first in a multi-rank job, and why we think so.

The order of evidence follows the HCCL fault-diagnosis guide (hicann/hccl,
https://github.com/hicann/hccl/blob/09300b70df9a031339f08e5f2ca06d7bf294d009/docs/zh/user_guide/fault_diagnosis/debug_thinking.md): HCCL's own verdict lines first (``crimer rank``, ``Cluster Exception Location``,
``CONNECT TIMEOUT DETECT RESULT``, ``Failed to connect agent``); then a rank whose first
failure is not a timeout (it failed, the others waited); then the peer that the
waiting ranks name (``remote rank: [N]``); then ranks that logged no error at all
(hung or exited); and last, when every rank only timed out, the earliest timeout.
Differences in the collective each rank was running (tag, index, count) are noted.
"""
from __future__ import annotations

from collections import Counter as Tally
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Set, Tuple

from ..parsers.hccl import HcclRecord
from .events import Event
from .incidents import Incident
from .knowledge import RuleRef, Verdict

# an incident the job analysis makes for a rank that failed without a word (the KB's entry for HCCL's verdict lines)
_VERDICT_RULE = RuleRef("class.hccl_verdict", "HCCL named the rank at fault")
_VERDICT_WEIGHT = 75
_CRIMER_ORDER = {"ERROR CQE": 0, "STUCK": 1, "LOST": 2}


@dataclass
class ProcessInfo:
    rank: Optional[int] = None
    device: Optional[int] = None
    ip: Optional[str] = None
    rank_size: Optional[int] = None


@dataclass
class JobAnalysis:
    first_rank: Optional[int] = None
    method: Optional[str] = None  # hccl_verdict | first_error | remote_rank | silent_rank | earliest_timeout
    reason: str = ""
    first: Optional[Incident] = None
    ranks_seen: List[int] = field(default_factory=list)
    silent_ranks: List[int] = field(default_factory=list)
    notes: List[str] = field(default_factory=list)

    def to_json(self) -> Dict[str, object]:
        return {
            "first_failing_rank": self.first_rank,
            "method": self.method,
            "reason": self.reason,
            "ranks_seen": self.ranks_seen,
            "silent_ranks": self.silent_ranks,
            "notes": self.notes,
        }


@dataclass
class _Evidence:
    """What the job analysis reads: the incidents by role and by rank, and every HCCL record."""

    incidents: List[Incident]
    processes: Dict[Tuple[str, int], ProcessInfo]
    ranks: Set[int]
    symptoms: List[Incident]
    causes: List[Incident]
    records: List[Tuple[Event, HcclRecord]]
    by_rank: Dict[int, List[Incident]]


def analyse(incidents: List[Incident], hccl_events: List[Event], processes: Dict[Tuple[str, int], ProcessInfo]) -> JobAnalysis:
    job = JobAnalysis()
    ev = _evidence(incidents, hccl_events, processes)
    job.ranks_seen = sorted(ev.ranks)
    _note_op_mismatch(job, ev.records)
    if not (len(ev.ranks) > 1 or ev.symptoms):
        return job
    # the methods in the guide's order of evidence; the first that names a rank (or gives up) decides
    for method in _METHODS:
        if method(ev, job):
            break
    if job.first is not None:
        for inc in ev.symptoms:
            if inc is not job.first and inc.caused_by is None:
                inc.caused_by = job.first
    if job.first_rank is not None and not job.silent_ranks:
        job.silent_ranks = sorted(r for r in ev.ranks if r not in ev.by_rank)
    return job


def _evidence(incidents: List[Incident], hccl_events: List[Event], processes: Dict[Tuple[str, int], ProcessInfo]) -> _Evidence:
    ranks: Set[int] = {i.rank for i in incidents if i.rank is not None}
    ranks |= {p.rank for p in processes.values() if p.rank is not None}
    records = [(ev, rec) for ev in hccl_events for rec in ev.hccl]
    records += [(ev, rec) for inc in incidents for ev in inc.events for rec in ev.hccl]
    by_rank: Dict[int, List[Incident]] = {}
    for inc in incidents:
        if inc.rank is not None:
            by_rank.setdefault(inc.rank, []).append(inc)
    return _Evidence(incidents=incidents, processes=processes, ranks=ranks,
                     symptoms=[i for i in incidents if i.role == "symptom"],
                     causes=[i for i in incidents if i.role == "root"], records=records, by_rank=by_rank)


def _by_hccl_verdict(ev: _Evidence, job: JobAnalysis) -> bool:
    """1. HCCL's own verdict lines name the rank."""
    verdict = _hccl_verdict(ev.records, ev.processes)
    if verdict is None:
        return False
    rank, text, event = verdict
    job.method, job.first_rank, job.reason = "hccl_verdict", rank, text
    job.first = _pick_or_make(ev.by_rank, rank, event, "HCCL's heartbeat/connection check names this rank", ev.symptoms)
    return True


def _by_first_error(ev: _Evidence, job: JobAnalysis) -> bool:
    """2. A rank whose failure is not a timeout, while others only waited."""
    if not (ev.causes and ev.symptoms):
        return False
    first = min(ev.causes, key=lambda i: (i.epoch, -i.verdict.weight))
    job.method, job.first_rank, job.first = "first_error", first.rank, first
    who = f"rank {first.rank}" if first.rank is not None else f"process {first.pid}"
    job.reason = f"{who} failed with '{first.verdict.title}' while {len(ev.symptoms)} other process(es) only timed out waiting"
    return True


def _incomplete(ev: _Evidence, job: JobAnalysis) -> bool:
    """Only one waiting process's logs, naming no peer: the culprit is not among the inputs."""
    if not (ev.symptoms and len(ev.ranks) <= 1 and len({i.scope for i in ev.incidents}) <= 1
            and not records_name_peer(ev.records)):
        return False
    job.method = "incomplete"
    job.reason = "only a waiting process's logs were given: the rank that failed first is not among the inputs; triage every rank's logs together"
    return True


def _by_remote_rank(ev: _Evidence, job: JobAnalysis) -> bool:
    """3. The peer the waiting ranks name."""
    if not ev.symptoms:
        return False
    targets = Tally(rec.rank for _, rec in ev.records if rec.kind in _PEER_KINDS and rec.rank is not None)
    if not targets:
        return False
    rank, n = targets.most_common(1)[0]
    job.method, job.first_rank = "remote_rank", rank
    job.reason = f"{n} waiting report(s) name rank {rank} as the peer that never arrived"
    event = next(e for e, rec in ev.records if rec.kind in _PEER_KINDS and rec.rank == rank)
    job.first = _pick_or_make(ev.by_rank, rank, event, "the ranks that timed out were waiting for this rank", ev.symptoms)
    return True


def _by_silent_rank(ev: _Evidence, job: JobAnalysis) -> bool:
    """4. A rank that logged nothing while the others timed out."""
    silent = sorted(r for r in ev.ranks if r not in ev.by_rank)
    if not (ev.symptoms and silent):
        return False
    job.method, job.first_rank, job.silent_ranks = "silent_rank", silent[0], silent
    job.reason = f"rank(s) {', '.join(map(str, silent))} logged no error while the others timed out: hung, exited, or never reached the collective"
    job.first = _synthetic(ev.symptoms[0], silent[0], job.reason, [])
    return True


def _by_earliest_timeout(ev: _Evidence, job: JobAnalysis) -> bool:
    """5. Every rank only timed out: the earliest one."""
    if not ev.symptoms:
        return False
    first = min(ev.symptoms, key=lambda i: i.epoch)
    job.method, job.first_rank, job.first = "earliest_timeout", first.rank, first
    job.reason = "every rank only timed out; this one timed out first"
    _note_spread(job, ev.symptoms)
    return True


_METHODS = (_by_hccl_verdict, _by_first_error, _incomplete, _by_remote_rank, _by_silent_rank, _by_earliest_timeout)
_PEER_KINDS = ("remote_rank", "transport")


def records_name_peer(records: List[Tuple[Event, HcclRecord]]) -> bool:
    return any(rec.kind in _PEER_KINDS and rec.rank is not None for _, rec in records)


def _hccl_verdict(records: List[Tuple[Event, HcclRecord]], processes: Dict[Tuple[str, int], ProcessInfo]) -> Optional[Tuple[Optional[int], str, Event]]:
    crimers = [(ev, r) for ev, r in records if r.kind == "crimer"]
    if crimers:
        ev, rec = min(crimers, key=lambda p: (_CRIMER_ORDER.get((p[1].status or "").upper(), 3), p[0].ts or ""))
        return rec.rank, f"HCCL heartbeat: crimer rank [{rec.peer}] status[{rec.status}]", ev
    clusters = [(ev, r) for ev, r in records if r.kind == "cluster_exception"]
    if clusters:
        ev, rec = min(clusters, key=lambda p: p[0].ts or "")
        rank = _rank_of_device(rec, processes)
        return rank, f"HCCL Cluster Exception Location [{rec.peer}] ({rec.status or 'exception'})", ev
    agents = [(ev, r) for ev, r in records if r.kind == "agents_missing"]
    if agents:
        ev, rec = agents[0]
        first = rec.ranks[0] if rec.ranks else None
        return first, f"HCCL rootInfo negotiation: agents {rec.ranks} never connected", ev
    pairs = [(ev, r) for ev, r in records if r.kind == "detect_pair"]
    if pairs:
        ev, rec = min(pairs, key=lambda p: p[0].ts or "")
        rank = _rank_of_device(rec, processes)
        return rank, f"HCCL connect-timeout detection: {rec.info.get('src')} could not connect to {rec.info.get('dst')}", ev
    return None


def _rank_of_device(rec: HcclRecord, processes: Dict[Tuple[str, int], ProcessInfo]) -> Optional[int]:
    if rec.device is None:
        return None
    ranks = {p.rank for p in processes.values() if p.device == rec.device and p.rank is not None}
    return ranks.pop() if len(ranks) == 1 else None


def _pick_or_make(by_rank: Dict[int, List[Incident]], rank: Optional[int], ev: Event, why: str, symptoms: List[Incident]) -> Optional[Incident]:
    if rank is not None and rank in by_rank:
        own = by_rank[rank]
        causes = [i for i in own if i.role == "root"]
        return min(causes or own, key=lambda i: i.epoch)
    if not symptoms:
        return None
    return _synthetic(symptoms[0], rank, why, [(ev.file, ev.line, ev.text)], ts=ev.ts)


def _synthetic(template: Incident, rank: Optional[int], why: str, evidence, ts: Optional[str] = None) -> Incident:
    who = f"Rank {rank}" if rank is not None else "A peer rank"
    verdict = Verdict(
        role="root", category="hccl_comm", weight=_VERDICT_WEIGHT, title=f"{who} stopped taking part in the collective",
        cause=f"{who} stopped taking part in the collective ({why})",
        fix_text=(f"{who} logged no error of its own here: it hung or died without a word (a stuck data loader or "
                  "checkpoint, a deadlock, an OOM-killed or crashed process). On its host, see whether the process is "
                  "alive and where it waits, read its console, and triage its own logs if they were not among these."),
        fix_commands=["ps -eo pid,stat,etime,cmd | grep -i python", "py-spy dump --pid <pid of that rank>",
                      "dmesg -T | grep -i -E 'killed process|out of memory' | tail", "ascend-doctor triage <that rank's ~/ascend/log> <its console log>"],
        signal=_VERDICT_RULE, confidence="medium",
    )
    inc = Incident(events=[], verdicts=[], headline=template.headline, verdict=verdict, scope=("<job>", None, rank),
                   rank=rank, synthetic=True, first_seen=ts or template.first_seen, last_seen=template.last_seen)
    inc.evidence_override = list(evidence) or [(template.headline.file, template.headline.line, template.headline.text[:600])]
    return inc


def _note_op_mismatch(job: JobAnalysis, records: List[Tuple[Event, HcclRecord]]) -> None:
    ops: Dict[int, Tuple[Optional[int], Optional[int]]] = {}
    for ev, rec in records:
        if rec.kind == "task_failed" and rec.op_index is not None:
            rank = ev.rank if ev.rank is not None else rec.rank
            if rank is not None:
                ops.setdefault(rank, (rec.op_index, rec.op_count))
    if len({v for v in ops.values()}) > 1:
        shown = ", ".join(f"rank {r}: index {i} count {c}" for r, (i, c) in sorted(ops.items()))
        job.notes.append(f"ranks were in different collectives ({shown}); check that every rank runs the same sequence and sizes")


def _note_spread(job: JobAnalysis, symptoms: List[Incident]) -> None:
    times = [i.epoch for i in symptoms if i.epoch != float("inf")]
    if len(times) > 1:
        spread = max(times) - min(times)
        job.notes.append(f"timeouts spread over {spread:.0f} s; if this exceeds HCCL_EXEC_TIMEOUT/HCCL_CONNECT_TIMEOUT a rank started the collective late")
