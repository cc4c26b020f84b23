"""Opening one input file of ``oom`` (``--stats``, ``--snapshot``, ``--npu-smi``) safely.

The path must be a regular file, ``-`` (stdin), or the pipe a shell's process
substitution hands over (``--stats <(ssh node cat stats.json)`` arrives as ``/dev/fd/N``).
Anything else is refused before it is opened, with one line saying what it is: a FIFO
without a writer would block the open forever, a device node or a file under ``/proc``
could block on read or act on being opened (see ``ascend_doctor.inputs.openable``).
"""
from __future__ import annotations

import sys
from typing import BinaryIO, Optional

from ..inputs import InputError
from ..inputs.openable import named_input
from .errors import MemoryInputError


def open_input(path: str, what: str, stdin: Optional[BinaryIO] = None) -> BinaryIO:
    """A binary stream for ``path`` (``-`` is ``stdin``, else the process's stdin).

    ``what`` names the option in messages (``--stats``). Raises MemoryInputError with a
    one-line reason; the caller closes the stream unless ``path`` is ``-``.
    """
    if path == "-":
        return stdin if stdin is not None else sys.stdin.buffer
    try:
        return named_input(path, what, hint="; give a regular file, or - to read stdin")
    except InputError as exc:
        raise MemoryInputError(str(exc)) from None
