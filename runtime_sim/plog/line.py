"""One plog line, and the body conventions of each module.

Line (RT ``src/dfx/log/liblog/slog/dlog_message.c``):

    [LEVEL] MODULE(PID,PNAME):YYYY-MM-DD-hh:mm:ss.mmm.uuu [FILE:LINE]BODY

The body after ``[file:line]`` is written by the module itself; each module has its own
habit. The helpers below produce exactly those
shapes so callers never hand-assemble separators.
"""
from __future__ import annotations

from typing import Optional

LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR", "EVENT", "TRACE")
# Numeric ids used by ASCEND_GLOBAL_LOG_LEVEL (EVENT is switched separately).
LEVEL_IDS = {"DEBUG": 0, "INFO": 1, "WARNING": 2, "ERROR": 3, "EVENT": 16, "TRACE": 1}


def format_line(level: str, module: str, pid: int, pname: str, ts: str,
                src: str, body: str) -> str:
    """The full line with its newline. ``src`` is ``file:line``; ``ts`` is preformatted."""
    return "[%s] %s(%d,%s):%s [%s]%s\n" % (level, module, pid, pname, ts, src, body)


def format_line_tight(level: str, module: str, pid: int, pname: str, ts: str,
                      src: str, body: str) -> str:
    """The spaceless variant of the HCCL fault-diagnosis doc samples (``[ERROR]HCCL(``
    and no space before ``[file:line]``; hicann/hccl task_exec_stage.md)."""
    return "[%s]%s(%d,%s):%s[%s]%s\n" % (level, module, pid, pname, ts, src, body)


# --- bodies -------------------------------------------------------------------------

def tid_func(tid: int, func: str, msg: str, space: bool = False) -> str:
    """RUNTIME / GE / ASCENDCL / FE: ``<tid> <Func>:<msg>``, tid glued to ``]``.

    ``space`` gives the `` 58 CreateRuntimeImpl: ...`` variant some RUNTIME INFO lines
    have (gpustack/gpustack#3352)."""
    return "%s%d %s:%s" % (" " if space else "", tid, func, msg)


def hccl(tid: int, msg: str) -> str:
    """HCCL: `` [<tid>]<msg>``; ``msg`` often starts with ``[Stage][Key]``."""
    return " [%d]%s" % (tid, msg)


def hccl_tight(tid: int, msg: str) -> str:
    """HCCL without the leading space (task_exec_stage.md ``[835695][TaskExecStage]``)."""
    return "[%d]%s" % (tid, msg)


def tdt(func: str, tid: int, msg: str) -> str:
    """TDT: ``[<Func>][tid:<n>] <msg>``."""
    return "[%s][tid:%d] %s" % (func, tid, msg)


def profiling(tid: int, msg: str, arrow: bool = False) -> str:
    """PROFILING: `` >>> (tid:<n>) <msg>`` or `` (tid:<n>) <msg>``."""
    return "%s(tid:%d) %s" % (" >>> " if arrow else " ", tid, msg)


def atrace(tid: int, msg: str) -> str:
    """ATRACE: ``(tid:<n>) <msg>`` glued to ``]`` (vllm-project/vllm-ascend#5361)."""
    return "(tid:%d) %s" % (tid, msg)


def drv(pid: int, tid: int, sub: str, func: str, msg: str) -> str:
    """DRV: ``[ascend][curpid:<pid>,<tid>][drv][<sub>][<func>]<msg>``."""
    return "[ascend][curpid:%d,%d][drv][%s][%s]%s" % (pid, tid, sub, func, msg)


def hccp(tid: int, func: str, line: int, msg: str) -> str:
    """HCCP (device side): ``tid:<n>,<func>(<line>) : <msg>``."""
    return "tid:%d,%s(%d) : %s" % (tid, func, line, msg)


def roce(func: str, line: int, msg: str) -> str:
    """ROCE: ``<func>(<line>) : <msg>``."""
    return "%s(%d) : %s" % (func, line, msg)


def app_pta(tid: int, where: str, msg: str) -> str:
    """APP (torch_npu's ASCEND_LOGE through aclAppLog): ``<tid> <file>:<Func>:<line>: "[PTA]:"<msg>"``.

    Shape from vllm-project/vllm-ascend#5361:
    ``[log_inner.cpp:77]173913 build/CMakeFiles/torch_npu.dir/compiler_depend.ts:MakeSureQueueEmpty:343: "[PTA]:"Inner error ..."``
    """
    return '%d %s: "[PTA]:"%s"' % (tid, where, msg)


def inner_where(func: str, file: str, line: int) -> str:
    """The ``[FUNC:..][FILE:..][LINE:..]`` suffix of inner error-message lines."""
    return "[FUNC:%s][FILE:%s][LINE:%d]" % (func, file, line)


def with_where(msg: str, where: Optional[str]) -> str:
    return msg + where if where else msg
