"""Chip and product names -> the chip families the version tables are written for.

npu-smi prints chip names such as 910B3, 310P3, 310B1 or, on Atlas A3 boxes, plain
``Ascend910``; release notes speak of products (Atlas 350 card, Atlas 950 SuperPoD).
Tables key their rows by family ("910b", "310p", ...) or by product.
"""
from __future__ import annotations

import re
from typing import Dict, Iterable, Optional, Tuple

from compat_matrix.errors import ChipError

# family id -> what it covers (shown to users)
FAMILIES: Dict[str, str] = {
    "910b": "Atlas A2 series (Ascend 910B1-B4, 910B2C, 910B4-1)",
    "910_93": "Atlas A3 series (Ascend 910_93xx; npu-smi prints 'Ascend910')",
    "910": "Atlas training series A1 (Ascend 910A, 910ProA, 910ProB, 910PremiumA)",
    "310p": "Atlas 300I/300V Pro and Duo (Ascend 310P1, 310P3)",
    "310b": "Atlas 200I/500 A2 (Ascend 310B1, 310B4)",
    "310": "Ascend 310 (Atlas 200/300/500, first generation)",
    "atlas350": "Atlas 350 card (Ascend 950 generation)",
    "atlas850": "Atlas 850 series (Ascend 950 generation)",
    "atlas950": "Atlas 950 SuperPoD (Ascend 950 generation)",
    "950": "Ascend 950 generation, product not named",
}

# Families of the 950 generation: release notes give them HDK lines of their own and
# call everything else "other products".
GEN_950 = frozenset({"atlas350", "atlas850", "atlas950", "950"})

# Scope words used in the data files besides family ids.
SCOPE_ALL = "all"
SCOPE_NON_950 = "non_950"

_PATTERNS: Tuple[Tuple[str, str], ...] = (
    (r"910b\d*(?:-\d+)?c?|a2|800[ti]a2|900a2(?:pod)?|200ta2(?:box16)?", "910b"),
    (r"910_?93\d*|910c|a3|ascend910|910a3|800[ti]a3|900a3(?:superpod)?", "910_93"),
    (r"910(?:a|proa|prob|premiuma)?|a1|800-?90[01]0|300t-?9000", "910"),
    (r"310p\d*|300i(?:pro|duo)|300v(?:pro)?", "310p"),
    (r"310b\d*|200i(?:dk)?a2|500a2|orangepiaipro", "310b"),
    (r"310", "310"),
    (r"350|atlas350", "atlas350"),
    (r"850|atlas850", "atlas850"),
    (r"950superpod|atlas950(?:superpod)?|950dt", "atlas950"),
    (r"950(?:pr)?|ascend950", "950"),
)
_COMPILED = tuple((re.compile("^(?:%s)$" % pat), fam) for pat, fam in _PATTERNS)

ACCEPTED = ("910B", "910B3", "Ascend910B4", "A2", "A3", "Ascend910_9392", "910ProB", "310P3",
            "310B1", "Atlas 350", "Atlas 950 SuperPoD", "or a family id: " + ", ".join(FAMILIES))


def chip_family(text: str) -> str:
    """Family id for a chip or product name ('910B3' -> '910b'); ChipError if unknown."""
    raw = str(text)
    s = raw.strip().lower()
    if s in FAMILIES:
        return s
    # "Atlas 800I A2", "Ascend 910B3", "Ascend910_9392" -> compact form
    s = re.sub(r"[\s\-]+", "", s)
    s = re.sub(r"^(?:atlas|huawei)", "", s)
    if s.startswith("ascend") and s != "ascend910":
        s = s[len("ascend"):]
    for rx, fam in _COMPILED:
        if rx.match(s):
            return fam
    raise ChipError(raw, ACCEPTED)


def try_chip_family(text: Optional[str]) -> Optional[str]:
    if text is None:
        return None
    try:
        return chip_family(text)
    except ChipError:
        return None


def in_scope(family: Optional[str], scope: Iterable[str]) -> bool:
    """Does a row written for ``scope`` apply to ``family``? Unknown chip: only 'all' rows
    and rows not tied to the 950 generation count."""
    scope = list(scope)
    if SCOPE_ALL in scope:
        return True
    if family is None:
        return SCOPE_NON_950 in scope or any(s not in GEN_950 for s in scope)
    if family in scope:
        return True
    if SCOPE_NON_950 in scope and family not in GEN_950:
        return True
    return False


def describe(family: str) -> str:
    return FAMILIES.get(family, family)
