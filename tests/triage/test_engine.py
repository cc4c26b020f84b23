"""The engine end to end: log trees written with runtime_sim's plog writer, real line bodies.

Line bodies are copied from real lines (sources beside each); pids, ranks and times are
the test's own so that several ranks can be laid out.
"""
from __future__ import annotations

import io
import json
from pathlib import Path
from types import SimpleNamespace
from typing import List, Optional

import pytest

from ascend_doctor.commands.triage import run_triage
from ascend_doctor.triage.engine import triage_paths
from ascend_doctor.triage.knowledge import Knowledge
from runtime_sim.plog.files import ProcessLog
from runtime_sim.plog.timefmt import SECOND

T0 = 1_760_000_000 * SECOND

# RT docs/zh/FAQ/如何通过plog日志定位Device侧异常.md
AICORE = ("stars_engine.cc:1321", "{tid} ProcLogicCqReport:[INIT][DEFAULT]Task run failed, device_id={dev}, stream_id=2, task_id=1, sqe_type=0(ffts), errType=0x1(task exception), sqSwStatus=0")
AICORE2 = ("davinic_kernel_task.cc:1143", "{tid} PrintErrorInfoForDavinciTask:[INIT][DEFAULT]Aicore kernel execute failed, device_id={dev}, stream_id=2, report_stream_id=2, task_id=1, flip_num=0, fault kernel_name=Add_ee98c6628030785f610b924ab1557b31_high_performance_210000000")
# HC docs/zh/user_guide/fault_diagnosis/task_exec_stage.md
HCCL_TIMEOUT = ("task_exception_handler.cc:908", " [{tid}][TaskExecStage][Timeout][Host]Task run failed, base information is streamID:[2], taskID[21], tag[AllReduce_127.10.0.1%enp_60000_0_1761275812718970], AlgType(level 0-1-2):[fullmesh-ring-NHR].")
HCCL_OPDATA = ("task_exception_handler.cc:704", " [{tid}][TaskExecStage][Timeout][Host]Task run failed, opData information is timeStamp:[2025-10-24-11:16:55.490.253], deviceId[{dev}], index[{index}], count[256], reduceType[sum], src[0x12c0c0013000], dst[0x12c0c0014000], dataType[float32].")
CRIMER = ("heartbeat.cc:951", " [{tid}][TaskExecStage][HeartbeatAbnormal]local rank [127.10.0.1/1]: crimer rank [127.10.0.2/{crimer}] status[LOST] by informer rank [127.10.0.3/3]")
# HC docs/zh/user_guide/fault_diagnosis/debug_thinking.md
LOCAL_RANK = ("hccl_communicator_attrs.cc:330", " [{tid}][LocalRank Key Info]userRank[{rank}] hostIp[127.0.0.1] devicePhyId[{dev}] server[127.0.0.1] deviceIp[0.0.0.0] superPodId[0] useSuperPodMode[0] isStandardCard[0]")


def _proc(root: Path, pid: int, rank: int, dev: Optional[int] = None) -> ProcessLog:
    log = ProcessLog(root, pid, "python3")
    src, body = LOCAL_RANK
    log.run("INFO", "HCCL", src, body.format(tid=pid, rank=rank, dev=rank if dev is None else dev), T0)
    return log


def _err(log: ProcessLog, module: str, line, ts: int, **kw) -> None:
    src, body = line
    log.debug("ERROR", module, src, body.format(tid=log.pid, **kw), ts)


def _tree(tmp_path: Path, culprit: Optional[int], crimer: Optional[int] = None, index_of=lambda r: 21) -> Path:
    root = tmp_path / "ascend" / "log"
    for rank in range(4):
        log = _proc(root, 1000 + rank, rank)
        if rank == culprit:
            _err(log, "RUNTIME", AICORE, T0 + 5 * SECOND, dev=rank)
            _err(log, "RUNTIME", AICORE2, T0 + 5 * SECOND + 900, dev=rank)
        else:
            if crimer is not None and rank == culprit:
                continue
            ts = T0 + (1836 + rank) * SECOND
            _err(log, "HCCL", HCCL_TIMEOUT, ts)
            _err(log, "HCCL", HCCL_OPDATA, ts + 10, dev=rank, index=index_of(rank))
            if crimer is not None and rank == 0:
                src, body = CRIMER
                log.run("INFO", "HCCL", src, body.format(tid=log.pid, crimer=crimer), ts - 60 * SECOND)
        log.close()
    return root


def test_first_failing_rank_is_the_one_with_a_real_error(tmp_path):
    report = triage_paths([str(_tree(tmp_path, culprit=2))])
    first = report.incidents[0]
    assert (first.rank, first.pid, first.verdict.category) == (2, 1002, "aicore_exec")
    assert report.job.method == "first_error" and report.job.first_rank == 2
    others = report.incidents[1:]
    assert {i.rank for i in others} == {0, 1, 3}
    assert all(i.caused_by is first and i.verdict.category == "hccl_comm" for i in others)
    assert "kernel_name=Add_ee98" in first.headline.text  # the specific line wins over "Task run failed"


def test_hccl_verdict_names_a_silent_rank(tmp_path):
    # rank 2 logged nothing at all (hung or killed); rank 0's run log has HCCL's heartbeat verdict
    root = tmp_path / "ascend" / "log"
    for rank in (0, 1, 2, 3):
        log = _proc(root, 1000 + rank, rank)
        if rank != 2:
            ts = T0 + (1836 + rank) * SECOND
            _err(log, "HCCL", HCCL_TIMEOUT, ts)
            if rank == 0:
                src, body = CRIMER
                log.run("INFO", "HCCL", src, body.format(tid=log.pid, crimer=2), ts - 60 * SECOND)
        log.close()
    report = triage_paths([str(root)])
    assert report.job.method == "hccl_verdict" and report.job.first_rank == 2
    first = report.incidents[0]
    assert first.synthetic and first.rank == 2 and "crimer rank" in first.evidence()[0][2]
    assert all(i.caused_by is first for i in report.incidents[1:])


def test_all_ranks_timed_out_at_different_ops(tmp_path):
    root = tmp_path / "ascend" / "log"
    for rank in range(2):
        log = _proc(root, 2000 + rank, rank)
        ts = T0 + (1836 + 30 * rank) * SECOND
        _err(log, "HCCL", HCCL_TIMEOUT, ts)
        _err(log, "HCCL", HCCL_OPDATA, ts + 10, dev=rank, index=21 + rank)
        log.close()
    report = triage_paths([str(root)])
    assert report.job.method == "earliest_timeout" and report.job.first_rank == 0
    assert any("different collectives" in n for n in report.job.notes)
    assert any("spread over 30 s" in n for n in report.job.notes)


def test_console_joins_the_plog_of_its_process(tmp_path):
    root = _tree(tmp_path, culprit=2)
    console = tmp_path / "rank2.out"
    # vllm-ascend#1443 banner shape; pid set to the culprit's process
    console.write_text("RuntimeError: npuSynchronizeDevice:build/CMakeFiles/torch_npu.dir/compiler_depend.ts:479 NPU function error: AclrtSynchronizeDeviceWithTimeout, error code is 507015\n"
                       "[ERROR] 2025-10-09-08:53:25 (PID:1002, Device:2, RankID:2) ERR00100 PTA call acl api failed\n")
    report = triage_paths([str(root), str(console)])
    first = report.incidents[0]
    assert first.rank == 2 and first.verdict.category == "aicore_exec"
    files = {f for f, _, _ in first.evidence()}
    assert any(f.endswith("rank2.out") for f in files) and any("plog-1002_" in f for f in files)


def test_repeated_errors_fold_into_one_incident(tmp_path):
    root = tmp_path / "ascend" / "log"
    log = _proc(root, 3000, 0)
    for i in range(500):
        _err(log, "RUNTIME", AICORE2, T0 + i * 1000, dev=0)
    log.close()
    report = triage_paths([str(root)])
    assert len(report.incidents) == 1 and report.incidents[0].count == 500


class _FakeKB:
    """The KB API (ascend_doctor/kb/__init__.py) reduced to what triage calls."""

    def __init__(self) -> None:
        fix = SimpleNamespace(text="fake fix", commands=("fake-cmd",))
        self.entries = {
            "dev.aicore": SimpleNamespace(id="dev.aicore", category="aicore_exec", title="AI Core fault", cause="kernel faulted",
                                          role="cause", fix=fix, causes=("hccl.timeout",), caused_by=(), checks=(), priority=0,
                                          triage_weight=60, broad=False, family=None, headline="", attach=None, alternative=None),
            "hccl.timeout": SimpleNamespace(id="hccl.timeout", category="hccl_comm", title="HCCL timeout", cause="waited",
                                            role="symptom", fix=fix, causes=(), caused_by=("dev.aicore",), checks=(), priority=0,
                                            triage_weight=55, broad=False, family=None, headline="", attach=None, alternative=None),
        }
        self.calls: List[tuple] = []

    def match(self, text, codes=(), module=None, limit=None):
        self.calls.append((text, tuple(codes), module))
        if "Aicore kernel" in text or "aicore" in text.lower():
            return [SimpleNamespace(entry=self.entries["dev.aicore"], score=5.0, captures={"kernel": "Add"})]
        if "Timeout" in text:
            return [SimpleNamespace(entry=self.entries["hccl.timeout"], score=3.0, captures={})]
        return []

    def explains(self, cause, effect):
        return effect in self.entries[cause].causes


def test_knowledge_base_entries_and_edges_are_used(tmp_path):
    # one process: an AI Core fault, then 30 min later its own collective times out
    root = tmp_path / "ascend" / "log"
    log = _proc(root, 4000, 0)
    _err(log, "RUNTIME", AICORE2, T0, dev=0)
    _err(log, "HCCL", HCCL_TIMEOUT, T0 + 4000 * SECOND)  # beyond the grouping gap: its own incident
    log.close()
    kb = _FakeKB()
    report = triage_paths([str(root)], knowledge=Knowledge(kb=kb))
    assert [i.verdict.kb_id for i in report.incidents] == ["dev.aicore", "hccl.timeout"]
    assert report.incidents[1].caused_by is report.incidents[0]
    assert report.incidents[0].verdict.fix_commands == ["fake-cmd"]
    assert any(m == "RUNTIME" for _, _, m in kb.calls)


def test_json_contract(tmp_path):
    root = _tree(tmp_path, culprit=1)
    out = io.StringIO()
    rc = run_triage([str(root)], fmt="json", out=out, err=io.StringIO())
    data = json.loads(out.getvalue())
    assert rc == 1 and data["schema"] == 1
    assert set(data["stats"]) >= {"files", "bytes", "lines", "events", "seconds"}
    inc = data["incidents"][0]
    for key in ("category", "title", "root_cause", "kb", "codes", "pid", "device", "rank", "first_seen", "evidence", "fix"):
        assert key in inc
    assert inc["rank"] == 1 and inc["evidence"][0]["file"].endswith(".log") and inc["evidence"][0]["line"] >= 1
    assert inc["fix"]["text"] and data["job"]["first_failing_rank"] == 1
    assert data["incidents"][1]["caused_by"] == 0


@pytest.mark.parametrize("fmt", ["text", "md"])
def test_text_and_markdown(tmp_path, fmt):
    out = io.StringIO()
    rc = run_triage([str(_tree(tmp_path, culprit=3))], fmt=fmt, out=out, err=io.StringIO())
    text = out.getvalue()
    assert rc == 1 and "rank 3" in text and "aicore_exec" in text and "plog-1003_" in text


def test_errors_from_before_a_restart_in_place_do_not_count(tmp_path):
    # the plog keyword "attr init success" marks the log framework's initialisation in a process
    # (https://github.com/hicann/oam-tools/blob/master/docs/zh/asys/FAQ.md); a second one in the same
    # process means the job resumed in place
    root = tmp_path / "ascend" / "log"
    run = root / "run" / "plog"
    debug = root / "debug" / "plog"
    run.mkdir(parents=True)
    debug.mkdir(parents=True)
    (run / "plog-700_20250101000000000.log").write_text(
        "[INFO] ATRACE(700,python3):2025-01-01-01:00:00.000.000 [trace_attr.c:189](tid:700) attr init success, timeout=0ms.\n"
        "[INFO] ATRACE(700,python3):2025-01-01-02:00:00.000.000 [trace_attr.c:189](tid:700) attr init success, timeout=0ms.\n",
        encoding="utf-8")
    (debug / "plog-700_20250101000000001.log").write_text(
        "[ERROR] RUNTIME(700,python3):2025-01-01-01:30:00.000.000 [api_c.cc:661]700 rtStreamSynchronize:[EXEC][DEFAULT]ErrCode=507017, desc=[aicpu timeout], InnerCode=0x715002a\n"
        "[ERROR] HCCL(700,python3):2025-01-01-02:10:00.000.000 [hccl_socket_manager.cc:778] [700][Wait][LinkEstablish]wait socket establish timeout, role[1] rank[12] timeout[120]\n",
        encoding="utf-8")
    report = triage_paths([str(root)])
    assert [i.verdict.category for i in report.incidents] == ["hccl_comm"]
    assert any("restarted in place" in n for n in report.job.notes)
