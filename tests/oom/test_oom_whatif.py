"""``oom simulate`` (allocator what-if) and ``oom watch`` (fragmentation metrics)."""
from __future__ import annotations

import io
import json
import re
import subprocess
import sys

import pytest

from ascend_doctor.commands.oom import run_simulate, run_watch
from ascend_doctor.errors import UsageError
from ascend_doctor.memory.watch import fragmentation_metrics, prometheus_text

TRACES = ("training_varlen", "llm_serving_kv_concat", "video_diffusion")


def _simulate(trace, **kw):
    out = io.StringIO()
    code = run_simulate(trace, fmt="json", out=out, **kw)
    return code, json.loads(out.getvalue())


@pytest.mark.parametrize("name", TRACES)
def test_fragmentation_traces_default_ooms_and_expandable_finishes(name):
    from runtime_sim.allocator import load_trace, replay

    code, doc = _simulate(name, confs=["default", "expandable_segments:True"])
    default, expandable = doc["results"]
    assert not default["completed"] and default["ooms"] >= 1 and default["stranded"] > 0
    assert expandable["completed"] and expandable["ooms"] == 0
    assert doc["finishes"] == ["expandable_segments:True"] and code == 0
    # the what-if is the simulator's own replay: same failing event and numbers
    t = load_trace(name)
    ref = replay(t, t.allocator(""))
    assert default["first_oom_event"] == ref.failed_event
    assert default["stranded"] == ref.inactive_split_bytes


def test_default_table_has_every_setting_and_an_auto_max_split():
    out = io.StringIO()
    run_simulate("llm_serving_kv_concat", out=out)
    text = out.getvalue()
    for row in ("default", "expandable_segments:True", "max_split_size_mb:", "garbage_collection_threshold:0.8"):
        assert row in text
    assert re.search(r"default\s+OOM at event 8914", text) and "advice: PYTORCH_NPU_ALLOC_CONF=" in text


def test_a_snapshot_history_replays_to_the_same_oom(tmp_path):
    from runtime_sim.allocator import load_trace, replay

    t = load_trace("llm_serving_kv_concat")
    alloc = t.allocator("", record_history=True)
    ref = replay(t, alloc)
    snap = tmp_path / "oom_snapshot.json"
    snap.write_text(json.dumps(alloc.snapshot()))
    code, doc = _simulate(str(snap), confs=["default", "expandable_segments:True"])
    default, expandable = doc["results"]
    assert doc["trace"]["source"] == "snapshot"
    assert default["first_oom_event"] == ref.failed_event  # the oom entry is the failing request
    assert default["stranded"] == ref.inactive_split_bytes
    assert expandable["completed"]


def test_a_saved_trace_file_gives_the_same_results(tmp_path):
    saved = tmp_path / "t.json"
    _, first = _simulate("video_diffusion", confs=["default"], save_trace=str(saved))
    _, again = _simulate(str(saved), confs=["default"])
    strip = lambda r: {k: v for k, v in r.items() if k != "seconds"}
    assert [strip(r) for r in again["results"]] == [strip(r) for r in first["results"]]
    assert again["trace"]["source"] == "trace-file"


def test_a_setting_torch_npu_refuses_is_shown_refused():
    _, doc = _simulate("training_varlen", confs=["expandable_segments:True,max_split_size_mb:64"])
    assert doc["results"][0]["conf"] == "" and doc["results"][1]["error"].startswith("`max_split_size_mb`")


@pytest.mark.parametrize("content, message", [
    (None, "no such file"),
    ("{not json", "not JSON"),
    (json.dumps({"segments": [], "device_traces": [[]]}), "no allocation history"),
    (json.dumps({"events": [["alloc", "a", 10]]}), "device size is not known"),
    (json.dumps({"events": [["grow", "a", 10]], "device_capacity_bytes": 100}), "expected \\[op, key"),
    (json.dumps({"events": [["alloc", "a", -1]], "device_capacity_bytes": 100}), "whole number"),
])
def test_bad_traces_are_usage_errors(tmp_path, content, message):
    path = tmp_path / "trace.json"
    if content is not None:
        path.write_text(content)
    with pytest.raises(UsageError, match=message):
        run_simulate(str(path), out=io.StringIO())


# ---------------------------------------------------------------- watch
@pytest.fixture(scope="module")
def fragmented_stats():
    from runtime_sim.allocator import load_trace, replay

    t = load_trace("training_varlen")
    alloc = t.allocator("")
    replay(t, alloc)
    return dict(alloc.memory_stats()), alloc.memory_stats_as_nested_dict()


def test_metrics_from_flat_and_nested_stats_agree(fragmented_stats):
    flat, nested = fragmented_stats
    a, b = fragmentation_metrics(flat), fragmentation_metrics(nested)
    assert a == b
    assert a["stranded_bytes"] == flat["inactive_split_bytes.all.current"] > 0
    assert a["fragmentation_ratio"] == pytest.approx(a["stranded_bytes"] / a["reserved_bytes"], rel=1e-5)
    assert a["over_threshold"] and not fragmentation_metrics(flat, threshold=0.99)["over_threshold"]


_SAMPLE = re.compile(r'^[a-zA-Z_:][a-zA-Z0-9_:]*\{([a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\\n]|\\.)*",?)*\} -?[0-9.e+-]+$')


def test_prometheus_text_is_well_formed(fragmented_stats):
    body = prometheus_text(fragmentation_metrics(fragmented_stats[0]), labels={"worker": 'a"b\\c'})
    lines = body.splitlines()
    samples = [ln for ln in lines if not ln.startswith("#")]
    assert len(samples) == 9 and all(_SAMPLE.match(s) for s in samples), samples
    assert sum(ln.startswith("# TYPE") for ln in lines) == 9
    assert 'worker="a\\"b\\\\c"' in samples[0]
    with pytest.raises(ValueError, match="label name"):
        prometheus_text(fragmentation_metrics(fragmented_stats[0]), labels={"bad-name": "x"})


def test_watch_rereads_and_writes_the_textfile(fragmented_stats, tmp_path):
    stats = tmp_path / "stats.json"
    stats.write_text(json.dumps(fragmented_stats[0]))
    prom = tmp_path / "npu.prom"
    sleeps = []
    out = io.StringIO()
    code = run_watch(str(stats), interval=5, count=3, output=str(prom), fmt="text", out=out, sleep=sleeps.append)
    assert code == 1 and sleeps == [5, 5] and out.getvalue().count("RESTART ADVISED") == 3
    assert "ascend_npu_memory_fragmentation_over_threshold" in prom.read_text()
    healthy = dict(fragmented_stats[0], **{"inactive_split_bytes.all.current": 0})
    stats.write_text(json.dumps(healthy))
    assert run_watch(str(stats), out=io.StringIO()) == 0


def test_watch_refuses_what_is_not_memory_stats(tmp_path):
    path = tmp_path / "s.json"
    path.write_text(json.dumps({"hello": 1}))
    with pytest.raises(UsageError):
        run_watch(str(path), out=io.StringIO())
    with pytest.raises(UsageError, match="threshold"):
        run_watch(str(path), threshold=0, out=io.StringIO())


def test_cli_sub_commands_leave_oom_text_alone(tmp_path):
    run = lambda *a: subprocess.run([sys.executable, "-m", "ascend_doctor", "oom", *a], capture_output=True, text=True, timeout=120)
    sim = run("simulate", "training_varlen", "--conf", "expandable_segments:True", "--json")
    doc = json.loads(sim.stdout)
    assert sim.returncode == 0 and [r["completed"] for r in doc["results"]] == [False, True]
    text = run("NPU out of memory. Tried to allocate 2.37 GiB (NPU 0; 64.00 GiB total capacity; 47.53 GiB already allocated; "
               "47.53 GiB current active; 122.00 MiB free; 60.88 GiB reserved in total by PyTorch) If reserved memory is >> "
               "allocated memory try setting max_split_size_mb to avoid fragmentation.", "--json")
    assert json.loads(text.stdout)["verdict"] == "oom_fragmentation"
    bad = run("simulate", "no_such_trace_file")
    assert bad.returncode == 2 and "no such file" in bad.stderr and "Traceback" not in bad.stderr
