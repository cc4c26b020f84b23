"""Just enough PNG decoding (8-bit RGB/RGBA, non-interlaced, as headless Chromium writes its
screenshots) to count pixels of a colour in a screenshot; no imaging library is needed."""
from __future__ import annotations

import struct
import zlib
from typing import List, Tuple


def decode(data: bytes) -> Tuple[int, int, List[bytearray], int]:
    """(width, height, rows of raw pixel bytes, bytes per pixel)."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    pos, idat = 8, b""
    width = height = bpp = 0
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        chunk = data[pos + 8:pos + 8 + length]
        pos += 12 + length
        if kind == b"IHDR":
            width, height, depth, color, _, _, interlace = struct.unpack(">IIBBBBB", chunk)
            assert depth == 8 and color in (2, 6) and interlace == 0, (depth, color, interlace)
            bpp = 3 if color == 2 else 4
        elif kind == b"IDAT":
            idat += chunk
        elif kind == b"IEND":
            break
    raw = zlib.decompress(idat)
    stride = width * bpp
    rows: List[bytearray] = []
    prev = bytearray(stride)
    i = 0
    for _ in range(height):
        ftype = raw[i]
        line = bytearray(raw[i + 1:i + 1 + stride])
        i += 1 + stride
        if ftype == 0:
            rows.append(line)
            prev = line
            continue
        if ftype == 2:
            line = bytearray((u + v) & 255 for u, v in zip(line, prev))
            rows.append(line)
            prev = line
            continue
        for x in range(stride):
            a = line[x - bpp] if x >= bpp else 0
            b = prev[x]
            c = prev[x - bpp] if x >= bpp else 0
            if ftype == 1:
                line[x] = (line[x] + a) & 255
            elif ftype == 2:
                line[x] = (line[x] + b) & 255
            elif ftype == 3:
                line[x] = (line[x] + (a + b) // 2) & 255
            elif ftype == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[x] = (line[x] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append(line)
        prev = line
    return width, height, rows, bpp


def counts_by_row(png: bytes, *colours: Tuple[int, int, int]) -> List[List[int]]:
    """For each colour, how many pixels of each row have exactly that colour (one decode)."""
    width, height, rows, bpp = decode(png)
    targets = [bytes(c) for c in colours]
    out: List[List[int]] = [[] for _ in colours]
    for line in rows:
        pixels = [bytes(line[x:x + 3]) for x in range(0, width * bpp, bpp)]
        for k, t in enumerate(targets):
            out[k].append(pixels.count(t))
    return out
