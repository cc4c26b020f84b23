"""``oom`` input files are checked before they are opened: a regular file, ``-`` (stdin) or a
shell's process substitution pipe. A FIFO, a device or a /proc file is one line and exit 2.

The FIFO cases used to hang (``open`` of a FIFO without a writer blocks), so they run under an
alarm (or, end to end, in a child process with a timeout) that turns a hang into a failure;
nothing is timed.
"""
from __future__ import annotations

import io
import json
import os
import signal
import subprocess
import sys

import pytest

from ascend_doctor.commands.oom import run_oom
from ascend_doctor.errors import UsageError
from ascend_doctor.memory import MemoryInputError
from ascend_doctor.memory.input_file import open_input
from ascend_doctor.memory.stats import load_stats

from .conftest import NPU_SMI, doctor, trace_failure, write_inputs

SMI = NPU_SMI / "a2_910b3_driver23.0.7_busy.txt"


class Hung(Exception):
    pass


@pytest.fixture(autouse=True)
def no_hang():
    def ring(signum, frame):
        raise Hung("blocked opening an input that must be refused")

    old = signal.signal(signal.SIGALRM, ring)
    signal.alarm(60)
    yield
    signal.alarm(0)
    signal.signal(signal.SIGALRM, old)


@pytest.fixture()
def fifo(tmp_path):
    path = tmp_path / "stats.fifo"
    os.mkfifo(str(path))
    return str(path)


def _usage_error(**kwargs) -> str:
    with pytest.raises(UsageError) as info:
        run_oom(out=io.StringIO(), **kwargs)
    (line,) = str(info.value).splitlines()
    return line


def test_fifo_end_to_end_is_one_line_and_exit_2(fifo):
    res = doctor("--stats", fifo)
    assert res.returncode == 2 and res.stdout == "" and "Traceback" not in res.stderr
    assert res.stderr.splitlines() == [f"ascend-doctor: error: --stats {fifo}: not a regular file: a named pipe (FIFO); "
                                       "give a regular file, or - to read stdin"]


@pytest.mark.parametrize("option", ["stats", "snapshot", "npu_smi"])
def test_fifo_is_refused_for_every_file_option(fifo, tmp_path, option):
    p = write_inputs(tmp_path, trace_failure("training_varlen"))
    line = _usage_error(files=[str(p["message"])], **{option: fifo})
    assert line == (f"--{option.replace('_', '-')} {fifo}: not a regular file: a named pipe (FIFO); "
                    "give a regular file, or - to read stdin")


def test_fifo_as_log_file(fifo):
    line = _usage_error(files=[fifo])
    assert line.startswith(f"no readable log text in {fifo}") and "named pipe (FIFO)" in line


@pytest.mark.parametrize("path,reason", [("/dev/null", "a device node"), ("/proc/self/status", "kernel pseudo-filesystem"),
                                         ("/proc/kmsg", "kernel pseudo-filesystem")])
def test_devices_and_proc_files_are_refused(path, reason):
    if not os.path.exists(path):
        pytest.skip(f"no {path} here")
    with pytest.raises(MemoryInputError, match=reason) as info:
        load_stats(path)
    assert str(info.value).startswith(f"--stats {path}: ")


def test_directory_and_missing_file_keep_their_messages(tmp_path):
    with pytest.raises(MemoryInputError, match="is a directory$"):
        open_input(str(tmp_path), "--snapshot")
    with pytest.raises(MemoryInputError, match="no such file or directory$"):
        open_input(str(tmp_path / "nope.pickle"), "--snapshot")


def test_process_substitution_pipes_are_read(tmp_path):
    f = trace_failure("training_varlen")
    p = write_inputs(tmp_path, f)
    cmd = (f'"{sys.executable}" -m ascend_doctor oom --json --file <(cat "{p["message"]}") '
           f'--stats <(cat "{p["stats"]}") --snapshot <(cat "{p["snapshot"]}") --npu-smi <(cat "{SMI}")')
    res = subprocess.run(["bash", "-c", cmd], capture_output=True, text=True, timeout=120)
    assert res.returncode == 1, res.stderr
    data = json.loads(res.stdout)
    assert data["verdict"] == "oom_fragmentation"
    assert data["counts"]["num_alloc_retries"] == f.result.num_alloc_retries


def test_an_anonymous_pipe_is_accepted_a_named_one_is_not(tmp_path, fifo):
    f = trace_failure("training_varlen")
    r, w = os.pipe()
    try:
        os.write(w, json.dumps(f.stats).encode())
        os.close(w)
        w = -1
        assert load_stats(f"/proc/self/fd/{r}").num_alloc_retries == f.result.num_alloc_retries
    finally:
        os.close(r)
        if w >= 0:
            os.close(w)
    with pytest.raises(MemoryInputError, match="named pipe"):
        load_stats(fifo)


def _json_run(**kwargs) -> dict:
    out = io.StringIO()
    rc = run_oom(out=out, fmt="json", **kwargs)
    assert rc == 1
    return json.loads(out.getvalue())


def test_stats_and_snapshot_from_stdin(tmp_path):
    f = trace_failure("training_varlen")
    p = write_inputs(tmp_path, f)
    data = _json_run(files=[str(p["message"])], stats="-", stdin=io.BytesIO(json.dumps(f.stats).encode()))
    assert data["counts"]["num_alloc_retries"] == f.result.num_alloc_retries
    snapshot = p["snapshot"].read_bytes()
    data = _json_run(files=[str(p["message"])], snapshot="-", stdin=io.BytesIO(snapshot))
    assert "snapshot:snapshot" in data["inputs"]
    # the message names NPU 3, the snapshot holds device 0: stdin is read once, parsed twice
    other = tmp_path / "npu3.log"
    other.write_text(f.message.replace("(NPU 0;", "(NPU 3;") + "\n", encoding="utf-8")
    data = _json_run(files=[str(other)], snapshot="-", stdin=io.BytesIO(snapshot))
    assert any("no segments of device 3" in n for n in data["notes"])


def test_stdin_is_given_to_one_input_only():
    line = _usage_error(stats="-", snapshot="-", stdin=io.BytesIO(b"{}"))
    assert line == "stdin can be read once: use - for one input only, not for --stats and --snapshot"
