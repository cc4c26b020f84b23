"""The job analysis's methods (triage/ranks.py), one at a time, in the guide's order of evidence."""
from __future__ import annotations

from ascend_doctor.parsers.hccl import parse_hccl_line
from ascend_doctor.triage import ranks
from ascend_doctor.triage.events import Event
from ascend_doctor.triage.incidents import Incident
from ascend_doctor.triage.knowledge import RuleRef, Verdict
from ascend_doctor.triage.ranks import JobAnalysis, ProcessInfo, analyse

# https://github.com/hicann/hccl/blob/09300b70df9a031339f08e5f2ca06d7bf294d009/docs/zh/user_guide/fault_diagnosis/task_exec_stage.md
REMOTE = ("EI0002: [PID: 2969] 2025-10-11-15:09:34.713.335 The wait execution of the Notify register times out. Reason: The Notify "
          "register has not received the Notify record from remote rank: [24]. base information: [streamID:[109], taskID[38], "
          "taskType[Notify Wait], tag[AllReduce_group_name_1654NHRAllReduceComm_device], AlgType(level 0-1-2):[ring-NHR-NHR].]. "
          "task information: [notify id:[0x0000000000000213], stage:[0], remote rank:[24]]. group information: [group:[group_name_1654], "
          "user define information[Unspecified], rankSize[32], rankId[25 24]]")
CRIMER = ("[INFO] HCCL(686,python):2025-10-23-07:52:59.191.363 [heartbeat.cc:951] [8970][TaskExecStage][HeartbeatAbnormal]local rank "
          "[127.10.0.1/1]: crimer rank [127.10.0.2/2] status[LOST] by informer rank [127.10.0.3/3]")


def _incident(rank, role, ts, text=REMOTE):
    rec = parse_hccl_line(text)
    ev = Event(kind="plog", text=text, file=f"rank{rank}.log", line=1, origin="test", ts=ts, rank=rank,
               hccl=[rec] if rec is not None else [])
    verdict = Verdict(role=role, category="hccl_comm", weight=50, title=f"{role} of rank {rank}", cause="", fix_text="",
                      fix_commands=[], signal=RuleRef("test.rule", "test"))
    return Incident(events=[ev], verdicts=[verdict], headline=ev, verdict=verdict, scope=(f"rank{rank}.log", None, rank), rank=rank)


def _evidence(incidents, processes=None):
    return ranks._evidence(incidents, [], processes or {})


def test_methods_in_the_guides_order():
    assert [m.__name__ for m in ranks._METHODS] == [
        "_by_hccl_verdict", "_by_first_error", "_incomplete", "_by_remote_rank", "_by_silent_rank", "_by_earliest_timeout"]


def test_every_method_declines_without_evidence():
    for method in ranks._METHODS:
        job = JobAnalysis()
        assert method(_evidence([]), job) is False
        assert job == JobAnalysis()


def test_evidence_gathers_ranks_roles_and_records():
    a, b = _incident(0, "symptom", "2025-10-11-15:09:34.713.335"), _incident(1, "root", "2025-10-11-15:09:30.000.000")
    ev = _evidence([a, b], {("h", 9): ProcessInfo(rank=7)})
    assert ev.ranks == {0, 1, 7} and ev.symptoms == [a] and ev.causes == [b]
    assert [r.kind for _, r in ev.records] == ["remote_rank", "remote_rank"]
    assert ev.by_rank == {0: [a], 1: [b]}


def test_first_error_beats_the_named_peer():
    waiting = _incident(0, "symptom", "2025-10-11-15:09:34.713.335")
    failed = _incident(3, "root", "2025-10-11-15:09:40.000.000", text="plain failure")
    job = analyse([waiting, failed], [], {})
    assert (job.method, job.first_rank, job.first) == ("first_error", 3, failed)
    assert waiting.caused_by is failed


def test_remote_rank_names_the_peer_and_makes_its_incident():
    waiting = [_incident(r, "symptom", "2025-10-11-15:09:34.713.335") for r in (0, 1)]
    ev, job = _evidence(waiting), JobAnalysis()
    assert ranks._by_remote_rank(ev, job) is True
    assert (job.method, job.first_rank) == ("remote_rank", 24)
    assert job.first.synthetic and job.first.rank == 24 and job.reason.startswith("2 waiting report(s) name rank 24")


def test_hccl_verdict_comes_first():
    waiting = _incident(0, "symptom", "2025-10-11-15:09:34.713.335")
    heartbeat = _incident(1, "symptom", "2025-10-23-07:52:59.191.363", text=CRIMER)
    job = analyse([waiting, heartbeat], [], {})
    assert (job.method, job.first_rank) == ("hccl_verdict", 2)


def test_silent_rank_then_earliest_timeout():
    a = _incident(0, "symptom", "2025-10-11-15:09:34.000.000", text="timeout")
    b = _incident(1, "symptom", "2025-10-11-15:09:30.000.000", text="timeout")
    job = analyse([a, b], [], {("h", 5): ProcessInfo(rank=2)})
    assert (job.method, job.first_rank, job.silent_ranks) == ("silent_rank", 2, [2])
    job = analyse([a, b], [], {})
    assert (job.method, job.first_rank) == ("earliest_timeout", 1)


def test_one_waiting_process_alone_is_incomplete():
    job = analyse([_incident(0, "symptom", "2025-10-11-15:09:34.000.000", text="timeout")], [], {})
    assert job.method == "incomplete" and job.first_rank is None
