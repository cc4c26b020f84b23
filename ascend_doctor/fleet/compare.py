"""The majority stack of a fleet, what each node has that differs, and the order to fix them.

The majority of each field (driver, firmware, CANN, torch, torch_npu, Python, chip,
device count) is the value most nodes report; a node differs where its value is another
one or is missing while most nodes have one. Versions are told apart with the Ascend
version grammar (``compat_matrix.versions``), so ``25.0.RC1.1`` and ``25.0.rc1.1`` are one
version. The order to fix nodes follows what breaks jobs first: failing checks and sick or
missing devices, then driver and firmware, then CANN, then the Python stack.
"""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Tuple

from .load import NodeReport

FIELDS = ("driver", "firmware", "cann", "torch_npu", "torch", "python", "chip", "devices")
LABEL = {"driver": "driver", "firmware": "firmware", "cann": "CANN", "torch_npu": "torch_npu", "torch": "torch",
         "python": "Python", "chip": "chip", "devices": "NPUs"}
# weight of each kind of problem in the fix-first order
WEIGHT = {"failing": 1000, "unhealthy": 200, "devices": 200, "driver": 40, "firmware": 40, "cann": 30, "torch_npu": 20,
          "torch": 20, "python": 10, "chip": 5, "warning": 1}


@dataclass
class Difference:
    field: str
    value: Optional[str]
    majority: str
    majority_nodes: int

    def to_json(self) -> Dict[str, Any]:
        return {"field": self.field, "value": self.value, "majority": self.majority, "majority_nodes": self.majority_nodes}

    def text(self) -> str:
        got = self.value if self.value is not None else "not found"
        return f"{LABEL[self.field]} {got} (fleet: {self.majority} on {self.majority_nodes})"


@dataclass
class NodeVerdict:
    node: NodeReport
    differs: List[Difference] = field(default_factory=list)
    score: int = 0

    @property
    def needs_fix(self) -> bool:
        return bool(self.differs or self.node.failing or self.node.unhealthy)

    def to_json(self) -> Dict[str, Any]:
        n = self.node
        return {"node": n.name, "file": n.path, "hostname": n.hostname, "score": self.score,
                "differs": [d.to_json() for d in self.differs], "failing": n.failing, "warnings": n.warnings,
                "unhealthy": n.unhealthy, "verdict": n.verdict, "stack": n.stack, "devices": n.devices}


@dataclass
class FleetReport:
    nodes: List[NodeVerdict]
    majority: Dict[str, Tuple[str, int]]  # field -> (value, nodes)
    ties: Dict[str, List[str]] = field(default_factory=dict)  # field -> the values that share the top count

    @property
    def to_fix(self) -> List[NodeVerdict]:
        return sorted((v for v in self.nodes if v.needs_fix), key=lambda v: (-v.score, v.node.name))

    @property
    def clean(self) -> List[NodeVerdict]:
        return [v for v in self.nodes if not v.needs_fix]

    def to_json(self) -> Dict[str, Any]:
        to_fix = self.to_fix
        failing = Counter(f["id"] for v in self.nodes for f in v.node.failing)
        return {
            "nodes": len(self.nodes),
            "majority": {k: {"value": v, "nodes": c} for k, v, c in ((k, *self.majority[k]) for k in FIELDS if k in self.majority)},
            "clean": len(self.clean),
            "fix_first": [v.node.name for v in to_fix],
            "differing": [v.to_json() for v in to_fix],
            "failing_checks": dict(failing.most_common()),
            "ties": self.ties,
        }


def _key(field_name: str, value: str) -> str:
    """Values that name one version compare equal (case and spelling of RC, a 'V' prefix)."""
    if field_name in ("devices", "chip"):
        return value.lower()
    from compat_matrix.versions import try_parse_version

    comp = {"torch_npu": "torch_npu", "torch": "torch", "python": "python", "cann": "cann", "driver": "driver",
            "firmware": "firmware"}[field_name]
    parsed = try_parse_version(value, comp)
    return str(parsed) if parsed is not None else value.lower()


def _order(field_name: str, value: str) -> Tuple[int, Any]:
    if field_name == "devices" and value.isdigit():
        return (0, int(value))
    if field_name not in ("devices", "chip"):
        from compat_matrix.versions import try_parse_version

        parsed = try_parse_version(value, field_name)
        if parsed is not None:
            return (0, parsed)
    return (1, value)


def value_of(node: NodeReport, field_name: str) -> Optional[str]:
    if field_name == "devices":
        return str(node.devices) if node.devices is not None else None
    return node.stack.get(field_name)


def compare(nodes: List[NodeReport]) -> FleetReport:
    majority: Dict[str, Tuple[str, int]] = {}
    ties: Dict[str, List[str]] = {}
    keyed: Dict[str, Dict[str, str]] = {}
    for f in FIELDS:
        counts: Counter = Counter()
        shown: Dict[str, str] = {}
        for n in nodes:
            v = value_of(n, f)
            if v is None:
                continue
            k = _key(f, v)
            counts[k] += 1
            shown.setdefault(k, v)
        if not counts:
            continue
        ranked = counts.most_common()
        top, c = ranked[0]
        tied = [k for k, n in ranked if n == c]
        if len(tied) > 1:
            # no majority: the smallest version by the Ascend grammar (sort order otherwise) is
            # taken as the reference, and the tie is reported
            top = min(tied, key=lambda k: _order(f, shown[k]))
            ties[f] = [shown[k] for k in sorted(tied, key=lambda k: _order(f, shown[k]))]
        majority[f] = (shown[top], c)
        keyed[f] = {"key": top}
    verdicts = []
    for n in nodes:
        v = NodeVerdict(n)
        for f, (value, count) in majority.items():
            mine = value_of(n, f)
            if mine is None and count * 2 <= len(nodes):
                continue  # most nodes do not report it either
            if mine is None or _key(f, mine) != keyed[f]["key"]:
                v.differs.append(Difference(f, mine, value, count))
        v.score = (WEIGHT["failing"] * len(n.failing) + WEIGHT["unhealthy"] * len(n.unhealthy)
                   + sum(WEIGHT[d.field] for d in v.differs) + WEIGHT["warning"] * len(n.warnings))
        verdicts.append(v)
    return FleetReport(verdicts, majority, ties)
