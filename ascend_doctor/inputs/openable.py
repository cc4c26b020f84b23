"""Which paths the doctor may open for reading, decided from ``stat`` before any ``open``.

Opening is not harmless: a FIFO with no writer blocks the open itself, a device node may
act on being opened (an NPU's ``/dev/davinciN``, a tape that rewinds), and the kernel's
pseudo-filesystems hold "regular" files that block on read (``/proc/kmsg``) or trees that
never end (``/proc/self`` leads back into ``/proc``). So a path is read only when it is a
regular file outside ``/proc``, ``/sys`` and ``/dev`` (``/dev/shm`` is an ordinary tmpfs
and allowed), or the anonymous pipe of a shell's process substitution (``<(zcat x.gz)``,
seen as ``/dev/fd/N``): that pipe already has its writer, so opening it cannot block.
"""
from __future__ import annotations

import os
import stat
from functools import lru_cache
from typing import BinaryIO, Dict, Optional

from .errors import InputError, os_message

PSEUDO_TOPS = ("/proc", "/sys", "/dev")
_PLAIN_UNDER_DEV = ("/dev/shm",)


def kind_of(mode: int) -> str:
    """What a non-regular file is, in words for a skip reason."""
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISFIFO(mode):
        return "a named pipe (FIFO)"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device node"
    return "not a regular file"


def is_anonymous_pipe(path: str, st: os.stat_result) -> bool:
    """True for ``/dev/fd/N`` (or ``/proc/self/fd/N``) naming an unnamed pipe, as ``<(...)`` gives."""
    if not stat.S_ISFIFO(st.st_mode):
        return False
    try:
        target = os.readlink(path)  # the fd's link reads "pipe:[inode]"; a named FIFO's reads its path
    except OSError:
        return False
    return target.startswith("pipe:[")


@lru_cache(maxsize=1)
def _pseudo_devices() -> Dict[int, str]:
    """Device number -> top, for /proc, /sys and /dev: catches their bind mounts elsewhere. A
    top that is a plain directory of the root filesystem (a chroot without mounts) is left out,
    or every file on "/" would look pseudo."""
    try:
        root_dev = os.stat("/").st_dev
    except OSError:
        root_dev = -1
    out: Dict[int, str] = {}
    for top in PSEUDO_TOPS:
        try:
            dev = os.stat(top).st_dev
        except OSError:
            continue
        if dev != root_dev:
            out.setdefault(dev, top)
    return out


def _under(path: str, top: str) -> bool:
    return path == top or path.startswith(top + "/")


def pseudo_fs_top(path: str, st: Optional[os.stat_result] = None, resolve: bool = True) -> Optional[str]:
    """``/proc``, ``/sys`` or ``/dev`` when ``path`` lies in one of them (after symlinks when
    ``resolve``; by device number for bind mounts when ``st`` is given), else None."""
    if resolve:
        real = os.path.realpath(path)
        if any(_under(real, ok) for ok in _PLAIN_UNDER_DEV):
            return None
        for top in PSEUDO_TOPS:
            if _under(real, top):
                return top
    if st is not None:
        return _pseudo_devices().get(st.st_dev)
    return None


def pseudo_fs_reason(top: str) -> str:
    return f"in {top}, a kernel pseudo-filesystem: not read (its files can block or never end)"


def refusal(path: str, st: os.stat_result, allow_pipe: bool = False, resolve: bool = True) -> Optional[str]:
    """Why ``path`` (already ``stat``-ed, symlinks followed) must not be opened, or None.

    ``allow_pipe``: accept the anonymous pipe of process substitution (only for a path the
    user named, never for one found while walking a directory). ``resolve=False`` skips the
    symlink resolution for a plain entry of a directory already known to be outside the
    pseudo-filesystems (only its device number is then checked).
    """
    if allow_pipe and is_anonymous_pipe(path, st):
        return None
    if not stat.S_ISREG(st.st_mode):
        kind = kind_of(st.st_mode)
        return kind if kind == "not a regular file" else f"not a regular file: {kind}"
    top = pseudo_fs_top(path, st, resolve=resolve)
    if top is not None:
        return pseudo_fs_reason(top)
    return None


class NotReadable(OSError):
    """The path changed between ``stat`` and ``open`` into something that must not be read."""


def open_for_reading(path: str, allow_pipe: bool = False) -> BinaryIO:
    """Open a regular file (or an allowed anonymous pipe) without ever blocking in ``open``.

    The open is non-blocking and the descriptor is checked again with ``fstat``, so a path
    swapped for a FIFO after it was checked is refused rather than waited on.
    """
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0)
    fd = os.open(path, flags)
    try:
        st = os.fstat(fd)
        pipe = stat.S_ISFIFO(st.st_mode) and allow_pipe and is_anonymous_pipe(path, st)
        if not stat.S_ISREG(st.st_mode) and not pipe:
            raise NotReadable(f"{path}: not a regular file: {kind_of(st.st_mode)}")
        if hasattr(os, "set_blocking"):
            os.set_blocking(fd, True)  # a pipe is read as it is written; regular files ignore it
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


__all__ = ["refusal", "open_for_reading", "pseudo_fs_top", "pseudo_fs_reason", "is_anonymous_pipe", "kind_of", "NotReadable"]


def named_input(path: str, what: str, hint: str = "", open_it: bool = True) -> Optional[BinaryIO]:
    """A file the user named on the command line (``what`` is the option, ``--stats``), checked
    by ``stat`` and opened by the rule above; the pipe of ``<(...)`` is allowed. Anything else
    is an ``InputError`` with one line (``hint`` is appended to a refusal: what to give
    instead). ``open_it=False`` only checks (the caller reads the path itself)."""
    name = f"{what} {path}"
    try:
        st = os.stat(path)
    except OSError as exc:
        raise InputError(os_message(name, exc)) from None
    if stat.S_ISDIR(st.st_mode):
        raise InputError(f"{name}: is a directory")
    reason = refusal(path, st, allow_pipe=True)
    if reason is not None:
        raise InputError(f"{name}: {reason}{hint}")
    if not open_it:
        return None
    try:
        return open_for_reading(path, allow_pipe=True)
    except OSError as exc:
        raise InputError(os_message(name, exc)) from None
