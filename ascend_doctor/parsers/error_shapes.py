"""Does a line look like an error, whatever produced it? The generic shapes of failure text.

Triage reads a console paste line by line; a line becomes an event when a parser claims it
(a CANN block, a traceback, a torch_npu line...), when the knowledge base names something
in it, or when it has one of these shapes: an ``...Error:`` / ``error:`` word at the start
or after a prefix, ``failed``, ``ret is -N``, ``error code is N``, a loader's ``cannot open
shared object`` or ``undefined symbol``, the kernel's ``[Hardware Error]``, a segfault or a
kill, an assertion, a level marker (``ERROR``, ``FATAL``, glog's ``E1234``). A warning is
not an error by shape alone (the knowledge base may still name it).
"""
from __future__ import annotations

import re
from typing import Dict

from ..lazyre import lazy

_SHAPE = lazy(
    r"(?:^|[\s\]\)>|:])[A-Za-z_][\w.]*(?:Error|Exception|Exit|Interrupt)\b"  # RuntimeError, ImportError: ...
    r"|(?:^|[\s\]\)>|])(?:error|ERROR|Error|FATAL|fatal|CRITICAL)\b\s*[:!\]]"  # error: / ERROR] / fatal:
    r"|\[(?:ERROR|FATAL|CRITICAL|E)\]"
    r"|\bfail(?:ed|ure|s)?\b|\bFAIL(?:ED)?\b"
    r"|\bret(?:urn)?(?:\s+code)?\s*(?:is|=|:)\s*-?\d+"
    r"|\berror[ _]?code\s*(?:is|=|:)?\s*-?\d+"
    r"|errno|ErrNo|errNo|errcode\s*[=:]"
    r"|cannot open shared object|undefined symbol|not found in library"
    r"|\[Hardware Error\]|Segmentation fault|core dumped|\bKilled\b|Aborted|SIGSEGV|SIGABRT|SIGKILL"
    r"|\bassert(?:ion)?\b|AssertionError"
    r"|^\s*(?:\[?\d{4}-\d\d-\d\d[T ][\d:.,+]+\]?\s*)?(?:\[\w+\]\s*)?ERROR\b"
    r"|^[EF]\d{4} \d\d:\d\d|^[EF]\d{8} \d\d:\d\d"  # glog: E0624 10:46:50 / E20260624 10:46:50
    r"|\b(?:error|ERROR|Error)\b(?![_=.\w-])|\bLOCKUP\b|\blockup\b|\bhung task\b|\bOut of memory\b"
    r"|\binvalid\b|\bInvalid\b|\bis null\b|null ?pointer|nullptr|\btime[ds]? ?out\b|_timeout\b|\bTIMEOUT\b"
    r"|\bnot found\b|\bdoes not exist\b|\bno such\b|\bNo such\b|\bcannot\b|\bCannot\b|\bcan't\b|\bcould not\b|\bCould not\b"
    r"|\bunable to\b|\bUnable to\b|\bdenied\b|\brefused\b|\babnormal\b|\bunsafe\b|\bbusy\b"
    r"|\bnot supported\b|\bunsupported\b|\bUnsupport|\bnot support\b|\bout of memory\b|\bOOM\b|\bexceed(?:s|ed)?\b"
    r"|报错|失败|错误|异常|超时|不支持|无法"
    r"|\bHeartbeat lost\b|\bcqe err\b|\bpanic\b|Call Trace:|BUG:|Oops",
)
_WARNING = lazy(r"\bWARN(?:ING)?\b|\[W(?: |\d)|^W\d{4} |\bUserWarning\b|\bFutureWarning\b|\bDeprecationWarning\b")
_BENIGN = lazy(r"\b0 (?:failed|errors?)\b|\bno errors?\b|\berrors?=0\b|without (?:any )?errors?", re.I)


# Every shape above holds one of these words (any case), or is glog's E/F header: a line without
# any is no error, found by plain substring tests (a few microseconds) instead of the shapes' regex
# (some 150 microseconds: no branch of it can be skipped by its first character).
_WORDS = ("error", "exception", "exit", "interrupt", "fatal", "critical", "[e]", "fail", "ret", "errno", "errcode",
          "cannot", "undefined symbol", "not found", "segmentation", "core dumped", "killed", "aborted", "sig",
          "assert", "lockup", "hung task", "out of memory", "invalid", "null", "time", "does not exist", "no such",
          "can't", "could not", "unable to", "denied", "refused", "abnormal", "unsafe", "busy", "support", "oom",
          "exceed", "heartbeat lost", "cqe err", "panic", "call trace:", "bug:", "oops",
          "报错", "失败", "错误", "异常", "超时", "不支持", "无法")


def may_be_error(line: str) -> bool:
    """False when no error shape can match ``line`` (a cheap test before the regex)."""
    low = line.lower()
    for word in _WORDS:
        if word in low:
            return True
    return line[:1] in ("E", "F") and line[1:2].isdigit()


WINDOW = 2048  # an error says so near a line's start or end; the middle of a 64 KB line is data
_SEEN_MAX = 20000
_seen: Dict[str, bool] = {}
# the shapes above tell 0 from other digits ("0 errors") and no digit from another, so lines that
# differ only in their numbers (times, counters, sizes) have one answer: routine lines are judged once
_DIGITS = str.maketrans("23456789", "11111111")


def looks_like_error(line: str) -> bool:
    """Whether a line has the shape of an error report (not merely a warning). A long line is judged
    by its first and last ``WINDOW`` characters, so the cost per line is bounded."""
    if len(line) > 2 * WINDOW:
        line = line[:WINDOW] + " " + line[-WINDOW:]
    if len(line) < 4:
        return False
    key = line.translate(_DIGITS)
    hit = _seen.get(key)
    if hit is None:
        hit = may_be_error(key) and bool(_SHAPE.search(key)) and not (_WARNING.search(key) or _BENIGN.search(key))
        if len(_seen) >= _SEEN_MAX:
            _seen.clear()
        _seen[key] = hit
    return hit
