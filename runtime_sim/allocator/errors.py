"""Exceptions whose ``str()`` is the text the real torch_npu prints.

torch_npu appends an error banner to most TORCH_CHECK messages
(torch_npu/csrc/core/npu/NPUException.cpp ``formatErrorCode``)::

    \\n[ERROR] <%Y-%m-%d-%H:%M:%S> (PID:<pid>, Device:<device>, RankID:<rank>) ERR<SS><CCC> <SUB> <text>

The timestamp, pid, device and rank come from an :class:`ErrorContext` so that the
simulator stays deterministic (the real one reads the wall clock).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, Optional

# NPUException.h: enum class SubModule / ErrCode, and the texts of errCodeMap.
_SUBMODULES = {"PTA": 0, "OPS": 1, "DIST": 2, "GRAPH": 3, "PROF": 4}
_ERRCODES = {
    "PARAM": (1, "invalid parameter"),
    "TYPE": (2, "invalid type"),
    "VALUE": (3, "invalid value"),
    "PTR": (4, "invalid pointer"),
    "INTERNAL": (5, "internal error"),
    "MEMORY": (6, "memory error"),
    "NOT_SUPPORT": (7, "feature not supported"),
    "NOT_FOUND": (8, "resource not found"),
    "UNAVAIL": (9, "resource unavailable"),
    "SYSCALL": (10, "system call failed"),
    "TIMEOUT": (11, "timeout error"),
    "PERMISSION": (12, "permission error"),
    "ACL": (100, "call acl api failed"),
    "HCCL": (200, "call hccl api failed"),
    "GE": (300, "call ge api failed"),
}


@dataclass(frozen=True)
class ErrorContext:
    """What formatErrorCode reads from the process: time, pid, device, rank.

    ``device`` is what c10_npu::GetDevice reports (-1 when no device is set);
    ``rank`` is the RANK environment variable or -1. The simulator passes what the
    scenario needs; the defaults are arbitrary but fixed.
    """

    timestamp: str = "2025-01-01-00:00:00"
    pid: int = 12345
    device: int = -1
    rank: int = -1


def format_banner(spec: str, ctx: Optional[ErrorContext] = None) -> str:
    """``"OPS:VALUE"`` -> ``"\\n[ERROR] ... ERR01003 OPS invalid value"``."""
    ctx = ctx or ErrorContext()
    sub, code = spec.split(":")
    number, text = _ERRCODES[code]
    return "\n[ERROR] %s (PID:%d, Device:%d, RankID:%d) ERR%02d%03d %s %s" % (
        ctx.timestamp, ctx.pid, ctx.device, ctx.rank, _SUBMODULES[sub], number, sub, text,
    )


class AllocConfError(ValueError):
    """A PYTORCH_NPU_ALLOC_CONF string the real parser rejects.

    ``str(err)`` is the message (with its banner) exactly as the Python exception
    shows it; ``python_type`` is the class Python raises it as (always
    ``RuntimeError``: TORCH_CHECK and std::exception both surface as RuntimeError).
    """

    def __init__(self, text: str, message_id: str, key: str = "", python_type: str = "RuntimeError"):
        super().__init__(text)
        self.text = text
        self.message_id = message_id
        self.key = key
        self.python_type = python_type

    def __str__(self) -> str:
        return self.text

    def console_line(self) -> str:
        """The last line(s) of the traceback a user would paste."""
        return "%s: %s" % (self.python_type, self.text)


class NPUOutOfMemoryError(RuntimeError):
    """The allocator's out-of-memory error; ``str()`` is the real message.

    ``python_type`` is the exception class the real torch_npu raises
    (RuntimeError up to 7.3.x, torch.OutOfMemoryError from 26.0.0); ``fields``
    carries the numbers behind the message (bytes), for tests and diagnosis.
    """

    def __init__(self, text: str, python_type: str, fields: Optional[Dict[str, int]] = None):
        super().__init__(text)
        self.text = text
        self.python_type = python_type
        self.fields: Dict[str, int] = dict(fields or {})

    def __str__(self) -> str:
        return self.text

    def console_line(self) -> str:
        return "%s: %s" % (self.python_type, self.text)
