"""HCCL lines that say which rank failed first, which rank a process is, and what it ran.

Facts from the HCCL fault-diagnosis guide (hicann/hccl ``docs/zh/user_guide/fault_diagnosis/``,
https://github.com/hicann/hccl/blob/09300b70df9a031339f08e5f2ca06d7bf294d009/docs/zh/user_guide/fault_diagnosis/debug_thinking.md):

- HCCL's own verdicts: ``Cluster Exception Location[IP/ID]:[ip/dev] ... ExceptionType:[...]``,
  run-log ``local rank [..]: crimer rank [ip/rank] status[LOST|STUCK|ERROR CQE] by informer rank [..]``,
  ``CONNECT TIMEOUT DETECT RESULT`` with ``srcRank (server S, device ID d) fails to connect
  to dstRank (...)``, ``No abnormal periods were discovered``, negotiation
  ``Failed to connect agent[1,3,5,7,]``;
- who waited for whom: ``remote rank: [24]`` / ``remote rank:[24]`` in EI0002,
  ``remoteRank[15]`` in ``Transport init error! createLink para:``;
- which op: ``Task run failed, base information is ... tag[...]``, ``groupRank information
  is group:[..], ..., rankSize[4], rankId[2]``, ``opData information ... deviceId[2], index[21], count[256]``;
- who is who: ``[LocalRank Key Info]userRank[6] hostIp[..] devicePhyId[6]``,
  ``Entry-HcclCommInitRootInfoInner:ranks[N], rank[r], ... deviceLogicId[d]``;
- timeouts in force: ``HCCL_EXEC_TIMEOUT set by default to [1836]s``.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from re import Match, Pattern
from typing import Callable, Dict, List, Optional, Tuple

from ..inputs import int_or_none as num
from ..lazyre import lazy

_CLUSTER = lazy(
    r"Cluster Exception Location\[IP/ID\]:\[(?P<ip>[^/\]]*)/(?P<id>[^\]]*)\]"
    r"(?:.*?Discoverer:\[(?P<disc>[^\]]*)\])?(?:.*?ExceptionType:\[(?P<type>[^\]]*)\])?"
)
_CRIMER = lazy(
    r"local rank \[(?P<local>[^\]]*)\]: crimer rank \[(?P<crimer>[^\]]*)\] status\[(?P<status>[^\]]*)\]"
    r"(?: by informer rank \[(?P<informer>[^\]]*)\])?"
)
_DETECT_PAIR = lazy(
    r"srcRank \(server (?P<ss>[^,]+), device ID (?P<sd>\d+)\) fails to connect to dstRank \(server (?P<ds>[^,]+), device ID (?P<dd>\d+)\)"
)
_DETECT_HEAD = lazy(r"CONNECT TIMEOUT DETECT RESULT|DETECT EVENT LIST")
_NO_ABNORMAL = lazy(r"No abnormal periods were discovered")
_AGENTS = lazy(r"Failed to connect agent\[(?P<ranks>[\d,\s]+)\]")
_REMOTE = lazy(r"remote rank:\s?\[(?P<r>[^\]]+)\]")
_TRANSPORT = lazy(r"createLink para:\s?rank\[(?P<local>\d+)\].*?(?:remoteRank|dst_rank)\[(?P<remote>\d+)\]")
_TAG = lazy(r"tag\[(?P<tag>[^\]]*)\]")
_GROUP_RANK = lazy(r"rankSize\[(?P<size>\d+)\],\s*rankId\[(?P<rank>\d+)")
_OPDATA = lazy(r"opData information is .*?deviceId\[(?P<dev>\d+)\], index\[(?P<index>\d+)\], count\[(?P<count>\d+)\](?:.*?dataType\[(?P<dtype>\w+)\])?")
_LOCAL_RANK = lazy(r"\[LocalRank Key Info\]userRank\[(?P<rank>\d+)\](?:.*?hostIp\[(?P<ip>[^\]]*)\])?(?:.*?devicePhyId\[(?P<dev>\d+)\])?")
_INIT_ROOT = lazy(r"Entry-HcclCommInitRootInfo\w*:\s?ranks\[(?P<n>\d+)\], rank\[(?P<rank>\d+)\](?:.*?identifier\[(?P<group>[^\]]*)\])?(?:.*?deviceLogicId\[(?P<dev>\d+)\])?")
_TIMEOUT_ENV = lazy(r"(?P<name>HCCL_EXEC_TIMEOUT|HCCL_CONNECT_TIMEOUT) set by (?:default|\w+)(?: to)? \[(?P<sec>\d+)\]\s?s")
_TASK_FAILED = lazy(r"Task run failed")


@dataclass
class HcclRecord:
    kind: str  # cluster_exception | crimer | detect_pair | detect_none | agents_missing | remote_rank
    #           | transport | task_failed | rank_map | timeout_env
    text: str
    rank: Optional[int] = None  # the rank the record is about (culprit, waited-for peer, or own rank)
    peer: Optional[str] = None  # ip/id style identity when no rank number is printed
    device: Optional[int] = None
    status: Optional[str] = None
    tag: Optional[str] = None
    rank_size: Optional[int] = None
    op_index: Optional[int] = None
    op_count: Optional[int] = None
    seconds: Optional[int] = None
    ranks: List[int] = field(default_factory=list)
    info: Dict[str, str] = field(default_factory=dict)

    @property
    def is_verdict(self) -> bool:
        """HCCL itself named a culprit."""
        return self.kind in ("cluster_exception", "crimer", "detect_pair", "agents_missing")


def _int(text: Optional[str]) -> Optional[int]:
    try:
        return int(text) if text is not None else None
    except ValueError:
        return None


def _ident_rank(ident: str) -> Optional[int]:
    # "127.10.0.2/2": the part after the slash is the rank (crimer) or device id (cluster location)
    tail = ident.rsplit("/", 1)[-1].strip()
    return _int(tail) if tail.isdigit() else None


def _cluster(text: str, m: Match) -> HcclRecord:
    return HcclRecord("cluster_exception", text, peer=f"{m.group('ip')}/{m.group('id')}", device=_int(m.group("id")),
                      status=m.group("type"), info={"ip": m.group("ip"), "discoverer": m.group("disc") or ""})


def _crimer(text: str, m: Match) -> HcclRecord:
    return HcclRecord("crimer", text, rank=_ident_rank(m.group("crimer")), peer=m.group("crimer"), status=m.group("status"),
                      info={"informer": m.group("informer") or "", "local": m.group("local")})


def _detect_pair(text: str, m: Match) -> HcclRecord:
    return HcclRecord("detect_pair", text, peer=f"{m.group('ds')}/{m.group('dd')}", device=num(m.group("dd")),
                      info={"src": f"{m.group('ss')}/{m.group('sd')}", "dst": f"{m.group('ds')}/{m.group('dd')}"})


def _detect_none(text: str, m: Match) -> HcclRecord:
    return HcclRecord("detect_none", text)


def _detect_head(text: str, m: Match) -> HcclRecord:
    return HcclRecord("detect_none" if "No abnormal" in text else "detect_head", text)


def _agents(text: str, m: Match) -> HcclRecord:
    return HcclRecord("agents_missing", text, ranks=[int(x) for x in re.findall(r"\d+", m.group("ranks"))])


def _local_rank(text: str, m: Match) -> HcclRecord:
    return HcclRecord("rank_map", text, rank=num(m.group("rank")), device=_int(m.group("dev")),
                      info={"ip": m.group("ip") or "", "device_kind": "phy"})


def _init_root(text: str, m: Match) -> HcclRecord:
    return HcclRecord("rank_map", text, rank=num(m.group("rank")), device=_int(m.group("dev")), rank_size=num(m.group("n")),
                      info={"group": m.group("group") or "", "device_kind": "logic"})


def _timeout_env(text: str, m: Match) -> HcclRecord:
    return HcclRecord("timeout_env", text, seconds=num(m.group("sec")), info={"name": m.group("name")})


def _task_failed(text: str, m: Match) -> HcclRecord:
    rec = HcclRecord("task_failed", text)
    t = _TAG.search(text)
    if t:
        rec.tag = t.group("tag")
    g = _GROUP_RANK.search(text)
    if g:
        rec.rank, rec.rank_size = num(g.group("rank")), num(g.group("size"))
    o = _OPDATA.search(text)
    if o:
        rec.device, rec.op_index, rec.op_count = num(o.group("dev")), num(o.group("index")), num(o.group("count"))
    return rec


def _transport(text: str, m: Match) -> HcclRecord:
    t = _TAG.search(text)
    return HcclRecord("transport", text, rank=num(m.group("remote")), tag=t.group("tag") if t else None,
                      info={"local": m.group("local")})


def _remote(text: str, m: Match) -> HcclRecord:
    t = _TAG.search(text)
    rec = HcclRecord("remote_rank", text, rank=_int(m.group("r")), peer=m.group("r"), tag=t.group("tag") if t else None)
    g = _GROUP_RANK.search(text)
    if g:
        rec.rank_size = num(g.group("size"))
        rec.info["own_rank"] = g.group("rank")
    return rec


@dataclass(frozen=True)
class LineKind:
    """One kind of HCCL line: a literal that must occur (a cheap test before the regex), optionally
    one of some further literals, the regex, and the builder of the record from the match."""

    name: str
    literal: str
    regex: Pattern
    build: Callable[[str, Match], HcclRecord]
    any_of: Tuple[str, ...] = ()


# Tried in this order; the first kind whose literals occur and whose regex matches gives the record.
LINE_KINDS: Tuple[LineKind, ...] = (
    LineKind("cluster_exception", "Cluster Exception Location", _CLUSTER, _cluster),
    LineKind("crimer", "crimer rank", _CRIMER, _crimer),
    LineKind("detect_pair", "fails to connect to dstRank", _DETECT_PAIR, _detect_pair),
    LineKind("detect_none", "No abnormal periods", _NO_ABNORMAL, _detect_none),
    LineKind("detect_head", "DETECT", _DETECT_HEAD, _detect_head),
    LineKind("agents_missing", "Failed to connect agent", _AGENTS, _agents),
    LineKind("rank_map", "LocalRank Key Info", _LOCAL_RANK, _local_rank),
    LineKind("rank_map", "Entry-HcclCommInitRootInfo", _INIT_ROOT, _init_root),
    LineKind("timeout_env", "_TIMEOUT set by", _TIMEOUT_ENV, _timeout_env),
    LineKind("task_failed", "Task run failed", _TASK_FAILED, _task_failed, ("base information", "groupRank", "opData")),
    LineKind("transport", "createLink para", _TRANSPORT, _transport),
    LineKind("remote_rank", "remote rank", _REMOTE, _remote),
)


def parse_hccl_line(text: str) -> Optional[HcclRecord]:
    """The HCCL record in one line, or None. Cheap substring tests gate every regex."""
    for kind in LINE_KINDS:
        if kind.literal in text and (not kind.any_of or any(w in text for w in kind.any_of)):
            m = kind.regex.search(text)
            if m:
                return kind.build(text.strip(), m)
    return None
