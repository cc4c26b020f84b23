"""Error-code spelling: turn any way a code is written into canonical keys.

Canonical keys (one namespace for all tables):

==============  =====================  ==========================================
key             example                table
==============  =====================  ==========================================
decimal         ``507035``             ACL / runtime / GE pass-through, aclnn
``0x%08X``      ``0x07020014``         runtime-internal retCode / InnerCode
``ts:0x%X``     ``ts:0x26``            task-scheduler code (``retCode=0x26``)
``hccl:N``      ``hccl:7``             HcclResult
``drv:N``       ``drv:6``              driver drvError_t (``drvRetCode=6``)
``-8NNN``       ``-8005``              DCMI return code (npu-smi)
``E.....``      ``EZ9999``             CANN alphanumeric code
``ERR.....``    ``ERR00100``           torch_npu error code
``name:X``      ``name:HCCL_E_UNAVAIL``  a symbolic name, resolved by the KB
==============  =====================  ==========================================

Small bare numbers (``7``) are ambiguous between HcclResult and drvError_t; the
caller says which with a prefix (``hccl:7``, ``drv:7``). Codes in free text are found by
``ascend_doctor.parsers.codes.find_codes`` (the one extractor, shared with triage, which
reads ambiguous numbers from their line); this module only spells its results as keys.
Pure functions; no data tables here.
"""
from __future__ import annotations

from typing import List, Optional

from ascend_doctor.parsers.codes import SMALL, Code, classify_number, find_codes, hccl_of_errno

from ..lazyre import lazy

_ECODE = lazy(r"^[EW][0-9A-Z]\d{4}$")
_ERRCODE = lazy(r"^ERR\d{5}$")
_PREFIXED = lazy(
    r"^(?P<fam>hccl|hcclresult|hccl_result|drv|driver|drverror|drvretcode|ts|dcmi)\s*[:=\s]\s*(?P<num>-?(?:0x[0-9a-f]+|\d+))$"
)
_NAME = lazy(r"^(?:ACL_|ACLNN_|HCCL_|DRV_|RT_ERROR|TS_|DCMI_)[A-Z0-9_]+$")
_NEGATIVE = lazy(r"^-\d+$")
_NUMBER = lazy(r"^(?:0[xX][0-9a-fA-F]+|\d+)$")


def inner_key(value: int) -> str:
    return "0x%08X" % value


def ts_key(value: int) -> str:
    return "ts:0x%X" % value


def kb_key(code: Code) -> Optional[str]:
    """The table key of a code found in text, or None for families the tables do not hold."""
    family, value = code.family, code.value
    if family in ("acl", "cann", "torch_npu"):
        return value
    if family == "runtime_inner":
        return inner_key(int(value, 16))
    if family == "ts":
        return ts_key(int(value, 16))
    if family in ("hccl", "drv"):
        return "%s:%s" % (family, value)
    if family == "npu_smi" and value.lstrip("-").isdigit() and int(value) <= 0:
        return value  # DCMI returns; npu-smi's positive driver returns have no table
    return None


def canonical_keys(code: str) -> List[str]:
    """All canonical keys a written code may stand for, most likely first.

    Returns an empty list for text that is not a code at all.
    """
    s = code.strip().strip("[](){}'\",;.")
    if not s:
        return []
    upper = s.upper()
    if _ERRCODE.match(upper):
        return [upper]
    if _ECODE.match(upper):
        return [upper]
    if _NAME.match(upper):
        return ["name:" + upper]
    lowered = s.lower().replace("errno", "").strip("[]")
    m = _PREFIXED.match(lowered)
    if m:
        fam, num = m.group("fam"), m.group("num")
        value = int(num, 16) if num.startswith("0x") else int(num)
        if fam.startswith("hccl"):
            hccl = value if value < 0x100 else hccl_of_errno(value)
            return ["hccl:%d" % hccl] if hccl is not None else []
        if fam.startswith("drv") or fam == "driver" or fam == "drverror":
            return ["drv:%d" % value]
        if fam == "ts":
            return [ts_key(value)]
        if fam == "dcmi":
            return [str(value if value < 0 else -value)]
    if _NEGATIVE.match(s):
        return [s]
    if _NUMBER.match(s):
        found = classify_number(s)
        if found is None:
            return []
        family, value_text = found
        if family == SMALL:
            return ["hccl:" + value_text, "drv:" + value_text]
        key = kb_key(Code(family, value_text, s))
        return [key] if key else []
    # a code written the way logs write it: retCode=0x26, errNo[0x...], drvRetCode=6, hcclRet -> 9
    return extract_codes(code.strip())


def extract_codes(text: str) -> List[str]:
    """Canonical keys of every code written in ``text``, in order of appearance, no repeats."""
    found: List[str] = []
    for code in find_codes(text):
        key = kb_key(code)
        if key is not None and key not in found:
            found.append(key)
    return found
