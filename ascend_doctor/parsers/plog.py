"""plog lines: ``[LEVEL] MODULE(PID,PNAME):TIMESTAMP [FILE:LINE]BODY`` and their file names.

Facts from the CANN log reference (https://github.com/hicann/runtime/blob/681ef7610df13c8128982901142a2c869ddbb53e/docs/zh/log_ref/log_overview.md)
and the emitter format strings in hicann/runtime ``src/dfx/log/liblog``: the level may be a number, the module a
number, the process name empty; spaces after the level, after the timestamp and
after ``]`` of the file field vary; each module lays out its body its own way
(tid glued to ``]`` for RUNTIME/GE/ASCENDCL/FE/APP, `` [tid]`` for HCCL,
``[Func][tid:N]`` for TDT, ``>>> (tid:N)`` for PROFILING, ``[ascend][curpid:P,T]``
for DRV, ``tid:N,func(line) :`` for HCCP, ``func(line) :`` for ROCE). Relaying tools
put text in front of a line, so the anchor is searched anywhere in it.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import List, Optional, Tuple

from ..inputs import int_or_none as num
from ..lazyre import lazy

LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR", "EVENT", "TRACE", "NULL")

_LINE = lazy(
    r"\[(?P<level>DEBUG|INFO|WARNING|ERROR|EVENT|TRACE|NULL|\d+)\]\s?"
    r"(?P<module>[A-Z][A-Z0-9_]*|\d+)\((?P<pid>\d+),(?P<pname>[^),]*)\):"
    r"(?P<ts>\d{4}-\d\d-\d\d-\d\d:\d\d:\d\d\.\d{3}\.\d{3})\s?"
    r"(?:\[(?P<file>[^\]\s:]+):\s?(?P<line>\d+)\])?"
    r"(?P<body>.*)$"
)
# old HCCL TRACE lines put ``[status:stop] `` before the file field
_STATUS_FILE = lazy(r"\s*\[status:\w+\]\s*\[(?P<file>[^\]\s:]+):\s?(?P<line>\d+)\](?P<body>.*)$")

_TID_FUNC = lazy(r"\s?(?P<tid>\d+)\s(?P<func>~?[A-Za-z_][\w:~]*):\s?")
_HCCL_TID = lazy(r"\s?\[(?P<tid>\d+)\]")
_HCCL_OLD = lazy(r"\[hccl-(?P<pid>\d+)-\d+-\d+-(?P<group>[^\]]*)\]\[(?P<rank>\d+)\]")
_TDT = lazy(r"\[(?P<func>\w+)\]\[tid:(?P<tid>\d+)\]\s?")
_PROF = lazy(r"\s?(?:>>> )?\(tid:(?P<tid>\d+)\)\s?")
_DRV = lazy(r"\[ascend\]\[curpid:\s?(?P<pid>\d+),\s?(?P<tid>\d+)\](?:\[drv\])?(?:\[(?P<sub>[\w ]+)\])?(?:\[(?P<func>[\w ]+)\])?")
_HCCP = lazy(r"tid:(?P<tid>\d+),(?P<func>\w+)\(\d+\)\s?:\s?")
_ROCE = lazy(r"(?P<func>\w+)\(\d+\)\s?:\s?")
_TAGS = lazy(r"((?:\[[A-Za-z][\w| ]*\])+)")

# plog-<pid>_<YYYYMMDDhhmmssmmm>.log and device-<pid>_<...>.log (RT plog_file_mgr.c)
_FILE_NAME = lazy(r"^(?P<kind>plog|device|device-app)-(?P<pid>\d+)_(?P<ts>\d{14,17})\.log(?:\.gz)?$")
_DEVICE_DIR = lazy(r"^device-(?P<dev>\d+)$")


@dataclass
class PlogLine:
    level: str
    module: str
    pid: int
    pname: str
    ts: str  # YYYY-MM-DD-hh:mm:ss.mmm.uuu; sorts as text
    file: Optional[str]
    line: Optional[int]
    body: str
    tid: Optional[int] = None
    func: Optional[str] = None
    message: str = ""  # body without tid/function decoration
    tags: List[str] = field(default_factory=list)  # [INIT][DEFAULT], [TaskExecStage][Timeout], ...
    hccl_rank: Optional[int] = None  # old HCCL bodies carry [hccl-pid-0-ts-group][rank]
    prefix_end: int = 0  # where the plog anchor started in the raw line

    @property
    def is_error(self) -> bool:
        return self.level == "ERROR"

    def epoch(self) -> Optional[float]:
        return ts_to_epoch(self.ts)


def parse_plog_line(text: str) -> Optional[PlogLine]:
    """Parse one plog line (anchor searched anywhere in ``text``); None when it is not one."""
    start = text.find("[")
    if start < 0:
        return None
    m = _LINE.search(text, start)
    if m is None:
        return None
    file_, line_no, body = m.group("file"), m.group("line"), m.group("body")
    if file_ is None:
        s = _STATUS_FILE.match(body)
        if s:
            file_, line_no, body = s.group("file"), s.group("line"), s.group("body")
    pid = num(m.group("pid"))
    if pid is None:  # a pid of more digits than any system has: not a plog line
        return None
    rec = PlogLine(
        level=m.group("level"),
        module=m.group("module"),
        pid=pid,
        pname=m.group("pname"),
        ts=m.group("ts"),
        file=file_,
        line=num(line_no) if line_no else None,
        body=body,
        prefix_end=m.start(),
    )
    _split_body(rec)
    return rec


def _split_body(rec: PlogLine) -> None:
    body = rec.body
    module = rec.module
    rest = body
    if module == "HCCL":
        m = _HCCL_TID.match(body)
        if m:
            rec.tid = num(m.group("tid"))
            rest = body[m.end():]
        else:
            m = _HCCL_OLD.search(body)
            if m:
                rec.hccl_rank = num(m.group("rank"))
                rest = body[m.end():]
    elif module == "TDT":
        m = _TDT.match(body)
        if m:
            rec.tid, rec.func = num(m.group("tid")), m.group("func")
            rest = body[m.end():]
    elif module == "PROFILING":
        m = _PROF.match(body)
        if m:
            rec.tid = num(m.group("tid"))
            rest = body[m.end():]
    elif module == "DRV":
        m = _DRV.search(body)
        if m:
            rec.tid, rec.func = num(m.group("tid")), m.group("func")
            rest = body[m.end():]
    elif module == "HCCP":
        m = _HCCP.match(body)
        if m:
            rec.tid, rec.func = num(m.group("tid")), m.group("func")
            rest = body[m.end():]
    elif module == "ROCE":
        m = _ROCE.match(body)
        if m:
            rec.func = m.group("func")
            rest = body[m.end():]
    else:
        m = _TID_FUNC.match(body)
        if m:
            rec.tid, rec.func = num(m.group("tid")), m.group("func")
            rest = body[m.end():]
    rest = rest.lstrip()
    t = _TAGS.match(rest)
    if t:
        rec.tags = re.findall(r"\[([^\]]+)\]", t.group(1))
        rest = rest[t.end():]
    rec.message = rest.strip()


def ts_to_epoch(ts: Optional[str]) -> Optional[float]:
    """Seconds since the epoch for a plog timestamp (local time taken as given)."""
    if not ts:
        return None
    from datetime import datetime  # here, not at start-up: a one-line question rarely has a plog time

    try:
        base = datetime.strptime(ts[:19], "%Y-%m-%d-%H:%M:%S")
    except ValueError:
        return None
    frac = 0.0
    if len(ts) >= 27:
        try:
            frac = int(ts[20:23]) / 1e3 + int(ts[24:27]) / 1e6
        except ValueError:
            frac = 0.0
    return (base - datetime(1970, 1, 1)).total_seconds() + frac


@dataclass(frozen=True)
class PlogFileName:
    kind: str  # plog | device | device-app
    pid: int  # the host business process (also for device logs)
    created: str  # YYYYMMDDhhmmssmmm


def parse_plog_file_name(name: str) -> Optional[PlogFileName]:
    m = _FILE_NAME.match(name)
    if not m:
        return None
    pid = num(m.group("pid"))
    return PlogFileName(kind=m.group("kind"), pid=pid, created=m.group("ts")) if pid is not None else None


def device_of_dir(name: str) -> Optional[int]:
    """``device-3`` -> 3 (the directory that holds one device's logs)."""
    m = _DEVICE_DIR.match(name)
    return num(m.group("dev")) if m else None


def log_class_of_path(parts: Tuple[str, ...]) -> Optional[str]:
    """``debug``, ``run`` or ``security`` when a path runs through such a plog directory."""
    for i, part in enumerate(parts[:-1]):
        if part in ("debug", "run", "security") and i + 1 < len(parts):
            nxt = parts[i + 1]
            if nxt == "plog" or nxt.startswith("device-"):
                return part
    return None
