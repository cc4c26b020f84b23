"""``ascend-doctor diagnose``: the flows as data, the runner's verdicts and paths, the
profile contract (through a stand-in for ``ascend_doctor.profile.analyze``), bad input.

Every runtime_sim scenario against its ground truth is in tests/runtime_sim/test_harness.py.
"""
from __future__ import annotations

import io
import json
import subprocess
import sys
import types
from pathlib import Path

import pytest

from ascend_doctor.commands.diagnose import run_diagnose
from ascend_doctor.errors import UsageError
from ascend_doctor.flows.model import SYMPTOMS, FlowError, load_all, parse_flow
from runtime_sim.host import build, run


def _diag(*args, **kw):
    out = io.StringIO()
    code = run_diagnose(*args, fmt="json", out=out, **kw)
    return code, json.loads(out.getvalue())


# ---------------------------------------------------------------- flows as data
def test_every_symptom_has_a_flow_whose_steps_say_where_they_lead():
    flows = load_all()
    assert [f.symptom for f in flows] == list(SYMPTOMS)
    for flow in flows:
        for step in flow.steps:
            assert step.means["confirmed"] and step.means["ruled_out"]
            if step.kind != "checks":
                assert step.collect and step.command.startswith(("ascend-doctor", "msprof")), (flow.symptom, step.id)


def test_init_flow_follows_the_field_guide_order():
    init = next(f for f in load_all() if f.symptom == "init")
    order = [s.id for s in init.steps]
    assert order[:5] == ["driver", "environment", "permissions", "occupancy", "container"]
    assert "npu_smi.info" in init.step("driver").checks and "env.set_env" in init.step("environment").checks


@pytest.mark.parametrize("doc, message", [
    ({"symptom": "nope", "title": "t", "source": "s", "steps": []}, "symptom"),
    ({"symptom": "init", "title": "t", "source": "s", "steps": [
        {"id": "a", "question": "q", "kind": "checks", "checks": ["no.such"], "means": {"confirmed": "x", "ruled_out": "y"}}]},
     "no.such is not a check id"),
    ({"symptom": "oom", "title": "t", "source": "s", "steps": [
        {"id": "a", "question": "q", "kind": "oom", "verdicts": ["oom_capacity"], "means": {"confirmed": "x", "ruled_out": "y", "not_run": "z"}}]},
     "collect"),
    ({"symptom": "slow", "title": "t", "source": "s", "steps": [
        {"id": "a", "question": "q", "kind": "profile", "layers": ["warp"], "collect": "c", "command": "c",
         "means": {"confirmed": "x", "ruled_out": "y", "not_run": "z"}}]},
     "warp"),
    ({"symptom": "init", "title": "t", "source": "s", "steps": [
        {"id": "a", "question": "q", "kind": "checks", "checks": ["env.set_env"], "next": "a", "means": {"confirmed": "x", "ruled_out": "y"}}]},
     "not a later step"),
])
def test_a_malformed_flow_is_refused_with_the_field(doc, message):
    from ascend_doctor.checks.base import registry

    with pytest.raises(FlowError, match=message):
        parse_flow(doc, "test.yaml", {c.id for c in registry()})


# ---------------------------------------------------------------- runner on simulated hosts
def test_a_blocked_check_leads_to_the_step_that_holds_the_blocker():
    code, doc = _diag(sim="user_not_in_group")
    assert code == 1 and doc["schema"] == 1 and doc["symptom"] == "init"
    path = [(s["id"], s["verdict"], s["next"]) for s in doc["steps"]]
    # npu-smi is not judged because the device nodes are closed: the flow goes to permissions
    assert path == [("driver", "inconclusive", "permissions"), ("permissions", "confirmed", None)]
    assert doc["cause"]["category"] == "device_busy_permission"
    assert any("usermod" in c for c in doc["cause"]["fix"]["commands"])
    assert {i["id"] for i in doc["left"]} >= {"driver", "environment", "versions"}


def test_a_healthy_host_rules_out_every_step_and_says_what_to_collect():
    code, doc = _diag(sim="healthy_910b")
    assert code == 0 and doc["cause"] is None
    verdicts = {s["id"]: s["verdict"] for s in doc["steps"]}
    assert verdicts["driver"] == verdicts["versions"] == "ruled_out"
    assert verdicts["init_logs"] == "not_run"
    left = {i["id"]: i for i in doc["left"]}
    assert left["init_logs"]["command"].startswith("ascend-doctor diagnose init --logs")


def test_slow_without_a_profile_reader_is_not_run_with_the_command(monkeypatch):
    monkeypatch.setattr("ascend_doctor.flows.evidence.Evidence.profile_analyzer", staticmethod(lambda: None))
    code, doc = _diag("slow", sim="healthy_910b")
    profile_steps = [s for s in doc["steps"] if s["id"] in ("dispatch", "copy", "fusion", "dynamic_shape", "slow_path")]
    assert len(profile_steps) == 5 and all(s["verdict"] == "not_run" for s in profile_steps)
    assert all(s["command"].startswith("msprof --output=") for s in profile_steps)
    assert code == 0 and doc["cause"] is None


@pytest.fixture(scope="module")
def oom_run(tmp_path_factory):
    return run("oom_fragmentation_training", tmp_path_factory.mktemp("oomrun") / "h")


def test_logs_alone_pick_the_symptom_and_end_at_the_cause(oom_run, tmp_path):
    healthy = build("healthy_910b", tmp_path / "h")
    code, doc = _diag(root=healthy.root, env_file=healthy.env_file, logs=[str(oom_run.log_dir), str(oom_run.console_file)])
    assert code == 1 and doc["symptom"] == "oom" and "oom_fragmentation" in doc["symptom_reason"]
    assert doc["steps"][0]["id"] == "stranded" and doc["steps"][0]["verdict"] == "confirmed"
    assert doc["cause"]["category"] == "oom_fragmentation"
    assert "expandable_segments:True" in " ".join(doc["cause"]["fix"]["commands"])


def test_a_given_symptom_the_logs_do_not_support_ends_without_a_cause(oom_run, tmp_path):
    healthy = build("healthy_910b", tmp_path / "h")
    code, doc = _diag("multi_card", root=healthy.root, env_file=healthy.env_file, logs=[str(oom_run.console_file)])
    first = doc["steps"][0]
    assert first["id"] == "first_rank" and first["verdict"] == "ruled_out" and "oom_fragmentation" in first["found"]
    assert code == 0 and doc["cause"] is None


# ---------------------------------------------------------------- the profile contract
def _profile_doc(busy: float, findings, ops=None):
    return {"schema": 1, "inputs": [], "devices": [{"device": 0, "rank": 0, "span_us": 1e6, "busy_pct": busy, "copy_pct": 3.0,
            "comm_pct": 0.0, "top_ops": ops or [], "small_ops": {"count": 0, "share_pct": 0, "threshold_us": 10},
            "dynamic_shape_ops": [], "slow_path_ops": [], "largest_gaps": []}], "slowest_rank": 0, "findings": findings}


@pytest.fixture
def fake_profile(monkeypatch):
    docs = {}
    module = types.ModuleType("ascend_doctor.profile")
    module.analyze = lambda paths: docs[paths[0]]
    monkeypatch.setitem(sys.modules, "ascend_doctor.profile", module)
    return docs


def test_profile_findings_confirm_their_layer(fake_profile, tmp_path):
    prof = tmp_path / "PROF_1"
    prof.mkdir()
    fake_profile[str(prof)] = _profile_doc(31.0, [{"id": "busy_low", "layer": "dispatch", "summary": "NPU busy 31% of the time",
                                                   "evidence": {"busy_pct": 31.0}, "fix": {"text": "feed it", "commands": []}}])
    healthy = build("healthy_910b", tmp_path / "h")
    code, doc = _diag(root=healthy.root, env_file=healthy.env_file, profile=[str(prof)])
    assert doc["symptom"] == "slow" and code == 1
    assert doc["steps"][0]["verdict"] == "confirmed" and doc["cause"]["layer"] == "dispatch"


def test_baseline_names_the_operator_that_got_slower(fake_profile, tmp_path):
    base, new = tmp_path / "base", tmp_path / "new"
    base.mkdir()
    new.mkdir()
    ops = lambda ln: [{"type": "MatMul", "core": "AI_CORE", "count": 10, "total_us": 1000.0, "share_pct": 40},
                      {"type": "LayerNorm", "core": "AI_CORE", "count": 10, "total_us": ln, "share_pct": 10}]
    fake_profile[str(base)] = _profile_doc(90.0, [], ops(200.0))
    fake_profile[str(new)] = _profile_doc(90.0, [], ops(2400.0))
    healthy = build("healthy_910b", tmp_path / "h")
    code, doc = _diag("slow", root=healthy.root, env_file=healthy.env_file, profile=[str(new)], baseline=[str(base)])
    assert code == 1 and doc["cause"]["step"] == "baseline" and doc["cause"]["evidence"]["op"] == "LayerNorm"
    assert [s["verdict"] for s in doc["steps"][:5]] == ["ruled_out"] * 5


# ---------------------------------------------------------------- bad input and formats
@pytest.mark.parametrize("kwargs, message", [
    ({"symptom": "hang"}, "unknown symptom"),
    ({"logs": ["/no/such/log"]}, "no such file"),
    ({"baseline": ["."]}, "--baseline needs --profile"),
    ({"sim": "healthy_910b", "root": Path("/")}, "do not combine"),
    ({"sim": "no_such_scenario"}, "unknown scenario"),
])
def test_bad_input_is_a_usage_error(kwargs, message):
    with pytest.raises(UsageError, match=message):
        run_diagnose(out=io.StringIO(), **kwargs)


def test_cli_text_md_and_exit_codes():
    cmd = [sys.executable, "-m", "ascend_doctor", "diagnose", "--sim", "set_env_not_sourced", "--timeout", "1"]
    text = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    assert text.returncode == 1 and "confirmed" in text.stdout and "CAUSE (env_path)" in text.stdout
    md = subprocess.run(cmd + ["--format", "md"], capture_output=True, text=True, timeout=120)
    assert md.stdout.startswith("# ascend-doctor diagnose · init\n") and "| 2 | environment" in md.stdout
    bad = subprocess.run([sys.executable, "-m", "ascend_doctor", "diagnose", "hang"], capture_output=True, text=True, timeout=60)
    assert bad.returncode == 2 and "unknown symptom" in bad.stderr and "Traceback" not in bad.stderr


# ---------------------------------------------------------------- real logs (copied from public issues)
DATA = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("log, source, symptom, cause, path", [
    ("oom/data/vllm_ascend_19_worker.log", "https://github.com/vllm-project/vllm-ascend/issues/19",
     "oom", "device_busy_permission", ["stranded=ruled_out", "capacity=ruled_out", "held_outside=confirmed"]),
    ("oom/data/vllm_ascend_1987_env_and_oom.log", "https://github.com/vllm-project/vllm-ascend/issues/1987",
     "oom", "oom_capacity", ["stranded=ruled_out", "capacity=confirmed"]),
    ("triage/data/llamafactory_4135_fallback_ranks.log", "https://github.com/hiyouga/LlamaFactory/issues/4135",
     "unsupported_op", "unsupported_op", ["release=ruled_out", "which_op=confirmed"]),
    ("triage/data/pytorch_54_lmdeploy_hccl.log", "https://github.com/Ascend/pytorch/issues/54",
     "multi_card", "hccl_comm", ["first_rank=confirmed"]),
    ("triage/data/pytorch_108_block_retry.log", "https://github.com/Ascend/pytorch/issues/108",
     "jitter", "oom_fragmentation", ["gaps=not_run", "allocation=confirmed"]),
    ("triage/data/vllm_ascend_12776_plog216.log", "https://github.com/vllm-project/vllm-ascend/issues/12776",
     "unsupported_op", "aicore_exec", ["release=inconclusive", "which_op=ruled_out", "aicore=confirmed"]),
])
def test_real_logs_pick_their_flow_and_end_at_the_cause(log, source, symptom, cause, path, tmp_path):
    healthy = build("healthy_910b", tmp_path / "h")  # the host the flow's check steps read
    code, doc = _diag(root=healthy.root, env_file=healthy.env_file, logs=[str(DATA / log)])
    assert doc["symptom"] == symptom, source
    assert [f"{s['id']}={s['verdict']}" for s in doc["steps"]] == path, source
    assert doc["cause"]["category"] == cause and code == 1, source
