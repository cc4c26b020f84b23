"""Layouts, slices, several runs, and bad input: `profile` reads what the profilers write and
refuses the rest in one line."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from ascend_doctor.profile import ProfileInputError, analyze
from ascend_doctor.profile.stream import JsonArrayReader
from runtime_sim import profiler

DATA = Path(__file__).parent / "data"


def _cli(*args: str, timeout: float = 120):
    return subprocess.run([sys.executable, "-m", "ascend_doctor", "profile", *args], capture_output=True, text=True, timeout=timeout)


def _key(doc):
    d = doc["devices"][0]
    return d["busy_pct"], d["copy_pct"], [(o["type"], o["count"], o["total_us"]) for o in d["top_ops"]]


def test_msprof_slices_read_as_one_table(tmp_path):
    whole = profiler.write("jittery_allocation", tmp_path / "whole", layout="msprof", seed=5)
    sliced = profiler.write("jittery_allocation", tmp_path / "sliced", layout="msprof", seed=5, slices=3, slice_rows=200)
    names = sorted(p.name for p in (sliced[0] / "mindstudio_profiler_output").glob("op_summary_*"))
    assert len(names) == 3 and all(n.startswith("op_summary_slice_") for n in names)
    assert _key(analyze([str(whole[0])])) == _key(analyze([str(sliced[0])]))


def test_legacy_cann7_layout(tmp_path):
    (run,) = profiler.write("copy_bound", tmp_path / "new", layout="msprof", seed=2)
    out = run / "mindstudio_profiler_output"
    legacy = tmp_path / "old" / "PROF_000001_20231010101010123_ABCDEFGHIJKLMNOP"
    (legacy / "device_0" / "summary").mkdir(parents=True)
    (legacy / "device_0" / "timeline").mkdir(parents=True)
    for f in out.iterdir():
        stem = f.name.split("_2")[0]  # op_summary_<stamp>.csv -> op_summary
        if f.suffix == ".csv":
            shutil.copy(f, legacy / "device_0" / "summary" / f"{stem}_0_1_20231010101010.csv")
        elif f.suffix == ".json":
            shutil.copy(f, legacy / "device_0" / "timeline" / f"{stem}_0_1_20231010101010.json")
    a, b = analyze([str(run)]), analyze([str(tmp_path / "old")])
    assert b["runs"][0]["layout"] == "msprof_legacy"
    assert _key(a) == _key(b)
    assert b["findings"][0]["id"] == "copy.host_device"


def test_several_prof_dirs_are_several_devices(tmp_path):
    runs = profiler.write("comm_bound", tmp_path, layout="msprof", seed=4, params={"steps": 6})
    doc = analyze([str(tmp_path)])
    assert len(runs) == 8 and sorted(d["device"] for d in doc["devices"]) == list(range(8))
    comm = {d["device"]: d["comm_pct"] for d in doc["devices"]}
    assert min(comm, key=comm.get) == 5  # the slow rank waits least in the all-reduce


def test_embedded_prof_copy_is_not_counted_twice(tmp_path):
    (run,) = profiler.write("healthy", tmp_path, seed=1, params={"steps": 4})
    before = analyze([str(tmp_path)])
    prof = next(run.glob("PROF_*"))
    (prof / "mindstudio_profiler_output").mkdir()
    shutil.copy(run / "ASCEND_PROFILER_OUTPUT" / "kernel_details.csv", prof / "mindstudio_profiler_output" / "op_summary_20251201000000.csv")
    after = analyze([str(tmp_path)])
    assert _key(before) == _key(after) and len(after["devices"]) == 1


def test_fifo_and_raw_data_are_not_opened(tmp_path):
    (run,) = profiler.write("healthy", tmp_path, seed=1, params={"steps": 3})
    other = tmp_path / "other_ascend_pt" / "ASCEND_PROFILER_OUTPUT"
    other.mkdir(parents=True)
    os.mkfifo(other / "kernel_details.csv")
    proc = _cli(str(tmp_path), "--json", timeout=60)
    doc = json.loads(proc.stdout)
    assert len(doc["devices"]) == 1
    assert any("FIFO" in n for n in doc["notes"])


def test_truncated_timeline_is_read_as_far_as_it_goes(tmp_path):
    (run,) = profiler.write("dispatch_bound", tmp_path / "p", seed=1, params={"steps": 4})
    trace = run / "ASCEND_PROFILER_OUTPUT" / "trace_view.json"
    (run / "ASCEND_PROFILER_OUTPUT" / "kernel_details.csv").unlink()
    data = trace.read_bytes()
    trace.write_bytes(data[: len(data) * 2 // 3])
    doc = analyze([str(tmp_path / "p")])
    assert doc["devices"][0]["tasks"] > 100
    assert any("truncated" in n for n in doc["notes"])


def test_trace_events_wrapper_and_chunk_boundaries(tmp_path):
    events = [{"ph": "X", "name": "e%d" % i, "ts": str(i), "dur": 1, "args": {"pad": "x" * (i % 300)}} for i in range(6000)]
    path = tmp_path / "trace_view.json"
    path.write_text(json.dumps({"traceEvents": events, "displayTimeUnit": "us"}), encoding="utf-8")
    got = list(JsonArrayReader(str(path)))
    assert got == events


def test_bad_input_is_one_line_and_exit_2(tmp_path):
    for args in ([str(tmp_path / "missing")], [str(tmp_path)], ["compare", str(tmp_path)]):
        proc = _cli(*args)
        assert proc.returncode == 2, proc.stderr
        assert proc.stdout == "" and len(proc.stderr.strip().splitlines()) == 1 and "Traceback" not in proc.stderr
    with pytest.raises(ProfileInputError):
        analyze([str(tmp_path)])


def test_formats(tmp_path):
    proc = _cli(str(DATA / "level1"), "--format", "md")
    assert proc.returncode == 1 and proc.stdout.startswith("# ascend-doctor profile\n") and "| 0 | 0 |" in proc.stdout
    proc = _cli(str(DATA / "level1"))
    assert "rank 0 (device 0): span" in proc.stdout and "slowest rank: 1" in proc.stdout
    proc = _cli(str(DATA / "level1"), "--json")
    assert json.loads(proc.stdout)["schema"] == 1
    proc = _cli(str(DATA / "level1"), "--format", "yaml")
    assert proc.returncode == 2
