"""Bytes kept up to a cap: the head and the tail, with what was cut in between.

A child process (npu-smi, the target Python) may print without end; its output is read
into a ``CappedBuffer`` that keeps the first and the last ``cap // 2`` bytes and counts
the rest, so memory stays bounded and the message still shows how it began and ended.
"""
from __future__ import annotations

from typing import Optional

from .limits import LIMITS


class CappedBuffer:
    def __init__(self, cap: Optional[int] = None) -> None:
        self.cap = LIMITS.output_bytes if cap is None else cap
        self._head = bytearray()
        self._tail = bytearray()
        self.total = 0

    @property
    def cut(self) -> int:
        """Bytes dropped between head and tail."""
        return max(0, self.total - len(self._head) - len(self._tail))

    def write(self, data: bytes) -> None:
        self.total += len(data)
        half = self.cap // 2
        room = half - len(self._head)
        if room > 0:
            self._head += data[:room]
            data = data[room:]
        if data:
            self._tail += data
            if len(self._tail) > 2 * half:  # trim now and then, not on every write
                del self._tail[: len(self._tail) - half]

    def getvalue(self) -> bytes:
        half = self.cap // 2
        tail = bytes(self._tail[-half:]) if half else b""
        dropped = self.total - len(self._head) - len(tail)
        if dropped <= 0:
            return bytes(self._head) + tail
        note = f"\n[... {dropped} bytes cut by ascend-doctor: output longer than {self.cap} bytes ...]\n".encode()
        return bytes(self._head) + note + tail

    def text(self) -> str:
        return self.getvalue().decode("utf-8", errors="replace")


__all__ = ["CappedBuffer"]
