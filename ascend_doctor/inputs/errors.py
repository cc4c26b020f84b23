"""The one error of the input layer, and the one wording of a failed operating-system call."""
from __future__ import annotations

import errno


class InputError(ValueError):
    """Input the doctor will not read further: malformed, or past one of the limits in
    ``ascend_doctor.inputs.limits``. The message is one line and names what was wrong.
    It is a ValueError so that parsers which already treat ValueError as "not this format"
    keep working; the CLI turns an uncaught one into one line and exit 2."""

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
