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

import re
from typing import Dict, List, Optional, Tuple

from .errors import InputError
from .limits import LIMITS

# opcode byte -> (how its argument is laid out, size)
#   ("fixed", n)     n bytes
#   ("count", k)     a k-byte little-endian unsigned length, then that many bytes
#   ("scount", 4)    the same with a signed 4-byte length
#   ("line", 1|2)    one or two newline-terminated lines
def _layout() -> Dict[int, Tuple[str, int]]:
    import pickletools  # with the tables below, built on the first check: not a start-up cost

    layout: Dict[int, Tuple[str, int]] = {}
    for op in pickletools.opcodes:
        code = ord(op.code.encode("latin-1"))
        arg = op.arg
        if arg is None:
            layout[code] = ("fixed", 0)
        elif arg.n >= 0:
            layout[code] = ("fixed", arg.n)
        elif arg.n == pickletools.UP_TO_NEWLINE:
            layout[code] = ("line", 2 if arg.name.endswith("_pair") else 1)
        elif arg.n == pickletools.TAKEN_FROM_ARGUMENT1:
            layout[code] = ("count", 1)
        elif arg.n == pickletools.TAKEN_FROM_ARGUMENT4:
            layout[code] = ("scount", 4)
        elif arg.n == pickletools.TAKEN_FROM_ARGUMENT4U:
            layout[code] = ("count", 4)
        elif arg.n == pickletools.TAKEN_FROM_ARGUMENT8U:
            layout[code] = ("count", 8)
    return layout


_PUT_TEXT, _BINPUT, _LONG_BINPUT, _MEMOIZE = b"p"[0], b"q"[0], b"r"[0], b"\x94"[0]
_LONG4, _STOP, _FRAME = b"\x8b"[0], b"."[0], b"\x95"[0]
_TEXT_NUMBER = {b"I"[0], b"L"[0], b"F"[0]}  # INT, LONG, FLOAT written as text
_REFUSED = {b"\x97"[0]: "NEXT_BUFFER", b"\x98"[0]: "READONLY_BUFFER"}
_MAX_LONG4 = 1 << 10  # bytes of one LONG4 integer (8192 bits)
_MAX_TEXT_NUMBER = 64


_SHORT_COUNT = -2  # a 1-byte length, then that many bytes (cannot be hostile)
_SLOW = -1


def _table(layout: Dict[int, Tuple[str, int]]) -> List[int]:
    """Per opcode byte: bytes to skip for plain fixed-size opcodes (MEMOIZE included: it has
    no argument), _SHORT_COUNT, or _SLOW for what must be looked at."""
    table = [_SLOW] * 256
    for code, (kind, size) in layout.items():
        if kind == "fixed" and code not in (_BINPUT, _LONG_BINPUT, _FRAME, _STOP) and code not in _REFUSED:
            table[code] = size
        elif kind == "count" and size == 1:
            table[code] = _SHORT_COUNT
    return table


def _plain_runs(table: List[int]) -> "re.Pattern[bytes]":
    """Runs of up to 4,096 plain opcodes (fixed size, or a short string of up to 15 bytes)
    matched at C speed; the walk below looks at everything else one opcode at a time. The
    run is bounded so that the regular expression engine's bookkeeping stays small."""
    by_size: Dict[int, list] = {}
    for code, skip in enumerate(table):
        if skip >= 0:
            by_size.setdefault(skip, []).append(code)

    def cls(codes) -> bytes:
        return b"[" + b"".join(re.escape(bytes([c])) for c in codes) + b"]"

    alts = [cls(codes) + b"." * size for size, codes in sorted(by_size.items())]
    short = [c for c, skip in enumerate(table) if skip == _SHORT_COUNT]
    alts += [cls(short) + re.escape(bytes([k])) + b"." * k for k in range(16)]
    return re.compile(b"(?:" + b"|".join(alts) + b"){1,4096}", re.DOTALL)


_BUILT: List[Tuple[Dict[int, Tuple[str, int]], List[int], "re.Pattern[bytes]"]] = []


def _tables() -> Tuple[Dict[int, Tuple[str, int]], List[int], "re.Pattern[bytes]"]:
    """(layout, table, runs), built on the first check."""
    if not _BUILT:
        layout = _layout()
        table = _table(layout)
        _BUILT.append((layout, table, _plain_runs(table)))
    return _BUILT[0]


def check_pickle(data: bytes, what: str = "pickle", max_memo: Optional[int] = None,
                 max_objects: Optional[int] = None) -> int:
    """Walk the opcodes of ``data``; return the bytes up to and including STOP, or raise
    InputError.

    One pass, no objects built: runs of plain opcodes are skipped by a regular expression
    (C speed) or a table lookup; memo stores, frames, long lengths and text numbers are
    checked against the limits. A memo store may name an index no larger than the bytes
    read so far (every object costs at least one opcode byte), which keeps the unpickler's
    memo table within 8 bytes per byte of input. The object budget: every object costs at
    least one opcode, so a pickle of fewer bytes than ``max_objects`` is within it; a longer
    one has its opcodes counted one by one."""
    layout, table, plain_runs = _tables()
    memo_cap = LIMITS.pickle_memo if max_memo is None else max_memo
    ops_cap = LIMITS.pickle_objects if max_objects is None else max_objects
    n = len(data)
    counting = n > ops_cap  # only then can the objects outnumber the budget
    runs = None if counting else plain_runs.match
    pos = 0
    ops = 0
    frombytes = int.from_bytes
    while pos < n:
        if runs is not None:
            m = runs(data, pos)
            if m is not None:
                pos = m.end()
                if pos >= n:
                    break
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
        memo = pos  # the bound a well-formed pickler stays within
        spec = layout.get(code)
        if spec is None:
            raise InputError(f"{what}: not a pickle (unknown opcode 0x{code:02x} at byte {pos - 1})")
        if counting and ops > ops_cap:
            raise InputError(f"{what}: more than {ops_cap} objects (the limit)")
        kind, size = spec
        if kind == "fixed":
            if pos + size > n:
                break
            if code == _BINPUT or code == _LONG_BINPUT:
                index = frombytes(data[pos:pos + size], "little")
                if index > memo or index >= memo_cap:
                    raise InputError(f"{what}: memo index {index} jumps past anything the first {memo} bytes can have stored")
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
                        raise InputError(f"{what}: memo index {index} jumps past anything the first {memo} bytes can have stored")
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
            if counting and ops > ops_cap:
                raise InputError(f"{what}: more than {ops_cap} objects (the limit)")
            return pos
    raise InputError(f"{what}: truncated (ends before its STOP opcode)")


__all__ = ["check_pickle"]
