"""Chip names as npu-smi and release notes print them."""
from __future__ import annotations

import pytest

from compat_matrix.chips import chip_family, in_scope
from compat_matrix.errors import ChipError


@pytest.mark.parametrize("text,family", [
    ("910B3", "910b"), ("910B4-1", "910b"), ("910B2C", "910b"), ("Ascend910B4", "910b"), ("Atlas 800I A2", "910b"),
    ("Ascend910", "910_93"), ("Ascend910_9392", "910_93"), ("A3", "910_93"),
    ("910ProB", "910"), ("910PremiumA", "910"), ("910A", "910"),
    ("310P3", "310p"), ("Atlas 300I Duo", "310p"), ("310B1", "310b"), ("310B", "310b"),
    ("Atlas 350", "atlas350"), ("Atlas 950 SuperPoD", "atlas950"), ("Atlas 850", "atlas850"),
    ("Ascend950PR", "950"), ("950", "950"), ("910b", "910b"),
])
def test_families(text, family):
    assert chip_family(text) == family


def test_unknown_chip():
    with pytest.raises(ChipError) as info:
        chip_family("H100")
    assert "\n" not in str(info.value) and "910B3" in str(info.value)


def test_scopes():
    assert in_scope("910b", ["non_950"]) and not in_scope("atlas350", ["non_950"])
    assert in_scope("atlas350", ["atlas350"]) and in_scope(None, ["all"]) and in_scope(None, ["910b"])
    assert not in_scope(None, ["atlas350"])
