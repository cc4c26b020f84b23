"""The plog writer: CANN application logs in the real format and directory layout.

Public API::

    ProcessLog(root, pid, pname, settings)   .debug() .run() .device() .paths .close()
    LogSettings.from_env(env)                ASCEND_GLOBAL_LOG_LEVEL & co, real parsing rules
    Noise(process_log, rng, device)          .start() .steady() .exit() background lines
    CannMessage, render_block(msgs, shape)   CANN error-message blocks (5 shapes)
    shape_for_cann("8.0.RC2") -> "ts"
    line.*                                   per-module body helpers
    timefmt.*                                plog / file / banner timestamps
"""
from __future__ import annotations

from runtime_sim.plog import line, timefmt
from runtime_sim.plog.error_block import (CannMessage, compact_text, is_external, render_block,
                                          shape_for_cann)
from runtime_sim.plog.files import (FILE_MAX_BYTES, LogSettings, ProcessLog, RotatingLog,
                                    log_root_from_env)
from runtime_sim.plog.noise import Noise

__all__ = [
    "CannMessage", "FILE_MAX_BYTES", "LogSettings", "Noise", "ProcessLog", "RotatingLog",
    "compact_text", "is_external", "line", "log_root_from_env", "render_block",
    "shape_for_cann", "timefmt",
]
