"""KnowledgeBase: entries with their matcher, the code tables, and the causal graph."""
from __future__ import annotations

import threading
from pathlib import Path
from typing import Dict, List, Optional, Sequence, Tuple, Union

from ascend_doctor.kb.codes import canonical_keys, extract_codes
from ascend_doctor.kb.loader import ROW_CAUSES, ROW_CODES, ROW_ID, CodeTables, EntryStore, load_code_tables
from ascend_doctor.kb.matcher import Matcher
from ascend_doctor.kb.model import CodeInfo, Entry, Match

# How far `explains()` follows causes -> effects; real chains are 2-4 long.
MAX_CHAIN = 6


class KnowledgeBase:
    def __init__(self, entries: Union[EntryStore, Sequence[Entry]], data_dir: Path) -> None:
        """``entries``: a store (``loader.load_store``: entries built when first asked for) or the entries."""
        self._store = entries if isinstance(entries, EntryStore) else EntryStore.of(list(entries))
        self._position = self._store.position
        self._matcher = Matcher(self._store)
        self._data_dir = data_dir
        self._tables: Optional[CodeTables] = None
        self._lock = threading.Lock()
        self._entry_codes: Dict[str, List[str]] = {}
        for row in self._store.rows:
            for key in row[ROW_CODES]:
                self._entry_codes.setdefault(key, []).append(row[ROW_ID])

    # ------------------------------------------------------------ entries
    @property
    def entries(self) -> List[Entry]:
        """All entries (this builds every one; a one-line question never needs them all)."""
        return self._store.all()

    def entry(self, entry_id: str) -> Entry:
        try:
            return self._store.at(self._position[entry_id])
        except KeyError:
            raise KeyError(f"no KB entry {entry_id!r}") from None

    def has_entry(self, entry_id: str) -> bool:
        return entry_id in self._position

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
                entry = self.entry(eid)
                if entry not in out:
                    out.append(entry)
        out.sort(key=lambda e: e.broad)  # a class's catch-all after the entries that name the code
        return out

    # ------------------------------------------------------------ causal graph
    def causes_of(self, entry_id: str) -> List[Entry]:
        return [self.entry(i) for i in self.entry(entry_id).caused_by]

    def effects_of(self, entry_id: str) -> List[Entry]:
        return [self.entry(i) for i in self.entry(entry_id).causes]

    def explains(self, cause_id: str, effect_id: str, max_depth: int = MAX_CHAIN) -> bool:
        """Whether ``cause_id`` leads to ``effect_id`` through ``causes:`` edges."""
        if cause_id not in self._position or effect_id not in self._position or cause_id == effect_id:
            return False
        frontier = [cause_id]
        seen = {cause_id}
        for _ in range(max_depth):
            nxt = []
            for eid in frontier:
                for target in self._store.rows[self._position[eid]][ROW_CAUSES]:
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
        best = self._prefix_row(code)
        return (best[1], best[2]) if best else None

    def ecode_category(self, info: CodeInfo) -> Optional[str]:
        """Triage's category for a catalogued E-code on a line no entry explains: the code's own, else its prefix's."""
        if info.category:
            return info.category
        best = self._prefix_row(info.code)
        return best[3] if best else None

    def _prefix_row(self, code: str) -> Optional[Tuple[str, str, str, str]]:
        up = code.strip().upper()
        best = None
        for row in self.tables.prefixes:
            if up.startswith(row[0]) and (best is None or len(row[0]) > len(best[0])):
                best = row
        return best

    def stats(self) -> Dict[str, int]:
        out = {"entries": len(self._store), "triggers": self._matcher.trigger_count}
        out.update({f"codes.{k}": v for k, v in self.tables.tables.items()})
        return out
