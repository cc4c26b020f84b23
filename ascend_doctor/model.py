"""The records every verb produces: statuses, categories, findings.

These shapes are the JSON contract (README.md, "Machine output"); add fields, never rename them.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from typing import Any, Dict, List, Optional

SCHEMA = 1

# The fault taxonomy shared by findings, incidents and KB entries (docs/triage.md, "The ten categories").
CATEGORIES = (
    "driver_init",
    "env_path",
    "version_mismatch",
    "unsupported_op",
    "oom_capacity",
    "oom_fragmentation",
    "hccl_comm",
    "device_busy_permission",
    "aicore_exec",
    "other",
)


class Status(str, Enum):
    OK = "ok"
    WARN = "warn"
    FAIL = "fail"
    SKIP = "skip"
    TIMEOUT = "timeout"
    ERROR = "error"

    @property
    def rank(self) -> int:
        """Severity order used by --fail-on. A timeout (a hung npu-smi, a stuck device) and a
        check that crashed count as failures: in both cases nothing vouches for that part."""
        return _RANK[self]


_RANK = {
    Status.OK: 0,
    Status.SKIP: 0,
    Status.WARN: 1,
    Status.TIMEOUT: 2,
    Status.ERROR: 2,
    Status.FAIL: 2,
}


@dataclass
class Evidence:
    """What was found, what is required, and where the requirement comes from."""

    found: Optional[str] = None
    required: Optional[str] = None
    source: Optional[str] = None

    def to_json(self) -> Dict[str, Optional[str]]:
        return {"found": self.found, "required": self.required, "source": self.source}


@dataclass
class Fix:
    text: str = ""
    commands: List[str] = field(default_factory=list)

    def to_json(self) -> Dict[str, Any]:
        return {"text": self.text, "commands": list(self.commands)}

    def __bool__(self) -> bool:
        return bool(self.text or self.commands)


@dataclass
class Finding:
    id: str
    title: str
    group: str
    status: Status
    summary: str
    category: Optional[str] = None
    evidence: Evidence = field(default_factory=Evidence)
    fix: Fix = field(default_factory=Fix)
    kb: Optional[str] = None
    duration_ms: float = 0.0
    details: List[str] = field(default_factory=list)  # extra lines shown with -v
    data: Dict[str, Any] = field(default_factory=dict)  # structured facts (e.g. parsed devices)

    def __post_init__(self) -> None:
        if self.category is not None and self.category not in CATEGORIES:
            raise ValueError(f"unknown category {self.category!r}")

    def to_json(self) -> Dict[str, Any]:
        out: Dict[str, Any] = {
            "id": self.id,
            "title": self.title,
            "group": self.group,
            "status": self.status.value,
            "category": self.category,
            "summary": self.summary,
            "evidence": self.evidence.to_json(),
            "fix": self.fix.to_json(),
            "kb": self.kb,
            "duration_ms": round(self.duration_ms, 1),
        }
        if self.details:
            out["details"] = list(self.details)
        if self.data:
            out["data"] = self.data
        return out
