"""Regular expressions compiled on first use.

A module of parsers holds dozens of patterns, and most runs use a few of them: ``check``
imports the triage parsers for its log check but reads logs only when there are some, and a
one-line paste meets two or three line kinds. ``lazy(pattern)`` stands for ``re.compile``
at module level; the pattern is compiled when one of its methods is first called, and the
compiled pattern's bound methods then replace the stand-ins on the object, so every later
call costs what a call on the compiled pattern costs (no ``__getattr__``: defining one would
put every attribute lookup on CPython's slower generic path).
"""
from __future__ import annotations

import re
from typing import Any

_METHODS = ("search", "match", "fullmatch", "finditer", "findall", "sub", "subn", "split")


class LazyPattern:
    """``re.compile(pattern, flags)``, done at the first method call."""

    __slots__ = ("pattern", "flags", "_compiled") + _METHODS

    def __init__(self, pattern: str, flags: int = 0) -> None:
        self.pattern = pattern
        self.flags = flags
        self._compiled = None
        for name in _METHODS:
            setattr(self, name, self._first_call(name))

    def _first_call(self, name: str) -> Any:
        def call(*args: Any, **kwargs: Any) -> Any:
            return getattr(self.compiled(), name)(*args, **kwargs)

        return call

    def compiled(self) -> "re.Pattern[str]":
        if self._compiled is None:
            self._compiled = re.compile(self.pattern, self.flags)
            for name in _METHODS:
                setattr(self, name, getattr(self._compiled, name))
        return self._compiled

    @property
    def groupindex(self) -> Any:
        return self.compiled().groupindex

    @property
    def groups(self) -> int:
        return self.compiled().groups

    def __repr__(self) -> str:
        return f"lazy({self.pattern!r})"


def lazy(pattern: str, flags: int = 0) -> LazyPattern:
    return LazyPattern(pattern, flags)
