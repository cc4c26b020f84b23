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
from typing import Dict, List, Optional
from ..inputs import int_or_none as num

_CLUSTER = re.compile(
    r"Cluster Exception Location\[IP/ID\]:\[(?P<ip>[^/\]]*)/(?P<id>[^\]]*)\]"
    r"(?:.*?Discoverer:\[(?P<disc>[^\]]*)\])?(?:.*?ExceptionType:\[(?P<type>[^\]]*)\])?"
)
_CRIMER = re.compile(
    r"local rank \[(?P<local>[^\]]*)\]: crimer rank \[(?P<crimer>[^\]]*)\] status\[(?P<status>[^\]]*)\]"
    r"(?: by informer rank \[(?P<informer>[^\]]*)\])?"
)
_DETECT_PAIR = re.compile(
    r"srcRank \(server (?P<ss>[^,]+), device ID (?P<sd>\d+)\) fails to connect to dstRank \(server (?P<ds>[^,]+), device ID (?P<dd>\d+)\)"
)
_DETECT_HEAD = re.compile(r"CONNECT TIMEOUT DETECT RESULT|DETECT EVENT LIST")
_NO_ABNORMAL = re.compile(r"No abnormal periods were discovered")
_AGENTS = re.compile(r"Failed to connect agent\[(?P<ranks>[\d,\s]+)\]")
_REMOTE = re.compile(r"remote rank:\s?\[(?P<r>[^\]]+)\]")
_TRANSPORT = re.compile(r"createLink para:\s?rank\[(?P<local>\d+)\].*?(?:remoteRank|dst_rank)\[(?P<remote>\d+)\]")
_TAG = re.compile(r"tag\[(?P<tag>[^\]]*)\]")
_GROUP_RANK = re.compile(r"rankSize\[(?P<size>\d+)\],\s*rankId\[(?P<rank>\d+)")
_OPDATA = re.compile(r"opData information is .*?deviceId\[(?P<dev>\d+)\], index\[(?P<index>\d+)\], count\[(?P<count>\d+)\](?:.*?dataType\[(?P<dtype>\w+)\])?")
_LOCAL_RANK = re.compile(r"\[LocalRank Key Info\]userRank\[(?P<rank>\d+)\](?:.*?hostIp\[(?P<ip>[^\]]*)\])?(?:.*?devicePhyId\[(?P<dev>\d+)\])?")
_INIT_ROOT = re.compile(r"Entry-HcclCommInitRootInfo\w*:\s?ranks\[(?P<n>\d+)\], rank\[(?P<rank>\d+)\](?:.*?identifier\[(?P<group>[^\]]*)\])?(?:.*?deviceLogicId\[(?P<dev>\d+)\])?")
_TIMEOUT_ENV = re.compile(r"(?P<name>HCCL_EXEC_TIMEOUT|HCCL_CONNECT_TIMEOUT) set by (?:default|\w+)(?: to)? \[(?P<sec>\d+)\]\s?s")
_TASK_FAILED = re.compile(r"Task run failed")


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


def parse_hccl_line(text: str) -> Optional[HcclRecord]:
    """The HCCL record in one line, or None. Cheap substring tests gate every regex."""
    if "Cluster Exception Location" in text:
        m = _CLUSTER.search(text)
        if m:
            return HcclRecord("cluster_exception", text.strip(), peer=f"{m.group('ip')}/{m.group('id')}",
                              device=_int(m.group("id")), status=m.group("type"),
                              info={"ip": m.group("ip"), "discoverer": m.group("disc") or ""})
    if "crimer rank" in text:
        m = _CRIMER.search(text)
        if m:
            return HcclRecord("crimer", text.strip(), rank=_ident_rank(m.group("crimer")), peer=m.group("crimer"),
                              status=m.group("status"), info={"informer": m.group("informer") or "", "local": m.group("local")})
    if "fails to connect to dstRank" in text:
        m = _DETECT_PAIR.search(text)
        if m:
            return HcclRecord("detect_pair", text.strip(), peer=f"{m.group('ds')}/{m.group('dd')}", device=num(m.group("dd")),
                              info={"src": f"{m.group('ss')}/{m.group('sd')}", "dst": f"{m.group('ds')}/{m.group('dd')}"})
    if "No abnormal periods" in text and _NO_ABNORMAL.search(text):
        return HcclRecord("detect_none", text.strip())
    if "DETECT" in text and _DETECT_HEAD.search(text):
        return HcclRecord("detect_none" if "No abnormal" in text else "detect_head", text.strip())
    if "Failed to connect agent" in text:
        m = _AGENTS.search(text)
        if m:
            ranks = [int(x) for x in re.findall(r"\d+", m.group("ranks"))]
            return HcclRecord("agents_missing", text.strip(), ranks=ranks)
    if "LocalRank Key Info" in text:
        m = _LOCAL_RANK.search(text)
        if m:
            return HcclRecord("rank_map", text.strip(), rank=num(m.group("rank")), device=_int(m.group("dev")),
                              info={"ip": m.group("ip") or "", "device_kind": "phy"})
    if "Entry-HcclCommInitRootInfo" in text:
        m = _INIT_ROOT.search(text)
        if m:
            return HcclRecord("rank_map", text.strip(), rank=num(m.group("rank")), device=_int(m.group("dev")),
                              rank_size=num(m.group("n")), info={"group": m.group("group") or "", "device_kind": "logic"})
    if "_TIMEOUT set by" in text:
        m = _TIMEOUT_ENV.search(text)
        if m:
            return HcclRecord("timeout_env", text.strip(), seconds=num(m.group("sec")), info={"name": m.group("name")})
    if "Task run failed" in text and ("base information" in text or "groupRank" in text or "opData" in text):
        rec = HcclRecord("task_failed", text.strip())
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
    if "createLink para" in text:
        m = _TRANSPORT.search(text)
        if m:
            t = _TAG.search(text)
            return HcclRecord("transport", text.strip(), rank=num(m.group("remote")), tag=t.group("tag") if t else None,
                              info={"local": m.group("local")})
    if "remote rank" in text:
        m = _REMOTE.search(text)
        if m:
            t = _TAG.search(text)
            g = _GROUP_RANK.search(text)
            rec = HcclRecord("remote_rank", text.strip(), rank=_int(m.group("r")), peer=m.group("r"),
                             tag=t.group("tag") if t else None)
            if g:
                rec.rank_size = num(g.group("size"))
                rec.info["own_rank"] = g.group("rank")
            return rec
    return None
