"""Errors that end a command with a one-line message instead of a traceback, and the one
"did you mean" of every "unknown name" message. (The wording of a failed operating-system
call is ``ascend_doctor.inputs.os_reason``.)

The bottom layer: imports nothing of ``ascend_doctor``, so every layer can use it.
"""
from __future__ import annotations


class UsageError(Exception):
    """Bad input from the user: printed as one line, exit code 2."""

    exit_code = 2


def did_you_mean(given: str, known) -> str:
    """``"did you mean X? "`` (or ``"X or Y? "``) for the names closest to a mistyped one, else
    ``""``: the one suggestion every "unknown name" message uses."""
    import difflib  # only when a name is mistyped: not on every start-up

    close = difflib.get_close_matches(given, list(known), n=2, cutoff=0.6)
    return f"did you mean {' or '.join(close)}? " if close else ""
