"""CANN "recent error message" blocks, in the shape of the CANN release that prints them.

A process records error messages as it fails (``CannMessage``, oldest first); the block
is what ``aclGetRecentErrMsg()`` returns and torch_npu appends to its exceptions.
Rules (RT ``src/dfx/error_manager/error_manager.cc``):

- if an *external* code (``XX0001``..``XX8999``) was recorded, the first one heads the
  block, followed by its ``Possible Cause`` / ``Solution`` (never ``N/A``);
- otherwise the header is ``<CODE>: Inner Error!`` (``Internal error!`` from CANN 9.2)
  and the first message follows;
- every other message comes after ``TraceBack (most recent call last):``, oldest first.

The line shapes of each release are in ``data/cann_messages.yaml``.
"""
from __future__ import annotations

import functools
from dataclasses import dataclass
from pathlib import Path
from typing import Dict, List, Optional, Sequence

from runtime_sim.plog.timefmt import plog_ts
from compat_matrix.versions import parse_version

_DATA = Path(__file__).with_name("data") / "cann_messages.yaml"

SHAPES = ("legacy", "ts", "pid", "v85", "v92")


@dataclass(frozen=True)
class CannMessage:
    """One recorded error message.

    ``where`` is the ``[FUNC:..][FILE:..][LINE:..]`` suffix inner messages carry;
    ``title`` overrides the ``(CODE)`` of inner messages in the 8.5+ shape (aclnn prints
    ``AclNN_Inner_Error(EZ9999)``); external titles come from the code book.
    """

    code: str
    text: str
    ts_us: int
    pid: int
    where: str = ""
    title: Optional[str] = None

    @property
    def external(self) -> bool:
        return is_external(self.code)

    @property
    def full_text(self) -> str:
        return self.text + self.where


def is_external(code: str) -> bool:
    """External codes have an official template: ``XX0001``..``XX8999`` and not ``EU``."""
    digits = code[-4:]
    return digits.isdigit() and 1 <= int(digits) <= 8999 and not code.startswith("EU")


@functools.lru_cache(maxsize=1)
def _book() -> dict:
    import yaml  # lazy: only needed when an error is rendered

    with open(_DATA, encoding="utf-8") as fh:
        return yaml.safe_load(fh)


def shape_for_cann(cann_version: str) -> str:
    """Which block shape the given CANN release prints."""
    # by release line: an alpha / beta build prints what its release prints (9.2.0-beta.2 is 9.2.0's shape)
    line = parse_version(cann_version, "cann").line_key
    for row in _book()["shapes"]:
        if row["below"] is None or line < parse_version(row["below"], "cann").line_key:
            return row["shape"]
    raise AssertionError("shapes table must end with an open row")


def code_info(code: str) -> Dict[str, str]:
    return dict(_book()["codes"].get(code, {}))


def render_block(messages: Sequence[CannMessage], shape: str) -> str:
    """The block as printed, lines joined by ``\\n`` (no trailing newline)."""
    if shape not in SHAPES:
        raise ValueError(f"unknown error-block shape {shape!r}; expected one of {SHAPES}")
    if not messages:
        return ""
    msgs = list(messages)
    head_index = next((i for i, m in enumerate(msgs) if m.external), None)
    kind = "inner" if head_index is None else "external"
    indent = " " * _book()["indent"][shape][kind]
    if head_index is None:
        head = msgs[0]
        rest = msgs[1:]
        lines = [_inner_header(head.code, shape), _inner_first(head, shape)]
    else:
        head = msgs[head_index]
        rest = msgs[:head_index] + msgs[head_index + 1:]
        lines = [_external_first(head, shape)]
        info = code_info(head.code)
        for label, key in (("Possible Cause", "possible_cause"), ("Solution", "solution")):
            value = info.get(key)
            if value and value != "N/A":
                lines.append("        %s: %s" % (label, value))
    if rest:
        lines.append("        TraceBack (most recent call last):")
        lines.extend(indent + m.full_text for m in rest)
    return "\n".join(lines)


def _inner_header(code: str, shape: str) -> str:
    return "%s: %s" % (code, "Internal error!" if shape == "v92" else "Inner Error!")


def _inner_first(m: CannMessage, shape: str) -> str:
    ts = plog_ts(m.ts_us)
    if shape == "legacy":
        return "%s  %s" % (m.code, m.full_text)
    if shape == "ts":
        return "%s: %s  %s" % (m.code, ts, m.full_text)
    if shape == "pid":
        return "%s: [PID: %d] %s %s" % (m.code, m.pid, ts, m.full_text)
    title = m.title or ""
    return "%s[PID: %d] %s %s(%s):  %s" % (m.code, m.pid, ts, title, m.code, m.full_text)


def _external_first(m: CannMessage, shape: str) -> str:
    ts = plog_ts(m.ts_us)
    if shape in ("legacy", "ts"):
        return "%s: %s %s" % (m.code, ts, m.full_text)
    if shape == "pid":
        return "%s: [PID: %d] %s %s" % (m.code, m.pid, ts, m.full_text)
    title = m.title or code_info(m.code).get("title", "")
    return "[PID: %d] %s %s(%s): %s" % (m.pid, ts, title, m.code, m.full_text)


def compact_text(messages: Sequence[CannMessage]) -> str:
    """``TORCH_NPU_COMPACT_ERROR_OUTPUT=1`` rendering (PT ``NPUException.cpp``): inner
    codes collapse to one sentence, an external one to ``CANN error: <message> Solution: ...``
    (Ascend/pytorch docs/zh/api/environment_variable/alarm_message_printing/
    TORCH_NPU_COMPACT_ERROR_OUTPUT.md)."""
    head = next((m for m in messages if m.external), None)
    if head is None:
        return ("CANN Inner Error. Please rectify the fault based on the error information "
                "in the ascend log.")
    out: List[str] = ["CANN error: %s" % head.full_text]
    info = code_info(head.code)
    for label, key in (("Possible Cause", "possible_cause"), ("Solution", "solution")):
        value = info.get(key)
        if value and value != "N/A":
            out.append("%s: %s" % (label, value))
    return " ".join(out)
