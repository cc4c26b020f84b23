"""The records of the oom analysis: its inputs, the numbers with their sources, and the diagnosis."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional

from .. import __version__
from ..core.units import Size
from ..model import SCHEMA
from .advice import Plan, ReleaseInfo
from .device_usage import DeviceUsage
from .message import LogFacts
from .snapshot import SnapshotFacts
from .stats import StatsFacts


@dataclass
class Inputs:
    log: Optional[LogFacts] = None
    stats: Optional[StatsFacts] = None
    snapshot: Optional[SnapshotFacts] = None
    usage: Optional[DeviceUsage] = None  # from npu-smi
    device: Optional[int] = None
    release: Optional[ReleaseInfo] = None  # --torch-npu
    alloc_conf: Optional[str] = None  # --alloc-conf (else what the log shows)


@dataclass
class EvidenceItem:
    source: str  # message | log | stats | snapshot | npu-smi
    text: str
    file: Optional[str] = None
    line: Optional[int] = None

    def to_json(self) -> Dict[str, Any]:
        return {"source": self.source, "file": self.file, "line": self.line, "text": self.text}


@dataclass
class Diagnosis:
    verdict: str
    status: str
    title: str
    rule: str
    rule_text: str
    device: Optional[int] = None
    flavor: str = "npu"
    numbers: Dict[str, Optional[int]] = field(default_factory=dict)
    sources: Dict[str, str] = field(default_factory=dict)
    ratios: Dict[str, Optional[float]] = field(default_factory=dict)
    counts: Dict[str, Optional[int]] = field(default_factory=dict)
    evidence: List[EvidenceItem] = field(default_factory=list)
    notes: List[str] = field(default_factory=list)
    plan: Optional[Plan] = None
    kb: Optional[str] = None
    release: Optional[str] = None
    inputs: List[str] = field(default_factory=list)
    others: List[Dict[str, Any]] = field(default_factory=list)

    @property
    def category(self) -> Optional[str]:
        if self.verdict == "none":
            return None
        if self.verdict == "external":
            return "device_busy_permission"  # someone else holds the device's memory (core.oom.Decision)
        return "oom_fragmentation" if self.verdict == "oom_fragmentation" else "oom_capacity"

    @property
    def summary(self) -> str:
        return f"{self.verdict}: {self.title}"

    @property
    def is_finding(self) -> bool:
        return self.status in ("oom", "at_risk")

    def to_json(self) -> Dict[str, Any]:
        plan = self.plan
        return {
            "schema": SCHEMA,
            "tool": {"name": "ascend-doctor", "version": __version__},
            "verdict": self.verdict,
            "status": self.status,
            "category": self.category,
            "title": self.title,
            "summary": self.summary,
            "rule": {"id": self.rule, "text": self.rule_text},
            "device": self.device,
            "flavor": self.flavor,
            "numbers": dict(self.numbers),
            "number_sources": dict(self.sources),
            "ratios": dict(self.ratios),
            "counts": dict(self.counts),
            "evidence": [e.to_json() for e in self.evidence],
            "fix": {"text": plan.fix_text if plan else "", "commands": list(plan.commands) if plan else [],
                    "code": list(plan.code) if plan else []},
            "advice": [a.to_json() for a in plan.advice] if plan else [],
            "kb": self.kb,
            "torch_npu": self.release,
            "other_processes": list(self.others),
            "notes": list(self.notes),
            "inputs": list(self.inputs),
        }


class Numbers:
    """Numbers with their source; the first source to give a value keeps it."""

    def __init__(self) -> None:
        self.values: Dict[str, Optional[Size]] = {}
        self.sources: Dict[str, str] = {}

    def put(self, key: str, value: Any, source: str) -> None:
        if value is None or self.values.get(key) is not None:
            return
        self.values[key] = value if isinstance(value, Size) else Size(int(value))
        self.sources[key] = source

    def get(self, key: str) -> Optional[Size]:
        return self.values.get(key)

    def int(self, key: str) -> Optional[int]:
        v = self.values.get(key)
        return v.value if v is not None else None
