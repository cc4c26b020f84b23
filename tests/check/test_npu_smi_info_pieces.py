"""The seams of checks/devices.py:npu_smi_info: did it run, the table it printed."""
from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

from ascend_doctor.checks.devices import _npu_smi_did_not_run, _npu_smi_table
from ascend_doctor.facts import NpuSmiFact
from ascend_doctor.host import CommandResult
from ascend_doctor.parsers.npu_smi import parse_npu_smi_info

# a real npu-smi info: https://github.com/vllm-project/vllm-ascend/issues/1895 (data/npu_smi/SOURCES.md)
BUSY = (Path(__file__).parent / "data" / "npu_smi" / "a2_910b3_driver23.0.7_busy.txt").read_text(encoding="utf-8")
PATH = "/usr/local/bin/npu-smi"


def _ctx(real: bool = False):
    return SimpleNamespace(options=SimpleNamespace(command_timeout=10.0), host=SimpleNamespace(is_real=real))


def _result(**kw):
    base = dict(argv=[PATH, "info"], returncode=0, stdout=BUSY, stderr="", duration_s=0.2)
    base.update(kw)
    return CommandResult(**base)


def test_a_run_that_answered_goes_on():
    assert _npu_smi_did_not_run(_ctx(), NpuSmiFact(PATH, _result())) is None
    assert _npu_smi_did_not_run(_ctx(), NpuSmiFact(PATH, None)) is None  # a saved output: nothing ran


def test_hang_foreign_and_unstartable():
    hung = _npu_smi_did_not_run(_ctx(), NpuSmiFact(PATH, _result(returncode=None, stdout="", timed_out=True, duration_s=10.0)))
    assert hung.status.value == "timeout" and "within 10 s" in hung.summary
    foreign = _npu_smi_did_not_run(_ctx(real=False), NpuSmiFact(PATH, _result(returncode=None, foreign=True, error="Exec format error")))
    assert foreign.status.value == "skip"
    broken = _npu_smi_did_not_run(_ctx(real=True), NpuSmiFact(PATH, _result(returncode=None, foreign=True, error="Exec format error")))
    assert broken.status.value == "fail" and "could not be started" in broken.summary


def test_table_summary_and_data():
    info = parse_npu_smi_info(BUSY)
    res = _npu_smi_table(NpuSmiFact(PATH, _result(), info=info))
    assert res.status.value == "ok"
    assert res.summary.startswith(f"{len(info.logical_devices())} device")
    assert res.data["devices"][0]["npu"] == info.logical_devices()[0].npu_id
    assert len(res.data["processes"]) == len(info.processes) > 0
