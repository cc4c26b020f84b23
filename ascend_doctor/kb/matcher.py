"""Score KB entries against a line or a block of text.

Built once per KnowledgeBase. Speed comes from never running a regex that cannot
match: every pattern and keyword group has a literal trigger, entries are indexed by
trigger and by code, and a line only reaches the regexes of entries whose trigger
occurs in it or whose code it carries. Triggers are found through a word index: a
word that sits whole inside a trigger (between two non-word characters of it) is a
whole word of any line containing the trigger, so the line's words pick the few
triggers worth an ``in`` test.
"""
from __future__ import annotations

import re
from typing import Any, Dict, Iterable, List, Optional, Sequence, Set, Tuple, Union

from ascend_doctor.kb.codes import canonical_keys, extract_codes
from ascend_doctor.kb.conditions import CONDITIONS
from ascend_doctor.kb.loader import ROW_CODES, ROW_MODULES, ROW_TRIGGERS, ROW_UNTRIGGERED, EntryStore
from ascend_doctor.kb.model import Entry, Match, MatchPart

# Weights: a message pattern says more than a bare code; a generic code says little.
W_PATTERN = 10.0
W_KEYWORDS = 8.0
W_CODE = 6.0
W_GENERIC_CODE = 2.0
W_MODULE = 3.0  # a module's catch-all: says which component, not what went wrong
W_EXTRA = 1.0  # each further pattern/keyword/code hit of the same entry
W_SPECIFIC_MAX = 3.0  # longer matched text = more specific evidence
MAX_MATCH_CHARS = 120
BROAD_FACTOR = 0.5  # a failure class's catch-all ranks under any specific entry that matches
# A wrapper ("something below failed") must rank under the cause it wraps when both match
# one text; a symptom (a rank that waited) under the cause that made it wait.
ROLE_FACTOR = {"cause": 1.0, "symptom": 0.85, "advisory": 0.9, "context": 0.6, "noise": 0.6, "wrapper": 0.4}


class Matcher:
    def __init__(self, entries: Union[EntryStore, Sequence[Entry]]) -> None:
        # indexed from each entry's row (loader.index_row): an entry is built only when a text reaches it
        self.entries = entries if isinstance(entries, EntryStore) else EntryStore.of(list(entries))
        self._by_code: Dict[str, List[int]] = {}
        self._by_trigger: Dict[str, List[int]] = {}
        self._always: List[int] = []
        self._by_module: Dict[str, List[int]] = {}
        for idx, row in enumerate(self.entries.rows):
            for mod in row[ROW_MODULES]:
                self._by_module.setdefault(mod, []).append(idx)
            for key in row[ROW_CODES]:
                self._by_code.setdefault(key, []).append(idx)
            for trigger in row[ROW_TRIGGERS]:
                self._by_trigger.setdefault(trigger, []).append(idx)
            if row[ROW_UNTRIGGERED]:
                self._always.append(idx)
        self._triggers: Tuple[Tuple[str, Tuple[int, ...]], ...] = tuple(
            (t, tuple(ids)) for t, ids in sorted(self._by_trigger.items())
        )
        self._by_word: Dict[str, List[Tuple[str, Tuple[int, ...]]]] = {}
        self._unindexed: List[Tuple[str, Tuple[int, ...]]] = []
        words = self.entries.words  # shipped in the compiled form, else found here
        for trigger, ids in self._triggers:
            word = words[trigger] if words is not None else whole_word(trigger)
            if word:
                self._by_word.setdefault(word, []).append((trigger, ids))
            else:
                self._unindexed.append((trigger, ids))
        self._words = frozenset(self._by_word)
        # whether any unindexed trigger occurs at all (most lines: none): a loop of ``in`` tests for
        # the first lines, then one trie-shaped regex scan (compiling it costs ~5 ms of start-up)
        self._any_unindexed: Optional["re.Pattern[str]"] = None
        self._unindexed_tests = 0

    @property
    def trigger_count(self) -> int:
        return len(self._triggers)

    def candidates(self, text: str, keys: Iterable[str], low: Optional[str] = None) -> Set[int]:
        found: Set[int] = set(self._always)
        for key in keys:
            found.update(self._by_code.get(key, ()))
        low = text.lower() if low is None else low
        for word in self._words.intersection(_WORD.findall(low)):
            for trigger, ids in self._by_word[word]:
                if trigger in low:
                    found.update(ids)
        if self._has_unindexed(low):
            for trigger, ids in self._unindexed:
                if trigger in low:
                    found.update(ids)
        return found

    def mentions(self, text: str) -> bool:
        """Whether any entry's code or trigger literal occurs in ``text`` (a cheap pre-test)."""
        for key in extract_codes(text):
            if key in self._by_code:
                return True
        low = text.lower()
        for word in self._words.intersection(_WORD.findall(low)):
            for trigger, _ in self._by_word[word]:
                if trigger in low:
                    return True
        return self._has_unindexed(low)

    def _has_unindexed(self, low: str) -> bool:
        if self._any_unindexed is None:
            self._unindexed_tests += 1
            if self._unindexed_tests <= _SCAN_AFTER:
                return any(trigger in low for trigger, _ in self._unindexed)
            self._any_unindexed = re.compile(_trie_pattern([t for t, _ in self._unindexed]) or "(?!)")
        return self._any_unindexed.search(low) is not None

    def match(
        self,
        text: str,
        codes: Sequence[str] = (),
        module: Optional[str] = None,
        limit: Optional[int] = None,
    ) -> List[Match]:
        keys: List[str] = []
        for code in codes:
            for key in canonical_keys(str(code)):
                if key not in keys:
                    keys.append(key)
        for key in extract_codes(text):
            if key not in keys:
                keys.append(key)
        key_set = set(keys)
        module_up = module.upper() if module else None
        low = text.lower()
        lines: Optional[List[str]] = None
        results: List[Match] = []
        found = self.candidates(text, keys, low)
        if module_up and module_up in self._by_module:
            found.update(self._by_module[module_up])
        for idx in found:
            entry = self.entries.at(idx)
            if lines is None and entry.rule.keywords:
                lines = text.splitlines() or [text]
            scored = _score(entry, text, low, lines or [], key_set, module_up)
            if scored is not None:
                results.append(scored)
        results.sort(key=lambda m: (-m.score, -m.entry.priority, m.entry.id))
        return results[:limit] if limit else results


def _score(
    entry: Entry,
    text: str,
    low: str,
    lines: List[str],
    keys: Set[str],
    module: Optional[str],
) -> Optional[Match]:
    rule = entry.rule
    for veto in rule.unless:
        if veto.regex.search(text):
            return None
    parts: List[MatchPart] = []
    captures: Dict[str, str] = {}
    hits: List[float] = []
    text_allowed = not (rule.modules and module and module not in rule.modules)
    if text_allowed:
        for pat in rule.patterns:
            if pat.trigger and pat.trigger not in low:
                continue
            m = pat.regex.search(text)
            if m is None:
                continue
            groups = m.groupdict()
            if pat.condition and not CONDITIONS[pat.condition](groups):
                continue
            hit = m.group(0)
            hits.append(W_PATTERN + min(len(hit), MAX_MATCH_CHARS) / MAX_MATCH_CHARS * W_SPECIFIC_MAX)
            parts.append(MatchPart("pattern", pat.regex.pattern, _clip(hit)))
            for name, value in groups.items():
                if value is not None and name not in captures:
                    captures[name] = value
        for group in rule.keywords:
            line = _keywords_in_order(group, lines)
            if line is not None:
                hits.append(W_KEYWORDS + len(group))
                parts.append(MatchPart("keywords", " ... ".join(group), _clip(line)))
    if rule.module_only and module is not None and module in rule.modules:
        hits.append(W_MODULE)
        parts.append(MatchPart("module", module, module))
    for key in rule.codes:
        if key in keys:
            hits.append(W_GENERIC_CODE if rule.generic_codes else W_CODE)
            parts.append(MatchPart("code", key, key))
    if not hits:
        return None
    hits.sort(reverse=True)
    score = (hits[0] + W_EXTRA * (len(hits) - 1)) * ROLE_FACTOR.get(entry.role, 1.0) * (BROAD_FACTOR if entry.broad else 1.0) + entry.priority
    return Match(entry=entry, score=score, parts=parts, captures=captures)


_WORD = re.compile(r"[a-z0-9_]+")
_SCAN_AFTER = 2000  # lines tested by ``in`` before the unindexed triggers' regex is compiled
_MIN_WORD = 3


def _trie_pattern(literals: Sequence[str]) -> str:
    """One regex that matches where any of ``literals`` starts, branching per character
    (a literal's extensions are dropped: the literal alone already says "present")."""
    trie: Dict[str, Any] = {}
    for lit in literals:
        node = trie
        for ch in lit:
            node = node.setdefault(ch, {})
        node[""] = {}

    def build(node: Dict[str, Any]) -> str:
        if "" in node:
            return ""
        alts = [re.escape(ch) + build(sub) for ch, sub in sorted(node.items())]
        return alts[0] if len(alts) == 1 else "(?:" + "|".join(alts) + ")"

    return build(trie) if literals else ""


def whole_word(trigger: str) -> Optional[str]:
    """The longest word of ``trigger`` that any text containing the trigger has as a whole word.

    A maximal run of word characters that has a non-word character of the trigger on both
    sides is a whole word wherever the trigger occurs; runs touching the trigger's ends
    may continue in the text and do not count.
    """
    whole = [
        m.group(0)
        for m in _WORD.finditer(trigger)
        if m.start() > 0 and m.end() < len(trigger) and len(m.group(0)) >= _MIN_WORD
    ]
    return max(whole, key=len) if whole else None


def _keywords_in_order(group: Tuple[str, ...], lines: List[str]) -> Optional[str]:
    first = group[0]
    for line in lines:
        pos = line.find(first)
        if pos < 0:
            continue
        pos += len(first)
        for word in group[1:]:
            pos = line.find(word, pos)
            if pos < 0:
                break
            pos += len(word)
        else:
            return line
    return None


def _clip(text: str, limit: int = 200) -> str:
    text = text.strip()
    return text if len(text) <= limit else text[: limit - 3] + "..."
