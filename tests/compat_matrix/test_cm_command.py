"""`ascend-doctor compat` and the version-matrix findings of `check`."""
from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from ascend_doctor.cli import app

import cm_hosttree

runner = CliRunner(mix_stderr=False) if "mix_stderr" in CliRunner.__init__.__code__.co_varnames else CliRunner()


def invoke(*args: str):
    return runner.invoke(app, list(args))


def test_issue_example_text_and_json():
    res = invoke("compat", "--torch", "2.1.0", "--torch-npu", "2.4.0.post2")
    assert res.exit_code == 1
    assert "incompatible" in res.stdout and "2.1.0" in res.stdout and "2.4.0.post2" in res.stdout
    assert "required torch 2.4.0" in " ".join(res.stdout.split())
    res = invoke("compat", "--torch", "2.1.0", "--torch-npu", "2.4.0.post2", "--json")
    data = json.loads(res.stdout)
    assert data["schema"] == 1 and data["verdict"] == "incompatible"
    (pair,) = data["pairs"]
    assert pair["required"] == "torch 2.4.0" and pair["source"].startswith("https://")
    assert data["from"] == {"torch": "flag", "torch_npu": "flag"}


def test_suggest_lists_full_stacks():
    res = invoke("compat", "--torch", "2.4.0", "--suggest", "--json")
    assert res.exit_code == 0
    data = json.loads(res.stdout)
    assert data["count"] == 3
    for s in data["stacks"]:
        assert {"cann", "torch", "torch_npu", "driver"} <= set(s["components"]) and s["python"]
    text = invoke("compat", "--torch", "2.4.0", "--suggest").stdout
    assert "8.1.RC1" in text and "2.4.0.post4" in text and "pip install torch==2.4.0 torch-npu==2.4.0.post4" in text
    md = invoke("compat", "--cann", "8.0.0", "--chip", "910B", "--suggest", "--format", "md").stdout
    assert md.startswith("# ascend-doctor compat --suggest\n") and "| 8.0.0 | 2.4.0 | 2.4.0.post2 |" in md
    assert invoke("compat", "--torch", "2.1.0", "--cann", "9.1.0", "--suggest").exit_code == 1


def test_bad_input_exit_2_one_line():
    res = invoke("compat", "--cann", "banana")
    assert res.exit_code == 2
    err = res.stderr if hasattr(res, "stderr") else res.output
    lines = [l for l in err.splitlines() if l.strip()]
    assert len(lines) == 1 and "--cann banana" in lines[0] and "accepted forms: 8.0.RC1" in lines[0]
    assert invoke("compat", "--chip", "H100", "--torch", "2.4.0").exit_code == 2
    assert invoke("compat", "--torch", "2.4.0", "--format", "xml").exit_code == 2
    assert invoke("compat", "--torch", "2.4.0", "--suggest", "--upgrade").exit_code == 2


def test_uncovered_stack_is_unknown():
    res = invoke("compat", "--torch-npu", "2.13.0", "--cann", "9.2.0", "--json")
    data = json.loads(res.stdout)
    assert res.exit_code == 1 and data["verdict"] == "unknown"
    # 2.13.0: no source names its CANN; the neighbours bound the likely range (an inference)
    reason = data["pairs"][0]["reason"]
    assert reason.startswith("inferred, not stated") and "CANN 9.2.0 is outside that range" in reason
    assert data["pairs"][0]["required"] == "likely CANN 9.1.0"


def test_markdown_report():
    md = invoke("compat", "--torch", "2.4.0", "--torch-npu", "2.4.0.post2", "--format", "md").stdout
    assert md.startswith("# ascend-doctor compat\n") and "**Verdict: compatible**" in md


def test_reads_the_host_and_flags_win(tmp_path: Path):
    env = cm_hosttree.build(tmp_path)
    res = invoke("compat", "--root", str(tmp_path), "--trust-root", "--env-file", str(env), "--json")
    data = json.loads(res.stdout)
    assert data["stack"] == {"chip": "910b", "firmware": "7.7.0.1.231", "driver": "25.0.RC1.1", "cann": "8.2.RC1",
                             "python": "3.11.6", "torch": "2.1.0", "torch_npu": "2.1.0.post13"}
    assert data["verdict"] == "compatible" and res.exit_code == 0
    assert set(data["from"].values()) == {"host"}
    res = invoke("compat", "--root", str(tmp_path), "--trust-root", "--env-file", str(env), "--torch-npu", "2.6.0.post5", "--json")
    data = json.loads(res.stdout)
    assert data["from"]["torch_npu"] == "flag" and data["from"]["cann"] == "host"
    assert data["verdict"] == "incompatible"


def test_upgrade_from_the_host(tmp_path: Path):
    env = cm_hosttree.build(tmp_path)
    res = invoke("compat", "--root", str(tmp_path), "--trust-root", "--env-file", str(env), "--upgrade", "--cann", "8.5.0", "--json")
    assert res.exit_code == 0, res.output
    plan = json.loads(res.stdout)
    order = [s["component"] for s in plan["steps"]]
    # CANN 8.5.0 supports the 25.0 HDK line: the driver stays, the Python stack moves after CANN
    assert order == ["cann", "torch", "torch_npu"]
    assert plan["target"]["cann"] == "8.5.0" and plan["target"]["driver"] == "25.0.RC1.1"
    assert plan["target"]["python"] == "3.11.6" and plan["verdict_after"] == "compatible"
    plan = json.loads(invoke("compat", "--root", str(tmp_path), "--trust-root", "--env-file", str(env), "--upgrade", "--cann", "9.1.0",
                             "--json").stdout)
    order = [s["component"] for s in plan["steps"]]  # 9.1 refuses HDK 25.0.X: firmware, driver first
    assert order[:3] == ["firmware", "driver", "cann"] and order[-1] == "torch_npu"
    text = invoke("compat", "--root", str(tmp_path), "--trust-root", "--env-file", str(env), "--upgrade", "--cann", "8.5.0").stdout
    assert "Ascend-cann-toolkit_8.5.0" in text
    assert invoke("compat", "--root", str(tmp_path), "--trust-root", "--env-file", str(env), "--upgrade").exit_code == 2


def _check(tmp_path: Path, env: Path):
    res = invoke("check", "--root", str(tmp_path), "--trust-root", "--env-file", str(env), "--json",
                 "--only", "python", "--only", "toolkit", "--only", "driver")
    return {f["id"]: f for f in json.loads(res.stdout)["findings"]}


def test_check_reports_matrix_verdicts_healthy(tmp_path: Path):
    found = _check(tmp_path, cm_hosttree.build(tmp_path))
    for cid in ("python.cann_match", "python.stack_matrix", "toolkit.hdk_match"):
        assert found[cid]["status"] == "ok", found[cid]
    assert "made for CANN 8.2.RC1" in found["python.cann_match"]["summary"]
    assert found["toolkit.hdk_match"]["evidence"]["source"].startswith("https://github.com/Ascend/docs")


def test_check_cann_torch_npu_mismatch(tmp_path: Path):
    env = cm_hosttree.build(tmp_path, cann="8.0.RC3", packages={"torch": "2.6.0", "torch_npu": "2.6.0.post5"})
    f = _check(tmp_path, env)["python.cann_match"]
    assert f["status"] == "fail" and f["category"] == "version_mismatch"
    assert "8.5.0" in f["summary"] and f["evidence"]["source"].startswith("https://")
    assert any("pip install" in c for c in f["fix"]["commands"])


def test_check_cann_too_new_for_driver(tmp_path: Path):
    env = cm_hosttree.build(tmp_path, cann="9.1.0", packages={"torch": "2.9.0", "torch_npu": "2.9.0.post6"},
                            toolkit_families=False)
    found = _check(tmp_path, env)
    # the host's own files already refuse the pair (the driver's compatible_version lacks 9.1's
    # family), so that is the one failure; the release-notes check would say the same and is skipped
    f = found["toolkit.driver_compat"]
    assert f["status"] == "fail" and f["category"] == "version_mismatch"
    assert found["toolkit.hdk_match"]["status"] == "skip"
    assert found["python.cann_match"]["status"] == "ok"
    from compat_matrix import evaluate

    pair = evaluate({"cann": "9.1.0", "driver": "25.0.rc1.1"}).pair("cann", "driver")
    assert pair.verdict == "incompatible" and "25.0.X" in pair.reason + (pair.required or "")


def test_check_python_without_wheel(tmp_path: Path):
    env = cm_hosttree.build(tmp_path, python="3.12.3")
    f = _check(tmp_path, env)["python.stack_matrix"]
    assert f["status"] == "fail" and "3.12" in f["summary"]
