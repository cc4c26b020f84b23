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

What a paste goes through before it reaches us is peeled too: a markdown quote (``> ``),
``cat -n`` line numbers, Kubernetes' CRI log prefix (``<RFC 3339 time> stderr F ``),
vLLM-Omni's ``[Stage-1] ``, and terminal colour codes, whole (``ESC[1;36m``) or with the
escape character lost on the way to an issue page (``36m(EngineCore_DP0 pid=820)0m ``).
``unwrap`` undoes the encodings a line can arrive in: a Docker ``json-file`` record
(``{"log":"...","stream":"stderr",...}``) and HTML character references.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Optional, Tuple

from ..inputs import int_or_none as num
from ..lazyre import lazy

# (Worker pid=1) / (VllmWorker TP1 pid=961) / (ActorHybridWorker pid=1341, ip=172.16.6.36), with the
# colour codes around it when their escape character was lost: 36m(EngineCore_DP0 pid=820)0m
_WORKER = lazy(r"(?:\[?\d{1,2}(?:;\d{1,2})*m)?\((?P<name>[^()]{0,80}?)\s*pid=(?P<pid>\d+)(?:,\s*ip=[^)]*)?\)(?:\[?\d{1,2}(?:;\d{1,2})*m)?\s?")
_STAGE = lazy(r"\[Stage-\d+\] ")
_QUOTE = lazy(r"> ?")
# cat -n: the number right-aligned in six columns, then a tab
_CAT_N = lazy(r" {0,6}\d{1,7}\t")
# Kubernetes' CRI log files (/var/log/pods): time, stream, F(ull) or P(artial) line; kubectl logs
# --timestamps puts the time alone
_CRI = lazy(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?(?:Z|[+-]\d\d:\d\d) (?:(?:stdout|stderr) [FP] )?")
_ANSI = lazy(r"\x1b\[[0-9;?]*[A-Za-z]")
_ENTITY = lazy(r"&(?:#(\d{1,7})|#[xX]([0-9a-fA-F]{1,6})|(quot|amp|lt|gt|apos|nbsp));")
_NAMED = {"quot": '"', "amp": "&", "lt": "<", "gt": ">", "apos": "'", "nbsp": " "}
_MAX_JSON_LINE = 1 << 20
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


def _entity(m: Any) -> str:
    dec, hexa, name = m.groups()
    if name:
        return _NAMED[name]
    code = int(dec) if dec else int(hexa, 16)
    return chr(code) if 0 < code < 0x110000 and not 0xD800 <= code < 0xE000 else m.group(0)


def unwrap(line: str) -> str:
    """The text a line carries when it arrives encoded: a Docker json-file record's ``log``
    field, HTML character references decoded, terminal colour codes removed."""
    if line.startswith('{"log":') and len(line) < _MAX_JSON_LINE:
        try:
            record = json.loads(line)
        except ValueError:
            record = None
        if isinstance(record, dict) and isinstance(record.get("log"), str):
            line = record["log"].rstrip("\r\n")
    if "&" in line and ";" in line:
        line = _ENTITY.sub(_entity, line)
    if "\x1b" in line:
        line = _ANSI.sub("", line)
    return line


def strip_prefixes(line: str) -> Tuple[str, Prefix]:
    """The line without wrapper prefixes, and what they said (pid, rank, relayed file)."""
    if not line:
        return line, EMPTY
    text = line
    m = _CAT_N.match(text) if text[0] in " 0123456789" else None
    if m:
        text = text[m.end():]
    while text[:1] == ">" and not text.startswith(">>>"):  # a quote (not Python's prompt)
        text = text[_QUOTE.match(text).end():]  # type: ignore[union-attr]
    if not text or text[0] in " \t":
        return (line, EMPTY) if text is line else (text, EMPTY)
    worker = pid = rank = relayed = level = None
    for _ in range(_MAX_DEPTH):
        m = _CRI.match(text)
        if m:
            text = text[m.end():]
            continue
        m = _STAGE.match(text)
        if m:
            text = text[m.end():]
            continue
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
