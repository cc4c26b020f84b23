"""Every process the doctor starts, and the guarantee that none outlives it.

A child starts in its own session (so its process group is its own) with a mark in its
environment, ``ASCEND_DOCTOR_RUN=<token of this run>.<n>``, that its descendants inherit. When
the command returns -- normally, at its timeout, on an exception or on Ctrl-C -- ``finish``
kills the child's process group, then every process that still carries the mark (a
grandchild that double-forked into a session of its own is no longer in the group, but it
still has the mark), and reaps the child. ``kill_all`` does the same for every child still
registered (a prefetched ``npu-smi`` nobody waited for) and runs when the CLI returns and
at interpreter exit.
"""
from __future__ import annotations

import atexit
import os
import signal
import threading
import time
from typing import TYPE_CHECKING, Dict, List, Mapping, Optional, Sequence

if TYPE_CHECKING:  # subprocess is imported when a child is started: most one-line questions start none
    import subprocess

# subprocess.DEVNULL and subprocess.PIPE (tests/hardening/test_no_orphans.py checks they are the same)
DEVNULL, PIPE = -3, -1

ENV_MARK = "ASCEND_DOCTOR_RUN"
TOKEN = f"{os.getpid()}-{os.urandom(6).hex()}"  # what secrets.token_hex(6) gives, without importing hmac and random
_START = time.time()
_lock = threading.Lock()
_live: Dict[int, "subprocess.Popen[bytes]"] = {}
_spawned = [False]  # did this run start any child? (a run that did not has nothing to sweep)
_marks: Dict[int, str] = {}  # pid -> its mark
_seq = [0]


def spawn(argv: Sequence[str], env: Mapping[str, str], cwd: Optional[str] = None,
          stdin=DEVNULL, stdout=PIPE, stderr=PIPE) -> "subprocess.Popen[bytes]":
    """Start ``argv`` (no shell; by default stdin closed, stdout/stderr piped) in a session of
    its own, marked and registered. Raises OSError when it cannot start."""
    import subprocess

    child_env = dict(env)
    with _lock:
        _seq[0] += 1
        mark = f"{TOKEN}.{_seq[0]}"
    child_env[ENV_MARK] = mark
    proc = subprocess.Popen(
        list(argv),
        stdin=stdin,
        stdout=stdout,
        stderr=stderr,
        env=child_env,
        cwd=cwd,
        start_new_session=True,
    )
    with _lock:
        _live[proc.pid] = proc
        _spawned[0] = True
        _marks[proc.pid] = mark
    return proc


def _killpg(pid: int) -> None:
    try:
        os.killpg(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError, OSError):
        pass


def marked_pids(mark: Optional[str] = None) -> List[int]:
    """Processes other than this one whose environment carries ``mark`` (one child's), or
    any mark of this run when ``mark`` is None."""
    try:
        import psutil
    except ImportError:  # pragma: no cover - psutil is a dependency
        return []
    me = os.getpid()
    found = []
    exact = f"{ENV_MARK}={mark}".encode() if mark else None
    prefix = f"{ENV_MARK}={TOKEN}.".encode()
    for proc in psutil.process_iter(["pid", "create_time"]):
        info = proc.info
        if info["pid"] == me or (info.get("create_time") or 0) < _START - 1:
            continue
        try:
            with open(f"/proc/{info['pid']}/environ", "rb") as fh:
                entries = fh.read().split(b"\0")
        except OSError:
            continue
        if any(e == exact if exact else e.startswith(prefix) for e in entries):
            found.append(info["pid"])
    return found


def sweep(mark: Optional[str] = None) -> int:
    """Kill every process marked ``mark`` (any mark of this run when None), and its group;
    returns how many were found."""
    pids = marked_pids(mark)
    for pid in pids:
        _killpg(pid)
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass
    return len(pids)


def finish(proc: "subprocess.Popen[bytes]", sweep_marked: bool = True) -> None:
    """Kill what is left of ``proc``: its group, then marked descendants; reap it."""
    import subprocess

    _killpg(proc.pid)
    try:
        proc.kill()
    except OSError:
        pass
    try:
        proc.wait(timeout=5)
    except subprocess.TimeoutExpired:  # pragma: no cover - SIGKILL is not ignored
        pass
    with _lock:
        _live.pop(proc.pid, None)
        mark = _marks.pop(proc.pid, None)
    if sweep_marked and mark:
        sweep(mark)


def kill_all() -> None:
    """Finish every registered child and sweep marked processes (CLI return, exit)."""
    with _lock:
        procs = list(_live.values())
    for proc in procs:
        finish(proc, sweep_marked=False)
    if _spawned[0]:
        sweep()


def live() -> List[int]:
    with _lock:
        return list(_live)


atexit.register(kill_all)

__all__ = ["spawn", "finish", "kill_all", "sweep", "marked_pids", "ENV_MARK", "TOKEN", "live"]
