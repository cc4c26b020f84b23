"""Compressed files and tar archives, read as streams under a budget.

Nothing is unpacked to disk. Every decompressed byte is charged to a ``Budget`` shared by
the streams of one archive: past ``LIMITS.archive_bytes`` decompressed bytes, past
``LIMITS.archive_seconds`` of wall time, or when a stream gives out more than
``LIMITS.archive_ratio`` times its compressed size (a "bomb": 164 bytes of bzip2 can
stand for gigabytes of zeros), reading stops and the reason is kept in ``Budget.stopped``.
A tar member is read up to ``LIMITS.member_bytes``; the rest is skipped and counted.
A stream that ends early (a truncated download, a cut ``.tar.gz``) hands out everything
up to the cut and says so in ``truncated``; a read never raises for it.

    budget = Budget()
    stream = open_compressed(raw, budget)          # gzip / bzip2 / xz by magic, else raw
    for info, member in tar_entries(raw, budget):  # tar, tar.gz, tar.bz2, tar.xz
        member.read(...); member.truncated; member.cut
    budget.stopped                                  # None, or why reading stopped
"""
from __future__ import annotations

import io
import time
import zlib
from typing import TYPE_CHECKING, BinaryIO, Callable, Iterator, Optional, Tuple

from .errors import InputError
from .limits import LIMITS, Limits

if TYPE_CHECKING:
    import tarfile

CHUNK = 1 << 16
_IN_CHUNK = 1 << 14  # compressed bytes read at a time: small, so the ratio is measured closely
_RATIO_AFTER = 1 << 20  # the ratio test starts once this much has come out


class ArchiveLimit(InputError):
    """Reading an archive stopped at one of its limits (bytes, ratio, time, members)."""


class Budget:
    """Decompressed bytes and time for one archive (or one compressed file)."""

    def __init__(self, limits: Limits = LIMITS, clock: Callable[[], float] = time.monotonic) -> None:
        self.limits = limits
        self.clock = clock
        self.start = clock()
        self.total = 0
        self.stopped: Optional[str] = None

    def charge(self, produced: int, compressed: int) -> None:
        """Count ``produced`` bytes; raise ArchiveLimit (and remember why) past a limit."""
        self.total += produced
        lim = self.limits
        if self.total > lim.archive_bytes:
            self.stop(f"more than {lim.archive_bytes >> 20} MB decompressed (the limit); read up to there")
        if self.total > _RATIO_AFTER and compressed and self.total > lim.archive_ratio * compressed:
            self.stop(f"decompresses to more than {lim.archive_ratio} times its size (a compression bomb); "
                      f"read the first {self.total >> 20} MB")
        if self.clock() - self.start > lim.archive_seconds:
            self.stop(f"reading took more than {lim.archive_seconds:.0f} s (the limit); read up to there")

    def stop(self, reason: str) -> None:
        if self.stopped is None:
            self.stopped = reason
        raise ArchiveLimit(self.stopped)


def compression_of(head: bytes) -> Optional[str]:
    if head[:2] == b"\x1f\x8b":
        return "gzip"
    if head[:3] == b"BZh":
        return "bzip2"
    if head[:6] == b"\xfd7zXZ\x00":
        return "xz"
    return None


# bz2, lzma and tarfile are imported where a compressed stream or an archive is read: a
# one-line question reads neither, and they are a noticeable part of a short run's start-up.
def _decompressor(kind: str):
    if kind == "gzip":
        return zlib.decompressobj(wbits=47)
    if kind == "bzip2":
        import bz2

        return bz2.BZ2Decompressor()
    import lzma

    return lzma.LZMADecompressor()


def _read_errors(tar: bool) -> Tuple[type, ...]:
    """What a read of corrupt or truncated compressed data (``tar``: or of a tar archive) raises."""
    import lzma

    if tar:
        import tarfile

        return (tarfile.TarError, OSError, EOFError, zlib.error, lzma.LZMAError)
    return (zlib.error, OSError, EOFError, lzma.LZMAError)


class DecompressedStream(io.RawIOBase):
    """A gzip (also several members), bzip2 or xz stream, decompressed at most ``n`` bytes
    per ``read(n)``, charged to a Budget. ``truncated`` is set when the data ends before the
    end marker or is corrupt; ``stopped`` when the budget ended the read."""

    def __init__(self, raw: BinaryIO, kind: str, budget: Optional[Budget] = None,
                 on_stop: Optional[Callable[[str], None]] = None) -> None:
        self._raw = raw
        self._on_stop = on_stop  # told once why reading stopped (a limit, or a truncated stream)
        self.kind = kind
        self.budget = budget or Budget()
        self._d = _decompressor(kind)
        self._errors = _read_errors(tar=False)
        self._pending = b""  # zlib: input not yet consumed
        self._compressed = 0
        self._eof = False
        self.truncated = False
        self.stopped: Optional[str] = None

    def readable(self) -> bool:
        return True

    def _more_input(self) -> bool:
        d = self._d
        if self.kind == "gzip":
            return bool(self._pending)
        return not d.needs_input and not d.eof

    def _step(self, room: int) -> bytes:
        d = self._d
        if not self._more_input():
            data = self._raw.read(_IN_CHUNK)
            if not data:
                self._eof = True
                if not d.eof:
                    self.truncated = True
                return b""
            self._compressed += len(data)
        else:
            data = b""
        if self.kind == "gzip":
            out = d.decompress(self._pending + data if self._pending else data, room)
            self._pending = d.unconsumed_tail
        else:
            out = d.decompress(data, room)
        if d.eof:
            rest = (d.unused_data or b"") + self._pending
            self._pending = b""
            if rest.strip(b"\x00"):  # another member follows (concatenated .gz / .bz2)
                self._d = _decompressor(self.kind)
                if self.kind == "gzip":
                    self._pending = rest
                else:
                    out += self._d.decompress(rest, max(room - len(out), 0) or 1)
            elif not self._more_input():
                tail = self._raw.read(CHUNK)
                if tail.strip(b"\x00"):
                    self._d = _decompressor(self.kind)
                    self._compressed += len(tail)
                    if self.kind == "gzip":
                        self._pending = tail
                    else:
                        out += self._d.decompress(tail, max(room - len(out), 0) or 1)
                else:
                    self._eof = True
        return out

    def read(self, n: int = -1) -> bytes:  # type: ignore[override]
        if self._eof or self.stopped:
            return b""
        want = n if n is not None and n >= 0 else CHUNK
        parts = []
        got = 0
        try:
            while got < want and not self._eof:
                out = self._step(want - got)
                if out:
                    parts.append(out)
                    got += len(out)
                    self.budget.charge(len(out), self._compressed)
        except ArchiveLimit as exc:
            self.stopped = str(exc)
            self._eof = True
            if self._on_stop is not None:
                self._on_stop(self.stopped)
        except self._errors:
            self.truncated = True
            self._eof = True
        return b"".join(parts)

    def readall(self) -> bytes:  # bounded by the budget
        chunks = []
        while True:
            data = self.read(CHUNK)
            if not data:
                return b"".join(chunks)
            chunks.append(data)

    def close(self) -> None:
        try:
            self._raw.close()
        finally:
            super().close()


class CountingStream(io.RawIOBase):
    """An uncompressed stream charged to a Budget (a plain ``.tar``)."""

    def __init__(self, raw: BinaryIO, budget: Budget) -> None:
        self._raw = raw
        self.budget = budget
        self.truncated = False
        self.stopped: Optional[str] = None

    def readable(self) -> bool:
        return True

    def read(self, n: int = -1) -> bytes:  # type: ignore[override]
        if self.stopped:
            return b""
        data = self._raw.read(n if n is not None and n >= 0 else CHUNK)
        try:
            self.budget.charge(len(data), 0)
        except ArchiveLimit as exc:
            self.stopped = str(exc)
        return data

    def close(self) -> None:
        try:
            self._raw.close()
        finally:
            super().close()


def open_compressed(raw: BinaryIO, budget: Optional[Budget] = None, kind: Optional[str] = None) -> BinaryIO:
    """``raw`` decompressed when it starts with a gzip, bzip2 or xz header (or ``kind`` says
    so), else ``raw`` itself counted against the budget."""
    budget = budget or Budget()
    if kind is None:
        head = _peek(raw, 6)
        kind = compression_of(head)
        raw = _Prefixed(head, raw)  # type: ignore[assignment]
    if kind is None:
        return CountingStream(raw, budget)  # type: ignore[return-value]
    return DecompressedStream(raw, kind, budget)  # type: ignore[return-value]


def _peek(raw: BinaryIO, n: int) -> bytes:
    out = b""
    while len(out) < n:
        data = raw.read(n - len(out))
        if not data:
            break
        out += data
    return out


class _Prefixed(io.RawIOBase):
    def __init__(self, head: bytes, raw: BinaryIO) -> None:
        self._head = head
        self._raw = raw

    def readable(self) -> bool:
        return True

    def read(self, n: int = -1) -> bytes:  # type: ignore[override]
        if self._head:
            if n is None or n < 0:
                out, self._head = self._head + self._raw.read(), b""
                return out
            out, self._head = self._head[:n], self._head[n:]
            return out
        return self._raw.read(n)

    def close(self) -> None:
        try:
            self._raw.close()
        finally:
            super().close()


class MemberStream(io.RawIOBase):
    """One tar member: read up to ``LIMITS.member_bytes`` (the rest is ``cut``); a read error
    of the archive under it (truncated data) ends the member with ``truncated`` set."""

    def __init__(self, inner: BinaryIO, size: int, archive: "TarReport", limit: int) -> None:
        self._inner = inner
        self._left = min(size, limit)
        self.cut = max(0, size - limit)
        self._archive = archive
        self.truncated = False
        self.stopped: Optional[str] = None
        self._errors = _read_errors(tar=True)

    def readable(self) -> bool:
        return True

    def read(self, n: int = -1) -> bytes:  # type: ignore[override]
        if self._left <= 0 or self.truncated or self.stopped:
            return b""
        want = self._left if n is None or n < 0 else min(n, self._left)
        try:
            data = self._inner.read(want)
        except ArchiveLimit as exc:
            self.stopped = str(exc)
            return b""
        except self._errors:
            self.truncated = True
            self._archive.truncated = True
            return b""
        if not data and self._left > 0:
            self.truncated = True
            self._archive.truncated = True
        self._left -= len(data)
        return data


class TarReport:
    """What happened while an archive was read: ``truncated`` (the data ends early or is
    corrupt), ``stopped`` (a limit ended the read), ``members`` and ``cut_members``."""

    def __init__(self, budget: Budget) -> None:
        self.budget = budget
        self.truncated = False
        self.error: Optional[str] = None
        self.members = 0
        self.cut_members = 0

    @property
    def stopped(self) -> Optional[str]:
        return self.budget.stopped


def tar_entries(raw: BinaryIO, budget: Optional[Budget] = None, report: Optional[TarReport] = None,
                limits: Limits = LIMITS) -> Iterator[Tuple[tarfile.TarInfo, MemberStream]]:
    """Each regular member of a (compressed) tar archive with a bounded stream, in archive
    order. Never raises for the archive's content: look at ``report`` afterwards."""
    import tarfile

    budget = budget or Budget(limits)
    report = report or TarReport(budget)
    stream = open_compressed(raw, budget)
    errors = _read_errors(tar=True)
    try:
        tf = tarfile.open(fileobj=stream, mode="r|")
    except (tarfile.TarError, OSError, EOFError) as exc:
        report.error = f"not a readable tar archive ({exc})"
        if getattr(stream, "truncated", False) or getattr(stream, "stopped", None):
            report.truncated = bool(getattr(stream, "truncated", False))
        return
    try:
        while True:
            try:
                member = tf.next()
            except ArchiveLimit:
                break
            except errors as exc:
                report.truncated = True
                report.error = f"archive ends early ({exc})"
                break
            if member is None:
                break
            report.members += 1
            if report.members > limits.archive_members:
                budget.stopped = budget.stopped or f"more than {limits.archive_members} members (the limit); read up to there"
                break
            if not member.isreg():
                continue
            inner = tf.extractfile(member)
            if inner is None:
                continue
            entry = MemberStream(inner, member.size, report, limits.member_bytes)
            if entry.cut:
                report.cut_members += 1
            yield member, entry
            if budget.stopped or getattr(stream, "stopped", None):
                break
        if getattr(stream, "truncated", False):
            report.truncated = True
    finally:
        try:
            tf.close()
        except Exception:  # closing a broken stream must not hide what was read
            pass


__all__ = ["Budget", "ArchiveLimit", "DecompressedStream", "CountingStream", "MemberStream", "TarReport",
           "open_compressed", "tar_entries", "compression_of"]
