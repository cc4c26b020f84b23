"""What an event means, from the one rule base (``ascend_doctor.kb``).

Every line is matched against the knowledge base: the best entry names the failure,
its category, its fix and its causal edges, and says how it behaves in a job (its
``role``: a root cause, a symptom of waiting for another rank, a wrapper that points
elsewhere, an advisory the job survived, or context) and how much it says (``weight``).
Broad entries (``kb/data/rules/classes.yaml``) catch each failure class; specific entries
refine them, and the heaviest weight among the matching entries of the winning role is
the line's weight, so a broad entry can lift a specific one it agrees with.

A line that holds an error but that no entry explains gets ``UNRECOGNISED``: category
``other``, quoted as it is, with the next step. Each verdict carries a confidence and,
when an entry of another category also matched, the runner-up.

Results are cached per event signature, so an error repeated a million times is looked
up once.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Dict, FrozenSet, List, Optional, Tuple

from .. import kb as kb_module
from ..core.oom import CLOSE_TEXT
from ..kb.codes import kb_key
from ..lazyre import lazy
from ..model import CATEGORIES
from ..parsers.codes import find_codes
from ..parsers.oom_text import decide as decide_oom
from .events import Event

# KB role -> how the line behaves in a job
_KB_ROLE = {"cause": "root", "symptom": "symptom", "wrapper": "wrapper", "advisory": "advisory",
            "context": "context", "noise": "context"}
ROLE_ORDER = {"root": 0, "symptom": 1, "wrapper": 2, "advisory": 3, "context": 4}
# a pattern hit scores 10-13 in the KB matcher; codes 6 (generic codes 2); a module's catch-all 3
_SPECIFIC_SCORE = 9.5
_CLOSE = 1.5
_MATCH_WINDOW = 8192
_CLAIM_NONE, _CLAIM_BROAD, _CLAIM_SPECIFIC = 0, 1, 2  # what a full match of a line found (Knowledge.mentions)
_MAX_CLAIMS = 20000
_ECODE = lazy(r"\bE[0-9A-Z]\d{4}\b")
_NAMES_PEER = lazy(r"Cluster Exception Location|crimer rank")  # a runner-up of another category this close to the best makes the answer uncertain


@dataclass(frozen=True)
class RuleRef:
    """The rule behind a verdict, as triage needs it (an entry of the KB, or the engine's fallback)."""

    id: str
    title: str
    headline: str = ""
    attach_categories: FrozenSet[str] = frozenset()
    attach_note: str = ""


UNRECOGNISED = RuleRef("unrecognised_error", "Unrecognised error")
_CATALOGUED_WEIGHT = 30  # over an unrecognised line (20), under any entry of the knowledge base
_UNRECOGNISED_FIX = ("No rule of the knowledge base explains this line. Read it with the lines around it "
                     "and the plog of the same process at that time; ascend-doctor explain decodes any error code in it.")
_UNRECOGNISED_COMMANDS = ["ascend-doctor explain \"<the line shown>\"", "ls -t ~/ascend/log/debug/plog/ | head"]


@dataclass
class Verdict:
    role: str
    category: str
    weight: int
    title: str
    cause: str
    fix_text: str
    fix_commands: List[str]
    signal: RuleRef
    kb_id: Optional[str] = None
    causes: Tuple[str, ...] = ()
    caused_by: Tuple[str, ...] = ()
    captures: Dict[str, str] = field(default_factory=dict)
    checks: Tuple[str, ...] = ()
    confidence: str = "low"  # high | medium | low
    runner_up: Optional[Dict[str, str]] = None  # {kb, category, title} of the closest other answer

    @property
    def recognised(self) -> bool:
        return self.kb_id is not None


def unrecognised(weight: int = 20) -> Verdict:
    return Verdict(role="root", category="other", weight=weight, title=UNRECOGNISED.title,
                   cause="An error line that no rule of the knowledge base explains",
                   fix_text=_UNRECOGNISED_FIX, fix_commands=list(_UNRECOGNISED_COMMANDS), signal=UNRECOGNISED)


class Knowledge:
    """Resolves events to verdicts through the knowledge base."""

    def __init__(self, kb: Any = None) -> None:
        if kb is None:
            kb = kb_module.load()
        self.kb = kb
        self._cache: Dict[str, Verdict] = {}
        self._claims: Dict[str, int] = {}

    def resolve(self, ev: Event) -> Verdict:
        key = ev.signature() + "|" + ",".join(ev.code_values) + "|" + (ev.module or "")
        hit = self._cache.get(key)
        if hit is None:
            hit = self._resolve(ev)
            if len(self._cache) < 50000:
                self._cache[key] = hit
        if ev.oom is not None and hit.category in ("oom_capacity", "oom_fragmentation"):
            hit = _judged(hit, ev.oom)
        return hit

    def mentions(self, text: str, matched: bool = False, specific: bool = False) -> bool:
        """Whether a line names a code or literal of some KB entry (so it is worth an event);
        ``matched``: whether some entry's rule matches it in full (the device's event stream
        is mostly routine, so there only what the KB explains counts); ``specific``: and that
        entry is more than a broad class's catch-all words (a line its logger calls INFO).
        A log repeats its routine lines: a full match is looked up once per distinct line."""
        if not matched:
            return bool(self.kb.mentions(text))
        hit = self._claims.get(text)
        if hit is None:
            if self._names_catalogued(text):
                hit = _CLAIM_SPECIFIC
            else:
                found = self.kb.match(text) if self.kb.mentions(text) else []
                hit = _CLAIM_SPECIFIC if any(not m.entry.broad for m in found) else _CLAIM_BROAD if found else _CLAIM_NONE
            if len(self._claims) >= _MAX_CLAIMS:
                self._claims.clear()
            self._claims[text] = hit
        return hit == _CLAIM_SPECIFIC if specific else hit != _CLAIM_NONE

    def verdict_of(self, entry_id: str, role: str, weight: int, confidence: str) -> Verdict:
        """The verdict of one entry named by the engine itself (no line matched it)."""
        return _verdict(self.kb.entry(entry_id), role, weight, {}, confidence, None)

    def _names_catalogued(self, text: str) -> bool:
        """A line that writes a CANN E-code of the catalogue ("E39007 Inner_Error_...") reports that
        error even without an error's shape: ``_catalogued`` can answer for it."""
        if _ECODE.search(text) is None:
            return False
        return any(self._catalogued_code(code) is not None for code in find_codes(text))

    def _catalogued_code(self, code: Any) -> Optional[Tuple[Any, str]]:
        if code.family != "cann" or not code.value.startswith("E") or code.value[2:] in ("9999", "8888"):
            return None
        info = self.kb.lookup_code(code.value)
        category = self.kb.ecode_category(info) if info is not None else None
        return (info, category) if category is not None else None

    def _catalogued(self, ev: Event) -> Optional[Verdict]:
        """A line no entry explains but that carries a CANN E-code of the catalogue: the code's name and
        meaning, filed under the category its prefix (or the code itself) stands for; still a guess."""
        for code in ev.codes:
            known = self._catalogued_code(code)
            if known is None:
                continue
            info, category = known
            title = f"{info.code} {info.name}: {info.meaning.rstrip('.')}"
            prefix = self.kb.ecode_prefix(info.code)
            return Verdict(role="root", category=category, weight=_CATALOGUED_WEIGHT, title=title, cause=info.meaning,
                           fix_text=(prefix[1] if prefix and prefix[1] else info.advice) or _UNRECOGNISED_FIX,
                           fix_commands=[f"ascend-doctor explain {info.code}", _UNRECOGNISED_COMMANDS[1]],
                           signal=RuleRef("code." + info.code, title))
        return None

    def _resolve(self, ev: Event) -> Verdict:
        failures, context = self._matches(ev)
        if not failures:
            if context:
                m = next((c for c in context if c.entry.attach is not None), context[0])
                return _verdict(m.entry, "context", 0, m.captures, "high", None)
            return self._catalogued(ev) or unrecognised()
        failures = _cause_before_wrapper(failures)
        role, best = _role(failures, ev)
        same = [m for m in failures if m.entry.category == best.entry.category]
        weight = max((m.entry.triage_weight for m in same if _KB_ROLE.get(m.entry.role) == role or role == "advisory"),
                     default=best.entry.triage_weight)
        weight += max(0, best.entry.priority)
        confidence, runner = _confidence(best, failures)
        headline = next((m.entry.headline for m in failures if m.entry.headline and m.entry.category == best.entry.category), "")
        return _verdict(best.entry, role, weight, best.captures, confidence, runner, headline)

    def _matches(self, ev: Event) -> Tuple[List[Any], List[Any]]:
        """(the KB matches that are failures, best first; those that are context lines)."""
        codes = [k for k in (kb_key(c) for c in ev.codes) if k]
        text = ev.match_text
        if len(text) > 2 * _MATCH_WINDOW:  # a 64 KB line: what it says is near its ends, and regex cost is per character
            text = text[:_MATCH_WINDOW] + "\n" + text[-_MATCH_WINDOW:]
        matches = self.kb.match(text, codes=codes, module=ev.module)
        failures = [m for m in matches if _KB_ROLE.get(m.entry.role) != "context"]
        return failures, [m for m in matches if _KB_ROLE.get(m.entry.role) == "context"]

    def explains(self, cause_id: Optional[str], effect_id: Optional[str]) -> bool:
        """True when the KB has a causal path from one entry to the other."""
        if not cause_id or not effect_id or cause_id == effect_id:
            return False
        return bool(self.kb.explains(cause_id, effect_id))


def _judged(hit: Verdict, oom: Any) -> Verdict:
    """An out-of-memory verdict as the allocator's numbers decide it; a close call lowers the
    confidence and names the other reading as the runner-up."""
    decision = decide_oom(oom)
    if decision is None:
        return hit
    changes: Dict[str, Any] = {}
    if decision.category != hit.category:
        changes["category"] = decision.category
    if decision.close_to is not None:
        changes["confidence"] = "medium" if hit.confidence == "high" else hit.confidence
        changes["runner_up"] = {"kb": None, "category": decision.close_to, "title": CLOSE_TEXT[decision.close_to]}
    elif (hit.runner_up is not None and hit.runner_up.get("category") in ("oom_capacity", "oom_fragmentation")
          and oom.reserved is not None and oom.allocated is not None and oom.requested is not None):
        # the entry's other reading of a message without numbers: these numbers decided between them
        changes["runner_up"] = None
    return Verdict(**{**hit.__dict__, **changes}) if changes else hit


def _cause_before_wrapper(failures: List[Any]) -> List[Any]:
    """A wrapper ("an NPU call failed, see below") gives way to any cause the same event names:
    the line it points to is the one that says why, even when only a broad class reads it."""
    if failures[0].entry.role != "wrapper":
        return failures
    first = next((i for i, m in enumerate(failures) if m.entry.role == "cause"), None)
    if first is None:
        return failures
    return [failures[first]] + failures[:first] + failures[first + 1:]


def _role(failures: List[Any], ev: Event) -> Tuple[str, Any]:
    """The line's role in the story and the match that speaks for it."""
    best = failures[0]
    role = _KB_ROLE.get(best.entry.role, "root")
    if any(m.entry.role == "advisory" for m in failures):
        return "advisory", best  # the line is a warning the job survived, whatever else it names
    if role == "root" and _NAMES_PEER.search(ev.match_text) and any(m.entry.role == "symptom" for m in failures):
        # a rank that timed out, quoting HCCL's verdict on another rank: the cause is there, and
        # this rank's own story is its wait
        return "symptom", next(m for m in failures if m.entry.role == "symptom")
    return role, best


def _confidence(best: Any, failures: List[Any]) -> Tuple[str, Optional[Dict[str, str]]]:
    """How sure the verdict is, and the closest answer of another category when it is close."""
    other = next((m for m in failures[1:] if m.entry.category != best.entry.category), None)
    close = other is not None and best.score - other.score < _CLOSE
    if best.score >= _SPECIFIC_SCORE:
        confidence = "medium" if close else "high"
    else:
        confidence = "low" if best.score <= 3.5 or close else "medium"
    runner = None
    if other is not None and best.score - other.score < 4.0:
        runner = {"kb": other.entry.id, "category": other.entry.category, "title": _named(other.entry, other.captures)}
    alt = best.entry.alternative
    if alt is not None and runner is None:
        # the same line is known to have another cause (the entry says which): never sure, and say the other
        runner = {"kb": None, "category": alt.category, "title": alt.title}
        confidence = "medium" if confidence == "high" else confidence
    return confidence, runner


_PLACEHOLDER = lazy(r"\{(\w+)\}")


def _fill(template: str, values: Dict[str, str]) -> str:
    """Put captured and table values into ``{name}`` placeholders; any other brace (a Go template
    in a docker command, JSON) is left as it is."""
    if "{" not in template or not values:
        return template
    return _PLACEHOLDER.sub(lambda m: str(values[m.group(1)]) if values.get(m.group(1)) is not None else m.group(0), template)


def _values(entry: Any, captures: Dict[str, str]) -> Dict[str, str]:
    """What an entry's templates are filled from: the captures, and its family table's row."""
    values = dict(captures)
    if entry.family is not None:
        values.update(entry.family.lookup(captures.get(entry.family.capture)))
    return values


def _named(entry: Any, captures: Dict[str, str]) -> str:
    """An entry's title with what the line gave; when the line left a placeholder empty, the
    entry's cause (which names no placeholder) stands in, else the title without it."""
    title = _fill(entry.title, _values(entry, captures))
    if not _PLACEHOLDER.search(title):
        return title
    cause = (entry.cause or "").strip()
    if cause and not _PLACEHOLDER.search(cause):
        return cause
    return " ".join(_PLACEHOLDER.sub("", title).replace("()", "").split())


def _verdict(entry: Any, role: str, weight: int, captures: Dict[str, str], confidence: str,
             runner: Optional[Dict[str, str]], headline: str = "") -> Verdict:
    values = _values(entry, captures)
    fix = entry.fix
    attach = entry.attach
    category = values.get("category") if values.get("category") in CATEGORIES else entry.category
    ref = RuleRef(entry.id, entry.title, entry.headline or headline,
                  frozenset(attach.categories) if attach else frozenset(), attach.note if attach else "")
    return Verdict(
        role=role, category=category, weight=weight,
        title=_fill(entry.title, values), cause=_fill(entry.cause or entry.title, values),
        fix_text=_fill(fix.text, values),
        fix_commands=[_fill(c, values) for c in fix.commands] + ([_fill(values["commands"], values)] if values.get("commands") else []),
        signal=ref, kb_id=entry.id, causes=tuple(entry.causes), caused_by=tuple(entry.caused_by),
        captures=dict(captures), checks=tuple(entry.checks or ()), confidence=confidence, runner_up=runner,
    )
