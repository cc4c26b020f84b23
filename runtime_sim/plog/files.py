"""The on-disk layout of CANN application logs, with the real rotation rules.

Layout (RT ``docs/zh/log_ref/viewing_logs_ep.md``)::

    <root>/debug/plog/plog-<pid>_<YYYYMMDDhhmmssmmm>.log
    <root>/debug/device-<id>/device-<pid>_<YYYYMMDDhhmmssmmm>.log
    <root>/run/plog/...            <root>/run/device-<id>/...

``<root>`` is ``$ASCEND_PROCESS_LOG_PATH`` (else ``$ASCEND_WORK_PATH``, else
``$HOME/ascend/log``). The timestamp in a file name is the moment the file was opened;
``<pid>`` in ``device-<pid>_*`` is the *host* process, the pid inside its lines is the
device-side process. A file is closed at 20 MB and a new one opened; at most
``ASCEND_HOST_LOG_FILE_NUM`` (default 10, range [1, 1000]) files per process and
directory are kept, older ones are removed.

Writes are buffered and streamed: memory stays constant however much is written.
"""
from __future__ import annotations

import os
from pathlib import Path
from typing import Dict, List, Mapping, Optional, Tuple

from runtime_sim.plog import line as L
from runtime_sim.plog.timefmt import PlogTimestamper, file_ts

FILE_MAX_BYTES = 20 * 1024 * 1024
DEFAULT_FILE_NUM = 10
_FLUSH_BYTES = 1 << 18

MODULES = frozenset((
    "SLOG IDEDD SCC HCCL FMK CCU DVPP RUNTIME CCE HDC DRV NET HIXL DEVMM KERNEL LIBMEDIA "
    "CCECPU ROS HCCP ROCE TEFUSION PROFILING DP APP TS TSDUMP AICPU LP TDT FE MD MB ME IMU "
    "IMP GE CAMERA ASCENDCL TEEOS ISP SIS HSM DSS PROCMGR BBOX AIVECTOR TBE FV PYPTO TUNE "
    "HSS FFTS OP UDF HICAID TSYNC AUDIO TPRT ASCENDCKERNEL ASYS ATRACE RTC SYSMONITOR AML "
    "ADETECT DQS").split())  # RT include/dfx/base/log_types.h


def log_root_from_env(env: Mapping[str, str], home: str = "/root") -> str:
    """Where a process with this environment writes its logs (path on the simulated host)."""
    for key in ("ASCEND_PROCESS_LOG_PATH", "ASCEND_WORK_PATH"):
        value = env.get(key, "").strip()
        if value:
            return value
    return os.path.join(env.get("HOME", home) or home, "ascend", "log")


class LogSettings:
    """The logging environment of one process, parsed with the runtime's rules.

    ``ASCEND_GLOBAL_LOG_LEVEL`` 0..4 (invalid -> 3); ``ASCEND_MODULE_LOG_LEVEL``
    ``MOD=lvl:MOD=lvl`` (any syntax error or unknown module disables the whole setting);
    ``ASCEND_GLOBAL_EVENT_ENABLE`` 0/1 (default 1); ``ASCEND_HOST_LOG_FILE_NUM`` [1, 1000]
    (invalid -> 10). Sources: RT ``docs/zh/env_vars/*.md``.
    """

    def __init__(self, global_level: int = 3, module_levels: Optional[Dict[str, int]] = None,
                 event_enable: bool = True, file_num: int = DEFAULT_FILE_NUM,
                 file_max_bytes: int = FILE_MAX_BYTES) -> None:
        self.global_level = global_level
        self.module_levels = dict(module_levels or {})
        self.event_enable = event_enable
        self.file_num = file_num
        self.file_max_bytes = file_max_bytes

    @classmethod
    def from_env(cls, env: Mapping[str, str]) -> "LogSettings":
        level = _int_in(env.get("ASCEND_GLOBAL_LOG_LEVEL"), 0, 4, 3)
        modules = _module_levels(env.get("ASCEND_MODULE_LOG_LEVEL", ""))
        event = env.get("ASCEND_GLOBAL_EVENT_ENABLE", "1").strip() != "0"
        num = _int_in(env.get("ASCEND_HOST_LOG_FILE_NUM"), 1, 1000, DEFAULT_FILE_NUM)
        return cls(level, modules, event, num)

    def debug_enabled(self, level: str, module: str) -> bool:
        """Whether a line of this level reaches the debug log."""
        if level == "EVENT":
            return self.event_enable
        threshold = self.module_levels.get(module, self.global_level)
        if threshold >= 4:
            return False
        return L.LEVEL_IDS.get(level, 3) >= threshold


def _int_in(raw: Optional[str], lo: int, hi: int, default: int) -> int:
    if raw is None or not raw.strip().isdigit():
        return default
    value = int(raw.strip())
    return value if lo <= value <= hi else default


def _module_levels(raw: str) -> Dict[str, int]:
    result: Dict[str, int] = {}
    if not raw.strip():
        return result
    for part in raw.strip().split(":"):
        name, sep, value = part.partition("=")
        if not sep or name not in MODULES or not value.isdigit() or int(value) > 4:
            return {}  # the runtime ignores the whole variable on any mistake
        result[name] = int(value)
    return result


class RotatingLog:
    """``<stem><pid>_<ts>.log`` files in one directory, rotated at ``max_bytes``."""

    def __init__(self, directory: Path, stem: str, max_bytes: int, max_files: int) -> None:
        self.directory = directory
        self.stem = stem
        self.max_bytes = max_bytes
        self.max_files = max_files
        self.created: List[Path] = []
        self.removed: List[Path] = []
        self.bytes_written = 0
        self.lines_written = 0
        self._fh = None
        self._size = 0
        self._buf: List[str] = []
        self._buf_bytes = 0

    def write(self, text: str, ts_us: int) -> None:
        """Append one line (ASCII, newline included) written at ``ts_us``."""
        n = len(text)
        if self._fh is None or self._size + n > self.max_bytes:
            self._open(ts_us)
        self._buf.append(text)
        self._buf_bytes += n
        self._size += n
        self.bytes_written += n
        self.lines_written += 1
        if self._buf_bytes >= _FLUSH_BYTES:
            self._flush()

    def _open(self, ts_us: int) -> None:
        if self._fh is not None:
            self._flush()
            self._fh.close()
        self.directory.mkdir(parents=True, exist_ok=True)
        name = self.stem + file_ts(ts_us) + ".log"
        path = self.directory / name
        bump = ts_us
        while path.exists() or path in self.created:
            bump += 1000  # two files in one millisecond: the next name is a millisecond later
            path = self.directory / (self.stem + file_ts(bump) + ".log")
        self._fh = open(path, "w", encoding="ascii", newline="\n")
        self._size = 0
        self.created.append(path)
        while len(self.created) - len(self.removed) > self.max_files:
            oldest = self.created[len(self.removed)]
            try:
                oldest.unlink()
            except FileNotFoundError:
                pass
            self.removed.append(oldest)

    def _flush(self) -> None:
        if self._buf and self._fh is not None:
            self._fh.write("".join(self._buf))
        self._buf = []
        self._buf_bytes = 0

    def close(self) -> None:
        if self._fh is not None:
            self._flush()
            self._fh.close()
            self._fh = None

    @property
    def paths(self) -> List[Path]:
        return [p for p in self.created if p not in self.removed]


class ProcessLog:
    """Every log file one host process writes: debug and run plogs and device logs.

    ``debug()`` honours the log level settings (default: ERROR and EVENT only);
    ``run()`` is the run log, always written at its fixed INFO level. The caller
    supplies the time of each line, so output is deterministic.
    """

    def __init__(self, root: Path, pid: int, pname: str,
                 settings: Optional[LogSettings] = None) -> None:
        self.root = Path(root)
        self.pid = pid
        self.pname = pname
        self.settings = settings or LogSettings()
        self._logs: Dict[Tuple[str, str], RotatingLog] = {}
        self._ts = PlogTimestamper()
        self.last_ts = 0

    def _log(self, kind: str, subdir: str, stem: str) -> RotatingLog:
        key = (kind, subdir)
        log = self._logs.get(key)
        if log is None:
            log = RotatingLog(self.root / kind / subdir, stem, self.settings.file_max_bytes,
                              self.settings.file_num)
            self._logs[key] = log
        return log

    def debug(self, level: str, module: str, src: str, body: str, ts_us: int,
              tight: bool = False) -> bool:
        """A line for ``debug/plog``; returns whether the level let it through."""
        if not self.settings.debug_enabled(level, module):
            return False
        self._write("debug", "plog", "plog-%d_" % self.pid, level, module, self.pid,
                    self.pname, src, body, ts_us, tight)
        return True

    def run(self, level: str, module: str, src: str, body: str, ts_us: int,
            tight: bool = False) -> None:
        """A line for ``run/plog``."""
        self._write("run", "plog", "plog-%d_" % self.pid, level, module, self.pid,
                    self.pname, src, body, ts_us, tight)

    def device(self, kind: str, device_id: int, level: str, module: str, dev_pid: int,
               dev_pname: str, src: str, body: str, ts_us: int) -> None:
        """A device-side line uploaded to ``<kind>/device-<id>/device-<host pid>_<ts>.log``."""
        if kind == "debug" and not self.settings.debug_enabled(level, module):
            return
        self._write(kind, "device-%d" % device_id, "device-%d_" % self.pid, level, module,
                    dev_pid, dev_pname, src, body, ts_us, False)

    def sink(self, kind: str) -> "RotatingLog":
        """The rotating plog file of ``kind`` (debug | run): for writers that format lines
        themselves (bulk noise) and already applied the level filter."""
        return self._log(kind, "plog", "plog-%d_" % self.pid)

    @property
    def stamper(self) -> PlogTimestamper:
        return self._ts

    def _write(self, kind: str, subdir: str, stem: str, level: str, module: str, pid: int,
               pname: str, src: str, body: str, ts_us: int, tight: bool) -> None:
        fmt = L.format_line_tight if tight else L.format_line
        text = fmt(level, module, pid, pname, self._ts(ts_us), src, body)
        self._log(kind, subdir, stem).write(text, ts_us)
        if ts_us > self.last_ts:
            self.last_ts = ts_us

    def close(self) -> None:
        for log in self._logs.values():
            log.close()

    @property
    def paths(self) -> List[Path]:
        """Files that exist after writing (rotated-away files excluded), sorted."""
        out: List[Path] = []
        for log in self._logs.values():
            out.extend(log.paths)
        return sorted(out)

    @property
    def bytes_written(self) -> int:
        return sum(log.bytes_written for log in self._logs.values())

    @property
    def lines_written(self) -> int:
        return sum(log.lines_written for log in self._logs.values())

    def __enter__(self) -> "ProcessLog":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
