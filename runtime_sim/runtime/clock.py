"""A simulated clock: integer microseconds that only move when the simulation says so."""
from __future__ import annotations

from runtime_sim.plog.timefmt import MS, SECOND, parse_start

DEFAULT_START = "2025-10-24 11:16:52"


class SimClock:
    """Host time of one simulated process (microseconds since the epoch)."""

    __slots__ = ("now",)

    def __init__(self, start_us: int) -> None:
        self.now = int(start_us)

    @classmethod
    def at(cls, text: str = DEFAULT_START) -> "SimClock":
        return cls(parse_start(text))

    def advance(self, us: int) -> int:
        if us < 0:
            raise ValueError("time does not run backwards")
        self.now += int(us)
        return self.now

    def advance_to(self, ts_us: int) -> int:
        if ts_us > self.now:
            self.now = int(ts_us)
        return self.now

    def ms(self, n: float) -> int:
        return self.advance(int(n * MS))

    def seconds(self, n: float) -> int:
        return self.advance(int(n * SECOND))
