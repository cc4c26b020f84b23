"""Chip names printed by npu-smi mapped to their family and CANN kernel directory (data/chips.yaml)."""
from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import List, Optional

_DATA = Path(__file__).parent / "data" / "chips.yaml"


@dataclass(frozen=True)
class ChipFamily:
    family: str
    product: str
    kernel_dir: str
    package: str
    pattern: str


@lru_cache(maxsize=1)
def _families() -> List[ChipFamily]:
    import yaml

    rows = yaml.safe_load(_DATA.read_text(encoding="utf-8"))["chips"]
    return [ChipFamily(str(r["family"]), r["product"], r["kernel_dir"], str(r["package"]), r["match"]) for r in rows]


def chip_family(name: str) -> Optional[ChipFamily]:
    """Family of a chip name such as ``910B3``, ``Ascend910``, ``310P3``; None when unknown."""
    name = name.strip()
    for fam in _families():
        if re.search(fam.pattern, name):
            return fam
    return None
