"""Run one Case in a child process: exit code, output, peak memory (ru_maxrss) and seconds.

The child gets an address-space limit (RLIMIT_AS) so that an input that would still
allocate without bound fails inside the limit instead of taking the machine down.

The child is started by a small launcher process, not forked from the test process: Linux
records the memory a process had before exec in its ru_maxrss, so a child forked from a
pytest worker that already loaded torch would report the worker's size, not its own.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
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


# fork + exec the case from a fresh, small interpreter; report the child's own rusage on fd N
_LAUNCHER = r"""
import json, os, resource, sys
fd, argv = int(sys.argv[1]), json.loads(sys.argv[2])
resource.setrlimit(resource.RLIMIT_AS, (%d, %d))
pid = os.fork()
if pid == 0:
    os.close(fd)
    os.execv(argv[0], argv)
_, status, usage = os.wait4(pid, 0)
os.write(fd, json.dumps({"status": status, "maxrss": usage.ru_maxrss}).encode())
os.close(fd)
sys.exit(os.waitstatus_to_exitcode(status) & 0xFF)
""" % (AS_LIMIT, AS_LIMIT)


def run_case(case: Case, timeout: float = 120.0, cwd: Optional[str] = None) -> Outcome:
    if case.program == "doctor":
        argv = [sys.executable, "-m", "ascend_doctor", *case.argv]
    else:
        argv = [sys.executable, *case.argv]
    env = dict(os.environ)
    env.pop("ASCEND_DOCTOR_DEBUG", None)
    env.update(case.env or {})
    start = time.monotonic()
    report_r, report_w = os.pipe()
    proc = subprocess.Popen([sys.executable, "-c", _LAUNCHER, str(report_w), json.dumps(argv)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, cwd=cwd,
                            pass_fds=(report_w,), start_new_session=True)
    os.close(report_w)
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
    with os.fdopen(report_r, "rb") as fh:
        raw = fh.read()
    try:
        report = json.loads(raw)
        child_status, maxrss_kb = report["status"], report["maxrss"]
    except (ValueError, KeyError):  # the launcher was killed (timeout): judge what it reported of itself
        child_status, maxrss_kb = status, usage.ru_maxrss
    proc.returncode = os.waitstatus_to_exitcode(child_status)
    for t in pumps:
        t.join(10)
    out = b"".join(chunks["out"]).decode("utf-8", "replace")
    err = b"".join(chunks["err"]).decode("utf-8", "replace")
    return Outcome(proc.returncode, out, err, maxrss_kb / 1024.0, seconds)
