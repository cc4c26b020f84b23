"""Wall time of one whole command, for the benches that time commands against a peer.

The wait blocks in waitpid, and a timer kills the command's process group when the limit
passes. ``subprocess.run(..., timeout=)`` would wait by polling with sleeps that grow to
50 ms, so every time it measured was rounded up to the poll after the end (31.5, 63.5,
113.5, 163.5 ms ...): that is why the limit is not given to ``wait``.
"""
from __future__ import annotations

import os
import signal
import subprocess
import threading
import time
from typing import Dict, List, Optional


def _kill(proc: "subprocess.Popen[bytes]") -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except OSError:
        pass


def wall(argv: List[str], env: Optional[Dict[str, str]] = None, limit: float = 300.0) -> float:
    """Seconds from start to exit of ``argv`` (output discarded); killed after ``limit`` seconds."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env, start_new_session=True)
    timer = threading.Timer(limit, _kill, (proc,))
    timer.start()
    try:
        proc.wait()
    finally:
        timer.cancel()
    return time.perf_counter() - t0
