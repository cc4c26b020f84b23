"""Errors raised by compat_matrix. Every one is a ValueError whose message is one line."""
from __future__ import annotations

from typing import Sequence


class CompatError(ValueError):
    """Base class: bad input given to compat_matrix (message is a single line)."""


class VersionError(CompatError):
    """A version string that the grammar of its component does not accept."""

    def __init__(self, text: str, kind: str, label: str, accepted: Sequence[str]) -> None:
        self.text = text
        self.kind = kind
        self.accepted = tuple(accepted)
        shown = " ".join(str(text).split()) or "(empty)"
        super().__init__(
            f"not a {label} version: {shown!r}; accepted forms: {', '.join(self.accepted)}"
        )


class ComponentError(CompatError):
    """An unknown component (or version kind) name."""

    def __init__(self, name: str, known: Sequence[str]) -> None:
        self.name = name
        super().__init__(f"unknown component {name!r}; known: {', '.join(known)}")


class ChipError(CompatError):
    """A chip or product name that is not recognised."""

    def __init__(self, text: str, accepted: Sequence[str]) -> None:
        self.text = text
        super().__init__(f"not a known Ascend chip: {text!r}; accepted forms: {', '.join(accepted)}")


class DataError(RuntimeError):
    """A shipped data file is malformed (a bug in the package, not bad user input)."""
