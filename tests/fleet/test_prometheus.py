"""`check --format prometheus` and `oom --format prometheus`, read back with the Prometheus
client library's own parser of the text exposition format."""
from __future__ import annotations

import subprocess
import sys

from prometheus_client.parser import text_string_to_metric_families

from ascend_doctor.model import Finding, Status
from ascend_doctor.report.prometheus import render


def _families(text):
    return {f.name: f for f in text_string_to_metric_families(text)}


def _run(*args):
    return subprocess.run([sys.executable, "-m", "ascend_doctor", *args], capture_output=True, text=True, timeout=120)


def test_check_metrics_on_a_host_with_a_failing_check():
    proc = _run("check", "--sim", "torch_npu_mismatch", "--format", "prometheus")
    assert proc.returncode == 1, proc.stderr
    fam = _families(proc.stdout)
    status = {}
    for s in fam["ascend_doctor_check_status"].samples:
        status.setdefault(s.labels["check"], {})[s.labels["status"]] = s.value
    assert len(status) >= 20
    for check, by_status in status.items():
        assert sorted(by_status) == sorted(["ok", "warn", "fail", "skip", "timeout", "error"])
        assert sum(by_status.values()) == 1, check  # a state set: exactly one status is 1
    assert status["python.torch_npu_match"]["fail"] == 1 and status["driver.version"]["ok"] == 1
    (info,) = fam["ascend_doctor_stack_info"].samples
    assert info.labels["torch"] == "2.2.0" and info.labels["torch_npu"] == "2.1.0.post13" and info.labels["cann"] == "8.2.RC1"
    assert info.labels["driver"] == "25.0.rc1.1"
    verdict = {s.labels["verdict"]: s.value for s in fam["ascend_doctor_verdict"].samples}
    assert verdict == {"ok": 0, "warn": 0, "fail": 1}
    assert fam["ascend_doctor_npu_devices"].samples[0].value == 8
    assert all(s.value == 1 for s in fam["ascend_doctor_npu_healthy"].samples)


def test_label_values_are_escaped():
    f = Finding(id='x.y', title="t", group='g"q\\', status=Status.WARN, summary="s")
    fam = _families(render([f], {"stack": {"cann": 'odd "8.0"\nline'}}, 0.1, now=1.0))
    (info,) = fam["ascend_doctor_stack_info"].samples
    assert info.labels["cann"] == 'odd "8.0"\nline'
    assert {s.labels["group"] for s in fam["ascend_doctor_check_status"].samples} == {'g"q\\'}


def test_oom_fragmentation_ratio(tmp_path):
    import runtime_sim.host as sim_host

    result = sim_host.run("oom_fragmentation_serving", tmp_path / "job")
    proc = _run("oom", "--file", str(result.console_file), "--format", "prometheus")
    assert proc.returncode == 1, proc.stderr
    fam = _families(proc.stdout)
    verdict = {s.labels["verdict"]: s.value for s in fam["ascend_doctor_oom_verdict"].samples}
    assert verdict["oom_fragmentation"] == 1 and sum(verdict.values()) == 1
    ratios = {s.labels["ratio"]: s.value for s in fam["ascend_doctor_oom_ratio"].samples}
    assert ratios["gap_over_request"] > 1  # the cache held more than the request, in pieces
    sizes = {s.labels["number"]: s.value for s in fam["ascend_doctor_oom_bytes"].samples}
    assert sizes["reserved"] - sizes["allocated"] == sizes["reserved_unallocated"]
