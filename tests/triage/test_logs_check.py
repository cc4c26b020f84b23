"""The logs.recent_errors check, on a --root tree with plogs written by runtime_sim's writer."""
from __future__ import annotations

from pathlib import Path

from ascend_doctor.checks.base import Context, Options
from ascend_doctor.checks.logs import recent_errors, _applies
from ascend_doctor.facts import Facts
from ascend_doctor.host import Host
from ascend_doctor.model import Status
from runtime_sim.plog.files import ProcessLog
from runtime_sim.plog.timefmt import SECOND



def _ctx(root: Path, env) -> Context:
    host = Host(str(root), env=env)
    return Context(host=host, facts=Facts(host), options=Options())


def test_recent_errors_found(tmp_path):
    log_root = tmp_path / "root" / "home" / "u" / "ascend" / "log"
    log = ProcessLog(log_root, 216, "")
    # body of a real line (vllm-ascend#12776)
    log.debug("ERROR", "RUNTIME", "device_error_proc.cc:1644",
              "273 ProcessStarsAicpuErrorInfo:The error from device(chipId:0, dieId:0), serial number is 6, an exception occurred during AICPU execution, stream_id:5, task_id:40187, errcode:1, msg:execute kernel param invalid.",
              1_760_000_000 * SECOND)
    log.close()
    ctx = _ctx(tmp_path / "root", {"HOME": "/home/u", "USER": "u"})
    assert _applies(ctx) is None
    res = recent_errors(ctx)
    assert res.status == Status.WARN and res.category == "aicore_exec"
    assert "AI CPU" in res.summary and "plog-216_" in res.evidence.found and res.fix.text
    # the report is run here, on the tree: the pointer names the tree's copy, not this machine's ~/ascend/log
    here = str((tmp_path / "root").resolve() / "home" / "u" / "ascend" / "log")
    assert res.fix.text.endswith(f"Full report: ascend-doctor triage {here}")
    assert res.evidence.source == "/home/u/ascend/log"  # the evidence stays in the judged machine's terms


def test_process_log_path_wins_and_clean_logs_are_ok(tmp_path):
    root = tmp_path / "root"
    (root / "data" / "logs" / "debug" / "plog").mkdir(parents=True)
    (root / "data" / "logs" / "debug" / "plog" / "plog-42_20251118093312000.log").write_text(
        # gpustack#3352 INFO line
        "[INFO] RUNTIME(42,mindie_llm_backend_connector):2025-11-18-09:33:13.666.211 [runtime_keeper.cc:172] 58 CreateRuntimeImpl: Open libruntime_v100.so success\n")
    ctx = _ctx(root, {"HOME": "/home/u", "ASCEND_PROCESS_LOG_PATH": "/data/logs"})
    res = recent_errors(ctx)
    assert res.status == Status.OK and "/data/logs" in res.summary


def test_no_log_dir_is_a_skip_reason(tmp_path):
    (tmp_path / "root").mkdir()
    ctx = _ctx(tmp_path / "root", {"HOME": "/home/u"})
    assert "no CANN log directory" in _applies(ctx)
