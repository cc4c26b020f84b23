"""The triage engine's own reading of an error line: role, fallback category, weight.

Loaded from ``data/signals.yaml`` on first use. The knowledge base says what a failure
is and how to fix it; signals say how it behaves in a failing job (a root cause, a
symptom of waiting for another rank, or a wrapper that points elsewhere), which is what
ranking and the cross-rank analysis need.

Two optional fields shape incidents: ``headline`` (a title template filled from the
event, e.g. ``{op} runs on the CPU``) and, for context lines, ``attach`` (a note added
to an incident of the named categories in the same process, e.g. how often torch_npu's
allocator flushed its cache before an out-of-memory error).

When both answer, the KB entry's category wins in triage, so a signal's category must
agree with the KB entry its own examples match (tests/triage/test_signals_agree_with_kb.py);
``kb_refines`` lists KB entries allowed to differ because they name a narrower failure.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, FrozenSet, Iterable, List, Optional, Pattern

from ..model import CATEGORIES

# advisory: not a failure (the job went on) but worth acting on, e.g. an operator running on the CPU;
# reported after every failure of the same input, and the finding only when nothing failed
ROLES = ("root", "symptom", "wrapper", "advisory", "context")
ROLE_ORDER = {"root": 0, "symptom": 1, "wrapper": 2, "advisory": 3, "context": 4}
_DATA = Path(__file__).with_name("data") / "signals.yaml"


@dataclass(frozen=True)
class Signal:
    id: str
    role: str
    category: str
    weight: int
    title: str
    patterns: List[Pattern[str]]
    codes: FrozenSet[str]
    fix_text: str
    fix_commands: List[str]
    examples: List[Dict[str, str]] = field(default_factory=list)
    headline: str = ""  # incident title template: {op}
    attach_categories: FrozenSet[str] = frozenset()
    attach_note: str = ""  # template: {count}, {first}, {last}
    kb_refines: FrozenSet[str] = frozenset()  # KB entries whose other category is a deliberate refinement

    def matches(self, text: str, codes: Iterable[str]) -> bool:
        if self.codes and not self.codes.isdisjoint(codes):
            return True
        return any(p.search(text) for p in self.patterns)


UNKNOWN = Signal("unrecognised_error", "root", "other", 20, "Unrecognised error", [], frozenset(),
                 "Read the lines shown and the plog of the same process around that time.", [])

_cache: List[List[Signal]] = []


class SignalDataError(ValueError):
    pass


def load_signals(path: Optional[Path] = None) -> List[Signal]:
    """Signals from the YAML file, validated (bad roles, categories or regexes raise)."""
    if path is None and _cache:
        return _cache[0]
    import yaml  # lazy: only triage needs it

    raw = yaml.safe_load((path or _DATA).read_text(encoding="utf-8"))
    out: List[Signal] = []
    seen = set()
    for item in raw.get("signals", []):
        sid = item["id"]
        if sid in seen:
            raise SignalDataError(f"duplicate signal {sid}")
        seen.add(sid)
        if item["role"] not in ROLES:
            raise SignalDataError(f"{sid}: unknown role {item['role']}")
        if item["category"] not in CATEGORIES:
            raise SignalDataError(f"{sid}: unknown category {item['category']}")
        try:
            patterns = [re.compile(p) for p in item.get("patterns", [])]
        except re.error as exc:
            raise SignalDataError(f"{sid}: bad pattern: {exc}") from None
        fix = item.get("fix") or {}
        attach = item.get("attach") or {}
        bad = [c for c in attach.get("categories", []) if c not in CATEGORIES]
        if bad:
            raise SignalDataError(f"{sid}: unknown attach category {bad[0]}")
        if attach and item["role"] != "context":
            raise SignalDataError(f"{sid}: only context signals attach notes to incidents")
        refines = item.get("kb_refines") or []
        if not isinstance(refines, list) or not all(isinstance(r, str) and r for r in refines):
            raise SignalDataError(f"{sid}: kb_refines must be a list of KB entry ids")
        out.append(Signal(
            id=sid, role=item["role"], category=item["category"], weight=int(item["weight"]), title=item["title"],
            patterns=patterns, codes=frozenset(str(c) for c in item.get("codes", [])),
            fix_text=fix.get("text", ""), fix_commands=list(fix.get("commands", [])),
            examples=list(item.get("examples", [])), headline=item.get("headline", ""),
            attach_categories=frozenset(attach.get("categories", [])), attach_note=attach.get("note", ""),
            kb_refines=frozenset(refines),
        ))
    out.sort(key=lambda s: -s.weight)
    if path is None:
        _cache.append(out)
    return out


def classify(text: str, codes: Iterable[str], signals: Optional[List[Signal]] = None) -> Signal:
    """The heaviest signal that matches ``text`` / ``codes``, or UNKNOWN."""
    code_set = frozenset(codes)
    for sig in signals if signals is not None else load_signals():
        if sig.matches(text, code_set):
            return sig
    return UNKNOWN


def signal_by_id(sid: str) -> Optional[Signal]:
    for sig in load_signals():
        if sig.id == sid:
            return sig
    return None
