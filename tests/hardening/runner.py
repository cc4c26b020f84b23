"""Run one Case in a child process: exit code, output, peak memory (VmHWM) and seconds.

The child gets an address-space limit (RLIMIT_AS) so that an input that would still
allocate without bound fails inside the limit instead of taking the machine down.
"""
from __future__ import annotations

import os
import resource
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from typing import Optional

from .hostile import Case

PEAK = os.path.join(os.path.dirname(os.path.abspath(__file__)), "peak.py")

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


def _limit() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (AS_LIMIT, AS_LIMIT))


def run_case(case: Case, timeout: float = 120.0, cwd: Optional[str] = None) -> Outcome:
    peak = os.path.join(tempfile.mkdtemp(prefix="peak-"), "kb")
    if case.program == "doctor":
        argv = [sys.executable, PEAK, "ascend_doctor", *case.argv]
    else:
        assert case.argv[0] == "-m", case.argv
        argv = [sys.executable, PEAK, *case.argv[1:]]
    env = dict(os.environ)
    env.pop("ASCEND_DOCTOR_DEBUG", None)
    env.update(case.env or {})
    env["PEAK_FILE"] = peak
    start = time.monotonic()
    # a directory that exists: an earlier test in this worker may have left the process in a
    # temporary directory that is gone, and Python cannot start -m from there
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, cwd=cwd or tempfile.gettempdir(),
                            preexec_fn=_limit, start_new_session=True)
    chunks = {"out": [], "err": []}
    pumps = [threading.Thread(target=lambda p=pipe, k=key: chunks[k].append(p.read()), daemon=True)
             for pipe, key in ((proc.stdout, "out"), (proc.stderr, "err"))]
    for t in pumps:
        t.start()
    status, usage = 0, None
    while True:
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
        with open(peak) as fh:
            peak_mb = int(fh.read()) / 1024.0
    except (OSError, ValueError):
        peak_mb = float("nan")  # killed before exit: the caller sees the exit code
    return Outcome(proc.returncode, out, err, peak_mb, seconds)
