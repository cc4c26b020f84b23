"""Python tracebacks as records: frames and the exception line that ends them.

``Traceback (most recent call last):`` is followed by ``  File "...", line N, in fn``
frames (each with its source line and, on 3.11+, caret lines) and ends with the first
non-indented line, ``ExcType: message``. Chained tracebacks (``During handling of the
above exception`` / ``The above exception was the direct cause``) become separate
records; the last one is what killed the process. Frames are bounded (the first few
and the last many are kept) so a deep recursion costs constant memory.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import List, Optional

from ..inputs import int_or_none as num
from ..lazyre import lazy

_START = lazy(r"^\s*Traceback \(most recent call last\):\s*$")
_FRAME = lazy(r'^\s*File "(?P<file>[^"]+)", line (?P<line>\d+)(?:, in (?P<func>.+))?$')
_EXC = lazy(r"^(?P<type>[A-Za-z_][\w.]*(?:Error|Exception|Exit|Interrupt|Warning|error|Failure)\w*|[A-Za-z_][\w.]*\.\w+Error)(?::\s?(?P<msg>.*))?$")
_KEEP_HEAD = 3
_KEEP_TAIL = 12


@dataclass
class Frame:
    file: str
    line: int
    func: Optional[str]


@dataclass
class PyTraceback:
    start_line: int
    end_line: int
    exc_type: Optional[str] = None
    exc_message: str = ""
    frames: List[Frame] = field(default_factory=list)
    frame_count: int = 0
    exc_line: Optional[int] = None

    @property
    def last_frame(self) -> Optional[Frame]:
        return self.frames[-1] if self.frames else None

    @property
    def summary(self) -> str:
        head = self.exc_type or "Traceback"
        return f"{head}: {self.exc_message}" if self.exc_message else head


class TracebackParser:
    """Streaming: ``feed(lineno, text)`` returns tracebacks the line completed."""

    def __init__(self) -> None:
        self._tb: Optional[PyTraceback] = None
        self._tail: List[Frame] = []

    @property
    def open(self) -> bool:
        return self._tb is not None

    def feed(self, lineno: int, text: str) -> List[PyTraceback]:
        tb = self._tb
        if tb is None:
            if "Traceback" in text and _START.match(text):
                self._tb = PyTraceback(start_line=lineno, end_line=lineno)
                self._tail = []
            return []
        if _START.match(text):  # a new traceback without an exception line: close the old one
            done = self._finish()
            self._tb = PyTraceback(start_line=lineno, end_line=lineno)
            return [done]
        m = _FRAME.match(text)
        if m:
            frame = Frame(m.group("file"), num(m.group("line")), (m.group("func") or "").strip() or None)
            tb.frame_count += 1
            if len(tb.frames) < _KEEP_HEAD:
                tb.frames.append(frame)
            else:
                self._tail.append(frame)
                if len(self._tail) > _KEEP_TAIL:
                    self._tail.pop(0)
            tb.end_line = lineno
            return []
        if text[:1] in (" ", "\t") or not text.strip():
            if text.strip():
                tb.end_line = lineno
                return []
            # a blank line inside a traceback is unusual; tolerate one, the exception line follows
            return []
        e = _EXC.match(text.strip())
        tb.end_line = lineno
        if e:
            tb.exc_type = e.group("type")
            tb.exc_message = (e.group("msg") or "").strip()[:2000]
            tb.exc_line = lineno
        else:
            tb.exc_message = text.strip()[:2000]
            tb.exc_line = lineno
        return [self._finish()]

    def close(self) -> List[PyTraceback]:
        return [self._finish()] if self._tb is not None else []

    def _finish(self) -> PyTraceback:
        tb = self._tb
        assert tb is not None
        tb.frames.extend(self._tail)
        self._tb = None
        self._tail = []
        return tb
