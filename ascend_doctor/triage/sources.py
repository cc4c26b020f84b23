"""What to read: files, directories, archives and stdin, and what had to be skipped.

A directory is walked depth-first in name order. Directory symlinks are followed while
they stay inside the directory given (never twice into the same directory: a loop is
skipped and reported); one that leads out of it is skipped ("symlink leaves the given
directory"), so a link to ``/`` in a log tree cannot turn triage into a scan of the disk.
A symlink to a single file found while walking is read only when it points inside the
directory given; one that leads out of it (to another user's private file, say) is skipped
and listed ("symlink leaves the given directory"). A path named on the command line is
read as given, wherever it points.
Nothing is opened that ``openable`` refuses: FIFOs, sockets and device nodes (they can
block or act on being opened) and anything in ``/proc``, ``/sys`` or ``/dev``, whether
named on the command line, reached through a link, or bind-mounted into the tree. A pipe
from process substitution named on the command line (``triage <(zcat x.gz)``) is read like
stdin. ``.gz``/``.bz2``/``.xz`` files are decompressed and tar archives (``.tar``, ``.tar.gz``,
``.tgz``, ``.tar.bz2``, ``.tar.xz``) read member by member as streams, under the limits of
``ascend_doctor.inputs.archive`` (decompressed bytes per member and per archive, a
compression-ratio test against bombs, a time budget); an archive cut short or stopped at a
limit is read up to there and listed among the skipped paths with the reason. Nothing is
unpacked to disk.
"""
from __future__ import annotations

import io
import os
import stat
import sys
from dataclasses import dataclass, field
from typing import BinaryIO, Callable, Iterator, List, Optional, Tuple

from ..inputs import os_message, os_reason
from ..inputs.archive import Budget, DecompressedStream, TarReport, tar_entries
from ..inputs.bundle_archive import bundle_manifest
from ..inputs.openable import is_anonymous_pipe, open_for_reading, pseudo_fs_reason, pseudo_fs_top, refusal
from ..parsers.plog import device_of_dir, log_class_of_path, parse_plog_file_name

_MAX_SKIPPED_KEPT = 200
_TAR_SUFFIXES = (".tar", ".tar.gz", ".tgz", ".tar.bz2", ".tbz2", ".tar.xz", ".txz")
_COMPRESSED = {".gz": "gzip", ".bz2": "bzip2", ".xz": "xz"}


@dataclass
class Source:
    """One stream of text to triage, and what its path says about it."""

    display: str  # path shown in evidence
    open: Callable[[], BinaryIO]
    origin: str  # the tree it belongs to (a host's log root, or the file itself)
    pid: Optional[int] = None  # from plog-<pid>_*.log / device-<pid>_*.log
    device: Optional[int] = None  # from a device-<N> directory
    log_class: Optional[str] = None  # debug | run | security
    kind_hint: Optional[str] = None  # plog | device | console
    last_line: Optional[Tuple[int, str]] = None  # the last non-empty console line read (for a paste nothing claimed)
    code_line: Optional[Tuple[int, str]] = None  # the last of the first 200 console lines that carries a CANN E-code
    size: Optional[int] = None  # bytes of a plain file (what the two-core split balances); None otherwise


@dataclass
class Skipped:
    path: str
    reason: str


@dataclass
class Walk:
    sources: List[Source] = field(default_factory=list)
    skipped: List[Skipped] = field(default_factory=list)
    skipped_count: int = 0

    def skip(self, path: str, reason: str) -> None:
        self.skipped_count += 1
        if len(self.skipped) < _MAX_SKIPPED_KEPT:
            self.skipped.append(Skipped(path, reason))


class InputError(Exception):
    """A path given on the command line cannot be used at all (one line)."""


def describe(path: str, parts: Tuple[str, ...], name: str) -> Tuple[Optional[int], Optional[int], Optional[str], Optional[str], str]:
    """(pid, device, log class, kind, origin) read from a log path's shape."""
    fname = parse_plog_file_name(name)
    pid = fname.pid if fname else None
    device = None
    for part in parts[:-1]:
        d = device_of_dir(part)
        if d is not None:
            device = d
    log_class = log_class_of_path(parts)
    kind = None
    if fname is not None:
        kind = "plog" if fname.kind == "plog" else "device"
    origin = path
    if log_class is not None:
        idx = max(i for i, p in enumerate(parts[:-1]) if p == log_class)
        origin = "/".join(parts[:idx]) or "/"
    elif fname is not None and len(parts) > 1:
        origin = "/".join(parts[:-2]) or "/"  # a bare plog/ directory: its parent is the tree
    return pid, device, log_class, kind, origin


def walk_inputs(paths: List[str], stdin: Optional[BinaryIO] = None) -> Walk:
    """Sources for the given paths (``-`` is stdin). Raises InputError for a path that does not exist."""
    walk = Walk()
    seen_files = set()
    for path in paths:
        if path == "-":
            stream = stdin if stdin is not None else sys.stdin.buffer
            walk.sources.append(Source("<stdin>", _once(stream), origin="<stdin>", kind_hint="console"))
            continue
        try:
            st = os.stat(path)
        except FileNotFoundError:
            if os.path.islink(path):
                raise InputError(f"{path}: broken symbolic link") from None
            raise InputError(f"{path}: no such file or directory") from None
        except OSError as exc:
            raise InputError(os_message(path, exc)) from None
        if is_anonymous_pipe(path, st):
            walk.sources.append(Source(path, _pipe(path), origin=path, kind_hint="console"))
        elif stat.S_ISDIR(st.st_mode):
            top = pseudo_fs_top(path, st)
            if top is not None:
                walk.skip(path, pseudo_fs_reason(top))
            else:
                _walk_dir(path, walk, seen_files, set())
        else:
            _add_file(path, st, walk, seen_files, resolve=True)
    return walk


def _walk_dir(top: str, walk: Walk, seen_files: set, seen_dirs: set) -> None:
    root = os.path.realpath(top)
    stack = [top]
    while stack:
        d = stack.pop()
        try:
            st = os.stat(d)
        except OSError as exc:
            walk.skip(d, os_error_reason(exc))
            continue
        key = (st.st_dev, st.st_ino)
        if key in seen_dirs:
            walk.skip(d, "symlink loop (directory already read)")
            continue
        seen_dirs.add(key)
        try:
            entries = sorted(os.scandir(d), key=lambda e: e.name)
        except OSError as exc:
            walk.skip(d, os_error_reason(exc))
            continue
        subdirs = []
        for entry in entries:
            try:
                est = entry.stat(follow_symlinks=True)
                link = entry.is_symlink()
            except OSError as exc:
                walk.skip(entry.path, "broken symbolic link" if entry.is_symlink() else os_error_reason(exc))
                continue
            if stat.S_ISDIR(est.st_mode):
                reason = _dir_link_reason(entry.path, root) if link else None
                if reason is None:
                    top_fs = pseudo_fs_top(entry.path, est, resolve=False)  # a bind mount of /proc in the tree
                    reason = pseudo_fs_reason(top_fs) if top_fs is not None else None
                if reason is not None:
                    walk.skip(entry.path, reason)
                else:
                    subdirs.append(entry.path)
            else:
                reason = _file_link_reason(entry.path, root) if link and stat.S_ISREG(est.st_mode) else None
                if reason is not None:
                    walk.skip(entry.path, reason)
                else:
                    _add_file(entry.path, est, walk, seen_files, resolve=link)
        stack.extend(reversed(subdirs))


def _dir_link_reason(path: str, root: str) -> Optional[str]:
    """Why a symlink to a directory is not followed, or None when it stays inside ``root``."""
    target = os.path.realpath(path)
    top = pseudo_fs_top(target)
    if top is not None:
        return pseudo_fs_reason(top)
    if root != "/" and not (target == root or target.startswith(root.rstrip("/") + "/")):
        return "symlink leaves the given directory"
    return None


def _file_link_reason(path: str, root: str) -> Optional[str]:
    """Why a symlink to a file found in a walk is not read, or None when it stays in ``root``."""
    target = os.path.realpath(path)
    top = pseudo_fs_top(target)
    if top is not None:
        return pseudo_fs_reason(top)
    if root != "/" and not target.startswith(root.rstrip("/") + "/"):
        return "symlink leaves the given directory"
    return None


def _add_file(path: str, st: os.stat_result, walk: Walk, seen_files: set, resolve: bool = True) -> None:
    reason = refusal(path, st, resolve=resolve)
    if reason is not None:
        walk.skip(path, reason)
        return
    key = (st.st_dev, st.st_ino)
    if key in seen_files:
        return  # the same file reached twice through links
    seen_files.add(key)
    if not os.access(path, os.R_OK):
        walk.skip(path, "permission denied")
        return
    parts = tuple(p for p in path.replace(os.sep, "/").split("/") if p not in ("", "."))
    name = parts[-1] if parts else path
    lower = name.lower()
    if lower.endswith(_TAR_SUFFIXES):
        walk.sources.append(Source(path, _plain(path), origin=path, kind_hint="tar"))
        return
    ext = next((e for e in _COMPRESSED if lower.endswith(e)), None)
    opener = _compressed(path, _COMPRESSED[ext], walk) if ext else _plain(path)
    if ext:
        name = name[: -len(ext)]
        parts = parts[:-1] + (name,)
    pid, device, log_class, kind, origin = describe(path, parts, name)
    walk.sources.append(Source(path, opener, origin=origin, pid=pid, device=device, log_class=log_class, kind_hint=kind,
                               size=None if ext else st.st_size))


def tar_members(src: Source, walk: Walk) -> Iterator[Tuple[Source, BinaryIO]]:
    """Each regular member of a tar archive as a source with its open stream, in archive
    order, read under the archive limits; an archive that ends early, is unreadable or
    stops at a limit is listed among the skipped paths with the reason."""
    try:
        fh = src.open()
    except OSError as exc:
        walk.skip(src.display, os_error_reason(exc))
        return
    budget = Budget()
    report = TarReport(budget)
    logs_only: Optional[str] = None  # an ascend-doctor bundle: only the logs it holds are triaged
    first = True
    try:
        for member, stream in tar_entries(fh, budget, report):
            head: Optional[bytes] = None
            if first:
                first = False
                if member.name.endswith("/manifest.json") and member.size <= (8 << 20):
                    head = stream.read()
                    if bundle_manifest(member.name, head) is not None:
                        logs_only = member.name.split("/", 1)[0] + "/logs/"
                        continue
            if logs_only is not None and not member.name.startswith(logs_only):
                continue
            name = member.name.rsplit("/", 1)[-1]
            reader: BinaryIO = io.BytesIO(head) if head is not None else stream  # type: ignore[assignment]
            ext = next((e for e in _COMPRESSED if name.lower().endswith(e)), None)
            if ext:
                reader = DecompressedStream(stream, _COMPRESSED[ext], budget)  # type: ignore[arg-type,assignment]
                name = name[: -len(ext)]
            display = src.display + "!/" + member.name
            parts = tuple(p for p in display.split("/") if p not in ("", "."))
            parts = parts[:-1] + (name,)
            pid, device, log_class, kind, origin = describe(display, parts, name)
            yield Source(display, _once(reader), origin=origin, pid=pid, device=device,
                         log_class=log_class, kind_hint=kind), reader
            if stream.cut:
                walk.skip(display, f"member larger than {budget.limits.member_bytes >> 20} MB: read its first "
                                   f"{budget.limits.member_bytes >> 20} MB ({stream.cut} bytes left out)")
    finally:
        fh.close()
    if report.stopped:
        walk.skip(src.display, f"archive {report.stopped}")
    elif report.error and not report.members:
        walk.skip(src.display, report.error + (" (truncated)" if report.truncated else ""))
    elif report.truncated:
        walk.skip(src.display, "archive ends early (truncated); read up to there")


def os_error_reason(exc: OSError) -> str:
    """How a failed open or read is reported among the skipped paths."""
    return os_reason(exc)


def _plain(path: str) -> Callable[[], BinaryIO]:
    return lambda: open_for_reading(path)


def _pipe(path: str) -> Callable[[], BinaryIO]:
    return lambda: open_for_reading(path, allow_pipe=True)


def _compressed(path: str, kind: str, walk: Walk) -> Callable[[], BinaryIO]:
    def on_stop(reason: str) -> None:
        walk.skip(path, f"read stopped: it {reason}")

    return lambda: DecompressedStream(open_for_reading(path), kind, Budget(), on_stop)  # type: ignore[return-value]


def _once(stream: BinaryIO) -> Callable[[], BinaryIO]:
    return lambda: stream


__all__ = ["Source", "Skipped", "Walk", "InputError", "walk_inputs", "tar_members"]
