"""`ascend-doctor bundle` on a simulated host that holds identifying values: none of them
leaves in the bundle, the manifest says what was masked where, and the masked logs still
triage to the same root cause and first failing rank."""
from __future__ import annotations

import io
import json
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest

from ascend_doctor.commands.bundle import run_bundle
from ascend_doctor.commands.triage import run_triage

DATA = Path(__file__).parent / "data"
TOKEN = "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"
HOSTNAME = "npu-node-17.cluster.example"
# the format of torch's c10d socket warning (https://github.com/KinWaiCheuk/Jointist/issues/3),
# with this host's name and its peer's address
C10D = ("[rank0]:[W1024 11:16:53.102345678 socket.cpp:697] [c10d] The client socket has failed to connect to "
        f"[{HOSTNAME}]:29500 (errno: 110 - Connection timed out).\n"
        "[rank5]:[W1024 11:16:53.102345999 socket.cpp:752] [c10d] The client socket has failed to connect to "
        "[::ffff:10.20.3.41]:29500 (errno: 110 - Connection timed out).\n")


@pytest.fixture(scope="module")
def host(tmp_path_factory):
    import runtime_sim.host as sim_host

    tmp = tmp_path_factory.mktemp("node")
    result = sim_host.run(str(DATA / "hccl_timeout_alice.yaml"), tmp / "host")
    root = Path(result.host.root)
    (root / "etc" / "hostname").write_text(HOSTNAME + "\n")
    console = Path(result.console_file)
    console.write_text(C10D + console.read_text())
    return {"root": root, "env": Path(result.host.env_file), "console": console,
            "logs": Path(result.log_dir), "tmp": tmp}


def _bundle(host, name, redact=True):
    out = io.StringIO()
    path = host["tmp"] / name
    code = run_bundle(output=str(path), root=host["root"], env_file=host["env"], logs=[str(host["console"])],
                      redact=redact, trust_root=True, fmt="json", stream=out)
    assert code == 0
    return path, json.loads(out.getvalue())


def _members(path):
    with tarfile.open(path) as tf:
        return {m.name: tf.extractfile(m).read() for m in tf if m.isreg()}


def _triage(paths):
    out, err = io.StringIO(), io.StringIO()
    run_triage([str(p) for p in paths], fmt="json", out=out, err=err)
    return json.loads(out.getvalue())


@pytest.fixture(scope="module")
def redacted(host):
    return _bundle(host, "redacted.tar.gz")


def test_no_identifier_leaves_the_host(host, redacted):
    path, summary = redacted
    members = _members(path)
    everything = "\n".join(list(members) + [d.decode("utf-8", "replace") for d in members.values()])
    # what the host holds: the token in the environment, the user in paths and passwd, addresses in the plogs
    assert TOKEN in host["env"].read_text() and HOSTNAME in host["console"].read_text()
    plogs = "".join(p.read_text(errors="replace") for p in host["logs"].rglob("*.log"))
    assert "127.10.0.1" in plogs and "alice" in host["console"].read_text()
    for secret in (TOKEN, HOSTNAME, "npu-node-17", "alice", "127.10.0.1", "10.20.3.41"):
        assert secret not in everything, secret
    assert summary["secret_env"] == ["HF_TOKEN"]
    env = next(d for n, d in members.items() if n.endswith("/env.txt")).decode()
    assert "HF_TOKEN=<set>\n" in env and "USER=user-1\n" in env and "HOME=/home/user-1\n" in env


def test_manifest_lists_what_was_masked_where(redacted):
    path, _ = redacted
    members = _members(path)
    first = next(iter(members))
    assert first.endswith("/manifest.json")  # first member: a streaming reader knows it is a bundle
    manifest = json.loads(members[first])
    assert manifest["kind"] == "ascend-doctor bundle" and manifest["redacted"] is True
    masked = manifest["redaction"]["masked"]
    by_kind = {}
    for entry in masked:
        by_kind.setdefault(entry["kind"], []).append(entry)
    assert {"ipv4", "hostname", "user", "secret"} <= set(by_kind)
    # the simulated node's address is masked in every plog that holds it, with one mask
    node = max(by_kind["ipv4"], key=lambda e: e["count"])
    assert len([f for f in node["files"] if "/plog/" in f]) >= 8
    assert any(f.endswith("console.log") for e in by_kind["hostname"] for f in e["files"])
    assert any(f == "env.txt" for e in by_kind["secret"] for f in e["files"])
    names = {f["name"] for f in manifest["files"]}
    assert {"check.json", "compat.json", "triage.json", "SUMMARY.md", "env.txt", "version.json"} <= names
    assert any(n.startswith("raw/commands/") and "npu-smi" in n for n in names)
    assert "raw/files/usr/local/Ascend/driver/version.info" in names
    assert any(n.startswith("logs/home/user-1/ascend/log/run/plog/") for n in names)
    assert {"path": "/etc/passwd", "reason": "read, not copied: the machine's account list"} in manifest["left_out"]
    for f in manifest["files"]:
        data = members[first.split("/")[0] + "/" + f["name"]]
        assert len(data) == f["bytes"]
    # the manifest never holds an original value
    assert "alice" not in members[first].decode() and TOKEN not in members[first].decode()


def test_masked_logs_triage_to_the_same_root_cause_and_rank(host, redacted):
    path, summary = redacted
    original = _triage([host["logs"], host["console"]])
    from_bundle = _triage([path])
    assert original["job"]["first_failing_rank"] == 3
    for doc in (from_bundle, json.loads(next(d for n, d in _members(path).items() if n.endswith("/triage.json")))):
        assert doc["job"]["first_failing_rank"] == original["job"]["first_failing_rank"]
        assert doc["job"]["method"] == original["job"]["method"]
        first, orig = doc["incidents"][0], original["incidents"][0]
        assert (first["category"], first["title"], first["rank"], first["role"]) == \
            (orig["category"], orig["title"], orig["rank"], orig["role"])
        # the same symptoms on the same ranks (their order among equals follows the reading order)
        key = lambda i: (str(i["role"]), str(i["category"]), str(i["title"]), -1 if i["rank"] is None else i["rank"])  # noqa: E731
        assert sorted(map(key, doc["incidents"])) == sorted(map(key, original["incidents"]))
    # triage reads only the logs of a bundle, not its reports and summary
    assert from_bundle["stats"]["files"] == original["stats"]["files"]
    assert summary["verdicts"]["triage"]["first_failing_rank"] == 3


def test_no_redact_keeps_the_values(host):
    path, summary = _bundle(host, "plain.tar.gz", redact=False)
    members = _members(path)
    text = "\n".join(d.decode("utf-8", "replace") for d in members.values())
    assert TOKEN in text and "alice" in text and HOSTNAME in text and "127.10.0.1" in text
    assert summary["redacted"] is False and summary["masked_kinds"] == {}


def test_summary_markdown_is_masked_and_names_the_root_cause(redacted):
    path, _ = redacted
    md = next(d for n, d in _members(path).items() if n.endswith("/SUMMARY.md")).decode()
    assert "first failing rank: **rank 3**" in md and "[hccl_comm]" in md
    assert "HF_TOKEN" in md and "alice" not in md and "**Stack:**" in md and "CANN 8.2.RC1" in md


def test_bad_output_is_one_line_exit_2(tmp_path):
    for args, msg in ((["-o", str(tmp_path / "nodir" / "x.tar.gz")], "no such directory"),
                      (["-o", str(tmp_path / "x.zip")], ".tar.gz"),
                      (["--sim", "no_such_scenario"], "unknown scenario"),
                      (["--logs", str(tmp_path / "missing.log")], "no such file")):
        proc = subprocess.run([sys.executable, "-m", "ascend_doctor", "bundle", *args], capture_output=True, text=True,
                              timeout=60, cwd=tmp_path)
        assert proc.returncode == 2, proc.stderr
        assert msg in proc.stderr and len(proc.stderr.strip().splitlines()) == 1 and "Traceback" not in proc.stderr


def test_sim_runtime_scenario_bundles_its_job(tmp_path):
    out = io.StringIO()
    assert run_bundle(output=str(tmp_path / "sim.tar.gz"), sim="hccl_timeout", fmt="json", stream=out) == 0
    doc = json.loads(out.getvalue())
    assert doc["verdicts"]["triage"]["first_failing_rank"] == 3 and doc["verdicts"]["check"] == "warn"
    names = list(_members(tmp_path / "sim.tar.gz"))
    assert any(n.endswith("/logs/given/console.log") for n in names)


def test_logs_are_bounded_newest_first_and_cut_at_a_line(host, tmp_path, monkeypatch):
    from ascend_doctor.bundle import collect

    monkeypatch.setattr(collect, "LOG_FILE_BYTES", 64 << 10)
    monkeypatch.setattr(collect, "LOG_TOTAL_BYTES", 320 << 10)
    path, summary = _bundle(host, "small.tar.gz")
    members = _members(path)
    manifest = json.loads(next(iter(members.values())))
    logs = [f for f in manifest["files"] if f["kind"] == "log" and "/given/" not in f["name"]]
    assert sum(f["bytes"] for f in logs) <= 320 << 10
    cut = [f for f in logs if "truncated" in f]
    assert cut and all(f["bytes"] <= 64 << 10 and f["truncated"]["of_bytes"] > f["bytes"] for f in cut)
    for f in cut:  # a kept tail starts at a line start: a whole plog line
        data = next(d for n, d in members.items() if n.endswith("/" + f["name"]))
        assert data.startswith(b"[")
    assert any("log budget" in item["reason"] for item in manifest["left_out"])
