"""`ascend-doctor opcheck compare|record|versions`: output formats, exit codes, bad input (no torch)."""
from __future__ import annotations

import json
import sys

import pytest

from ascend_doctor.commands.opcheck import run_compare, run_record, run_versions
from ascend_doctor.errors import UsageError

MANIFEST = {
    "schema": 1,
    "recorded": {"torch": "2.13.0+cpu", "mode": "eager", "complete": True},
    "ops": [
        {"op": "aten::_transformer_encoder_layer_fwd", "calls": 1, "dispatch": ["CPU", "Meta"]},
        {"op": "aten::argmax", "calls": 2, "dispatch": ["CPU", "CompositeExplicitAutogradNonFunctional", "Meta"]},
        {"op": "aten::argmax.out", "calls": 2, "contexts": [{"within": ["aten::argmax"], "calls": 2}]},
        {"op": "aten::mm", "calls": 5},
    ],
}


@pytest.fixture()
def mpath(tmp_path):
    p = tmp_path / "model.ops.json"
    p.write_text(json.dumps(MANIFEST))
    return p


def test_text_report(mpath, capsys):
    assert run_compare(str(mpath), from_v="2.1.0.post10", to_v="2.1.0.post12") == 0
    out = capsys.readouterr().out
    assert "from 2.1.0.post10 -> v2.1.0-6.0.0" in out and "to   2.1.0.post12 -> v2.1.0-7.0.0" in out
    assert "Already on the CPU in both versions (1)" in out and "aten::_transformer_encoder_layer_fwd" in out
    assert "What to test (1)" in out and "aten::argmax.out (npu)" in out
    assert "CAUTION: The operator" in out  # how the fallback shows up on the NPU


def test_json_report(mpath, capsys):
    assert run_compare(str(mpath), from_v="2.1.0.post10", to_v="2.1.0.post12", json_flag=True) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["schema"] == 1 and doc["verdict"] == "changes"
    assert doc["from"]["branch"] == "v2.1.0-6.0.0" and doc["to"]["cann"] == "8.1.RC1"
    assert doc["summary"]["on_cpu_in_both"] == ["aten::_transformer_encoder_layer_fwd"]
    argmax = next(o for o in doc["ops"] if o["op"] == "aten::argmax")
    assert argmax["from"]["status"] == "npu" and argmax["to"]["status"] == "decomposed"
    assert argmax["change"] == "removed_but_decomposed" and argmax["children"] == [{"op": "aten::argmax.out", "status": "npu"}]


def test_markdown_report(mpath, capsys):
    run_compare(str(mpath), from_v="2.1.0.post10", to_v="2.1.0.post12", fmt="md", show_all=True)
    out = capsys.readouterr().out
    assert out.startswith("# opcheck:") and "| op | calls | from | to | why |" in out and "## All ops" in out


def test_fail_on_levels(mpath, capsys):
    assert run_compare(str(mpath), from_v="2.1.0.post10", to_v="2.1.0.post12", fail_on="fallback") == 1
    assert run_compare(str(mpath), from_v="2.1.0.post10", to_v="2.1.0.post12", fail_on="change") == 1
    assert run_compare(str(mpath), from_v="2.1.0.post10", to_v="2.1.0.post10", fail_on="unsupported") == 0
    capsys.readouterr()


def test_breaking_upgrade_exits_1(tmp_path, capsys):
    p = tmp_path / "custom.ops.json"
    p.write_text(json.dumps({"schema": 1, "ops": ["npu::npu_fused_cross_entropy_loss_with_max_sum"]}))
    assert run_compare(str(p), from_v="2.7.1", to_v="7.3.0") == 1
    assert "BREAKS" in capsys.readouterr().out


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"from_v": "2.1.0.post10", "to_v": "banana"}, "unknown version 'banana'; known: any torch_npu build on the package index (67 builds"),
        ({"from_v": "nope", "to_v": "26.1.0"}, "unknown version 'nope'"),
        ({"from_v": "2.1.0.post10", "to_v": None}, "--to VERSION is required"),
        ({"from_v": "2.1.0.post10", "to_v": "26.1.0", "fail_on": "sometimes"}, "--fail-on sometimes"),
        ({"from_v": "2.1.0.post10", "to_v": "26.1.0", "fmt": "xml"}, "--format xml"),
        ({"from_v": "2.1.0.post10", "to_v": "26.1.0", "replay_dir": "/tmp", "soc": "banana"}, "--soc banana: choose one of Ascend910PremiumA"),
        ({"from_v": "2.1.0.post10", "to_v": "26.1.0", "soc": "Ascend910B3"}, "--cann and --soc choose the simulated host of --replay DIR"),
    ],
)
def test_usage_errors(mpath, kwargs, message):
    with pytest.raises(UsageError) as e:
        run_compare(str(mpath), **kwargs)
    assert message in str(e.value) and "\n" not in str(e.value)


def test_not_json_manifest_lists_known_versions_on_a_bad_version_too(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text("CAUTION: this is a log, not a manifest")
    with pytest.raises(UsageError, match="not JSON"):
        run_compare(str(bad), from_v="2.1.0.post10", to_v="26.1.0")


def test_record_usage_errors(tmp_path):
    with pytest.raises(UsageError, match="give the program after --"):
        run_record([])
    with pytest.raises(UsageError, match="no such file"):
        run_record(["missing_script.py"])
    with pytest.raises(UsageError, match="expected `python SCRIPT.py"):
        run_record(["ls", "-l"])
    with pytest.raises(UsageError, match="--mode gpu: choose one of eager, fake, meta"):
        run_record(["x.py"], mode="gpu")


def test_versions_listing(capsys):
    assert run_versions(json_flag=True) == 0
    doc = json.loads(capsys.readouterr().out)
    assert len(doc["releases"]) == 15 and doc["releases"][0]["sources"][0]["url"].startswith("https://github.com/Ascend/")


def _python_with(tmp_path, packages):
    """A wrapper interpreter whose sys.path holds dist-info metadata for ``packages``."""
    site = tmp_path / "site"
    for name, version in packages.items():
        meta = site / f"{name}-{version}.dist-info"
        meta.mkdir(parents=True)
        (meta / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n\n")
    wrapper = tmp_path / "python3"
    wrapper.write_text(f'#!/bin/sh\nPYTHONPATH="{site}" exec "{sys.executable}" "$@"\n')
    wrapper.chmod(0o755)
    return str(wrapper)


def test_default_from_is_the_torch_npu_of_the_target_python(mpath, tmp_path, capsys):
    py = _python_with(tmp_path, {"torch_npu": "2.1.0.post10", "torch": "2.1.0"})
    assert run_compare(str(mpath), to_v="2.1.0.post12", python=py, json_flag=True) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["from"]["given"] == "2.1.0.post10" and doc["from"]["branch"] == "v2.1.0-6.0.0"


def test_default_from_without_torch_npu_asks_for_it(mpath, tmp_path):
    py = _python_with(tmp_path, {"torch": "2.1.0"})
    with pytest.raises(UsageError, match="no torch_npu found in .*pass --from VERSION"):
        run_compare(str(mpath), to_v="26.1.0", python=py)
