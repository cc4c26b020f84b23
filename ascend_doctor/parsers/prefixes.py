"""Framework prefixes that wrap log lines: strip them, keep what they tell.

Launchers and loggers put their own text in front of every line they relay:
Ray/vLLM workers ``(Worker_DP0_TP5_EP5 pid=17096) ``, torch elastic ``[rank1]: ``,
vLLM's logger ``ERROR 03-25 06:14:02 [multiproc_executor.py:880] ``, c10 glog
``[E1212 12:10:10.131512730 compiler_depend.ts:1675] `` (``[W compiler_depend.ts:51] `` in older
builds), docker compose
``service   | `` and ``grep -r`` ``run/plog/plog-1_2.log:``. The text behind them is
what the other parsers understand, so they are peeled off (in any order, a few deep)
while the pid, rank and relayed file are kept. Leading whitespace of the inner text
is preserved: it marks continuation lines of CANN error blocks.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional, Tuple

from ..inputs import int_or_none as num
from ..lazyre import lazy

# (Worker pid=1) / (VllmWorker TP1 pid=961) / (ActorHybridWorker pid=1341, ip=172.16.6.36)
_WORKER = lazy(r"\((?P<name>[^()]{0,80}?)\s*pid=(?P<pid>\d+)(?:,\s*ip=[^)]*)?\)\s?")
_RANK = lazy(r"\[rank(?P<rank>\d+)\]:\s?")
# vLLM / lmdeploy logger: ``ERROR 03-25 06:14:02 [multiproc_executor.py:880] `` or ``ERROR 04-18 01:55:45 engine.py:400] ``
_PYLOG = lazy(
    r"(?P<level>ERROR|WARNING|INFO|DEBUG|CRITICAL) \d\d-\d\d \d\d:\d\d:\d\d(?:\.\d+)? \[?[\w./-]+\.py:\d+\] "
)
# c10 / glog: ``[E1212 12:10:10.131512730 compiler_depend.ts:1675] `` or ``[W730 06:16:22.869118032 x.ts:526] ``;
# c10 before torch 2.2 printed no time: ``[W compiler_depend.ts:51] `` (MinerU #1695), ``[W VariableFallbackKernel.cpp:51] ``
_GLOG = lazy(r"\[[EWIF](?:\d{3,4} \d\d:\d\d:\d\d(?:\.\d+)?)? [\w./-]+:\d+\] ")
# torch_npu's Python logger: ``[285] [2025-12-12 12:10:10:644] torch.distributed: [ERROR] [479] ``
_NPU_PYLOG = lazy(r"\[(?P<pid>\d+)\] \[\d{4}-\d\d-\d\d \d\d:\d\d:\d\d[:.]\d+\] (?:[\w.]+: \[(?P<level>[A-Z]+)\] (?:\[\d+\] )?)?")
_COMPOSE = lazy(r"[\w.-]+\s+\| ")
# grep -r / grep -rn output in front of a plog line
_GREP = lazy(r"(?P<file>[^\s:\[]+\.log)(?::(?P<line>\d+))?:(?=\[(?:DEBUG|INFO|WARNING|ERROR|EVENT|TRACE)\])")

_MAX_DEPTH = 5


@dataclass(frozen=True)
class Prefix:
    """What the stripped prefixes said about where the line came from."""

    worker: Optional[str] = None
    pid: Optional[int] = None
    rank: Optional[int] = None
    relayed_file: Optional[str] = None
    level: Optional[str] = None

    def __bool__(self) -> bool:
        return any(v is not None for v in (self.worker, self.pid, self.rank, self.relayed_file, self.level))


EMPTY = Prefix()


def strip_prefixes(line: str) -> Tuple[str, Prefix]:
    """The line without wrapper prefixes, and what they said (pid, rank, relayed file)."""
    if not line or line[0] in " \t":
        return line, EMPTY
    worker = pid = rank = relayed = level = None
    text = line
    for _ in range(_MAX_DEPTH):
        m = _WORKER.match(text)
        if m:
            worker = worker or (m.group("name").strip() or None)
            pid = pid if pid is not None else num(m.group("pid"))
            text = text[m.end():]
            continue
        m = _RANK.match(text)
        if m:
            rank = rank if rank is not None else num(m.group("rank"))
            text = text[m.end():]
            continue
        m = _PYLOG.match(text)
        if m:
            level = level or m.group("level")
            text = text[m.end():]
            continue
        m = _NPU_PYLOG.match(text)
        if m:
            pid = pid if pid is not None else num(m.group("pid"))
            level = level or m.group("level")
            text = text[m.end():]
            continue
        m = _GLOG.match(text)
        if m:
            text = text[m.end():]
            continue
        m = _GREP.match(text)
        if m:
            relayed = relayed or m.group("file")
            text = text[m.end():]
            continue
        if "| " in text[:64]:
            m = _COMPOSE.match(text)
            if m:
                text = text[m.end():]
                continue
        break
    if text is line:
        return line, EMPTY
    return text, Prefix(worker=worker, pid=pid, rank=rank, relayed_file=relayed, level=level)
