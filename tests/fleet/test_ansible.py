"""The Ansible role, run for real: ansible-playbook against three "nodes" on this machine
(local connection), each judging a simulated host through --root. It installs the tool
from a wheelhouse with pip --no-index (no network on the node), runs check, triage and
bundle, fetches the results, and the fetched reports feed `fleet`."""
from __future__ import annotations

import io
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import runtime_sim
import runtime_sim.host as sim_host
from ascend_doctor.commands.fleet import run_fleet
from ascend_doctor.commands.triage import run_triage

REPO = Path(__file__).resolve().parents[2]
PLAYBOOK = REPO / "deploy" / "ansible" / "playbook.yml"


def _tool(name):
    path = Path(sys.executable).parent / name
    return str(path) if path.exists() else shutil.which(name)


@pytest.fixture(scope="module")
def played(tmp_path_factory):
    assert _tool("ansible-playbook"), "ansible-core is in the test extra: pip install -e '.[test]'"
    tmp = tmp_path_factory.mktemp("ansible")
    # the wheelhouse the controller ships: this checkout and its dependencies, as wheels
    wheelhouse = tmp / "wheelhouse"
    src = tmp / "src"  # built from a copy: nothing is written into the checkout, no stale build/ is packed
    for name in ("pyproject.toml", "README.md", "ascend_doctor", "compat_matrix", "runtime_sim"):
        if (REPO / name).is_dir():
            shutil.copytree(REPO / name, src / name, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        else:
            src.mkdir(exist_ok=True)
            shutil.copy(REPO / name, src / name)
    proc = subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-build-isolation", "-w", str(wheelhouse), str(src)],
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-2000:]
    job = sim_host.run("hccl_timeout", tmp / "node-a")  # a node whose last job failed in HCCL
    healthy = runtime_sim.build("healthy_910b", tmp / "node-b")
    drifted = runtime_sim.build("torch_npu_mismatch", tmp / "node-c")
    hosts = {}
    for name, built, logs in (("node-a", job.host, job.log_dir), ("node-b", healthy, tmp / "node-b" / "no-logs"),
                              ("node-c", drifted, tmp / "node-c" / "no-logs")):
        hosts[name] = {"ansible_connection": "local", "ansible_python_interpreter": sys.executable,
                       "ascend_doctor_host_args": ["--root", str(built.root), "--env-file", str(built.env_file), "--trust-root"],
                       "ascend_doctor_log_root": str(logs),
                       # three "nodes" share this machine: each keeps its own scratch directory
                       "ascend_doctor_workdir": str(tmp / "work" / name)}
    inventory = tmp / "inventory.json"
    inventory.write_text(json.dumps({"npu_nodes": {"hosts": hosts}}))
    extra = tmp / "vars.json"
    extra.write_text(json.dumps({"ascend_doctor_wheelhouse": str(wheelhouse), "ascend_doctor_python": sys.executable,
                                 "ascend_doctor_venv": str(tmp / "node-venv"),
                                 "ascend_doctor_reports": str(tmp / "reports")}))
    env = dict(os.environ, ANSIBLE_LOCAL_TEMP=str(tmp / "ansible-local"), ANSIBLE_REMOTE_TEMP=str(tmp / "ansible-remote"),
               ANSIBLE_NOCOLOR="1", ANSIBLE_PIPELINING="1", ANSIBLE_RETRY_FILES_ENABLED="0", ANSIBLE_HOME=str(tmp / "ansible-home"),
               PIP_NO_INDEX="1")  # nothing may come from an index on the node
    env.pop("PIP_INDEX_URL", None)
    proc = subprocess.run([_tool("ansible-playbook"), "-i", str(inventory), "-e", f"@{extra}", "-f", "1", str(PLAYBOOK)],
                          capture_output=True, text=True, timeout=900, env=env, cwd=tmp)
    print(proc.stdout[-3000:])
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]
    return {"tmp": tmp, "reports": tmp / "reports", "log": proc.stdout, "venv": tmp / "node-venv"}


def test_the_play_installs_offline_runs_and_fetches(played):
    reports = played["reports"]
    assert (played["venv"] / "bin" / "ascend-doctor").exists()
    assert "ok=" in played["log"] and "failed=0" in played["log"]
    for node in ("node-a", "node-b", "node-c"):
        check = json.loads((reports / node / "check.json").read_text())
        assert check["schema"] == 1 and check["findings"]
        assert (reports / node / "bundle.tar.gz").stat().st_size > 0
    assert not (reports / "node-b" / "triage.json").exists()  # no log root there: triage is skipped
    triage = json.loads((reports / "node-a" / "triage.json").read_text())
    assert triage["job"]["first_failing_rank"] == 3 and triage["incidents"][0]["category"] == "hccl_comm"


def test_fetched_reports_feed_fleet(played):
    out = io.StringIO()
    code = run_fleet([str(played["reports"])], fmt="json", stream=out)
    doc = json.loads(out.getvalue())
    # check.json and bundle.tar.gz of each node: six reports, three nodes twice over
    assert code == 1 and doc["nodes"] == 6
    assert {n.split("/")[0] for n in doc["fix_first"]} == {"node-c"}
    diffs = {(d["field"], d["value"]) for n in doc["differing"] for d in n["differs"]}
    assert diffs == {("torch", "2.2.0")}
    out = io.StringIO()
    run_fleet([str(p) for p in sorted(played["reports"].glob("*/check.json"))], fmt="json", stream=out)
    assert json.loads(out.getvalue())["fix_first"] == ["node-c"]


def test_fetched_bundle_triages_like_the_node(played):
    out = io.StringIO()
    run_triage([str(played["reports"] / "node-a" / "bundle.tar.gz")], fmt="json", out=out, err=io.StringIO())
    doc = json.loads(out.getvalue())
    assert doc["job"]["first_failing_rank"] == 3
