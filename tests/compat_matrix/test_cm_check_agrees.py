"""`check` and `compat` judge the same host's Python the same way.

Both read the Python range from compat_matrix (PyTorch's wheels per Python in torch_python.yaml,
torch_npu's wheels per Python from https://pypi.org/simple/torch-npu/ in torch_npu.yaml), so the
verdict `compat` prints for Python ~ torch and the status `check` gives python.stack_matrix must
map onto each other (compatible -> ok, unknown / not_recommended -> warn, incompatible -> fail),
and a Python inside the range is no warning in either verb.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Dict, Optional

import pytest
from typer.testing import CliRunner

from ascend_doctor.cli import app
from compat_matrix import maintained_python

import cm_hosttree

runner = CliRunner(mix_stderr=False) if "mix_stderr" in CliRunner.__init__.__code__.co_varnames else CliRunner()
STATUS = {"compatible": "ok", "unknown": "warn", "not_recommended": "warn", "incompatible": "fail"}


def _both(root: Path, env: Path):
    common = ("--root", str(root), "--trust-root", "--env-file", str(env), "--json")
    chk = runner.invoke(app, ["check", *common, "--only", "python"])
    found = {f["id"]: f for f in json.loads(chk.stdout)["findings"]}
    cmp_ = runner.invoke(app, ["compat", *common])
    data = json.loads(cmp_.stdout)
    return found, data


def _pair(data: Dict, a: str, b: str) -> Optional[Dict]:
    return next((p for p in data["pairs"] if {p["a"], p["b"]} == {a, b}), None)


@pytest.mark.parametrize("python,packages,verdict", [
    # this very machine's case: torch 2.13.0+cpu on Python 3.11, no torch_npu; torch-npu 2.13.0
    # ships cp310-cp314 wheels on PyPI although no source names its CANN
    ("3.11.7", {"torch": "2.13.0+cpu"}, "compatible"),
    ("3.11.6", {"torch": "2.1.0", "torch_npu": "2.1.0.post13"}, "compatible"),
    ("3.12.3", {"torch": "2.1.0", "torch_npu": "2.1.0.post13"}, "incompatible"),  # no cp312 build
    ("3.9.18", {"torch": "2.13.0"}, "incompatible"),  # PyTorch 2.13 has no cp39 wheel
])
def test_check_and_compat_agree_on_the_same_host(tmp_path: Path, python, packages, verdict):
    env = cm_hosttree.build(tmp_path, python=python, packages=packages)
    found, data = _both(tmp_path, env)
    assert data["stack"]["python"] == python
    pairs = [p for p in data["pairs"] if "python" in (p["a"], p["b"])]
    assert pairs, data
    worst = max(pairs, key=lambda p: ["compatible", "unknown", "not_recommended", "incompatible"].index(p["verdict"]))
    assert worst["verdict"] == verdict, worst
    matrix = found["python.stack_matrix"]
    assert matrix["status"] == STATUS[verdict], matrix
    if verdict != "compatible":
        assert matrix["evidence"]["required"] == worst["required"]
    # the interpreter on its own: inside the maintained range, so no warning either
    assert found["python.interpreter"]["status"] == "ok", found["python.interpreter"]


def test_python_inside_the_range_is_not_a_warning_in_either_verb(tmp_path: Path):
    env = cm_hosttree.build(tmp_path, python="3.11.7", packages={"torch": "2.13.0+cpu"})
    found, data = _both(tmp_path, env)
    pair = _pair(data, "python", "torch")
    assert pair["verdict"] == "compatible", pair
    assert pair["required"] == "Python 3.10-3.14 (published torch_npu wheels)"
    assert found["python.stack_matrix"]["status"] == "ok"
    assert not any(f["status"] == "warn" and "Python 3.10-3.14" in json.dumps(f) for f in found.values())


@pytest.mark.parametrize("python,side", [("3.7.17", "older"), ("3.15.0", "newer")])
def test_interpreter_outside_the_range_warns_with_the_compat_range(tmp_path: Path, python, side):
    series, source = maintained_python()
    env = cm_hosttree.build(tmp_path, python=python, packages={})
    found, _ = _both(tmp_path, env)
    f = found["python.interpreter"]
    assert f["status"] == "warn" and side in f["summary"]
    assert f["evidence"]["required"] == "Python %s-%s" % (series[0], series[-1])
    assert f["evidence"]["source"] == source
