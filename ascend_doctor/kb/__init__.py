"""The error-code knowledge base: what a CANN / torch_npu / HCCL error means and what to do.

Data lives in YAML under ``kb/data/``: ``rules/*.yaml`` hold the entries (match rules,
category, cause, explanation, the ``check`` ids that confirm it, the fix, links,
causal edges, and the real example lines that test them); ``codes/*.yaml`` hold the
complete numeric tables (ACL/runtime/GE, aclnn, HcclResult, driver, runtime-internal,
task-scheduler, DCMI) and the CANN E-code catalog, written in our own words.

API (stable; the triage engine and ``explain`` use it)::

    from ascend_doctor import kb
    base = kb.load()                      # lazy, cached: reads the data on first call only

    base.match(text, codes=(), module=None, limit=None) -> List[Match]
        Entries that explain a line or a block, best first. ``codes`` are codes the
        caller already parsed (any spelling: "507035", "0x26", "EZ9999", "hccl:7");
        codes written in ``text`` are found anyway. ``module`` is the plog module
        (``RUNTIME``, ``HCCL`` ...) when known: entries restricted to other modules
        then match only by code. A Match has ``.entry``, ``.score``, ``.parts``
        (what matched: code / pattern / keywords and the text hit) and ``.captures``
        (named regex groups). Names used across entries: ``device``, ``rank``,
        ``remote_rank``, ``crimer`` (HCCL's failing rank, "IP/device"), ``discoverer``,
        ``arrival``, ``tag``, ``op_time``, ``kernel``, ``op``, ``port``, ``reason``.
        Call it on candidate lines (errors, warnings with codes), not on every line.

    base.entry(id) -> Entry              # KeyError if unknown
    base.entries                          # all entries
    base.lookup_code(code) -> Optional[CodeInfo]
        Any spelling: ``507035``, ``0x26`` (task-scheduler retCode), ``0x7020014`` /
        ``0x07020014`` (runtime-internal), ``EZ9999``, ``ERR00100``, ``-8005`` (DCMI),
        ``hccl:7`` / ``HCCL_E_UNAVAIL``, ``drv:6``, ``errNo[0x0000000005000007]``,
        symbolic names. None when unknown, or ambiguous (a bare ``7``): then
        ``lookup_codes`` returns every reading.
    base.lookup_codes(code) -> List[CodeInfo]
    base.codes_in(text) -> List[CodeInfo]  # decode every code written in a text
    base.entries_for_code(code) -> List[Entry]
    base.causes_of(id) / base.effects_of(id) -> List[Entry]   # direct edges
    base.explains(cause_id, effect_id) -> bool                # path through causes:

    Entry: id, category, title, cause, explanation, role (cause|symptom|wrapper|noise),
           checks, fix (Fix: text, commands, collect), links, causes, caused_by,
           examples (Example: text, source), rule, priority
    CodeInfo: key, code, family, family_title, name, meaning, klass, printed,
              maps_to, component, advice, sources, confirmed_by, entries, aliases, category
    base.ecode_prefix(code) -> Optional[(component, advice)]  # for E-codes not catalogued
    base.ecode_category(info) -> Optional[str]               # triage's category for a catalogued E-code
    base.stats() -> Dict[str, int]                            # entry, trigger and table counts

Errors: ``KBError`` (one line naming the data file and entry) when the data is bad.
``ASCEND_DOCTOR_KB_DIR`` points the loader at another data directory (tests, experiments).
``python -m tools.verify_kb_headers WHEEL`` re-checks the tables against the
headers shipped in a torch-npu wheel.

``role`` tells triage how to rank: a ``symptom`` (e.g. EI0002, a rank that waited
for a peer) is explained by the ``cause`` it is ``caused_by``; a ``wrapper`` (EZ9999,
ERR00100, 507011) only says "something below failed"; ``noise`` lines are harmless.
"""
from __future__ import annotations

import threading
from pathlib import Path
from typing import Dict, Optional

from ascend_doctor.kb.knowledge import KnowledgeBase
from ascend_doctor.kb.loader import data_dir_from_env, load_store
from ascend_doctor.kb.model import (
    CHECK_IDS,
    ROLES,
    CodeInfo,
    Entry,
    Example,
    Fix,
    KBError,
    Match,
    MatchPart,
)

__all__ = [
    "load",
    KnowledgeBase,
    "Entry",
    "Match",
    "MatchPart",
    "CodeInfo",
    "Fix",
    "Example",
    "KBError",
    "CHECK_IDS",
    "ROLES",
]

_CACHE: Dict[str, KnowledgeBase] = {}
_LOCK = threading.Lock()


def load(data_dir: Optional[str] = None) -> KnowledgeBase:
    """The knowledge base, parsed once per process (thread-safe). Raises KBError on bad data."""
    path = Path(data_dir) if data_dir else data_dir_from_env()
    key = str(path)
    base = _CACHE.get(key)
    if base is None:
        with _LOCK:
            base = _CACHE.get(key)
            if base is None:
                base = KnowledgeBase(load_store(path), path)
                _CACHE[key] = base
    return base

