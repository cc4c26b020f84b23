"""A tree given with --root runs none of its programs unless --trust-root is given: its
npu-smi and python3 here write a marker file when they run. Without the flag, check and
compat still report the Python stack, read from the tree's dist-info metadata."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.check import hosttree as ht

MARKER_SCRIPT = "#!/bin/sh\necho ran \"$0\" >> {marker}\n{rest}"


def _hostile_tree(tmp_path: Path) -> tuple:
    root = tmp_path / "root"
    env_file = ht.build(root, ht.HostSpec())
    marker = tmp_path / "marker"
    for rel in ("usr/local/bin/npu-smi", "usr/bin/python3"):
        path = root / rel
        original = path.read_text() if path.exists() else "exit 0\n"
        rest = original.split("\n", 1)[1] if original.startswith("#!") else original
        path.write_text(MARKER_SCRIPT.format(marker=marker, rest=rest))
        path.chmod(0o755)
    return root, env_file, marker


def _doctor(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "ascend_doctor", *args], capture_output=True, text=True, timeout=120)


def test_check_runs_nothing_from_an_untrusted_tree_and_reads_dist_info(tmp_path):
    root, env_file, marker = _hostile_tree(tmp_path)
    res = _doctor("check", "--root", str(root), "--env-file", str(env_file), "--json")
    assert res.returncode in (0, 1), res.stderr
    assert not marker.exists(), marker.read_text()
    findings = {f["id"]: f for f in json.loads(res.stdout)["findings"]}
    assert findings["python.packages"]["status"] == "ok"
    assert findings["python.packages"]["summary"] == "torch 2.1.0, torch_npu 2.1.0.post10"
    assert "not run" in findings["python.interpreter"]["summary"]
    assert findings["npu_smi.info"]["status"] == "skip" and "--trust-root" in findings["npu_smi.info"]["summary"]
    # the same tree with the flag: both programs run (so the marker test above can fail)
    res = _doctor("check", "--root", str(root), "--trust-root", "--env-file", str(env_file), "--json")
    assert res.returncode in (0, 1), res.stderr
    ran = marker.read_text()
    assert "npu-smi" in ran and "python3" in ran


def test_compat_runs_nothing_from_an_untrusted_tree_and_reads_dist_info(tmp_path):
    root, env_file, marker = _hostile_tree(tmp_path)
    res = _doctor("compat", "--root", str(root), "--env-file", str(env_file), "--json")
    assert res.returncode in (0, 1), res.stderr
    assert not marker.exists()
    data = json.loads(res.stdout)
    assert data["stack"]["torch"] == "2.1.0" and data["stack"]["torch_npu"] == "2.1.0.post10", data


def test_a_saved_npu_smi_output_stands_in_for_the_tree_s_npu_smi(tmp_path):
    root, env_file, marker = _hostile_tree(tmp_path)
    saved = tmp_path / "npu-smi.txt"
    trusted = _doctor("check", "--root", str(root), "--trust-root", "--env-file", str(env_file), "--json",
                      "--only", "npu_smi.info")
    live = {f["id"]: f for f in json.loads(trusted.stdout)["findings"]}["npu_smi.info"]
    # what the tree's npu-smi prints, saved as a user would (`npu-smi info > npu-smi.txt`)
    saved.write_bytes((ht.DATA / "npu_smi" / ht.HostSpec().npu_smi).read_bytes())
    marker.unlink()
    res = _doctor("check", "--root", str(root), "--env-file", str(env_file), "--json", "--only", "npu_smi.info",
                  "--npu-smi", str(saved))
    assert not marker.exists()
    found = {f["id"]: f for f in json.loads(res.stdout)["findings"]}["npu_smi.info"]
    assert found["status"] == live["status"] == "ok"
    assert found["summary"] == live["summary"]


def test_trust_root_needs_a_root():
    res = _doctor("check", "--trust-root")
    assert res.returncode == 2 and "--trust-root goes with --root" in res.stderr


def test_sim_trusts_the_tree_it_built():
    res = _doctor("check", "--sim", "healthy_910b", "--json", "--only", "npu_smi.info", "--only", "python")
    findings = {f["id"]: f for f in json.loads(res.stdout)["findings"]}
    assert findings["npu_smi.info"]["status"] == "ok"
    assert "not run" not in findings["python.interpreter"]["summary"]
