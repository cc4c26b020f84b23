"""``ascend-doctor oom`` end to end: output forms, exit codes, bad input."""
from __future__ import annotations

import json
import pickle

import pytest
from typer.testing import CliRunner

from ascend_doctor.cli import app

from .conftest import DATA, capacity_failure, doctor, load_yaml, trace_failure, write_inputs

runner = CliRunner(mix_stderr=False) if "mix_stderr" in CliRunner.__init__.__code__.co_varnames else CliRunner()
SGLANG = next(c["text"] for c in load_yaml("messages.yaml")["messages"] if "sglang" in c["source"])


def oom(*args, input=None):
    return runner.invoke(app, ["oom", *args], input=input)


def test_text_verdict_first_then_numbers_then_fix():
    res = oom(SGLANG)
    assert res.exit_code == 1
    lines = res.stdout.splitlines()
    assert lines[0].startswith("oom_fragmentation: NPU out of memory on device 0 although PyTorch's cache held 2.34 GiB")
    head = [ln.split(":")[0] for ln in lines if ln and not ln.startswith(" ")]
    assert head.index("numbers (device 0)") < head.index("evidence") < head.index("fix")
    assert "  $ export PYTORCH_NPU_ALLOC_CONF=expandable_segments:True" in lines


def test_json_contract():
    res = oom(SGLANG, "--json", "--torch-npu", "2.7.1.post8")
    data = json.loads(res.stdout)  # stdout holds the JSON and nothing else
    assert res.exit_code == 1 and data["schema"] == 1
    assert (data["verdict"], data["status"], data["category"]) == ("oom_fragmentation", "oom", "oom_fragmentation")
    assert data["numbers"]["requested"] == 72 << 20 and data["number_sources"]["requested"] == "message"
    assert data["rule"]["id"] == "gap_covers_request" and data["kb"] == "oom.npu_fragmentation"
    assert data["fix"]["commands"][0] == "export PYTORCH_NPU_ALLOC_CONF=expandable_segments:True"
    rp2 = next(a for a in data["advice"] if a["option"] == "roundup_power2_divisions")
    assert rp2["supported"] is True and data["torch_npu"].startswith("2.7.1.post8, release line 26.1.0")
    assert set(data) >= {"tool", "evidence", "notes", "inputs", "ratios", "counts", "other_processes"}
    assert oom(SGLANG, "--format", "json", "--torch-npu", "2.7.1.post8").stdout == res.stdout


def test_markdown():
    res = oom(SGLANG, "--format", "md")
    assert res.exit_code == 1 and res.stdout.startswith("# ascend-doctor oom\n\n**oom_fragmentation** (oom)")
    assert "```sh\nexport PYTORCH_NPU_ALLOC_CONF=expandable_segments:True" in res.stdout


def test_stdin_and_all_inputs_together(tmp_path):
    f = trace_failure("training_varlen")
    p = write_inputs(tmp_path, f)
    res = oom("-", "--stats", str(p["stats"]), "--snapshot", str(p["snapshot"]), "--json", input=f.message)
    data = json.loads(res.stdout)
    assert res.exit_code == 1 and data["verdict"] == "oom_fragmentation"
    assert data["inputs"] == ["log:<text>", "stats:memory_stats", "snapshot:snapshot"]
    assert data["counts"]["num_alloc_retries"] == f.result.num_alloc_retries


def test_capacity_end_to_end(tmp_path):
    p = write_inputs(tmp_path, capacity_failure())
    res = doctor("--file", str(p["message"]), "--stats", str(p["stats"]), "--json")
    assert res.returncode == 1 and json.loads(res.stdout)["verdict"] == "oom_capacity" and res.stderr == ""


def test_simulated_job_logs(tmp_path):
    from runtime_sim.host import run
    from runtime_sim.scenarios import load_all

    scenario = next(s for s in load_all() if s.name == "oom_fragmentation_serving")
    result = run(scenario, tmp_path / "run")
    res = oom("--file", str(result.console_file), "--file", str(result.log_dir), "--json")
    data = json.loads(res.stdout)
    assert data["verdict"] == scenario.expect.oom_verdict == "oom_fragmentation"
    f = trace_failure("llm_serving_kv_concat")
    assert data["counts"]["cache_flush_lines"] == f.result.num_alloc_retries  # one plog line per flush
    assert any("appears 2 times" in n for n in data["notes"])  # console and plog copies of one OOM


def test_healthy_exits_zero(tmp_path):
    f = trace_failure("training_varlen", conf="expandable_segments:True")
    p = write_inputs(tmp_path, f)
    res = oom("--stats", str(p["stats"]), "--snapshot", str(p["snapshot"]))
    assert res.exit_code == 0 and res.stdout.startswith("none: no out-of-memory, no stranded memory")


@pytest.mark.parametrize("args,stdin,message", [
    ((), None, "give the out-of-memory line"),
    (("  ",), None, "the text is empty"),
    (("-",), "", "the text is empty"),
    (("EZ9999 Inner Error",), None, "no out-of-memory message in the text"),
    ((SGLANG, "--format", "yaml"), None, "--format yaml"),
    ((SGLANG, "--torch-npu", "banana"), None, "not a torch_npu version"),
    ((SGLANG, "--device", "-1"), None, "--device -1"),
    (("-", "--file", "-"), "x", "stdin can be read once"),
    (("--file", "/no/such/log"), None, "no such file"),
    (("--stats", str(DATA / "vllm_ascend_19_worker.log")), None, "neither JSON"),
    (("--snapshot", str(DATA / "messages.yaml")), None, "not a memory snapshot"),
    ((SGLANG, "--npu-smi", str(DATA / "messages.yaml")), None, "no npu-smi info table"),
])
def test_bad_input_is_one_line_and_exit_2(args, stdin, message):
    res = oom(*args, input=stdin)
    assert res.exit_code == 2, res.stdout + res.stderr
    assert message in res.stderr and "Traceback" not in res.stderr and len(res.stderr.strip().splitlines()) == 1
    assert res.stdout == ""


def test_bad_input_from_a_real_process():
    res = doctor("--snapshot", str(DATA / "messages.yaml"))
    assert res.returncode == 2 and res.stdout == "" and "Traceback" not in res.stderr
    assert res.stderr.startswith("ascend-doctor: error: --snapshot ") and len(res.stderr.splitlines()) == 1


def test_wrong_stats_keys_and_foreign_pickle(tmp_path):
    stats = tmp_path / "stats.json"
    stats.write_text(json.dumps({"gpu_util": 93, "loss": 0.1}))
    res = oom("--stats", str(stats))
    assert res.exit_code == 2 and "not torch.npu.memory_stats() output" in res.stderr
    snap = tmp_path / "model.pkl"
    snap.write_bytes(pickle.dumps({"weights": [1.0, 2.0]}))
    res = oom("--snapshot", str(snap))
    assert res.exit_code == 2 and "no 'segments' key" in res.stderr


def test_npu_smi_without_the_device(tmp_path):
    smi = (DATA.parents[1] / "check" / "data" / "npu_smi" / "a2_910b3_driver23.0.7_busy.txt")
    res = oom(SGLANG, "--npu-smi", str(smi), "--device", "9")
    assert res.exit_code == 2 and "no NPU 9 in the table" in res.stderr
