"""Ascend chip families, from one data file (data/chips.yaml), read in two explicit contexts.

The same text means different chips depending on who wrote it:

* ``family_from_npu_smi(name)``: a chip name exactly as ``npu-smi info`` prints it. There,
  plain ``910B`` is the old 910-class chip and ``Ascend910`` is an Atlas A3 chip.
* ``family_from_user(text)``: a chip or product name a person types (``compat --chip``) or
  release notes use. There, ``910B`` means the Atlas A2 series, and ``Atlas 800I A2``,
  ``A3`` or ``Atlas 950 SuperPoD`` name families too.

Both answer with the same family ids ("910b", "910_93", "910", "310p", ...), which the
version tables use to scope their rows (``in_scope``).
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Dict, Iterable, Optional, Pattern, Tuple

from compat_matrix.errors import ChipError, DataError
from compat_matrix.tables import raw_data

# Scope words used in the data files besides family ids.
SCOPE_ALL = "all"
SCOPE_NON_950 = "non_950"

# Examples shown when a typed name is not recognised (the family ids are added).
_EXAMPLES = ("910B", "910B3", "Ascend910B4", "A2", "A3", "Ascend910_9392", "910ProB", "310P3",
             "310B1", "Atlas 350", "Atlas 950 SuperPoD")


@dataclass(frozen=True)
class Family:
    """One chip family: what it covers, and (where known) its CANN kernel directory and package."""

    id: str
    about: str
    product: str
    kernel_dir: Optional[str]
    package: Optional[str]
    gen_950: bool
    npu_smi: Optional[Pattern[str]]
    typed: Pattern[str]


@lru_cache(maxsize=1)
def families() -> Dict[str, Family]:
    """Family id -> Family, in the data file's order (the order typed names are tried in)."""
    out: Dict[str, Family] = {}
    for i, row in enumerate(raw_data("chips")["families"]):
        try:
            fid = str(row["id"])
            out[fid] = Family(
                id=fid, about=str(row["about"]), product=str(row.get("product") or row["about"]),
                kernel_dir=row.get("kernel_dir"), package=None if row.get("package") is None else str(row["package"]),
                gen_950=bool(row.get("gen_950", False)),
                npu_smi=re.compile(row["npu_smi"]) if row.get("npu_smi") else None,
                typed=re.compile("^(?:%s)$" % row["typed"]),
            )
        except (KeyError, TypeError, re.error) as exc:
            raise DataError("chips.yaml families[%d]: %s" % (i, exc)) from None
    return out


def family_ids() -> Tuple[str, ...]:
    return tuple(families())


def accepted_names() -> Tuple[str, ...]:
    return _EXAMPLES + ("or a family id: " + ", ".join(families()),)


def family_from_npu_smi(name: Optional[str]) -> Optional[Family]:
    """The family of a chip name as npu-smi prints it ('910B3', 'Ascend910', '310P3', plain
    '910B' for the old 910); None when the name is unknown."""
    if not name:
        return None
    text = name.strip()
    for fam in families().values():
        if fam.npu_smi is not None and fam.npu_smi.search(text):
            return fam
    return None


def family_from_user(text: str) -> str:
    """Family id of a chip or product name a person types ('910B' / 'Atlas 800I A2' -> '910b',
    'A3' -> '910_93'); ChipError (one line, with accepted forms) when unknown."""
    raw = str(text)
    s = raw.strip().lower()
    fams = families()
    if s in fams:
        return s
    # "Atlas 800I A2", "Ascend 910B3", "Ascend910_9392" -> compact form
    s = re.sub(r"[\s\-]+", "", s)
    s = re.sub(r"^(?:atlas|huawei)", "", s)
    if s.startswith("ascend") and s != "ascend910":
        s = s[len("ascend"):]
    for fam in fams.values():
        if fam.typed.match(s):
            return fam.id
    raise ChipError(raw, accepted_names())


def try_family_from_user(text: Optional[str]) -> Optional[str]:
    if text is None:
        return None
    try:
        return family_from_user(text)
    except ChipError:
        return None


def in_scope(family: Optional[str], scope: Iterable[str]) -> bool:
    """Does a row written for ``scope`` apply to ``family``? Unknown chip: only 'all' rows
    and rows not tied to the 950 generation count."""
    scope = list(scope)
    gen_950 = {f.id for f in families().values() if f.gen_950}
    if SCOPE_ALL in scope:
        return True
    if family is None:
        return SCOPE_NON_950 in scope or any(s not in gen_950 for s in scope)
    if family in scope:
        return True
    if SCOPE_NON_950 in scope and family not in gen_950:
        return True
    return False


def describe(family: str) -> str:
    fam = families().get(family)
    return fam.about if fam is not None else family
