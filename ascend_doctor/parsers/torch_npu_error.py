"""torch_npu's own error text: the ``ERRmmccc`` banner and the lines around it.

Formats from torch_npu (https://github.com/Ascend/pytorch/blob/9e73e708ab9350d203475609f36f8a43f6a0c2ab:
``NPUException.{h,cpp}``, ``_error_code.py``, ``NPUQueue.cpp``, ``ProcessGroupHCCL.cpp``):

- banner  ``[ERROR] 2025-04-29-18:46:11 (PID:1066924, Device:1, RankID:-1) ERR00100 PTA call acl api failed``
- call    ``<fn>:<file>:<line> NPU function error: <call>, error code is <aclError>``
          (``HCCL function error`` carries an HcclResult, ``OPS function error`` either);
          old ``NPU error, error code is N``; warning ``NPU warning, error code is N``
- hint    ``[Error]: <text of the code>``
- aclnn   ``call aclnnXxx failed`` (with ``detail:`` before op-plugin 7.1.0)
- async   ``The Inner error is reported as above ... the current working operator name is Op``
- HCCL watchdog ``[Rank 1] Watchdog caught collective operation timeout: WorkHCCL(SeqNum=..., OpType=...``
- device faults ``UCE ERROR``, ``HBM MULTI BIT ECC ERROR``, ``FORCE STOP``, ... (NPUQueue deviceErrorMap)
- CPU fallback warning (``VariableFallbackKernel.cpp`` ``npu_cpu_fallback``)
          ``Warning: CAUTION: The operator 'aten::X' is not currently supported on the NPU backend
          and will fall back to run on the CPU. ...``, printed once per operator and process
- no kernel at all (PyTorch's dispatcher, e.g. after a fallback to a CPU that lacks the op too)
          ``Could not run 'aten::X' with arguments from the 'CPU' backend``
- allocator cache flush (``NPUCachingAllocator`` malloc), harmless
          by itself: ``Get a block from the existing pool failed. Try to free cached blocks and reallocate.``
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from ..inputs import int_or_none as num
from ..lazyre import lazy

# the banner's submodule name when a line lacks it; what each ERR code means is the KB's
# table (kb/data/codes/torch_npu_err.yaml), not the parser's business
SUBMODULES = {"00": "PTA", "01": "OPS", "02": "DIST", "03": "GRAPH", "04": "PROF", "99": "UNKNOWN"}
DEVICE_FAULTS = ("UCE ERROR", "HBM MULTI BIT ECC ERROR", "FORCE STOP", "SUSPECT MEM ERROR", "HCCS LINK ERROR",
                 "UB LINK ERROR", "HCCL OP RETRY FAILED", "SUSPECT REMOTE ERROR")

_BANNER = lazy(
    r"\[ERROR\] (?P<ts>\d{4}-\d\d-\d\d-\d\d:\d\d:\d\d) \(PID:(?P<pid>\d+), Device:(?P<dev>-?\d+), RankID:(?P<rank>-?\d+)\) "
    r"(?P<err>ERR(?P<mm>\d\d)(?P<ccc>\d{3}))(?: (?P<sub>[A-Z]+))?(?: (?P<text>.*))?$"
)
# (?<!...) before a repeated class: a search then starts only at the beginning of a run, so a
# long run of word characters costs linear time instead of quadratic
_CALL = lazy(
    r"(?:(?<![\w:~<>()])(?P<where>[\w:~<>()]+:[^\s:]+:\d+) )?(?P<kind>NPU|HCCL|OPS) function error: (?P<call>.*?), error code is (?P<code>-?\d+)"
)
_OLD_CALL = lazy(r"(?:(?<![\w:~<>()])(?P<where>[\w:~<>()]+:[^\s:]+:\d+) )?NPU (?P<kind>error|warning), error code is (?P<code>\d+)")
_HINT = lazy(r"^\[Error\]: ?(?P<text>.*)$")
_ACLNN = lazy(r"call (?P<api>aclnn\w+) failed")
_INNER = lazy(r"The Inner error is reported as above")
_OPERATOR = lazy(r"the current working operator name is (?P<op>\w+)")
_WATCHDOG = lazy(
    r"\[Rank (?P<rank>\d+)\] Watchdog caught collective operation timeout: WorkHCCL\(SeqNum=(?P<seq>\d+), OpType=(?P<op>\w+)"
    r"(?:.*?Timeout\(ms\)=(?P<timeout>\d+))?"
)
_WATCHDOG_DEAD = lazy(r"\[Rank (?P<rank>\d+)\] HCCL watchdog thread terminated with exception")
# the warning can be cut anywhere after "on the NPU" when a terminal wrapped it (MinerU #1941)
_FALLBACK = lazy(r"CAUTION: The operator '(?P<op>[^']+)' is not currently supported on the NPU")
_FALLBACK_TAIL = lazy(r"on the NPU backend\.\s*$")  # the sparse variant: an error, nothing runs on the CPU
_NO_KERNEL = lazy(r"Could not run '(?P<op>[^']+)' with arguments from the '(?P<backend>\w+)' backend")
_CACHE_FLUSH = "Get a block from the existing pool failed"
_DEVICE_FAULT = lazy(r"(?:^|RuntimeError: |: )(?P<fault>" + "|".join(DEVICE_FAULTS) + r")\b")


@dataclass
class TorchNpuRecord:
    kind: str  # banner | call | hint | aclnn | async_inner | watchdog | watchdog_exit | device_fault | cpu_fallback | no_kernel | cache_flush
    text: str
    ts: Optional[str] = None  # banner: YYYY-MM-DD-hh:mm:ss
    pid: Optional[int] = None
    device: Optional[int] = None
    rank: Optional[int] = None
    err_code: Optional[str] = None  # ERR00100
    submodule: Optional[str] = None
    call: Optional[str] = None
    code: Optional[str] = None  # the number after "error code is"
    call_kind: Optional[str] = None  # NPU | HCCL | OPS | error | warning
    operator: Optional[str] = None
    op_type: Optional[str] = None  # watchdog OpType
    timeout_ms: Optional[int] = None
    backend: Optional[str] = None  # no_kernel: the dispatch key that has no kernel


def parse_torch_npu_line(text: str) -> Optional[TorchNpuRecord]:
    """One torch_npu error record from a line, or None."""
    if "ERR" in text and "(PID:" in text:
        m = _BANNER.search(text)
        if m:
            dev, rank = num(m.group("dev"), signed=True), num(m.group("rank"), signed=True)
            return TorchNpuRecord(
                kind="banner", text=text.strip(), ts=m.group("ts"), pid=num(m.group("pid")),
                device=dev if dev is not None and dev >= 0 else None, rank=rank if rank is not None and rank >= 0 else None, err_code=m.group("err"),
                submodule=m.group("sub") or SUBMODULES.get(m.group("mm")),
            )
    if "function error" in text:
        m = _CALL.search(text)
        if m:
            op = _ACLNN.search(m.group("call"))
            return TorchNpuRecord(kind="call", text=text.strip(), call=m.group("call"), code=m.group("code"),
                                  call_kind=m.group("kind"), operator=op.group("api") if op else None)
    if "error code is" in text:
        m = _OLD_CALL.search(text)
        if m:
            return TorchNpuRecord(kind="call", text=text.strip(), code=m.group("code"), call_kind=m.group("kind"))
    if text.startswith("[Error]:"):
        m = _HINT.match(text)
        if m:
            return TorchNpuRecord(kind="hint", text=m.group("text").strip())
    if "Watchdog" in text or "watchdog" in text:
        m = _WATCHDOG.search(text)
        if m:
            return TorchNpuRecord(kind="watchdog", text=text.strip(), rank=num(m.group("rank")), op_type=m.group("op"),
                                  timeout_ms=num(m.group("timeout")) if m.group("timeout") else None)
        m = _WATCHDOG_DEAD.search(text)
        if m:
            return TorchNpuRecord(kind="watchdog_exit", text=text.strip(), rank=num(m.group("rank")))
    if "aclnn" in text:
        m = _ACLNN.search(text)
        if m:
            return TorchNpuRecord(kind="aclnn", text=text.strip(), operator=m.group("api"))
    if "Inner error" in text:
        m = _INNER.search(text)
        if m:
            op = _OPERATOR.search(text)
            return TorchNpuRecord(kind="async_inner", text=text.strip(), operator=op.group("op") if op else None)
    if "CAUTION" in text:
        m = _FALLBACK.search(text)
        if m and not _FALLBACK_TAIL.search(text):
            return TorchNpuRecord(kind="cpu_fallback", text=text.strip(), operator=m.group("op"))
    if "Could not run" in text:
        m = _NO_KERNEL.search(text)
        if m:
            return TorchNpuRecord(kind="no_kernel", text=text.strip(), operator=m.group("op"), backend=m.group("backend"))
    if _CACHE_FLUSH in text:
        return TorchNpuRecord(kind="cache_flush", text=text.strip())
    if "ERROR" in text or "FORCE STOP" in text:
        m = _DEVICE_FAULT.search(text)
        if m:
            return TorchNpuRecord(kind="device_fault", text=text.strip(), call=m.group("fault"))
    return None
