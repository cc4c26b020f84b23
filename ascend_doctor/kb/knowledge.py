"""KnowledgeBase: entries with their matcher, the code tables, and the causal graph."""
from __future__ import annotations

import threading
from pathlib import Path
from typing import Dict, List, Optional, Sequence, Tuple

from ascend_doctor.kb.codes import canonical_keys, extract_codes
from ascend_doctor.kb.loader import CodeTables, load_code_tables
from ascend_doctor.kb.matcher import Matcher
from ascend_doctor.kb.model import CodeInfo, Entry, Match

# How far `explains()` follows causes -> effects; real chains are 2-4 long.
MAX_CHAIN = 6


class KnowledgeBase:
    def __init__(self, entries: Sequence[Entry], data_dir: Path) -> None:
        self.entries: List[Entry] = list(entries)
        self._by_id: Dict[str, Entry] = {e.id: e for e in self.entries}
        self._matcher = Matcher(self.entries)
        self._data_dir = data_dir
        self._tables: Optional[CodeTables] = None
        self._lock = threading.Lock()
        self._entry_codes: Dict[str, List[str]] = {}
        for e in self.entries:
            for key in e.rule.codes:
                self._entry_codes.setdefault(key, []).append(e.id)

    # ------------------------------------------------------------ entries
    def entry(self, entry_id: str) -> Entry:
        try:
            return self._by_id[entry_id]
        except KeyError:
            raise KeyError(f"no KB entry {entry_id!r}") from None

    def has_entry(self, entry_id: str) -> bool:
        return entry_id in self._by_id

    def match(
        self,
        text: str,
        codes: Sequence[str] = (),
        module: Optional[str] = None,
        limit: Optional[int] = None,
    ) -> List[Match]:
        """Entries that explain ``text``, best first (see the package docstring)."""
        return self._matcher.match(text, codes=codes, module=module, limit=limit)

    def mentions(self, text: str) -> bool:
        """Whether ``text`` holds a code or literal that some entry's rule needs (cheap)."""
        return self._matcher.mentions(text)

    def entries_for_code(self, code: str) -> List[Entry]:
        out: List[Entry] = []
        for key in self._keys(code):
            for eid in self._entry_codes.get(key, []):
                entry = self._by_id[eid]
                if entry not in out:
                    out.append(entry)
        out.sort(key=lambda e: e.broad)  # a class's catch-all after the entries that name the code
        return out

    # ------------------------------------------------------------ causal graph
    def causes_of(self, entry_id: str) -> List[Entry]:
        return [self._by_id[i] for i in self.entry(entry_id).caused_by]

    def effects_of(self, entry_id: str) -> List[Entry]:
        return [self._by_id[i] for i in self.entry(entry_id).causes]

    def explains(self, cause_id: str, effect_id: str, max_depth: int = MAX_CHAIN) -> bool:
        """Whether ``cause_id`` leads to ``effect_id`` through ``causes:`` edges."""
        if cause_id not in self._by_id or effect_id not in self._by_id or cause_id == effect_id:
            return False
        frontier = [cause_id]
        seen = {cause_id}
        for _ in range(max_depth):
            nxt = []
            for eid in frontier:
                for target in self._by_id[eid].causes:
                    if target == effect_id:
                        return True
                    if target not in seen:
                        seen.add(target)
                        nxt.append(target)
            if not nxt:
                break
            frontier = nxt
        return False

    # ------------------------------------------------------------ codes
    @property
    def tables(self) -> CodeTables:
        if self._tables is None:
            with self._lock:
                if self._tables is None:
                    self._tables = load_code_tables(self._data_dir, self._entry_codes)
        return self._tables

    def _keys(self, code: str) -> List[str]:
        keys = canonical_keys(str(code))
        out = []
        for key in keys:
            if key.startswith("name:"):
                resolved = self.tables.by_name.get(key[5:])
                if resolved:
                    out.append(resolved)
            else:
                out.append(key)
        return out

    def lookup_codes(self, code: str) -> List[CodeInfo]:
        """Every table row a written code may stand for (a bare ``7`` gives HCCL and driver rows)."""
        out: List[CodeInfo] = []
        for key in self._keys(code):
            out.extend(self.tables.by_key.get(key, []))
        return out

    def lookup_code(self, code: str) -> Optional[CodeInfo]:
        """The one meaning of a code, or None when unknown or ambiguous (use ``lookup_codes``)."""
        infos = self.lookup_codes(code)
        if not infos:
            return None
        if len({i.key for i in infos}) > 1:
            return None
        return infos[0]

    def codes_in(self, text: str) -> List[CodeInfo]:
        """Decoded codes written in ``text``, in order, unknown ones left out."""
        out: List[CodeInfo] = []
        for key in extract_codes(text):
            out.extend(self.tables.by_key.get(key, [])[:1])
        return out

    def ecode_component(self, code: str) -> Optional[str]:
        """Which CANN component an E-code belongs to by its prefix, even if it is not catalogued."""
        found = self.ecode_prefix(code)
        return found[0] if found else None

    def ecode_prefix(self, code: str) -> Optional[Tuple[str, str]]:
        """(component, what to do) for an E-code's prefix (E1 ... EZ, W1 ...), longest prefix wins."""
        up = code.strip().upper()
        best = None
        for prefix, component, advice in self.tables.prefixes:
            if up.startswith(prefix) and (best is None or len(prefix) > len(best[0])):
                best = (prefix, component, advice)
        return (best[1], best[2]) if best else None

    def stats(self) -> Dict[str, int]:
        out = {"entries": len(self.entries), "triggers": self._matcher.trigger_count}
        out.update({f"codes.{k}": v for k, v in self.tables.tables.items()})
        return out
