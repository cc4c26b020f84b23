"""Every runtime_sim scenario with a profile ground truth (``expect.profile``): run its workload,
then `profile` on what the simulated profiler wrote must lead with that cause."""
from __future__ import annotations

import json
import subprocess
import sys

import pytest

from ascend_doctor.profile import analyze, compare
from runtime_sim.host import run
from runtime_sim.scenarios import load_all

PROFILED = [s for s in load_all() if s.expect.profile is not None]


def test_there_is_a_scenario_per_cause():
    layers = {s.expect.profile.layer for s in PROFILED}
    assert layers >= {None, "dispatch", "copy", "fusion", "dynamic_shape", "slow_path", "communication"}
    assert {s.expect.profile.finding for s in PROFILED} >= {"dispatch.host_bound", "dispatch.allocation"}


@pytest.mark.parametrize("scenario", PROFILED, ids=lambda s: s.name)
def test_profile_finds_the_scenario_cause(scenario, tmp_path):
    result = run(scenario, tmp_path / "host")
    facts = result.workload.facts
    want = scenario.expect.profile
    doc = analyze([facts["profile_dir"]])
    findings = doc["findings"]
    got = [(f["id"], round(f["impact_us"])) for f in findings]
    if want.layer is None:
        assert findings == [], got
        return
    assert findings, f"no finding; expected {want.finding}"
    first = findings[0]
    assert first["layer"] == want.layer, got
    if want.finding:
        assert first["id"] == want.finding, got
    if want.op:
        assert want.op in json.dumps(first), first
    if want.slowest_rank is not None:
        assert doc["slowest_rank"] == want.slowest_rank
    if want.compare_first:
        diff = compare([facts["profile_dir"]], [facts["profile_after_upgrade"]])
        assert diff["changes"][0]["type"] == want.compare_first
        assert diff["changes"][0]["ratio"] < 0.1
        assert diff["versions"]["base"]["torch_npu"] != diff["versions"]["new"]["torch_npu"]
        # the release that fixed it has no slow-path finding left
        assert not [f for f in diff["findings"] if f["layer"] == "slow_path"]


def test_cli_json_and_exit_code_on_a_simulated_profile(tmp_path):
    result = run("perf_dispatch_bound", tmp_path / "host")
    proc = subprocess.run([sys.executable, "-m", "ascend_doctor", "profile", result.workload.facts["profile_dir"], "--json"],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 1, proc.stderr
    doc = json.loads(proc.stdout)
    assert doc["schema"] == 1 and doc["findings"][0]["id"] == "dispatch.host_bound"
    (dev,) = doc["devices"]
    assert dev["busy_pct"] < 30 and dev["small_ops"]["share_pct"] > 90
    assert dev["largest_gaps"] and dev["largest_gaps"][0]["gap_us"] > 20


def test_compare_cli_names_the_fixed_op_first(tmp_path):
    result = run("perf_slow_path", tmp_path / "host")
    facts = result.workload.facts
    proc = subprocess.run([sys.executable, "-m", "ascend_doctor", "profile", "compare", facts["profile_dir"],
                           facts["profile_after_upgrade"]], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    lines = [ln for ln in proc.stdout.splitlines() if ln.strip()]
    table = lines[lines.index(next(ln for ln in lines if ln.strip().startswith("op type"))) + 1]
    assert table.split()[0] == "IndexPutV2" and "AI_CPU -> AI_VECTOR_CORE" in table
    assert "torch_npu 2.1.0.post13" in proc.stdout and "torch_npu 2.6.0.post5" in proc.stdout
