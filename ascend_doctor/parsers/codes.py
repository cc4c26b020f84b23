"""Error codes written inside free text, each with the family it belongs to.

The same number means different things by where it stands (shared/reference/
formats-plog-errors.md §3, §4, §6): ``error code is 507035`` is an aclError, but
``HCCL function error: ..., error code is 6`` is an HcclResult; ``retCode=0x2a,
[aicpu exception]`` is a task-scheduler code read through its bracketed reason,
while ``retCode=0x7020014`` is a runtime-internal code; ``errNo[0x...05000007]``
carries the HcclResult in its low byte; GE prints status words as big decimals.
So codes are only taken from the phrases that print them, never from any number.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import List, Optional

# families: acl (aclError / aclnn, 6 digits), cann (E-codes), torch_npu (ERRmmccc),
# runtime_inner (0x07MMxxxx), ts (short TS retCode), hccl (HcclResult), drv (drvError_t),
# ge_status (GE Status word), npu_smi (dcmi/npu-smi ret)


@dataclass(frozen=True)
class Code:
    family: str
    value: str  # canonical text: "507035", "EZ9999", "ERR00100", "0x7020014", "0x2a", "6"
    raw: str  # the phrase it was read from
    reason: Optional[str] = None  # bracketed/parenthesised description printed with it

    @property
    def key(self) -> str:
        return self.value if self.family in ("acl", "cann", "torch_npu") else f"{self.family}:{self.value}"


_ACL = r"(?P<acl>[1235]\d{5})\b"
_ACL_PHRASES = re.compile(
    r"(?:error code is|error code:|ErrCode=|runtime result = |result = |retcode:? ?|ret\[|ret=|ret is |"
    r"ret:|errno:|return code |errorCode=|aclError |error_code=|status )\s*" + _ACL,
    re.IGNORECASE,
)
_HCCL_CALL = re.compile(
    r"(?:HCCL function error: [^\n]*?, error code is |OPS function error: Hccl\w+, error code is |hcclRet -> )"
    r"(?P<v>\d{1,2})\b"
)
_HCCL_ERRNO = re.compile(r"errNo\[0x(?P<hex>[0-9A-Fa-f]{8,16})\]")
_CANN = re.compile(r"(?<![A-Za-z0-9_])(?P<code>[EW](?:[A-Z]\d{4}|\d{5}))(?![A-Za-z0-9_])")
_TORCH = re.compile(r"(?<![A-Za-z0-9])(?P<code>ERR\d{5})\b")
_INNER = re.compile(r"(?:InnerCode|retCode|errCode|error code|ret)\s*[=:]\s*(?P<hex>0x0?7[0-9A-Fa-f]{6})\b")
_TS = re.compile(r"retCode=(?P<hex>0x[0-9A-Fa-f]{1,4})\s*,\s*\[(?P<reason>[^\]]+)\]")
_DRV = re.compile(r"drvRetCode=(?P<v>-?\d+)")
_GE = re.compile(r"(?:ErrorNo: (?P<v1>\d{6,10})\((?P<r1>[^)]*)\)|ge result = (?P<v2>\d{6,10}))")
_DESC = re.compile(r"(?:desc|reason)=\[(?P<reason>[^\]]+)\]")
_NPU_SMI = re.compile(r"dcmi module initialize failed\.\s*ret is\s*(?P<v>-?\d+)|Failed to execute npu-smi\s.*?ret is\s*(?P<w>-?\d+)", re.I)


def find_codes(text: str) -> List[Code]:
    """Every error code in ``text`` with its family, in order of appearance, without repeats."""
    found: List[tuple] = []
    seen = set()

    def add(pos: int, code: Code) -> None:
        if code.key not in seen:
            seen.add(code.key)
            found.append((pos, code))

    for m in _HCCL_CALL.finditer(text):
        add(m.start("v"), Code("hccl", str(int(m.group("v"))), m.group(0)))
    for m in _HCCL_ERRNO.finditer(text):
        add(m.start(), Code("hccl", str(int(m.group("hex"), 16) & 0xFF), m.group(0)))
    reason = None
    d = _DESC.search(text)
    if d:
        reason = d.group("reason")
    for m in _ACL_PHRASES.finditer(text):
        add(m.start("acl"), Code("acl", m.group("acl"), m.group(0).strip(), reason))
    for m in _INNER.finditer(text):
        add(m.start(), Code("runtime_inner", "0x" + m.group("hex")[2:].lstrip("0").lower(), m.group(0), reason))
    for m in _TS.finditer(text):
        h = m.group("hex").lower()
        if len(h) <= 6:
            add(m.start(), Code("ts", h, m.group(0), m.group("reason")))
    for m in _DRV.finditer(text):
        add(m.start(), Code("drv", m.group("v"), m.group(0)))
    for m in _GE.finditer(text):
        v = m.group("v1") or m.group("v2")
        add(m.start(), Code("ge_status", v, m.group(0), m.group("r1")))
    if "E" in text or "W" in text:
        for m in _CANN.finditer(text):
            code = m.group("code")
            if _plausible_cann(text, m.start(), code):
                add(m.start(), Code("cann", code, code))
        for m in _TORCH.finditer(text):
            add(m.start(), Code("torch_npu", m.group("code"), m.group("code")))
    if "npu-smi" in text or "dcmi" in text:
        smi = _npu_smi_code(text)
        if smi is not None:
            add(text.find(smi.raw) if smi.raw in text else len(text), smi)
    found.sort(key=lambda pc: pc[0])
    return [c for _, c in found]


def _npu_smi_code(text: str) -> Optional[Code]:
    # the lead's npu-smi parser knows every failure wording; the regex is the fallback
    try:
        from ascend_doctor.parsers.npu_smi import parse_npu_smi_error
    except ImportError:  # pragma: no cover - the module ships with the package
        parse_npu_smi_error = None
    if parse_npu_smi_error is not None:
        err = parse_npu_smi_error(text)
        if err is not None and err.code is not None and err.kind in ("dcmi_init", "exec_failed", "console_log_level"):
            return Code("npu_smi", str(err.code), err.line)
        return None
    m = _NPU_SMI.search(text)
    return Code("npu_smi", m.group("v") or m.group("w"), m.group(0)) if m else None


def _plausible_cann(text: str, pos: int, code: str) -> bool:
    # glog prefixes such as ``[E0324 13:00:25.4 ...]`` and hex dumps are not codes
    if pos > 0 and text[pos - 1] == "[" and text[pos + 6:pos + 7] == " " and code[1:].isdigit():
        return False
    if pos > 1 and text[pos - 2:pos].lower() == "0x":
        return False
    return True


def primary_code(codes: List[Code]) -> Optional[Code]:
    """The code that names the failure best: an external CANN code, else aclError, else any."""
    order = {"cann": 0, "acl": 1, "hccl": 2, "runtime_inner": 3, "ts": 4, "npu_smi": 5, "drv": 6, "ge_status": 7, "torch_npu": 8}
    best = None
    for c in codes:
        rank = order.get(c.family, 9)
        if c.family == "cann" and c.value.endswith(("9999", "8888")):
            rank = 2.5  # inner codes say little by themselves
        if best is None or rank < best[0]:
            best = (rank, c)
    return best[1] if best else None
