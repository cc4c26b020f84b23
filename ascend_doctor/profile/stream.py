"""Bounded, streaming readers for profiling files: CSV rows and the elements of a JSON array.

Profiles of long runs are large (a single ``trace_view.json`` or ``op_summary`` slice can be
gigabytes), so nothing here loads a whole file: CSV files are read row by row with the ``csv``
module, the timeline JSON (a top-level array of trace events, or ``{"traceEvents": [...]}``) is
decoded one element at a time from a sliding buffer, and the small JSON documents
(``communication.json``, ``profiler_info.json``) are loaded only below a size cap.

Every open goes through :func:`ascend_doctor.inputs.openable.open_for_reading`, so a FIFO or device
node found while walking a directory is never opened.
"""
from __future__ import annotations

import codecs
import csv
import io
import json
import os
from typing import Any, Dict, Iterator, List, Optional, Tuple

from ..inputs.openable import open_for_reading

SMALL_JSON_MAX = 64 * 1024 * 1024  # communication.json and friends are loaded whole below this
OBJECT_MAX = 16 * 1024 * 1024  # one trace event larger than this is not a trace event
CHUNK = 1 << 20

csv.field_size_limit(16 * 1024 * 1024)


class FormatError(ValueError):
    """A file is not what its name says; the message is one line."""


def normalise_header(cell: str) -> str:
    """``Task Start Time(us)`` -> ``task start time``; ``Ratio(%)`` -> ``ratio``."""
    text = cell.replace("\ufeff", "").strip().lower()
    for unit in ("(us)", "(%)", "(ms)"):
        text = text.replace(unit, "")
    return " ".join(text.replace("_", " ").split())


def open_text(path: str) -> io.TextIOWrapper:
    raw = open_for_reading(path)
    return io.TextIOWrapper(raw, encoding="utf-8-sig", errors="replace", newline="")


def csv_rows(path: str) -> Tuple[Dict[str, int], "Rows"]:
    """The normalised header (name -> column) and an iterator over the remaining rows."""
    fh = open_text(path)
    reader = csv.reader(fh)
    try:
        header = next(reader)
    except StopIteration:
        fh.close()
        return {}, Rows(fh, iter(()))
    except csv.Error as exc:
        fh.close()
        raise FormatError(f"{path}: not a CSV file ({exc})") from None
    cols: Dict[str, int] = {}
    for i, cell in enumerate(header):
        cols.setdefault(normalise_header(cell), i)

    return cols, Rows(fh, reader)


class Rows:
    """The data rows of an open CSV file; closes the file when exhausted or on ``close()``."""

    def __init__(self, fh: io.TextIOWrapper, reader: Any) -> None:
        self.fh = fh
        self.reader = reader

    def __iter__(self) -> Iterator[List[str]]:
        try:
            for row in self.reader:
                yield row
        except csv.Error:
            return  # a torn last line: stop where the file stops making sense
        finally:
            self.fh.close()

    def close(self) -> None:
        self.fh.close()


def col(cols: Dict[str, int], *names: str) -> Optional[int]:
    for name in names:
        if name in cols:
            return cols[name]
    return None


def number(text: str) -> Optional[float]:
    """A CSV cell as a float: trailing TABs and quotes stripped; ``N/A`` and empty are None."""
    try:
        return float(text)
    except (TypeError, ValueError):
        pass
    if not text:
        return None
    cleaned = text.strip().strip('"').strip()
    if not cleaned or cleaned in ("N/A", "NA", "-", "nan"):
        return None
    try:
        return float(cleaned)
    except ValueError:
        return None


def load_small_json(path: str, limit: int = SMALL_JSON_MAX) -> Any:
    """A whole JSON document, refused (FormatError) above ``limit`` bytes."""
    size = os.path.getsize(path)
    if size > limit:
        raise FormatError(f"{path}: {size / 1e6:.0f} MB is above the {limit / 1e6:.0f} MB read for this kind of file; skipped")
    with open_for_reading(path) as fh:
        data = fh.read()
    try:
        return json.loads(data.decode("utf-8-sig", errors="replace"))
    except ValueError as exc:
        raise FormatError(f"{path}: not valid JSON ({str(exc).splitlines()[0]})") from None


class JsonArrayReader:
    """Yields the elements of the first JSON array of a file (top level, or under ``traceEvents``),
    decoding one element at a time. ``stopped`` says why it ended early (a truncated file)."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.stopped: Optional[str] = None
        self.count = 0

    def __iter__(self) -> Iterator[Any]:
        decoder = json.JSONDecoder()
        raw = open_for_reading(self.path)
        reader = codecs.getincrementaldecoder("utf-8")(errors="replace")
        try:
            buf = ""
            eof = False

            def more() -> bool:
                nonlocal buf, eof
                if eof:
                    return False
                chunk = raw.read(CHUNK)
                if not chunk:
                    eof = True
                    buf += reader.decode(b"", final=True)
                    return False
                buf += reader.decode(chunk)
                return True

            # find the opening bracket of the array
            pos = 0
            while True:
                stripped = buf.lstrip("\ufeff \t\r\n")
                if stripped:
                    break
                if not more():
                    self.stopped = "empty file"
                    return
            buf = stripped
            if buf[0] == "{":
                key = '"traceEvents"'
                while key not in buf:
                    if len(buf) > OBJECT_MAX or not more():
                        self.stopped = "no trace event array in the file"
                        return
                start = buf.index(key) + len(key)
                while "[" not in buf[start:]:
                    if not more():
                        self.stopped = "no trace event array in the file"
                        return
                pos = buf.index("[", start) + 1
            elif buf[0] == "[":
                pos = 1
            else:
                self.stopped = "not a JSON array"
                return
            while True:
                # skip separators
                n = len(buf)
                while pos < n and buf[pos] in " \t\r\n,":
                    pos += 1
                if pos >= n:
                    buf = ""
                    pos = 0
                    if not more():
                        self.stopped = "the file ends inside the array (truncated)"
                        return
                    continue
                if buf[pos] == "]":
                    return
                try:
                    obj, end = decoder.raw_decode(buf, pos)
                except ValueError:
                    if len(buf) - pos > OBJECT_MAX:
                        self.stopped = f"unparsable after {self.count} events"
                        return
                    buf = buf[pos:]
                    pos = 0
                    if not more():
                        self.stopped = f"the file ends inside an event after {self.count} events (truncated)"
                        return
                    continue
                pos = end
                self.count += 1
                yield obj
                if pos > CHUNK and pos > len(buf) // 2:
                    buf = buf[pos:]
                    pos = 0
        finally:
            raw.close()
