"""Nothing the doctor starts is alive after it returns: a grandchild that double-forks
into a session of its own (out of the process group), a prefetched npu-smi nobody waited
for, a child at its timeout. Each stand-in writes the pid of a long sleeper; after the
doctor returns, that pid must be gone (or a zombie not ours: reaped by init)."""
from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.check import hosttree as ht

# npu-smi leaves a sleeper behind that has left the process group (it waits until the
# sleeper has escaped), then prints its table or hangs
DOUBLE_FORK = """PIDFILE={pidfile}
python3_=$(command -v {python})
"$python3_" -c 'import os, sys, time
if os.fork(): sys.exit(0)
os.setsid()
if os.fork(): sys.exit(0)
open(sys.argv[1], "w").write(str(os.getpid()))
time.sleep(300)' "$PIDFILE" &
while [ ! -s "$PIDFILE" ]; do sleep 0.05; done
{tail}
"""


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:  # a zombie is dead: it only waits to be reaped
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def _wait_for(path: Path, seconds: float = 30.0) -> int:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if path.exists() and path.read_text().strip():
            return int(path.read_text())
        time.sleep(0.05)
    raise AssertionError(f"{path} was never written")


def _tree(tmp_path: Path, tail: str, **spec) -> tuple:
    root = tmp_path / "root"
    pidfile = tmp_path / "sleeper.pid"
    script = DOUBLE_FORK.format(pidfile=pidfile, python=sys.executable, tail=tail)
    env_file = ht.build(root, ht.HostSpec(npu_smi_script=script, **spec))
    return root, env_file, pidfile


def _doctor(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "ascend_doctor", *args], capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize("tail, extra", [
    ("cat '%s'" % (ht.DATA / "npu_smi" / "a2_910b3_driver23.0.7_busy.txt"), ()),  # a normal answer
    ("sleep 300", ("--timeout", "1")),  # a hung npu-smi, killed at its timeout
])
def test_a_double_forked_grandchild_does_not_outlive_check(tmp_path, tail, extra):
    root, env_file, pidfile = _tree(tmp_path, tail)
    res = _doctor("check", "--root", str(root), "--trust-root", "--env-file", str(env_file), "--only", "npu_smi.info", *extra)
    assert res.returncode in (0, 1), res.stderr
    pid = _wait_for(pidfile)
    assert not _alive(pid), f"pid {pid} outlived the doctor"


def test_a_prefetched_npu_smi_nobody_waited_for_is_killed(tmp_path):
    # no driver: npu_smi.info is skipped at once, but its prefetch has already started npu-smi
    root, env_file, pidfile = _tree(tmp_path, "sleep 300", driver=None)
    res = _doctor("check", "--root", str(root), "--trust-root", "--env-file", str(env_file), "--json")
    assert res.returncode in (0, 1), res.stderr
    pid = _wait_for(pidfile)
    assert not _alive(pid), f"pid {pid} outlived the doctor"


def test_children_module_kills_what_a_command_left_behind(tmp_path):
    from ascend_doctor import children

    pidfile = tmp_path / "p"
    code = ("import os, sys, time\nif os.fork(): sys.exit(0)\nos.setsid()\nif os.fork(): sys.exit(0)\n"
            f"open({str(pidfile)!r}, 'w').write(str(os.getpid()))\ntime.sleep(300)\n")
    proc = children.spawn([sys.executable, "-c", code], env=dict(os.environ))
    proc.wait(timeout=30)
    pid = _wait_for(pidfile)
    assert _alive(pid)  # it did escape the group
    children.finish(proc)
    deadline = time.monotonic() + 10
    while _alive(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _alive(pid)


def test_the_one_runner_kills_an_escaped_grandchild_at_its_timeout(tmp_path: Path) -> None:
    """``host.run_command`` (used by Host.run and the maintainer tools) at its timeout: the exit
    code is None, and the double-forked sleeper is gone when it returns."""
    from ascend_doctor.host import run_command

    pidfile = tmp_path / "sleeper.pid"
    script = DOUBLE_FORK.format(pidfile=pidfile, python=sys.executable, tail="echo ready; sleep 300")
    done = run_command(["/bin/sh", "-c", script], timeout=10.0)  # room for a loaded machine to start the sleeper
    assert done.timed_out and done.returncode is None and "ready" in done.stdout
    pid = int(pidfile.read_text())
    deadline = time.monotonic() + 10  # SIGKILL is sent; on a loaded machine the exit can lag
    while _alive(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _alive(pid), f"pid {pid} outlived run_command"


def test_the_one_runner_returns_code_and_output() -> None:
    from ascend_doctor.host import run_command

    done = run_command([sys.executable, "-c", "import sys; print('out'); sys.stderr.write('err'); sys.exit(3)"],
                        timeout=60)
    assert (done.returncode, done.stdout.strip(), done.stderr.strip(), done.timed_out) == (3, "out", "err", False)
    with pytest.raises(OSError):
        run_command(["/nonexistent/program"], timeout=5)


def test_no_second_process_runner() -> None:
    """Only ascend_doctor/children.py starts processes itself (spawn, used by host.run_command);
    every other module of the package and the maintainer tools go through them."""
    import re

    repo = Path(__file__).resolve().parents[2]
    pattern = re.compile(r"subprocess\.(Popen|run|call|check_call|check_output)\(|os\.killpg\(|start_new_session")
    offenders = [str(p.relative_to(repo)) for top in ("ascend_doctor", "tools") for p in (repo / top).rglob("*.py")
                 if p.name != "children.py" and pattern.search(p.read_text(encoding="utf-8"))]
    assert offenders == []


def test_spawn_defaults_are_subprocess_constants():
    """children names subprocess's DEVNULL and PIPE by value (subprocess is imported only when a
    child starts); they must stay the same numbers."""
    from ascend_doctor import children

    assert (children.DEVNULL, children.PIPE) == (subprocess.DEVNULL, subprocess.PIPE)
