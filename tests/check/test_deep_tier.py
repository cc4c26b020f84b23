"""`check --tier deep`: import torch_npu, is_available, one op on NPU 0 — in the target Python.

The simulated hosts' torch_npu stand-in raises what the real wheel raises (see
tests/runtime_sim/data/torch_npu_errors.yaml: the torch-npu 2.13.0 wheel from PyPI, imported
here on a machine without CANN). The failure texts themselves are also explained directly.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Dict

import pytest
import yaml
from typer.testing import CliRunner

from ascend_doctor.checks.runtime import _explain
from ascend_doctor.cli import app

runner = CliRunner()
REAL = yaml.safe_load((Path(__file__).parents[1] / "runtime_sim" / "data" / "torch_npu_errors.yaml").read_text())


def deep(scenario: str) -> Dict[str, dict]:
    res = runner.invoke(app, ["check", "--sim", scenario, "--tier", "deep", "--json"])
    assert res.exit_code in (0, 1), res.output
    return {f["id"]: f for f in json.loads(res.stdout)["findings"]}


def test_healthy_host_runs_an_op():
    f = deep("healthy_910b")
    assert [f[i]["status"] for i in ("runtime.import", "runtime.available", "runtime.small_op")] == ["ok", "ok", "ok"]


def test_without_set_env_the_import_fails_with_the_real_error_and_its_fix():
    f = deep("set_env_not_sourced")
    imp = f["runtime.import"]
    assert imp["status"] == "fail" and imp["category"] == "env_path"
    assert REAL["no_cann_import"]["text"] in imp["summary"]
    assert any("set_env.sh" in c for c in imp["fix"]["commands"])
    assert f["runtime.available"]["status"] == "skip"
    # the host has the ascend-toolkit layout (CANN 8.2.RC1): the fix sources its script, and
    # not the 8.5 layout's /usr/local/Ascend/cann/set_env.sh as well
    sources = [c for c in imp["fix"]["commands"] if c.startswith("source ") and c.endswith("set_env.sh")]
    assert sources == ["source /usr/local/Ascend/ascend-toolkit/set_env.sh"]


def test_closed_device_nodes_are_named_as_the_reason_the_npu_is_invisible():
    f = deep("user_not_in_group")
    avail = f["runtime.available"]
    assert avail["status"] == "fail" and "devices.access" in avail["summary"]
    assert avail["category"] == "device_busy_permission"
    assert any("usermod -aG HwHiAiUser" in c for c in avail["fix"]["commands"])


@pytest.mark.parametrize(
    "key, category",
    [("no_cann_import", "env_path"), ("no_driver_import", "env_path"), ("no_cann_autoload", "env_path")],
)
def test_real_import_failures_are_explained(key, category):
    entry = _explain(REAL[key]["text"])
    assert entry is not None and entry.category == category
    assert entry.fix.commands
