"""Records of the knowledge base: entries, their match rules, matches and decoded codes.

Plain dataclasses, no I/O. The loader (``loader.py``) builds them from the YAML data
files; the matcher (``matcher.py``) produces ``Match`` objects.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Dict, List, Optional, Tuple

# Ids of `ascend-doctor check` findings a KB entry may name in `checks:`. The list is
# the contract with the checks package (kept here so that loading the KB does not import every
# check); tests/kb/test_kb_schema.py keeps it equal to the check registry.
CHECK_IDS = (
    "driver.installed",
    "driver.version",
    "driver.install_complete",
    "driver.modules",
    "firmware.version",
    "driver.firmware_compat",
    "npu_smi.info",
    "devices.health",
    "devices.nodes",
    "devices.access",
    "devices.busy",
    "devices.count",
    "toolkit.installed",
    "toolkit.arch",
    "toolkit.driver_compat",
    "toolkit.kernels",
    "toolkit.hdk_match",
    "env.set_env",
    "env.visible_devices",
    "env.log_path",
    "container.detected",
    "container.mounts",
    "python.interpreter",
    "python.packages",
    "python.torch_npu_match",
    "python.cann_match",
    "python.stack_matrix",
    "runtime.import",
    "runtime.available",
    "runtime.small_op",
    "logs.recent_errors",
)

# What an entry is in a failure story. Triage uses it to rank: a `cause` beats a
# `symptom` (a rank waiting for another one) which beats a `wrapper` (a generic
# error that only says "something below failed"); an `advisory` is a warning the job
# survived (an operator on the CPU): its own finding, after every failure; `context`
# lines are not failures (harmless, or facts such as which rank is which), and may
# `attach` a note to an incident of given categories; `noise` is the older name of context.
ROLES = ("cause", "symptom", "wrapper", "advisory", "context", "noise")
# How much a line of each role says about the failure when an entry gives no `weight`.
ROLE_WEIGHT = {"cause": 60, "symptom": 55, "wrapper": 10, "advisory": 30, "context": 0, "noise": 0}


@dataclass(frozen=True)
class Fix:
    """What to do: a sentence, exact commands, and what to collect before asking for help."""

    text: str
    commands: Tuple[str, ...] = ()
    collect: Tuple[str, ...] = ()

    def to_json(self) -> Dict[str, Any]:
        return {"text": self.text, "commands": list(self.commands), "collect": list(self.collect)}


@dataclass(frozen=True)
class Example:
    """A real line (or block) copied from a public source that the entry must match."""

    text: str
    source: str
    codes: Tuple[str, ...] = ()
    module: Optional[str] = None
    captures: Tuple[Tuple[str, str], ...] = ()  # named groups the match must extract

    def to_json(self) -> Dict[str, Any]:
        return {"text": self.text, "source": self.source}


@lru_cache(maxsize=None)
def _compiled(source: str) -> Any:
    return re.compile(source)


@dataclass(frozen=True)
class Pattern:
    """One message pattern with the literal that must occur for it to match.

    The regex is compiled the first time a line holding the trigger reaches it: a run that
    reads one pasted line compiles the few patterns that line can match, not all of them.
    """

    source: str
    trigger: Optional[str]  # lower-cased literal; None = no usable literal (always tried)
    condition: Optional[str] = None  # name of a predicate in conditions.py

    @property
    def regex(self) -> Any:  # re.Pattern
        return _compiled(self.source)


@dataclass(frozen=True)
class Attach:
    """A context entry's note on an incident of these categories in the same process.

    ``note`` is a template: ``{count}`` lines, ``{first}``/``{last}`` their times.
    """

    categories: Tuple[str, ...]
    note: str


@dataclass(frozen=True)
class Alternative:
    """Another cause the lines of an entry are known to have (of another category)."""

    category: str
    title: str


@dataclass(frozen=True)
class Family:
    """One entry that covers a family of lines: a captured part looked up in a table.

    ``capture`` names the regex group (e.g. ``library``); the table's first row whose
    ``match`` regex finds the captured text fills the placeholders (``{library}``,
    ``{package}``...) of the entry's title, cause and fix; ``default`` fills them when no
    row matches.
    """

    capture: str
    table: str
    rows: Tuple[Tuple[Any, Dict[str, str]], ...]  # (Pattern, fields)
    default: Dict[str, str] = field(default_factory=dict)

    def lookup(self, value: Optional[str]) -> Dict[str, str]:
        if value is not None:
            for pattern, fields in self.rows:
                if pattern.regex.search(value):
                    return fields
        return self.default


@dataclass(frozen=True)
class Rule:
    """How an entry is recognised.

    Any of these may match; each part that does adds to the score:
    ``codes`` (canonical code keys), ``patterns`` (regexes searched in the text),
    ``keywords`` (groups of literals that must appear in order within one line).
    ``modules`` restricts patterns/keywords to plog lines of those modules when the
    caller knows the module. ``unless`` patterns veto the entry.
    """

    codes: Tuple[str, ...] = ()
    patterns: Tuple[Pattern, ...] = ()
    keywords: Tuple[Tuple[str, ...], ...] = ()
    modules: Tuple[str, ...] = ()
    unless: Tuple[Any, ...] = ()
    generic_codes: bool = False  # codes alone say little (EZ9999, ERR00100): weigh them low
    module_only: bool = False  # matches any error line of ``modules`` (a plog module's catch-all)


@dataclass(frozen=True)
class Entry:
    id: str
    category: str
    title: str
    cause: str
    explanation: str
    checks: Tuple[str, ...]
    fix: Fix
    links: Tuple[str, ...]
    causes: Tuple[str, ...]
    caused_by: Tuple[str, ...]
    examples: Tuple[Example, ...]
    rule: Rule
    role: str = "cause"
    priority: int = 0
    counter_examples: Tuple[Example, ...] = ()
    source_file: str = ""
    weight: Optional[int] = None  # how much a line of this entry says in triage (default by role)
    broad: bool = False  # a failure class's catch-all: scores at half weight, so specific entries win
    headline: str = ""  # incident title template filled from the event ({op})
    attach: Optional[Attach] = None
    family: Optional[Family] = None
    alternative: Optional[Alternative] = None

    @property
    def triage_weight(self) -> int:
        return self.weight if self.weight is not None else ROLE_WEIGHT.get(self.role, 0)

    def to_json(self) -> Dict[str, Any]:
        return {
            "id": self.id,
            "category": self.category,
            "title": self.title,
            "cause": self.cause,
            "explanation": self.explanation,
            "role": self.role,
            "checks": list(self.checks),
            "fix": self.fix.to_json(),
            "links": list(self.links),
            "causes": list(self.causes),
            "caused_by": list(self.caused_by),
            "alternative": None if self.alternative is None else {"category": self.alternative.category,
                                                                   "title": self.alternative.title},
        }


@dataclass(frozen=True)
class MatchPart:
    """One reason an entry matched: a code, a pattern or a keyword group, and what it hit."""

    kind: str  # code | pattern | keywords
    value: str  # the code key, the pattern source, or the joined keywords
    text: str  # what in the input it matched

    def to_json(self) -> Dict[str, str]:
        return {"kind": self.kind, "value": self.value, "text": self.text}


@dataclass
class Match:
    entry: Entry
    score: float
    parts: List[MatchPart] = field(default_factory=list)
    captures: Dict[str, str] = field(default_factory=dict)

    @property
    def codes(self) -> List[str]:
        return [p.value for p in self.parts if p.kind == "code"]

    def to_json(self) -> Dict[str, Any]:
        out = self.entry.to_json()
        out["score"] = round(self.score, 2)
        out["matched"] = [p.to_json() for p in self.parts]
        if self.captures:
            out["captures"] = dict(self.captures)
        return out


@dataclass(eq=False)  # built 1,600 times per explain: a plain class is faster to create; never mutated
class CodeInfo:
    """A decoded error code from one of the numeric tables or the E-code catalog."""

    key: str  # canonical key: "507035", "EZ9999", "0x07020014", "ts:0x26", "hccl:7", "drv:6", "-8005", "ERR00100"
    code: str  # as people write it: "507035", "EZ9999", "0x07020014", "0x26", "7", "-8005", "ERR00100"
    family: str
    name: str
    meaning: str
    family_title: str = ""
    klass: str = ""  # numeric class (1xxxxx user/env, ...) or E-code kind
    printed: str = ""  # the exact text the stack prints for it (a format fact)
    maps_to: Optional[str] = None  # public code an internal one is reported as
    component: str = ""
    advice: str = ""
    sources: Tuple[str, ...] = ()
    confirmed_by: Tuple[str, ...] = ()
    entries: Tuple[str, ...] = ()  # ids of KB entries whose rules name this code
    aliases: Tuple[str, ...] = ()  # other spellings of the name in headers or docs
    category: str = ""  # E-codes: triage's category when no entry explains the line (else the prefix's)

    def to_json(self) -> Dict[str, Any]:
        out: Dict[str, Any] = {
            "key": self.key,
            "code": self.code,
            "family": self.family,
            "family_title": self.family_title,
            "name": self.name,
            "meaning": self.meaning,
        }
        for key in ("klass", "printed", "maps_to", "component", "advice"):
            value = getattr(self, key)
            if value:
                out["class" if key == "klass" else key] = value
        out["sources"] = list(self.sources)
        if self.confirmed_by:
            out["confirmed_by"] = list(self.confirmed_by)
        out["entries"] = list(self.entries)
        if self.aliases:
            out["aliases"] = list(self.aliases)
        return out


class KBError(Exception):
    """The knowledge base data is malformed; the message names the file and the entry."""
