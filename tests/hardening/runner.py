"""Run one Case in a child process: exit code, output, peak memory (ru_maxrss) and seconds.

The child gets an address-space limit (RLIMIT_AS) so that an input that would still
allocate without bound fails inside the limit instead of taking the machine down.

Linux counts the pages a forked child shares with its parent towards the child's peak, and
that peak survives exec: a program forked straight from a large pytest worker would report
the worker's size (the worker grows with whatever tests ran in it before). So a small
launcher interpreter is started first; it forks the measured program, waits for it and
writes that process's own ru_maxrss to a file.
"""
from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from typing import Optional

from .hostile import Case

AS_LIMIT = 2 << 30  # a guard against runaways; the real bound is checked on ru_maxrss


@dataclass
class Outcome:
    code: int
    stdout: str
    stderr: str
    max_rss_mb: float
    seconds: float

    @property
    def output(self) -> str:
        return self.stdout + self.stderr


_LAUNCHER = r"""
import os, resource, signal, sys
limit, report = int(sys.argv[1]), sys.argv[2]
pid = os.fork()
if pid == 0:
    try:
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
        os.execv(sys.argv[3], sys.argv[3:])
    finally:
        os._exit(127)
_, status, usage = os.wait4(pid, 0)
with open(report, "w") as fh:
    fh.write(str(usage.ru_maxrss))
code = os.waitstatus_to_exitcode(status)
if code < 0:
    signal.signal(-code, signal.SIG_DFL)
    os.kill(os.getpid(), -code)
sys.exit(code)
"""


def run_case(case: Case, timeout: float = 120.0, cwd: Optional[str] = None) -> Outcome:
    if case.program == "doctor":
        argv = [sys.executable, "-m", "ascend_doctor", *case.argv]
    else:
        argv = [sys.executable, *case.argv]
    env = dict(os.environ)
    env.pop("ASCEND_DOCTOR_DEBUG", None)
    env.update(case.env or {})
    fd, report = tempfile.mkstemp(prefix="rss-")
    os.close(fd)
    argv = [sys.executable, "-c", _LAUNCHER, str(AS_LIMIT), report, *argv]
    start = time.monotonic()
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, cwd=cwd,
                            start_new_session=True)
    chunks = {"out": [], "err": []}
    pumps = [threading.Thread(target=lambda p=pipe, k=key: chunks[k].append(p.read()), daemon=True)
             for pipe, key in ((proc.stdout, "out"), (proc.stderr, "err"))]
    for t in pumps:
        t.start()
    status, usage = 0, None
    while True:  # wait4, not wait: it hands back this child's own peak memory
        pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
        if pid:
            break
        if time.monotonic() - start > timeout:
            os.killpg(proc.pid, 9)
            _, status, usage = os.wait4(proc.pid, 0)
            break
        time.sleep(0.01)
    seconds = time.monotonic() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    for t in pumps:
        t.join(10)
    out = b"".join(chunks["out"]).decode("utf-8", "replace")
    err = b"".join(chunks["err"]).decode("utf-8", "replace")
    try:
        with open(report) as fh:
            text = fh.read().strip()
    finally:
        os.unlink(report)
    max_rss_kb = int(text) if text.isdigit() else usage.ru_maxrss  # killed at the timeout: the launcher's figure
    return Outcome(proc.returncode, out, err, max_rss_kb / 1024.0, seconds)
