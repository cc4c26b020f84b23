"""Timestamps as the Ascend stack prints them, from integer microseconds.

Simulated time is an ``int`` count of microseconds since the Unix epoch, read as the
host's wall clock (no time zone is applied: plog prints local time and the simulated
host's local time is whatever the scenario says it is).

Formats (https://github.com/hicann/runtime/blob/681ef7610df13c8128982901142a2c869ddbb53e/docs/zh/log_ref/log_overview.md,
https://github.com/Ascend/pytorch/blob/9e73e708ab9350d203475609f36f8a43f6a0c2ab/torch_npu/csrc/core/npu/NPUException.cpp,
https://github.com/hicann/hccl/blob/09300b70df9a031339f08e5f2ca06d7bf294d009/docs/zh/user_guide/fault_diagnosis/task_exec_stage.md):
- plog line        ``2024-07-04-14:14:25.036.721``   (date-time . ms . us)
- plog file name   ``20220617234019449``            (17 digits, ms)
- torch_npu banner ``2025-04-29-18:46:11``          (seconds)
- HCCL heartbeat   ``Thu Oct 23 17:25:58 2025``     (ctime style, "Arrival Time")
"""
from __future__ import annotations

import calendar
import time
from datetime import datetime
from typing import Tuple

US = 1
MS = 1000
SECOND = 1_000_000
MINUTE = 60 * SECOND
HOUR = 60 * MINUTE

_DAYS = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")
_MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")


def us_from_datetime(value: datetime) -> int:
    """A naive datetime (the simulated host's local time) as epoch microseconds."""
    return calendar.timegm(value.timetuple()) * SECOND + value.microsecond


def parse_start(text: str) -> int:
    """``2025-10-24 11:16:52`` or ``2025-10-24T11:16:52[.ffffff]`` -> epoch microseconds."""
    cleaned = text.strip().replace("T", " ")
    for fmt in ("%Y-%m-%d %H:%M:%S.%f", "%Y-%m-%d %H:%M:%S", "%Y-%m-%d"):
        try:
            return us_from_datetime(datetime.strptime(cleaned, fmt))
        except ValueError:
            continue
    raise ValueError(f"start time {text!r} is not 'YYYY-MM-DD hh:mm:ss'")


def _split(ts_us: int) -> Tuple[time.struct_time, int]:
    seconds, micros = divmod(ts_us, SECOND)
    return time.gmtime(seconds), micros


def plog_ts(ts_us: int) -> str:
    """``YYYY-MM-DD-hh:mm:ss.mmm.uuu``."""
    tm, micros = _split(ts_us)
    return "%04d-%02d-%02d-%02d:%02d:%02d.%03d.%03d" % (
        tm.tm_year, tm.tm_mon, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
        micros // 1000, micros % 1000)


def file_ts(ts_us: int) -> str:
    """``YYYYMMDDhhmmssmmm`` as in ``plog-<pid>_<ts>.log``."""
    tm, micros = _split(ts_us)
    return "%04d%02d%02d%02d%02d%02d%03d" % (
        tm.tm_year, tm.tm_mon, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, micros // 1000)


def banner_ts(ts_us: int) -> str:
    """``YYYY-MM-DD-hh:mm:ss`` as in torch_npu's ``[ERROR] <ts> (PID:...)`` banner."""
    tm, _ = _split(ts_us)
    return "%04d-%02d-%02d-%02d:%02d:%02d" % (
        tm.tm_year, tm.tm_mon, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec)


def ctime_ts(ts_us: int) -> str:
    """``Thu Oct 23 17:25:58 2025`` as in HCCL's ``Arrival Time:[...]``."""
    tm, _ = _split(ts_us)
    return "%s %s %2d %02d:%02d:%02d %04d" % (
        _DAYS[tm.tm_wday], _MONTHS[tm.tm_mon - 1], tm.tm_mday,
        tm.tm_hour, tm.tm_min, tm.tm_sec, tm.tm_year)


def glog_ts(ts_us: int, extra_ns: int = 0) -> str:
    """Date part of c10 warnings after the level letter: ``730 06:16:22.869118032``.

    Month unpadded, day padded, nanoseconds (``[W730 06:16:22.869118032 ...]``,
    ``[W107 21:14:04.201960667 ...]`` — https://github.com/vllm-project/vllm-ascend/issues/692,
    vllm-project/vllm-omni PR #755). The simulated clock has microseconds; ``extra_ns`` fills the rest.
    """
    tm, micros = _split(ts_us)
    return "%d%02d %02d:%02d:%02d.%06d%03d" % (
        tm.tm_mon, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, micros, extra_ns % 1000)


class PlogTimestamper:
    """Formats many increasing timestamps fast: the seconds part is cached.

    Writing gigabytes of log is dominated by per-line formatting, and consecutive
    lines almost always share their second.
    """

    __slots__ = ("_sec", "_prefix")

    def __init__(self) -> None:
        self._sec = -1
        self._prefix = ""

    def __call__(self, ts_us: int) -> str:
        sec, micros = divmod(ts_us, SECOND)
        if sec != self._sec:
            tm = time.gmtime(sec)
            self._prefix = "%04d-%02d-%02d-%02d:%02d:%02d." % (
                tm.tm_year, tm.tm_mon, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec)
            self._sec = sec
        ms, us = divmod(micros, 1000)
        return "%s%03d.%03d" % (self._prefix, ms, us)
