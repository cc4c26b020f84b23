"""Seeded background noise: the INFO / WARNING / EVENT lines a healthy process writes.

Templates live in ``data/noise.yaml``, each one a real line shape with its source.
A ``Noise`` belongs to one process; it formats templates with that process's pid,
threads and device, draws the variable numbers from the caller's ``random.Random`` and
writes through the process's ``ProcessLog`` (which applies the log-level settings).
"""
from __future__ import annotations

import bisect
import functools
import random
import time
from pathlib import Path
from typing import Dict, List, Optional, Sequence, Tuple

from runtime_sim.plog.files import ProcessLog

_DATA = Path(__file__).with_name("data") / "noise.yaml"


@functools.lru_cache(maxsize=1)
def templates() -> Tuple[dict, ...]:
    import yaml  # lazy

    with open(_DATA, encoding="utf-8") as fh:
        rows = yaml.safe_load(fh)["templates"]
    for row in rows:
        for key in ("id", "level", "module", "src", "body", "log", "phase", "source"):
            if key not in row:
                raise ValueError(f"noise template {row.get('id', '?')}: missing {key!r}")
    return tuple(rows)


class _Compiled:
    __slots__ = ("level", "module", "src", "body", "vars", "run", "head", "mid", "pattern")

    def __init__(self, row: dict, fixed: Dict[str, str], pid: int, pname: str) -> None:
        body = row["body"]
        for key, value in fixed.items():
            body = body.replace("{" + key + "}", value)
        self.level: str = row["level"]
        self.module: str = row["module"]
        self.src: str = row["src"]
        self.body: str = body
        self.vars: List[Tuple[int, int, bool]] = []
        pattern = body.replace("%", "%%")
        for name, spec in (row.get("vars") or {}).items():
            if spec[0] == "hex":
                self.vars.append((0, 16 ** int(spec[1]) - 1, True))
            else:
                self.vars.append((int(spec[0]), int(spec[1]), False))
            pattern = pattern.replace("{" + name + "}", "%s")
        self.pattern = pattern
        self.run = row["log"] == "run"
        # the full line is head + timestamp + mid + body + newline (line.format_line)
        self.head = "[%s] %s(%d,%s):" % (self.level, self.module, pid, pname)
        self.mid = " [%s]" % self.src

    def render(self, rng: random.Random) -> str:
        if not self.vars:
            return self.body
        rand = rng.random
        values = []
        for lo, hi, is_hex in self.vars:
            v = lo + int(rand() * (hi - lo + 1))
            values.append(("%x" % v) if is_hex else str(v))
        return self.pattern % tuple(values)


class Noise:
    """Background lines for one process."""

    def __init__(self, log: ProcessLog, rng: random.Random, device: int,
                 tids: Optional[Sequence[int]] = None) -> None:
        self.log = log
        self.rng = rng
        self.device = device
        self.tids = list(tids) if tids else [log.pid]
        self._phase: Dict[str, List[_Compiled]] = {"start": [], "open": [], "steady": [], "exit": []}
        self._weights: List[float] = []
        fixed = {"pid": str(log.pid), "dev": str(device), "pname": log.pname,
                 "tid": str(self.tids[0])}
        for row in templates():
            compiled = _Compiled(row, fixed, log.pid, log.pname)
            if not compiled.run and not log.settings.debug_enabled(compiled.level,
                                                                      compiled.module):
                continue  # filtered by the log level: never written, never drawn
            self._phase[row["phase"]].append(compiled)
            if row["phase"] == "steady":
                total = (self._weights[-1] if self._weights else 0.0) + float(
                    row.get("weight", 1))
                self._weights.append(total)

    def _emit(self, t: _Compiled, ts_us: int) -> None:
        body = t.render(self.rng)
        if t.run:
            self.log.run(t.level, t.module, t.src, body, ts_us)
        else:
            self.log.debug(t.level, t.module, t.src, body, ts_us)

    def start(self, ts_us: int, gap_us: Tuple[int, int] = (2, 900)) -> int:
        """The start-up lines in order; returns the time after the last one."""
        return self._sequence("start", ts_us, gap_us)

    def open(self, ts_us: int, gap_us: Tuple[int, int] = (20, 4000)) -> int:
        """The lines written when the device is opened; returns the time after them."""
        return self._sequence("open", ts_us, gap_us)

    def exit(self, ts_us: int, gap_us: Tuple[int, int] = (5, 20000)) -> int:
        """The shutdown lines in order; returns the time after the last one."""
        return self._sequence("exit", ts_us, gap_us)

    def _sequence(self, phase: str, ts_us: int, gap_us: Tuple[int, int]) -> int:
        lo, hi = gap_us
        for t in self._phase[phase]:
            ts_us += lo + int(self.rng.random() * (hi - lo + 1))
            self._emit(t, ts_us)
        return ts_us

    def steady(self, ts_from: int, ts_to: int, mean_gap_us: int,
               max_lines: Optional[int] = None) -> int:
        """Random steady-state lines in ``[ts_from, ts_to)``; returns how many were drawn.

        Gaps are uniform in ``[1, 2*mean_gap_us]``; a process whose log level filters every
        steady template writes nothing (but the caller's time still passes).
        """
        pool = self._phase["steady"]
        if not pool or ts_to <= ts_from or mean_gap_us <= 0:
            return 0
        total = self._weights[-1]
        weights = self._weights
        rand = self.rng.random
        span = 2 * mean_gap_us
        # the templates already passed the level filter: write straight to the files
        sinks = {True: self.log.sink("run").write, False: self.log.sink("debug").write}
        find = bisect.bisect_right
        gmtime = time.gmtime
        ts = ts_from
        count = 0
        limit = -1 if max_lines is None else max_lines
        cached_sec = -1
        prefix = ""
        while True:
            ts += 1 + int(rand() * span)
            if ts >= ts_to or count == limit:
                if ts > self.log.last_ts and count:
                    self.log.last_ts = ts
                return count
            t = pool[find(weights, rand() * total)]
            sec, micros = divmod(ts, 1000000)
            if sec != cached_sec:  # same second as the previous line: reuse its date part
                tm = gmtime(sec)
                prefix = "%04d-%02d-%02d-%02d:%02d:%02d." % (
                    tm.tm_year, tm.tm_mon, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec)
                cached_sec = sec
            if t.vars:
                values = []
                for lo, hi, is_hex in t.vars:
                    v = lo + int(rand() * (hi - lo + 1))
                    values.append(("%x" % v) if is_hex else str(v))
                body = t.pattern % tuple(values)
            else:
                body = t.body
            sinks[t.run]("%s%s%03d.%03d%s%s\n" % (t.head, prefix, micros // 1000, micros % 1000,
                                                   t.mid, body), ts)
            count += 1
