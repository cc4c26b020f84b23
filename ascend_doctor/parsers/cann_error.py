"""CANN error-message blocks (``EZ9999: Inner Error!`` ... ``TraceBack``) as records.

The block is what ``aclGetRecentErrMsg()`` returns and frameworks print. Its shape
changed over CANN releases (emitter
https://github.com/hicann/runtime/blob/681ef7610df13c8128982901142a2c869ddbb53e/src/dfx/error_manager/error_manager.cc); every one is accepted:

- legacy (2023):   ``EH9999: Inner Error!`` / ``EH9999  <msg>`` (two spaces)
- 2024:            ``EZ9999: 2024-06-28-13:05:55.631.066  <msg>``
- 2025:            ``EH9999: [PID: 1439] <ts> <msg>`` (also external ``EL0003: [PID: ..]``)
- 8.5 .. 9.1:      ``EE9999[PID: 17096] <ts> (EE9999):  <msg>`` (also with a title:
                   ``EZ9999[PID: ..] <ts> AclNN_Inner_Error(EZ9999):  <msg>``) and external
                   ``[PID: 1613532] <ts> Memory_Allocation_Failure(EL0004): <msg>``
- 9.2+:            header ``XX9999: Internal error!``

Continuation lines are indented (``Possible Cause:``, ``Solution:``, then
``TraceBack (most recent call last):`` and older messages, which in some 9.x blocks
are not indented but still end in ``[FUNC:..][FILE:..][LINE:..]``). The parser is a
small streaming state machine: feed it lines (wrapper prefixes already stripped), it
hands back finished blocks.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import List, Optional, Tuple

from ..inputs import int_or_none as num
from ..lazyre import lazy

_CODE = r"[EW](?:[A-Z]\d{4}|\d{5})"
_TS = r"\d{4}-\d\d-\d\d-\d\d:\d\d:\d\d\.\d{3}\.\d{3}"

_HEADER = lazy(
    r"(?<![A-Za-z0-9])(?P<code>" + _CODE + r"): (?P<kind>Inner Error!|Internal error!|Inner Error, Please contact support engineer!)"
)
_PID_INNER = lazy(
    r"(?<![A-Za-z0-9])(?P<code>" + _CODE + r")\[PID: (?P<pid>\d+)\] (?P<ts>" + _TS + r") (?:(?P<title>[A-Za-z][\w]*))?\((?P=code)\):\s*(?P<msg>.*)$"
)
_PID_TITLE = lazy(r"\[PID: (?P<pid>\d+)\] (?P<ts>" + _TS + r") (?P<title>[A-Za-z][\w ]*)\((?P<code>" + _CODE + r")\):\s?(?P<msg>.*)$")
_PID = lazy(r"(?<![A-Za-z0-9])(?P<code>" + _CODE + r"):? ?\[PID: (?P<pid>\d+)\] (?P<ts>" + _TS + r")\s+(?P<msg>.*)$")
_WITH_TS = lazy(r"(?:^|detail:|Error: )(?P<code>" + _CODE + r"): (?P<ts>" + _TS + r")\s+(?P<msg>.*)$")
_LEGACY = lazy(r"^(?P<code>" + _CODE + r")  (?P<msg>\S.*)$")
_TRACEBACK = lazy(r"^\s*TraceBack \(most recent call last\):\s*$")
_SOURCE = lazy(r"\[FUNC:(?P<func>[^\]]*)\]\[FILE:(?P<file>[^\]]*)\]\[LINE:(?P<line>\d+)\]\s*\.?\s*$")

_MAX_MESSAGES = 20
_MAX_TRACEBACK = 50
_MAX_LINES = 80


@dataclass
class CannBlock:
    code: str
    shape: str  # inner_header | legacy | ts | pid | pid_inner | external_title
    start_line: int
    end_line: int
    header: Optional[str] = None  # "Inner Error!" / "Internal error!" when the block had one
    pid: Optional[int] = None
    ts: Optional[str] = None
    title: Optional[str] = None  # Memory_Allocation_Failure in ``Title(EL0004)``
    messages: List[str] = field(default_factory=list)  # lines carrying the code; [0] is the first error
    details: List[str] = field(default_factory=list)  # indented lines before TraceBack
    possible_cause: Optional[str] = None
    solution: Optional[str] = None
    traceback: List[str] = field(default_factory=list)
    lines: List[Tuple[int, str]] = field(default_factory=list)  # raw lines kept for evidence
    line_count: int = 0

    @property
    def is_inner(self) -> bool:
        return self.code.endswith(("9999", "8888"))

    @property
    def first_error(self) -> str:
        """The first recorded error: where the official troubleshooting flow says to start."""
        for text in self.messages + self.details + self.traceback:
            if text:
                return strip_source(text)
        return ""

    @property
    def source(self) -> Optional[Tuple[str, str, int]]:
        """(function, file, line) of the first message's ``[FUNC:..][FILE:..][LINE:..]`` suffix."""
        for text in self.messages[:1] + self.details[:1]:
            m = _SOURCE.search(text)
            if m:
                return m.group("func"), m.group("file"), num(m.group("line"))
        return None

    @property
    def text(self) -> str:
        """All message text of the block, for matching."""
        return "\n".join(self.messages + self.details + [self.possible_cause or "", self.solution or ""] + self.traceback)


def strip_source(text: str) -> str:
    """A message without its trailing ``[FUNC:..][FILE:..][LINE:..]``."""
    return _SOURCE.sub("", text).rstrip()


@dataclass
class _CodeLine:
    code: str
    shape: str
    msg: str
    pid: Optional[int] = None
    ts: Optional[str] = None
    title: Optional[str] = None


def match_code_line(text: str) -> Optional[_CodeLine]:
    """A line that carries a CANN code and a message, in any of the known shapes."""
    if "[PID: " in text:
        m = _PID_INNER.search(text)
        if m:
            return _CodeLine(m.group("code"), "pid_inner", m.group("msg"), num(m.group("pid")), m.group("ts"), m.group("title"))
        m = _PID_TITLE.search(text)
        if m:
            return _CodeLine(m.group("code"), "external_title", m.group("msg"), num(m.group("pid")), m.group("ts"), m.group("title"))
        m = _PID.search(text)
        if m:
            return _CodeLine(m.group("code"), "pid", m.group("msg"), num(m.group("pid")), m.group("ts"))
    m = _WITH_TS.search(text)
    if m:
        return _CodeLine(m.group("code"), "ts", m.group("msg"), None, m.group("ts"))
    m = _LEGACY.match(text)
    if m:
        return _CodeLine(m.group("code"), "legacy", m.group("msg"))
    return None


class CannBlockParser:
    """Streaming: ``feed(lineno, text)`` returns the blocks that the line closed."""

    def __init__(self) -> None:
        self._block: Optional[CannBlock] = None
        self._in_traceback = False
        self._last_field: Optional[str] = None

    @property
    def open(self) -> bool:
        return self._block is not None

    def feed(self, lineno: int, text: str) -> List[CannBlock]:
        done: List[CannBlock] = []
        block = self._block
        if block is not None and self._continues(block, lineno, text):
            return done
        if block is not None:
            done.append(self._finish())
        header = _HEADER.search(text) if ": In" in text else None
        if header is not None:
            self._block = CannBlock(code=header.group("code"), shape="inner_header", start_line=lineno,
                                    end_line=lineno, header=header.group("kind"))
            self._keep(lineno, text)
            tail = text[header.end():].strip()
            if tail:
                self._block.details.append(tail)
            return done
        cl = match_code_line(text)
        if cl is not None:
            self._block = CannBlock(code=cl.code, shape=cl.shape, start_line=lineno, end_line=lineno)
            self._add_code_line(cl)
            self._keep(lineno, text)
        return done

    def close(self) -> List[CannBlock]:
        return [self._finish()] if self._block is not None else []

    # -- internals
    def _continues(self, block: CannBlock, lineno: int, text: str) -> bool:
        stripped = text.strip()
        if not stripped:
            return False
        if _TRACEBACK.match(text):
            self._in_traceback = True
            self._keep(lineno, text)
            return True
        indented = text[:1] in (" ", "\t")
        if not indented:
            cl = match_code_line(text)
            if cl is not None and cl.code == block.code and not self._in_traceback:
                if block.shape == "inner_header" and not block.messages:
                    block.shape = cl.shape
                self._add_code_line(cl)
                self._keep(lineno, text)
                return True
            if self._in_traceback and _SOURCE.search(text) and cl is None and _HEADER.search(text) is None:
                self._append(block.traceback, stripped, _MAX_TRACEBACK)
                self._keep(lineno, text)
                return True
            return False
        if stripped.startswith("Possible Cause:"):
            block.possible_cause = stripped[len("Possible Cause:"):].strip()
            self._last_field = "cause"
        elif stripped.startswith("Solution:"):
            block.solution = stripped[len("Solution:"):].strip()
            self._last_field = "solution"
        elif self._in_traceback:
            self._append(block.traceback, stripped, _MAX_TRACEBACK)
        elif self._last_field == "solution" and block.solution is not None:
            block.solution = (block.solution + " " + stripped)[:2000]
        else:
            self._append(block.details, stripped, _MAX_MESSAGES)
        self._keep(lineno, text)
        return True

    def _add_code_line(self, cl: _CodeLine) -> None:
        block = self._block
        assert block is not None
        if block.pid is None:
            block.pid = cl.pid
        if block.ts is None:
            block.ts = cl.ts
        if block.title is None:
            block.title = cl.title
        self._append(block.messages, cl.msg.strip(), _MAX_MESSAGES)
        self._last_field = None

    @staticmethod
    def _append(items: List[str], text: str, cap: int) -> None:
        if len(items) < cap:
            items.append(text[:4000])

    def _keep(self, lineno: int, text: str) -> None:
        block = self._block
        assert block is not None
        block.end_line = lineno
        block.line_count += 1
        if len(block.lines) < _MAX_LINES:
            block.lines.append((lineno, text[:4000]))

    def _finish(self) -> CannBlock:
        block = self._block
        assert block is not None
        self._block = None
        self._in_traceback = False
        self._last_field = None
        return block
