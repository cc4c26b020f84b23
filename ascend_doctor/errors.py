"""Errors that end a command with a one-line message instead of a traceback, and the one
mapping from a failed operating-system call to the short reason those messages carry.

The bottom layer: imports nothing of ``ascend_doctor``, so every layer can use it.
"""
from __future__ import annotations

import errno


class UsageError(Exception):
    """Bad input from the user: printed as one line, exit code 2."""

    exit_code = 2


def os_reason(exc: BaseException) -> str:
    """Why an operation on a path failed, as a short lower-case phrase for one line of output
    (``no such file or directory``, ``permission denied``, ``symlink loop``, ...).

    Every verb words the same failure the same way: it does not matter whether the error came
    from ``os.stat``, ``open``, a read, or a child process that could not start."""
    if isinstance(exc, FileNotFoundError):
        return "no such file or directory"
    if isinstance(exc, PermissionError):
        return "permission denied"
    if isinstance(exc, IsADirectoryError):
        return "is a directory"
    if isinstance(exc, NotADirectoryError):
        return "a path component is not a directory"
    code = getattr(exc, "errno", None)
    if code == errno.ELOOP:
        return "symlink loop"
    if code == errno.ENOEXEC:
        return "not an executable this machine can run (exec format error)"
    if code == errno.ENAMETOOLONG:
        return "file name too long"
    text = (getattr(exc, "strerror", None) or str(exc)).strip()
    if not text:
        return type(exc).__name__
    text = text.splitlines()[0]
    return text[:1].lower() + text[1:]


def os_message(what: str, exc: BaseException) -> str:
    """``"<what>: <reason>"``: the one-line message for a failed operation on ``what`` (a path,
    or an option and its path such as ``--stats /tmp/x.json``)."""
    return f"{what}: {os_reason(exc)}"


def did_you_mean(given: str, known) -> str:
    """``"did you mean X? "`` (or ``"X or Y? "``) for the names closest to a mistyped one, else
    ``""``: the one suggestion every "unknown name" message uses."""
    import difflib

    close = difflib.get_close_matches(given, list(known), n=2, cutoff=0.6)
    return f"did you mean {' or '.join(close)}? " if close else ""
