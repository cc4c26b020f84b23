"""Paths triage must not follow or open: directory symlinks out of the tree, the kernel's
pseudo-filesystems, FIFOs, sockets and device nodes. Each is reported among the skipped
paths with its reason, and the rest of the input is still triaged.

A regression here would hang rather than fail (a FIFO without a writer blocks ``open``,
``/proc/kmsg`` blocks ``read``), so every test runs under an alarm that turns a hang into
a failure; nothing is timed.
"""
from __future__ import annotations

import io
import json
import os
import signal
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from ascend_doctor.commands.triage import run_triage
from ascend_doctor.triage.engine import triage_paths
from ascend_doctor.inputs.openable import NotReadable, open_for_reading, pseudo_fs_top
from ascend_doctor.triage.sources import walk_inputs

from .conftest import DATA

PLOG_NAME = "plog-216_20260724025100000.log"
PLOG = (DATA / "vllm_ascend_12776_plog216.log").read_bytes()  # vllm-ascend#12776
LEAVES = "symlink leaves the given directory"


class Hung(Exception):
    pass


@pytest.fixture(autouse=True)
def no_hang():
    def ring(signum, frame):
        raise Hung("blocked on a path that must not be opened")

    old = signal.signal(signal.SIGALRM, ring)
    signal.alarm(60)
    yield
    signal.alarm(0)
    signal.signal(signal.SIGALRM, old)


def _tree(tmp_path: Path) -> Path:
    top = tmp_path / "logs"
    (top / "debug" / "plog").mkdir(parents=True)
    (top / "debug" / "plog" / PLOG_NAME).write_bytes(PLOG)
    return top


def _skipped(walk_or_report):
    stats = getattr(walk_or_report, "stats", walk_or_report)
    return {os.path.basename(s.path): s.reason for s in stats.skipped}


def test_directory_symlinks_out_of_the_tree_are_not_followed(tmp_path):
    top = _tree(tmp_path)
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (outside / "plog-999_20260724025100000.log").write_bytes(PLOG.replace(b"(216,", b"(999,"))
    os.symlink("/", str(top / "rootfs"))  # the case the review found: a link to / in a log dir
    os.symlink(str(outside), str(top / "sibling"))
    os.symlink("../debug", str(top / "debug" / "again"))  # inside the tree: followed, read once
    report = triage_paths([str(top)])
    skipped = _skipped(report)
    assert skipped["rootfs"] == LEAVES and skipped["sibling"] == LEAVES
    assert "symlink loop" in skipped["again"]
    assert report.stats.files == 1 and report.incidents
    assert {f for inc in report.incidents for f, _, _ in inc.evidence()} == {str(top / "debug" / "plog" / PLOG_NAME)}


def test_the_top_directory_may_itself_be_a_symlink(tmp_path):
    real = _tree(tmp_path)
    link = tmp_path / "current"
    os.symlink(str(real), str(link))
    os.symlink(str(real / "debug"), str(real / "debug_link"))  # points into the real tree: inside
    walk = walk_inputs([str(link)])
    assert [os.path.basename(s.display) for s in walk.sources] == [PLOG_NAME]
    assert _skipped(walk) == {"debug_link": "symlink loop (directory already read)"}


def test_file_symlinks_leaving_the_tree_are_skipped_and_listed(tmp_path):
    top = _tree(tmp_path)
    outside = tmp_path / "secret.txt"  # another user's private file, say
    outside.write_bytes(PLOG)
    os.chmod(outside, 0o600)
    os.symlink(str(outside), str(top / "console.txt"))
    os.symlink("/proc/self/status", str(top / "status.log"))
    (top / "inside.txt").write_bytes(b"x\n")
    os.symlink(str(top / "inside.txt"), str(top / "inside_link.txt"))  # stays in the tree: read once
    walk = walk_inputs([str(top)])
    assert sorted(os.path.basename(s.display) for s in walk.sources) == ["inside.txt", PLOG_NAME]
    skipped = _skipped(walk)
    assert skipped["console.txt"] == "symlink leaves the given directory"
    assert "kernel pseudo-filesystem" in skipped["status.log"]


def test_a_file_symlink_named_on_the_command_line_is_read_as_given(tmp_path):
    outside = tmp_path / "elsewhere" / "console.txt"
    outside.parent.mkdir()
    outside.write_bytes(PLOG)
    os.symlink(str(outside), str(tmp_path / "link.txt"))
    walk = walk_inputs([str(tmp_path / "link.txt")])
    assert [s.display for s in walk.sources] == [str(tmp_path / "link.txt")]


@pytest.mark.parametrize("path", ["/proc/self", "/proc/self/status", "/sys", "/dev"])
def test_pseudo_filesystems_on_the_command_line_are_skipped(path):
    if not os.path.exists(path):
        pytest.skip(f"{path} is not there")
    walk = walk_inputs([path])
    assert walk.sources == []
    (s,) = walk.skipped
    assert s.path == path and "kernel pseudo-filesystem" in s.reason


def test_proc_self_from_the_cli_is_one_line_and_exit_2():
    out, err = io.StringIO(), io.StringIO()
    rc = run_triage(["/proc/self"], out=out, err=err)
    assert rc == 2 and out.getvalue() == ""
    (line,) = err.getvalue().splitlines()
    assert line.startswith("ascend-doctor triage: no readable log text in /proc/self (skipped: /proc/self: in /proc")


def test_proc_kmsg_is_never_opened():
    if not os.path.exists("/proc/kmsg"):
        pytest.skip("no /proc/kmsg here")
    walk = walk_inputs(["/proc/kmsg"])
    assert walk.sources == [] and "kernel pseudo-filesystem" in walk.skipped[0].reason


def test_links_into_proc_and_sys_inside_a_tree_are_skipped(tmp_path):
    top = _tree(tmp_path)
    os.symlink("/proc/self", str(top / "self"))
    os.symlink("/sys/kernel", str(top / "kernel"))
    os.symlink("/proc/self/fd", str(top / "debug" / "fds"))
    report = triage_paths([str(top)])
    skipped = _skipped(report)
    assert all("kernel pseudo-filesystem" in skipped[name] for name in ("self", "kernel", "fds"))
    assert report.stats.files == 1


def test_fifo_socket_and_device_are_skipped_by_kind(tmp_path):
    top = _tree(tmp_path)
    os.mkfifo(str(top / "debug" / "plog" / "plog-7_20260724025100000.log"))  # a FIFO with no writer
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        sock.bind(str(top / "agent.sock"))
        os.symlink("/dev/null", str(top / "null.log"))
        report = triage_paths([str(top)])
    finally:
        sock.close()
    skipped = _skipped(report)
    assert skipped["plog-7_20260724025100000.log"] == "not a regular file: a named pipe (FIFO)"
    assert skipped["agent.sock"] == "not a regular file: a socket"
    assert skipped["null.log"] == "not a regular file: a device node"
    assert report.stats.files == 1 and report.incidents


def test_a_fifo_named_on_the_command_line_is_refused(tmp_path):
    fifo = tmp_path / "pipe.log"
    os.mkfifo(str(fifo))
    out, err = io.StringIO(), io.StringIO()
    rc = run_triage([str(fifo)], fmt="json", out=out, err=err)
    assert rc == 2 and "a named pipe (FIFO)" in err.getvalue()
    assert json.loads(out.getvalue())["stats"]["skipped"][0]["reason"] == "not a regular file: a named pipe (FIFO)"


def test_a_path_swapped_for_a_fifo_after_the_walk_is_not_waited_on(tmp_path):
    f = tmp_path / PLOG_NAME
    f.write_bytes(PLOG)
    walk = walk_inputs([str(f)])
    f.unlink()
    os.mkfifo(str(f))
    with pytest.raises(NotReadable, match="named pipe"):
        walk.sources[0].open()
    report = triage_paths([str(tmp_path)])
    assert report.stats.files == 0 and "named pipe" in _skipped(report)[PLOG_NAME]


def test_an_anonymous_pipe_is_read_like_stdin(tmp_path):
    r, w = os.pipe()
    try:
        os.write(w, PLOG)
        os.close(w)
        w = -1
        path = f"/proc/self/fd/{r}"
        report = triage_paths([path])
        assert report.stats.files == 1 and report.incidents[0].verdict.category == "aicore_exec"
        assert report.incidents[0].evidence()[0][0] == path
    finally:
        os.close(r)
        if w >= 0:
            os.close(w)


def test_process_substitution_from_a_real_shell(tmp_path):
    log = tmp_path / "console.txt"
    log.write_bytes(PLOG)
    cmd = f'"{sys.executable}" -m ascend_doctor triage --json <(cat "{log}")'
    res = subprocess.run(["bash", "-c", cmd], capture_output=True, text=True, timeout=60)
    assert res.returncode == 1, res.stderr
    data = json.loads(res.stdout)
    assert data["stats"]["files"] == 1 and data["incidents"][0]["category"] == "aicore_exec"
    assert data["incidents"][0]["evidence"][0]["file"].startswith("/dev/fd/")


def test_dev_shm_is_an_ordinary_directory():
    if not os.path.isdir("/dev/shm") or not os.access("/dev/shm", os.W_OK):
        pytest.skip("no writable /dev/shm")
    import tempfile

    with tempfile.TemporaryDirectory(dir="/dev/shm") as d:
        (Path(d) / PLOG_NAME).write_bytes(PLOG)
        report = triage_paths([d])
    assert report.stats.files == 1 and not report.stats.skipped


def test_open_for_reading_refuses_what_is_not_a_regular_file(tmp_path):
    fifo = tmp_path / "f"
    os.mkfifo(str(fifo))
    with pytest.raises(NotReadable, match="named pipe"):
        open_for_reading(str(fifo))
    with pytest.raises(NotReadable, match="named pipe"):
        open_for_reading(str(fifo), allow_pipe=True)  # a named FIFO is not a process-substitution pipe
    with pytest.raises(NotReadable, match="directory"):
        open_for_reading(str(tmp_path))


def test_a_bind_mount_of_proc_is_known_by_its_device_number():
    # bind mounts need root; what the walk checks for a plain entry is the device number, so a
    # file of /proc seen under any other name is still /proc
    if not os.path.exists("/proc/self/status"):
        pytest.skip("no /proc here")
    assert pseudo_fs_top("/srv/chroot/proc/self/status", os.stat("/proc/self/status"), resolve=False) == "/proc"
    assert pseudo_fs_top(str(DATA / "pastes.yaml"), os.stat(DATA / "pastes.yaml"), resolve=False) is None
