"""Opening one input file of ``oom`` (``--stats``, ``--snapshot``, ``--npu-smi``) safely.

The path must be a regular file, ``-`` (stdin), or the pipe a shell's process
substitution hands over (``--stats <(ssh node cat stats.json)`` arrives as ``/dev/fd/N``).
Anything else is refused before it is opened, with one line saying what it is: a FIFO
without a writer would block the open forever, a device node or a file under ``/proc``
could block on read or act on being opened (see ``ascend_doctor.openable``).
"""
from __future__ import annotations

import os
import stat
import sys
from typing import BinaryIO, Optional

from ..errors import os_message
from . import MemoryInputError


def open_input(path: str, what: str, stdin: Optional[BinaryIO] = None) -> BinaryIO:
    """A binary stream for ``path`` (``-`` is ``stdin``, else the process's stdin).

    ``what`` names the option in messages (``--stats``). Raises MemoryInputError with a
    one-line reason; the caller closes the stream unless ``path`` is ``-``.
    """
    from ..openable import open_for_reading, refusal

    if path == "-":
        return stdin if stdin is not None else sys.stdin.buffer
    name = f"{what} {path}"
    try:
        st = os.stat(path)
    except OSError as exc:
        raise MemoryInputError(os_message(name, exc)) from None
    if stat.S_ISDIR(st.st_mode):
        raise MemoryInputError(f"{name}: is a directory")
    reason = refusal(path, st, allow_pipe=True)
    if reason is not None:
        raise MemoryInputError(f"{name}: {reason}; give a regular file, or - to read stdin")
    try:
        return open_for_reading(path, allow_pipe=True)
    except OSError as exc:
        raise MemoryInputError(os_message(name, exc)) from None


__all__ = ["open_input"]
