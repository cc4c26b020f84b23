"""Verdicts and the records a query returns (the JSON shape of `ascend-doctor compat`)."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional

COMPATIBLE = "compatible"
NOT_RECOMMENDED = "not_recommended"
UNKNOWN = "unknown"
INCOMPATIBLE = "incompatible"
VERDICTS = (COMPATIBLE, NOT_RECOMMENDED, UNKNOWN, INCOMPATIBLE)

# Worst first: the overall verdict is the worst pair's.
_SEVERITY = {COMPATIBLE: 0, UNKNOWN: 1, NOT_RECOMMENDED: 2, INCOMPATIBLE: 3}

# The components a stack is made of, in the order they are installed.
COMPONENTS = ("chip", "firmware", "driver", "cann", "python", "torch", "torch_npu")
LABELS = {"chip": "chip", "driver": "driver", "firmware": "firmware", "cann": "CANN",
          "torch": "torch", "torch_npu": "torch_npu", "python": "Python"}


def worst(verdicts: List[str]) -> str:
    """The overall verdict of several pair verdicts; no pair at all is `unknown`."""
    if not verdicts:
        return UNKNOWN
    return max(verdicts, key=lambda v: _SEVERITY[v])


@dataclass
class Pair:
    """The verdict for two components of a stack, with its evidence."""

    a: str
    b: str
    verdict: str
    found: str
    required: Optional[str]
    source: Optional[str]  # URL of the row the verdict rests on (a permalink when read at a commit)
    reason: str
    source_id: Optional[str] = None
    source_commit: Optional[str] = None  # the commit the source was read at, also inside ``source``

    def __post_init__(self) -> None:
        if self.verdict not in VERDICTS:
            raise ValueError("bad verdict %r" % self.verdict)

    def to_json(self) -> Dict[str, Any]:
        return {"a": self.a, "b": self.b, "verdict": self.verdict, "found": self.found,
                "required": self.required, "source": self.source, "reason": self.reason,
                "source_id": self.source_id, "source_commit": self.source_commit}


@dataclass
class Report:
    """Result of ``query.evaluate``: one Pair per pair of components the data can speak to."""

    stack: Dict[str, str]
    pairs: List[Pair] = field(default_factory=list)
    notes: List[str] = field(default_factory=list)

    @property
    def verdict(self) -> str:
        if not self.pairs:
            return UNKNOWN
        return worst([p.verdict for p in self.pairs])

    @property
    def exit_code(self) -> int:
        """0 when compatible, 1 otherwise."""
        return 0 if self.verdict == COMPATIBLE else 1

    def pair(self, a: str, b: str) -> Optional[Pair]:
        for p in self.pairs:
            if {p.a, p.b} == {a, b}:
                return p
        return None

    def to_json(self) -> Dict[str, Any]:
        return {"schema": 1, "stack": dict(self.stack),
                "pairs": [p.to_json() for p in self.pairs], "verdict": self.verdict,
                "notes": list(self.notes)}
