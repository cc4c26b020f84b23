"""`ascend-doctor fleet` over 50 node reports from simulated hosts: two nodes drifted from
the majority stack, and fleet names exactly those two with what differs."""
from __future__ import annotations

import copy
import io
import json
import random
import subprocess
import sys
from contextlib import redirect_stdout
from pathlib import Path

import pytest

import runtime_sim
from ascend_doctor.commands.check import run_check
from ascend_doctor.commands.fleet import run_fleet

DATA = Path(__file__).parent / "data"


def check_report(scenario, dest):
    built = runtime_sim.build(scenario, dest)
    out = io.StringIO()
    with redirect_stdout(out):
        run_check(root=Path(built.root), env_file=Path(built.env_file), fmt="json", trust_root=True)
    return json.loads(out.getvalue())


@pytest.fixture(scope="module")
def reports(tmp_path_factory):
    """50 nodes: 48 healthy_910b builds with small variations that are not drift (host names,
    timings, memory in use, the driver version spelled in upper case), one node whose torch was
    upgraded under torch_npu (torch_npu_mismatch) and one left on the previous HDK with a sick NPU."""
    tmp = tmp_path_factory.mktemp("fleet")
    healthy = check_report("healthy_910b", tmp / "healthy")
    torch_up = check_report("torch_npu_mismatch", tmp / "torch_up")
    old_hdk = check_report(str(DATA / "node_old_hdk.yaml"), tmp / "old_hdk")
    rng = random.Random(13)
    out = tmp / "reports"
    drifted = {"npu-017": torch_up, "npu-033": old_hdk}
    for i in range(1, 51):
        name = f"npu-{i:03d}"
        doc = copy.deepcopy(drifted.get(name, healthy))
        doc["host"]["hostname"] = f"{name}.dc1.example"
        doc["summary"]["duration_s"] = round(rng.uniform(0.3, 1.2), 3)
        for f in doc["findings"]:
            f["duration_ms"] = round(rng.uniform(0.1, 50), 1)
            for d in (f.get("data") or {}).get("devices", []):
                d["memory_mb"] = [rng.randint(2800, 4000), d["memory_mb"][1]]
        if i % 7 == 0 and name not in drifted:
            doc["host"]["stack"]["driver"] = doc["host"]["stack"]["driver"].upper()  # same version, other spelling
        (out / name).mkdir(parents=True)
        (out / name / "check.json").write_text(json.dumps(doc))
    return out


def _fleet(paths, fmt="json"):
    out = io.StringIO()
    code = run_fleet([str(p) for p in paths], fmt=fmt, stream=out)
    return code, out.getvalue()


def test_fleet_names_exactly_the_two_drifted_nodes(reports):
    code, text = _fleet([reports])
    doc = json.loads(text)
    assert code == 1 and doc["nodes"] == 50 and doc["clean"] == 48
    assert sorted(doc["fix_first"]) == ["npu-017.dc1.example", "npu-033.dc1.example"]
    maj = {k: v["value"] for k, v in doc["majority"].items()}
    assert maj["driver"].lower() == "25.0.rc1.1" and maj["firmware"] == "7.7.0.1.231" and maj["cann"] == "8.2.RC1"
    assert maj["torch_npu"] == "2.1.0.post13" and maj["torch"] == "2.1.0" and maj["devices"] == "8"
    by_node = {d["node"]: d for d in doc["differing"]}
    torch_up = by_node["npu-017.dc1.example"]
    assert [(d["field"], d["value"], d["majority"]) for d in torch_up["differs"]] == [("torch", "2.2.0", "2.1.0")]
    assert "python.torch_npu_match" in {f["id"] for f in torch_up["failing"]}
    old = by_node["npu-033.dc1.example"]
    assert {(d["field"], d["value"]) for d in old["differs"]} == {("driver", "24.1.rc3"), ("firmware", "7.5.0.1.129")}
    assert old["unhealthy"] == ["npu 5 chip 0: Warning"] and old["failing"] == []
    # a failing check ranks before a driver on another HDK
    assert doc["fix_first"][0] == "npu-017.dc1.example"


def test_text_and_markdown_say_what_differs(reports):
    code, text = _fleet([reports], fmt="text")
    assert "50 nodes" in text and "48 nodes run it and pass every check; 2 differ or fail" in text
    assert "torch 2.2.0 (fleet: 2.1.0 on 49)" in text and "driver 24.1.rc3 (fleet: 25.0.rc1.1 on 49)" in text.replace("25.0.RC1.1", "25.0.rc1.1")
    assert "unhealthy npu 5 chip 0: Warning" in text and "fail python.torch_npu_match" in text
    _, md = _fleet([reports], fmt="md")
    assert "| 1 | `npu-017.dc1.example` |" in md


def test_same_fleet_from_paths_without_host_names(reports, tmp_path):
    # reports as Ansible fetches them (one directory per node, no hostname in the JSON)
    for node in ("npu-001", "npu-017", "npu-020"):
        doc = json.loads((reports / node / "check.json").read_text())
        del doc["host"]["hostname"]
        (tmp_path / node).mkdir()
        (tmp_path / node / "check.json").write_text(json.dumps(doc))
    code, text = _fleet([tmp_path])
    doc = json.loads(text)
    assert doc["fix_first"] == ["npu-017"] and doc["nodes"] == 3


def test_clean_fleet_exits_0_and_bad_inputs(reports, tmp_path):
    code, _ = _fleet([reports / "npu-001", reports / "npu-002"])
    assert code == 0
    (tmp_path / "junk.json").write_text("{\"not\": \"a report\"}")
    code, text = _fleet([reports / "npu-001", tmp_path / "junk.json"])
    assert code == 0 and json.loads(text)["skipped"][0]["reason"].startswith("not the JSON of")
    for args, msg in (([str(tmp_path / "missing")], "no such file"), ([str(tmp_path / "junk.json")], "no node report")):
        proc = subprocess.run([sys.executable, "-m", "ascend_doctor", "fleet", *args], capture_output=True, text=True, timeout=60)
        assert proc.returncode == 2 and msg in proc.stderr and "Traceback" not in proc.stderr


def test_a_tie_is_reported_not_hidden(reports, tmp_path):
    # two nodes, two torch versions: neither is the majority; both nodes are named, the tie said
    code, text = _fleet([reports / "npu-001", reports / "npu-017"])
    doc = json.loads(text)
    assert doc["ties"]["torch"] == ["2.1.0", "2.2.0"]
    assert doc["fix_first"] == ["npu-017.dc1.example"]  # the older version is the reference; npu-017 also fails
    _, out = _fleet([reports / "npu-001", reports / "npu-017"], fmt="text")
    assert "no majority for torch: 2.1.0 and 2.2.0 on 1 nodes each" in out
