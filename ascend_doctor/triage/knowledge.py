"""What an event means: the knowledge base's entry when it has one, else our signals.

The knowledge base (``ascend_doctor.kb``) names the failure, its category, its fix and
its causal edges; the signals (``data/signals.yaml``) add how the failure behaves in a
job (root cause, waiting symptom, wrapper). Results are cached per event signature, so
an error repeated a million times is looked up once.

The ``advisory`` role comes from the signals even when the KB names the entry: a
warning the job survived (a CPU fallback) stays behind every failure whatever the
entry's role. A line the KB calls harmless (``noise``) and no signal claims is context.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Tuple

from ..parsers.oom_text import classify as classify_oom
from .events import Event
from .signals import Signal, UNKNOWN, classify, load_signals

_KB_ROLE = {"cause": "root", "symptom": "symptom", "wrapper": "wrapper", "noise": "context"}
_ROLE_WEIGHT = {"root": 60, "symptom": 55, "wrapper": 10, "advisory": 5, "context": 0}
_SIGNAL_ROLES = ("advisory",)  # how the line behaves in a job beats the KB entry's role
_MIN_KB_SCORE = 0.0


@dataclass
class Verdict:
    role: str
    category: str
    weight: int
    title: str
    cause: str
    fix_text: str
    fix_commands: List[str]
    signal: Signal
    kb_id: Optional[str] = None
    causes: Tuple[str, ...] = ()
    caused_by: Tuple[str, ...] = ()
    captures: Dict[str, str] = field(default_factory=dict)
    checks: Tuple[str, ...] = ()


class Knowledge:
    """Resolves events to verdicts; works without a knowledge base (signals only)."""

    def __init__(self, kb: Any = None, use_kb: bool = True) -> None:
        self.signals = load_signals()
        self.kb = kb if kb is not None else (_load_kb() if use_kb else None)
        self._cache: Dict[str, Verdict] = {}

    def resolve(self, ev: Event) -> Verdict:
        key = ev.signature() + "|" + ",".join(ev.code_values)
        hit = self._cache.get(key)
        if hit is None:
            hit = self._resolve(ev)
            if len(self._cache) < 50000:
                self._cache[key] = hit
        if ev.oom is not None and hit.category in ("oom_capacity", "oom_fragmentation"):
            cat = classify_oom(ev.oom)
            if cat != hit.category:
                hit = Verdict(**{**hit.__dict__, "category": cat})
        return hit

    def _resolve(self, ev: Event) -> Verdict:
        text = ev.match_text
        sig = classify(text, ev.code_values, self.signals)
        best = noise = None
        if self.kb is not None:
            from ..kb.codes import kb_key  # here, not at the top: triage also runs without the KB

            codes = [k for k in (kb_key(c) for c in ev.codes) if k]
            try:
                matches = self.kb.match(text, codes=codes, module=ev.module)
            except Exception:  # a KB bug must not stop triage; the signals still answer
                matches = []
            for m in matches:
                if m.score <= _MIN_KB_SCORE:
                    continue
                if getattr(m.entry, "role", "cause") != "noise":
                    best = m
                    break
                noise = noise or m
        if best is None and noise is not None and sig is UNKNOWN:
            entry = noise.entry
            return Verdict(role="context", category=entry.category, weight=0, title=entry.title, cause=entry.cause or entry.title,
                           fix_text=sig.fix_text, fix_commands=[], signal=sig, kb_id=entry.id)
        if best is None:
            return Verdict(role=sig.role, category=sig.category, weight=sig.weight, title=sig.title,
                           cause=sig.title, fix_text=sig.fix_text, fix_commands=list(sig.fix_commands), signal=sig)
        entry = best.entry
        role = _KB_ROLE.get(getattr(entry, "role", "cause"), "root")
        if sig.role in _SIGNAL_ROLES:
            role = sig.role
        weight = sig.weight if (sig is not UNKNOWN and sig.role == role) else _ROLE_WEIGHT[role]
        if role == "root" and sig is not UNKNOWN and sig.role == "root":
            weight = max(weight, sig.weight)
        fix = entry.fix
        return Verdict(
            role=role, category=entry.category, weight=weight + int(getattr(entry, "priority", 0) or 0),
            title=entry.title, cause=entry.cause or entry.title,
            fix_text=fix.text if fix else sig.fix_text,
            fix_commands=list(fix.commands) if fix and fix.commands else list(sig.fix_commands),
            signal=sig, kb_id=entry.id, causes=tuple(entry.causes), caused_by=tuple(entry.caused_by),
            captures=dict(best.captures), checks=tuple(getattr(entry, "checks", ()) or ()),
        )

    def explains(self, cause_id: Optional[str], effect_id: Optional[str]) -> bool:
        """True when the KB has a causal path from one entry to the other."""
        if self.kb is None or not cause_id or not effect_id or cause_id == effect_id:
            return False
        try:
            return bool(self.kb.explains(cause_id, effect_id))
        except Exception:
            return False


def _load_kb() -> Any:
    try:
        from .. import kb
    except ImportError:
        return None
    try:
        return kb.load()
    except Exception:  # no data yet, or bad data: triage still works on its signals
        return None
