"""Error codes written inside free text, each with the family it belongs to.

The one extractor of codes: triage reads events with it and the knowledge base maps its
results to table keys (``ascend_doctor.kb.codes``). The same number means different things
by where it stands (https://github.com/hicann/runtime/blob/681ef7610df13c8128982901142a2c869ddbb53e/docs/zh/api_ref/25-01_aclError.md): ``error code is 507035``
is an aclError, but ``HCCL function error: ..., error code is 6`` is an HcclResult and
``drvRetCode=6`` a drvError_t; ``retCode=0x2a, [aicpu exception]`` is a task-scheduler code
read through its bracketed reason, while ``retCode=0x7020014`` (or ``ret=118554641`` in
decimal) is a runtime-internal code; ``errNo[0x...05000007]`` carries the HcclResult in its
low byte; GE prints status words as big decimals. So codes are only taken from the phrases
that print them, never from any number, and a small number after a return-value phrase is
named by its line (an HCCL line: HcclResult; a driver line: drvError_t; else dropped).
"""
from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import Dict, List, Optional, Tuple

from ascend_doctor.parsers.npu_smi_error import parse_npu_smi_error

from ..inputs import int_or_none as num
from ..lazyre import LazyPattern, lazy

# families: acl (aclError / aclnn, 6 digits), cann (E-codes), torch_npu (ERRmmccc),
# runtime_inner (0x07MMxxxx), ts (short TS retCode), hccl (HcclResult), drv (drvError_t),
# ge_status (GE Status word), npu_smi (dcmi / npu-smi ret)


@dataclass(frozen=True)
class Code:
    family: str
    value: str  # canonical text: "507035", "EZ9999", "ERR00100", "0x7020014", "0x2a", "6"
    raw: str  # the phrase it was read from
    reason: Optional[str] = None  # bracketed/parenthesised description printed with it

    @property
    def key(self) -> str:
        return self.value if self.family in ("acl", "cann", "torch_npu") else f"{self.family}:{self.value}"


# ------------------------------------------------------------------ numbers
INNER_LO, INNER_HI = 0x07000000, 0x08000000  # runtime-internal rtError_t: 0x07MMxxxx
TS_MAX = 0x3FF  # a bare 0x value up to this is a task-scheduler code
TS_MAX_WITH_REASON = 0xFFFF  # ... and up to this when printed with its [reason]
SMALL = "small"  # pseudo-family: HcclResult or drvError_t, only the context can tell


def hccl_of_errno(value: int) -> Optional[int]:
    """The HcclResult inside an HCCL errNo word (module byte 0x05, result in the low byte)."""
    if (value >> 24) & 0xFF == 0x05 and value < 0x06000000:
        return value & 0xFF
    return None


def classify_number(written: str, ts_ok: bool = True, ret_ok: bool = True, reason: bool = False) -> Optional[Tuple[str, str]]:
    """(family, value) of a number as a code, or None; family ``small`` when only context can tell.

    ``ts_ok``: the phrase prints task-scheduler codes (``retCode=0x26``); ``ret_ok``: it prints a
    function's return value, so small numbers, HCCL errNo words and DCMI returns count too.
    """
    if written[:2] in ("0x", "0X"):
        value = num(written, base=16)
        if value is None:  # more digits than any code has
            return None
        if INNER_LO <= value < INNER_HI:
            return "runtime_inner", "0x%x" % value
        if ts_ok and (value <= TS_MAX or (reason and value <= TS_MAX_WITH_REASON)):
            return "ts", "0x%x" % value
        hccl = hccl_of_errno(value)
        return ("hccl", str(hccl)) if hccl is not None else None
    value = num(written, signed=True)
    if value is None:
        return None
    if 100000 <= value <= 599999:
        return "acl", str(value)
    if INNER_LO <= value < INNER_HI:  # a runtime-internal code printed in decimal
        return "runtime_inner", "0x%x" % value
    if not ret_ok:
        return None
    hccl = hccl_of_errno(value) if value > 0 else None
    if hccl is not None:
        return "hccl", str(hccl)
    if -8999 <= value <= -8000:  # DCMI returns (npu-smi, device plugins)
        return "npu_smi", str(value)
    if 0 <= value < 0x100 or value == 65534:
        return SMALL, str(value)
    return None


# ------------------------------------------------------------------ phrases
# What a phrase may be followed by: RET a function's return value (any code; small ones
# are named by their line), ACL only numbers whose shape names them (aclError, runtime-
# internal, HCCL errNo word), TASK a runtime retCode (those and short task-scheduler codes).
RET, ACL, TASK = "ret", "acl", "task"
_PHRASES: Dict[str, str] = {
    "error code is": RET, "errorcode =": RET, "errorcode=": RET, "errcode=": RET, "result =": RET,
    "retcode:": RET, "return[": RET, "errno:": RET, "failed:": RET,
    "ret=": RET, "ret:": RET, "ret is": RET, "ret[": RET,
    "error code:": ACL, "error code =": ACL, "error code=": ACL, "error_code=": ACL, "errcode:": ACL, "error code": ACL,
    "return code": ACL, "retcode": ACL, "aclerror": ACL, "status": ACL, "err=": ACL, "error=": ACL,
    "retcode=": TASK, "innercode=": TASK, "innercode:": TASK, "rtcode=": TASK,
}
_VALUE = r"[ \t]*(-?(?:0x[0-9a-f]+|\d+))(?![0-9a-z_])"  # whole numbers only


def _phrase_regexes() -> Tuple[Tuple[str, LazyPattern], ...]:
    # one regex per gate word, run only when its gate occurs in the lowered line (an ``in``
    # test costs less than any regex); "code" gates every phrase that contains it
    stems = {p: "code" if "code" in p else re.sub(r"(?: is|[ =:\[])+$", "", p) for p in _PHRASES}
    groups: Dict[str, List[str]] = {}
    for phrase, stem in stems.items():
        gate = min((g for g in stems.values() if g in stem), key=len)
        groups.setdefault(gate, []).append(phrase)
    out = []
    for gate, phrases in sorted(groups.items()):
        alt = "|".join(re.escape(p) for p in sorted(phrases, key=len, reverse=True))
        out.append((gate, lazy("(" + alt + ")" + _VALUE)))
    return tuple(out)


_PHRASE_RX = _phrase_regexes()
_BRACKET = lazy(r"\s*,\s*\[([^\]]+)\]")  # retCode=0x2a, [aicpu exception]
_DESC = lazy(r"(?:desc|reason)=\[(?P<reason>[^\]]+)\]")
_HCCL_CONTEXT = lazy(r"HCCL|[Hh]ccl|hcom|Hcom")
_DRV_CONTEXT = lazy(r"\bDRV\b|\bdrv\b|halMem|halDevice|driver")

# ------------------------------------------------------------------ fixed spellings
_CANN = lazy(r"[EW][0-9A-Z]\d{4}(?![0-9A-Za-z])")  # the character before is checked in Python
_TORCH = lazy(r"ERR\d{5}(?!\d)")
_HCCL_ARROW = lazy(r"(?:hcclRet|call trace: ret) -> (\d+)")
_HCCL_ERRNO = lazy(r"errNo\[(0x[0-9A-Fa-f]+)\]")
_DRV = lazy(r"drvRetCode(?:=|: ?)(-?\d+)")
_GE = lazy(r"ErrorNo: (?P<v1>\d{6,10})\((?P<r1>[^)]*)\)|ge result = (?P<v2>\d{6,10})")


def find_codes(text: str) -> List[Code]:
    """Every error code in ``text`` with its family, in order of appearance, without repeats."""
    if not text:
        return []
    hits: List[Tuple[int, Code]] = []
    _phrase_codes(text, hits)
    for m in _CANN.finditer(text):
        if _plausible_cann(text, m.start()):
            hits.append((m.start(), Code("cann", m.group(0), m.group(0))))
    if "ERR" in text:
        for m in _TORCH.finditer(text):
            if m.start() == 0 or not text[m.start() - 1].isalnum():
                hits.append((m.start(), Code("torch_npu", m.group(0), m.group(0))))
    if " -> " in text:
        for m in _HCCL_ARROW.finditer(text):
            if num(m.group(1)) is not None:
                hits.append((m.start(), Code("hccl", str(num(m.group(1))), m.group(0))))
    if "errNo[" in text:
        for m in _HCCL_ERRNO.finditer(text):
            word = num(m.group(1), base=16)
            hccl = hccl_of_errno(word) if word is not None else None
            if hccl is not None:
                hits.append((m.start(), Code("hccl", str(hccl), m.group(0))))
    if "drvRetCode" in text:
        for m in _DRV.finditer(text):
            if num(m.group(1), signed=True) is not None:
                hits.append((m.start(), Code("drv", str(num(m.group(1), signed=True)), m.group(0))))
    if "ErrorNo: " in text or "ge result" in text:
        for m in _GE.finditer(text):
            hits.append((m.start(), Code("ge_status", m.group("v1") or m.group("v2"), m.group(0), m.group("r1"))))
    if "npu-smi" in text or "dcmi" in text:
        smi = _npu_smi_code(text)
        if smi is not None:
            pos = text.find(smi.raw)
            hits.append((pos if pos >= 0 else len(text), smi))
    return _unique(hits, text)


def _phrase_codes(text: str, hits: List[Tuple[int, Code]]) -> None:
    low = text.lower()
    if len(low) != len(text):  # a few non-ASCII letters lengthen when lowered; keep offsets aligned
        low = "".join(c if len(c.lower()) != 1 else c.lower() for c in text)
    for gate, rx in _PHRASE_RX:
        if gate not in low:
            continue
        for m in rx.finditer(low):
            start = m.start()
            if start and "a" <= low[start - 1] <= "z":  # the phrase is the tail of a longer word
                continue
            kind = _PHRASES[m.group(1)]
            bracket = _BRACKET.match(text, m.end()) if kind == TASK else None
            found = classify_number(m.group(2), ts_ok=kind == TASK, ret_ok=kind == RET, reason=bracket is not None)
            if found is None:
                continue
            family, value = found
            if family == SMALL:
                family = _small_family(text, start)
                if family is None:
                    continue
            reason = bracket.group(1) if bracket is not None and family == "ts" else None
            hits.append((start, Code(family, value, text[start:m.end()], reason)))


def _small_family(text: str, pos: int) -> Optional[str]:
    start = text.rfind("\n", 0, pos) + 1
    end = text.find("\n", pos)
    line = text[start:] if end < 0 else text[start:end]
    if _HCCL_CONTEXT.search(line):
        return "hccl"
    if _DRV_CONTEXT.search(line):
        return "drv"
    return None


def _unique(hits: List[Tuple[int, Code]], text: str) -> List[Code]:
    if not hits:
        return []
    hits.sort(key=lambda pc: pc[0])
    out: List[Code] = []
    where: Dict[str, int] = {}
    desc: Optional[str] = None
    if "desc=[" in text or "reason=[" in text:
        d = _DESC.search(text)
        desc = d.group("reason") if d else None
    for _, code in hits:
        if desc is not None and code.family in ("acl", "runtime_inner") and code.reason is None:
            code = replace(code, reason=desc)
        i = where.get(code.key)
        if i is None:
            where[code.key] = len(out)
            out.append(code)
        elif out[i].reason is None and code.reason is not None:  # a later mention says what it is
            out[i] = replace(out[i], reason=code.reason)
    return out


def _npu_smi_code(text: str) -> Optional[Code]:
    # npu-smi's own parser knows every failure wording it prints

    err = parse_npu_smi_error(text)
    if err is not None and err.code is not None and err.kind in ("dcmi_init", "exec_failed", "console_log_level"):
        return Code("npu_smi", str(err.code), err.line)
    return None


def _plausible_cann(text: str, pos: int) -> bool:
    if pos > 0 and (text[pos - 1].isalnum() or text[pos - 1] == "_"):
        return False
    # a glog prefix such as ``[E0324 ...`` with a five-digit date is not a code
    if pos > 0 and text[pos - 1] == "[" and text[pos + 6:pos + 7] == " " and text[pos + 1:pos + 6].isdigit():
        return False
    return True
