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
caller says which with a prefix (``hccl:7``, ``drv:7``) or we read it from context.
Pure functions; no data tables here.
"""
from __future__ import annotations

import re
from typing import List, Optional

_ECODE = re.compile(r"^[EW][0-9A-Z]\d{4}$")
_ERRCODE = re.compile(r"^ERR\d{5}$")
_PREFIXED = re.compile(
    r"^(?P<fam>hccl|hcclresult|hccl_result|drv|driver|drverror|drvretcode|ts|dcmi)\s*[:=\s]\s*(?P<num>-?(?:0x[0-9a-f]+|\d+))$"
)
_NAME = re.compile(r"^(?:ACL_|ACLNN_|HCCL_|DRV_|RT_ERROR|TS_|DCMI_)[A-Z0-9_]+$")
_NEGATIVE = re.compile(r"^-\d+$")
_HEX = re.compile(r"^0[xX][0-9a-fA-F]+$")

# Below this many hex digits a 0x value is a task-scheduler code, not a runtime-internal one.
_TS_MAX = 0x3FF
_INNER_LO, _INNER_HI = 0x07000000, 0x08000000


def inner_key(value: int) -> str:
    return "0x%08X" % value


def ts_key(value: int) -> str:
    return "ts:0x%X" % value


def _hccl_from_errno(value: int) -> Optional[str]:
    # HCCL prints errNo[0x0000000005010009] / return[83951623]: module byte 0x05, HcclResult in the low byte.
    if (value >> 24) & 0xFF == 0x05 and value < 0x06000000:
        return "hccl:%d" % (value & 0xFF)
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
            return ["hccl:%d" % value] if value < 0x100 else [k for k in [_hccl_from_errno(value)] if k]
        if fam.startswith("drv") or fam == "driver" or fam == "drverror":
            return ["drv:%d" % value]
        if fam == "ts":
            return [ts_key(value)]
        if fam == "dcmi":
            return [str(value if value < 0 else -value)]
    if _NEGATIVE.match(s):
        return [s]
    if _HEX.match(s):
        value = int(s, 16)
        if _INNER_LO <= value < _INNER_HI:
            return [inner_key(value)]
        if value <= _TS_MAX:
            return [ts_key(value)]
        hccl = _hccl_from_errno(value)
        return [hccl] if hccl else []
    if s.isdigit():
        value = int(s)
        if 100000 <= value <= 599999:
            return [str(value)]
        if _INNER_LO <= value < _INNER_HI:  # retCode printed in decimal (e.g. 117571606)
            return [inner_key(value)]
        hccl = _hccl_from_errno(value)
        if hccl:
            return [hccl]
        if value < 0x100 or value == 65534:
            return ["hccl:%d" % value, "drv:%d" % value]
        return []
    # a code written the way logs write it: retCode=0x26, errNo[0x...], drvRetCode=6, hcclRet -> 9
    return extract_codes(code.strip())


# ------------------------------------------------------------------ extraction
# Each family has its own regex and a cheap literal gate: a line only pays for the
# regexes whose gate occurs in it (most candidate lines carry one or two codes).
# no look-behind: a pattern that starts with a character class is searched fast; the
# character before a hit is checked in Python (hits are rare)
_ECODE_RX = re.compile(r"[EW][0-9A-Z]\d{4}(?![0-9A-Za-z])")
_ERR_RX = re.compile(r"(?<![A-Za-z0-9])ERR\d{5}(?!\d)")
_NUM_GATES = ("error code is", "errorCode =", "ErrCode=", "result =", "retcode:", "return[", "errno:", "failed:", "ret")
_NUM_RX = re.compile(
    r"(?:error code is|errorCode =|ErrCode=|runtime result =|result =|retcode:|return\[|errno:|"
    r"failed:|ret=|ret:|ret is|ret\[)[ \t]?(-?\d+)"
)
_HEX_RX = re.compile(r"(?:retCode=|InnerCode=|rtCode=)(0x[0-9a-fA-F]+|\d+)")
_DRV_RX = re.compile(r"drvRetCode(?:=|: ?)(\d+)")
_ERRNO_RX = re.compile(r"errNo\[(0x[0-9a-fA-F]+)\]")
_HCCLRET_RX = re.compile(r"(?:hcclRet|call trace: ret) -> (\d+)")
_HCCL_CONTEXT = re.compile(r"HCCL|[Hh]ccl|hcom|HcclComm|Hcom")
_DRV_CONTEXT = re.compile(r"\bDRV\b|\bdrv\b|halMem|halDevice|driver")


def extract_codes(text: str) -> List[str]:
    """Canonical keys of every code written in ``text``, in order of appearance, no repeats.

    Context decides ambiguous small numbers: on a line that talks about HCCL they are
    HcclResult, on a driver line drvError_t; elsewhere they are dropped.
    """
    if not text:
        return []
    hits: List[tuple] = []
    for m in _ECODE_RX.finditer(text):
        start = m.start()
        if start == 0 or not (text[start - 1].isalnum() or text[start - 1] == "_"):
            hits.append((start, [m.group(0)]))
    if "ERR" in text:
        for m in _ERR_RX.finditer(text):
            hits.append((m.start(), [m.group(0)]))
    if any(g in text for g in _NUM_GATES):
        for m in _NUM_RX.finditer(text):
            value = m.group(1)
            keys = canonical_keys(value)
            if len(keys) > 1:  # ambiguous small number: read the line around it
                keys = _by_context(text, m.start(), value)
            hits.append((m.start(), keys))
    if "Code=" in text:
        for m in _HEX_RX.finditer(text):
            value = m.group(1)
            if value.startswith("0x"):
                keys = canonical_keys(value)
            else:
                number = int(value)
                keys = [inner_key(number)] if _INNER_LO <= number < _INNER_HI else []
            hits.append((m.start(), keys))
    if "drvRetCode" in text:
        for m in _DRV_RX.finditer(text):
            hits.append((m.start(), ["drv:%d" % int(m.group(1))]))
    if "errNo[" in text:
        for m in _ERRNO_RX.finditer(text):
            hccl = _hccl_from_errno(int(m.group(1), 16))
            hits.append((m.start(), [hccl] if hccl else []))
    if " -> " in text:
        for m in _HCCLRET_RX.finditer(text):
            hits.append((m.start(), ["hccl:%d" % int(m.group(1))]))
    if len(hits) > 1:
        hits.sort(key=lambda h: h[0])
    found: List[str] = []
    for _, keys in hits:
        for key in keys:
            if key not in found:
                found.append(key)
    return found


def _by_context(text: str, pos: int, value: str) -> List[str]:
    start = text.rfind("\n", 0, pos) + 1
    end = text.find("\n", pos)
    line = text[start:] if end < 0 else text[start:end]
    if _HCCL_CONTEXT.search(line):
        return ["hccl:%d" % int(value)]
    if _DRV_CONTEXT.search(line):
        return ["drv:%d" % int(value)]
    return []


def display_code(key: str) -> str:
    """How a canonical key is shown to people (without the namespace prefix)."""
    for prefix in ("hccl:", "drv:", "ts:", "name:"):
        if key.startswith(prefix):
            return key[len(prefix):]
    return key
