"""A budget check of a pickle before the C unpickler sees it.

The C unpickler trusts the numbers inside the stream: ``LONG_BINPUT`` with index 2**31
makes it allocate a memo table of that many slots, ``BINBYTES8``/``FRAME`` lengths of
2**62 are allocated before the read fails, a ``LONG4`` of a billion bytes builds a huge
integer. ``check_pickle`` walks the opcodes once (lengths and indices only, no objects)
and refuses a stream whose declared lengths run past its end, whose memo indices jump
ahead of what was stored, or that is over the object budget. What passes can be loaded
with memory proportional to its size. Classes are still refused by the caller's
``find_class``: this check is about size, not code.
"""
from __future__ import annotations

import pickletools
from typing import Dict, Optional, Tuple

from .errors import InputError
from .limits import LIMITS

# opcode byte -> (how its argument is laid out, size)
#   ("fixed", n)     n bytes
#   ("count", k)     a k-byte little-endian unsigned length, then that many bytes
#   ("scount", 4)    the same with a signed 4-byte length
#   ("line", 1|2)    one or two newline-terminated lines
_LAYOUT: Dict[int, Tuple[str, int]] = {}
for _op in pickletools.opcodes:
    _code = ord(_op.code.encode("latin-1"))
    _arg = _op.arg
    if _arg is None:
        _LAYOUT[_code] = ("fixed", 0)
    elif _arg.n >= 0:
        _LAYOUT[_code] = ("fixed", _arg.n)
    elif _arg.n == pickletools.UP_TO_NEWLINE:
        _LAYOUT[_code] = ("line", 2 if _arg.name.endswith("_pair") else 1)
    elif _arg.n == pickletools.TAKEN_FROM_ARGUMENT1:
        _LAYOUT[_code] = ("count", 1)
    elif _arg.n == pickletools.TAKEN_FROM_ARGUMENT4:
        _LAYOUT[_code] = ("scount", 4)
    elif _arg.n == pickletools.TAKEN_FROM_ARGUMENT4U:
        _LAYOUT[_code] = ("count", 4)
    elif _arg.n == pickletools.TAKEN_FROM_ARGUMENT8U:
        _LAYOUT[_code] = ("count", 8)

_PUT_TEXT, _BINPUT, _LONG_BINPUT, _MEMOIZE = b"p"[0], b"q"[0], b"r"[0], b"\x94"[0]
_LONG4, _STOP, _FRAME = b"\x8b"[0], b"."[0], b"\x95"[0]
_TEXT_NUMBER = {b"I"[0], b"L"[0], b"F"[0]}  # INT, LONG, FLOAT written as text
_REFUSED = {b"\x97"[0]: "NEXT_BUFFER", b"\x98"[0]: "READONLY_BUFFER"}
_MAX_LONG4 = 1 << 10  # bytes of one LONG4 integer (8192 bits)
_MAX_TEXT_NUMBER = 64


_SHORT_COUNT = -2  # a 1-byte length, then that many bytes (cannot be hostile)
_SLOW = -1


def _table():
    """Per opcode byte: bytes to skip for plain fixed-size opcodes (MEMOIZE included: it has
    no argument), _SHORT_COUNT, or _SLOW for what must be looked at."""
    table = [_SLOW] * 256
    for code, (kind, size) in _LAYOUT.items():
        if kind == "fixed" and code not in (_BINPUT, _LONG_BINPUT, _FRAME, _STOP) and code not in _REFUSED:
            table[code] = size
        elif kind == "count" and size == 1:
            table[code] = _SHORT_COUNT
    return table


_TABLE = _table()


def check_pickle(data: bytes, what: str = "pickle", max_memo: Optional[int] = None,
                 max_objects: Optional[int] = None) -> int:
    """Walk the opcodes of ``data``; return the number of opcodes, or raise InputError.

    One pass, no objects built: plain opcodes are skipped by a table lookup; memo stores,
    frames, long lengths and text numbers are checked against the limits. A memo store may
    name an index no larger than the number of opcodes read so far (each opcode makes at
    most one object), which keeps the unpickler's memo table within 8 bytes per opcode."""
    memo_cap = LIMITS.pickle_memo if max_memo is None else max_memo
    ops_cap = LIMITS.pickle_objects if max_objects is None else max_objects
    n = len(data)
    pos = 0
    ops = 0
    table = _TABLE
    frombytes = int.from_bytes
    while pos < n:
        code = data[pos]
        pos += 1
        ops += 1
        skip = table[code]
        if skip >= 0:
            pos += skip
            continue
        if skip == _SHORT_COUNT:
            if pos >= n:
                break
            pos += 1 + data[pos]
            continue
        memo = ops  # the bound a well-formed pickler stays within
        spec = _LAYOUT.get(code)
        if spec is None:
            raise InputError(f"{what}: not a pickle (unknown opcode 0x{code:02x} at byte {pos - 1})")
        if ops > ops_cap:
            raise InputError(f"{what}: more than {ops_cap} objects (the limit)")
        kind, size = spec
        if kind == "fixed":
            if pos + size > n:
                break
            if code == _BINPUT or code == _LONG_BINPUT:
                index = frombytes(data[pos:pos + size], "little")
                if index > memo or index >= memo_cap:
                    raise InputError(f"{what}: memo index {index} jumps past the {memo} objects stored so far")
            elif code == _FRAME:  # its length covers the opcodes that follow
                length = frombytes(data[pos:pos + size], "little")
                if length > n - pos - size:
                    raise InputError(f"{what}: a frame of {length} bytes in a stream of {n} bytes")
            pos += size
        elif kind == "line":
            for _ in range(size):
                end = data.find(b"\n", pos)
                if end < 0:
                    raise InputError(f"{what}: truncated (a text argument has no end)")
                if code in _TEXT_NUMBER and end - pos > _MAX_TEXT_NUMBER:
                    raise InputError(f"{what}: a number of {end - pos} characters (the limit is {_MAX_TEXT_NUMBER})")
                if code == _PUT_TEXT:
                    text = data[pos:end]
                    if not text.isdigit() or len(text) > 12:
                        raise InputError(f"{what}: bad memo index {text[:20]!r}")
                    index = int(text)
                    if index > memo or index >= memo_cap:
                        raise InputError(f"{what}: memo index {index} jumps past the {memo} objects stored so far")
                pos = end + 1
        else:
            if pos + size > n:
                break
            length = frombytes(data[pos:pos + size], "little", signed=(kind == "scount"))
            pos += size
            if length < 0:
                raise InputError(f"{what}: negative length {length}")
            if code == _LONG4 and length > _MAX_LONG4:
                raise InputError(f"{what}: an integer of {length} bytes (the limit is {_MAX_LONG4})")
            if length > n - pos:
                raise InputError(f"{what}: a {length}-byte value in a stream of {n} bytes (truncated or hostile)")
            pos += length
        if code in _REFUSED:
            raise InputError(f"{what}: out-of-band buffers ({_REFUSED[code]}) are not read")
        if code == _STOP:
            if ops > ops_cap:
                raise InputError(f"{what}: more than {ops_cap} objects (the limit)")
            return ops
    raise InputError(f"{what}: truncated (ends before its STOP opcode)")


__all__ = ["check_pickle"]
