"""The text torch_npu puts on the user's terminal when an NPU call fails.

Every builder returns the exact lines a user would paste, version-dependent through
``Stack``. Shapes (torch_npu, https://github.com/Ascend/pytorch/blob/9e73e708ab9350d203475609f36f8a43f6a0c2ab):

``NPU_CHECK_ERROR`` (PT ``NPUException.h``)::

    RuntimeError: <ctx>:build/CMakeFiles/torch_npu.dir/compiler_depend.ts:<n> NPU function error: <call>, error code is <code>
    [ERROR] 2025-06-24-11:20:49 (PID:528886, Device:-1, RankID:-1) ERR00100 PTA call acl api failed
    [Error]: Failed to start the device.
            Rectify the fault based on the error information in the ascend log.
    <CANN error block>

(https://github.com/Ascend/pytorch/issues/67). ``NPU_CHECK_WARN``, the asynchronous
"Inner error" of the task queue, aclnn failures, HCCL errors and the CPU-fallback
warning follow the same pattern.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import List, Sequence

from runtime_sim.plog.error_block import CannMessage, compact_text, render_block
from runtime_sim.plog.timefmt import banner_ts, glog_ts
from runtime_sim.runtime.profile import Stack, texts

COMPILER_DEPEND = "build/CMakeFiles/torch_npu.dir/compiler_depend.ts"


@dataclass(frozen=True)
class Where:
    """Who prints: process, device index (-1 before set_device), RANK env (-1 unset)."""

    pid: int
    device: int = -1
    rank: int = -1


def banner(errcode: str, ts_us: int, where: Where, period: bool = False) -> str:
    """``[ERROR] <ts> (PID:.., Device:.., RankID:..) ERR<SS><CCC> <SUB> <text>``; errcode ``SUB:CODE``."""
    data = texts()
    sub, code = errcode.split(":")
    number, text = data["errcodes"][code]
    return "[ERROR] %s (PID:%d, Device:%d, RankID:%d) ERR%02d%03d %s %s%s" % (
        banner_ts(ts_us), where.pid, where.device, where.rank, data["submodules"][sub], number,
        sub, text, "." if period else "")


def acl_text(code: int, stack: Stack) -> List[str]:
    """``[Error]: <text>`` and its indented advice, or nothing for an unmapped code."""
    entry = texts()["acl_texts"].get(code) or texts()["acl_texts"].get(str(code))
    if not entry:
        return []
    space = " " if stack.rules["hint_trailing_space"] else ""
    return ["[Error]: %s%s" % (entry[0], space), "        %s" % entry[1]]


def _block(messages: Sequence[CannMessage], stack: Stack) -> List[str]:
    text = render_block(messages, stack.block_shape)
    return text.split("\n") if text else []


def check_error(stack: Stack, ctx: str, ctx_line: int, call: str, code: int, ts_us: int,
                where: Where, messages: Sequence[CannMessage], compact: bool = False,
                errcode: str = "PTA:ACL", exc_type: str = "RuntimeError") -> str:
    """An ``NPU_CHECK_ERROR`` failure as the last lines of a Python traceback."""
    if compact and stack.compact_output_supported:
        return "%s: %s" % (exc_type, compact_text(messages))
    rules = stack.rules
    head = "%s: %s:%s:%d %s: %s, error code is %d" % (
        exc_type, ctx, COMPILER_DEPEND, ctx_line, rules["check_error_word"], call, code)
    lines = [head]
    if rules["banner"]:
        lines.append(banner(errcode, ts_us, where, period=rules["banner_period"]))
    lines.extend(acl_text(code, stack))
    lines.extend(_block(messages, stack))
    return "\n".join(lines)


def check_warn(stack: Stack, code: int, ts_us: int, func: str, line_no: int,
               messages: Sequence[CannMessage], extra_ns: int = 0) -> str:
    """An ``NPU_CHECK_WARN`` warning block, e.g. from ``npuSynchronizeDevice``
    (https://github.com/vllm-project/vllm-ascend/issues/2105)."""
    entry = texts()["acl_texts"].get(code)
    first = "%sWarning: NPU warning, error code is %d[Error]: " % (
        warn_prefix(stack, ts_us, "compiler_depend.ts:%d" % line_no, extra_ns), code)
    lines = [first]
    if entry:
        space = " " if stack.rules["hint_trailing_space"] else ""
        lines.append("[Error]: %s%s" % (entry[0], space))
        lines.append("        %s" % entry[1])
    lines.extend(_block(messages, stack))
    lines.append(" (function %s)" % func)
    return "\n".join(lines)


def warn_prefix(stack: Stack, ts_us: int, src: str, extra_ns: int = 0) -> str:
    """``[W730 06:16:22.869118032 compiler_depend.ts:526] `` or ``[W compiler_depend.ts:51] ``."""
    if stack.dated_warnings:
        return "[W%s %s] " % (glog_ts(ts_us, extra_ns), src)
    return "[W %s] " % src


def fallback_warning(stack: Stack, op: str, ts_us: int, extra_ns: int = 0) -> str:
    """The CPU-fallback warning, printed once per op (Ascend/pytorch
    docs/zh/user_guide/troubleshooting/troubleshooting_cases/unsupported_op_called.md)."""
    src = stack.rules["fallback_file"]
    return ("%sWarning: CAUTION: The operator '%s' is not currently supported on the NPU "
            "backend and will fall back to run on the CPU. This may have performance "
            "implications. (function npu_cpu_fallback)" % (warn_prefix(stack, ts_us, src, extra_ns), op))


def async_inner_error(stack: Stack, op_type: str, ts_us: int, where: Where,
                      messages: Sequence[CannMessage]) -> str:
    """The task queue's report of a failure found after the op was launched (PT
    ``NPUQueue.cpp``; https://github.com/hiyouga/LlamaFactory/issues/3670)."""
    if stack.rules["inner_error_style"] == "old":
        lines = ["RuntimeError: The Inner error is reported as above.",
                 " Since the operator is called asynchronously, the stacktrace may be inaccurate. "
                 "If you want to get the accurate stacktrace, pleace set the environment variable "
                 "ASCEND_LAUNCH_BLOCKING=1."]
        lines.extend(_block(messages, stack))
        return "\n".join(lines)
    lines = ["RuntimeError: The Inner error is reported as above. The process exits for "
             "this inner error, and the current working operator name is %s." % op_type,
             "Since the operator is called asynchronously, the stacktrace may be "
             "inaccurate. If you want to get the accurate stacktrace, please set the "
             "environment variable ASCEND_LAUNCH_BLOCKING=1.",
             "Note: ASCEND_LAUNCH_BLOCKING=1 will force ops to run in synchronous mode, "
             "resulting in performance degradation. Please unset ASCEND_LAUNCH_BLOCKING "
             "in time after debugging."]
    if stack.rules["banner"]:
        lines.append(banner("PTA:ACL", ts_us, where, period=True))
    lines.extend(_block(messages, stack))
    return "\n".join(lines)


def aclnn_error(stack: Stack, ctx: str, ctx_line: int, api: str, code: int, ts_us: int,
                where: Where, messages: Sequence[CannMessage]) -> str:
    """An aclnn call that returned an error, in the op-plugin wording of this release
    (Ascend/op-plugin ``op_plugin/utils/op_api_common.h``)."""
    rules = stack.rules
    if rules["aclnn_style"] == "check":
        return check_error(stack, ctx, ctx_line, "call %s failed" % api, code, ts_us, where,
                           messages)
    block = render_block(messages, stack.block_shape)
    lines = ["RuntimeError: call %s failed, detail:%s" % (api, block)]
    if rules["banner"]:
        lines.append(banner(rules["aclnn_errcode"], ts_us, where))
    return "\n".join(lines)


def hccl_error(stack: Stack, ctx: str, ctx_line: int, call: str, hccl_code: int, ts_us: int,
               where: Where, messages: Sequence[CannMessage]) -> str:
    """``HCCL_CHECK_ERROR`` (PT ``HCCLUtils.hpp``): ``HCCL function error: <call>, error code is
    <HcclResult>`` + ``ERR02200 DIST call hccl api failed.`` + CANN block
    (https://github.com/verl-project/verl/pull/332)."""
    lines = ["RuntimeError: %s:%s:%d HCCL function error: %s, error code is %d" % (
        ctx, COMPILER_DEPEND, ctx_line, call, hccl_code)]
    if stack.rules["banner"]:
        lines.append(banner("DIST:HCCL", ts_us, where, period=True))
    lines.extend(_block(messages, stack))
    return "\n".join(lines)
