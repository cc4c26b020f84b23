"""One chips module, one data file (compat_matrix/data/chips.yaml), two explicit contexts:
names as npu-smi prints them, and names a person types (or release notes use)."""
from __future__ import annotations

from pathlib import Path

import pytest

from ascend_doctor.parsers.npu_smi import parse_npu_smi_info
from compat_matrix.chips import (describe, families, family_from_npu_smi, family_from_user, in_scope,
                                 try_family_from_user)
from compat_matrix.errors import ChipError

NPU_SMI = Path(__file__).resolve().parents[1] / "check" / "data" / "npu_smi"  # URLs in SOURCES.md there


@pytest.mark.parametrize("text,family", [
    ("910B3", "910b"), ("910B4-1", "910b"), ("910B2C", "910b"), ("Ascend910B4", "910b"), ("Atlas 800I A2", "910b"),
    ("Ascend910", "910_93"), ("Ascend910_9392", "910_93"), ("A3", "910_93"),
    ("910ProB", "910"), ("910PremiumA", "910"), ("910A", "910"),
    ("310P3", "310p"), ("Atlas 300I Duo", "310p"), ("310B1", "310b"), ("310B", "310b"),
    ("Atlas 350", "atlas350"), ("Atlas 950 SuperPoD", "atlas950"), ("Atlas 850", "atlas850"),
    ("Ascend950PR", "950"), ("950", "950"), ("910b", "910b"),
    ("910B", "910b"),  # typed for compat, "910B" is the A2 series of the release notes
])
def test_typed_names(text, family):
    assert family_from_user(text) == family


@pytest.mark.parametrize("sample,names,family", [
    ("a2_910b3_driver23.0.7_busy.txt", ["910B3"], "910b"),
    ("a2_910b3_driver25.2.0_container.txt", ["910B3"], "910b"),
    ("a3_ascend910_driver25.2.1.txt", ["Ascend910"], "910_93"),
    ("a3_driver26.0.rc2_devices_excerpt.txt", ["Ascend910"], "910_93"),
    ("910prob_driver24.1.0.txt", ["910ProB"], "910"),
    ("310p3_duo_driver25.2.0_excerpt.txt", ["310P3"], "310p"),
    ("310p3_pro_tool22.0.0_driver22.0.2.txt", ["310P3"], "310p"),
    ("310b1_driver23.0.rc3.txt", ["310B1"], "310b"),
    ("310b_driver24.1.rc3.txt", ["310B"], "310b"),
])
def test_names_npu_smi_prints(sample, names, family):
    info = parse_npu_smi_info((NPU_SMI / sample).read_text(encoding="utf-8"))
    assert sorted({c.name for c in info.chips}) == names
    fam = family_from_npu_smi(names[0])
    assert fam is not None and fam.id == family and fam.kernel_dir and fam.package


def test_the_two_contexts_differ_where_the_sources_say_they_do():
    # npu-smi prints plain "910B" for the old 910-class chip (vllm-project/vllm-ascend#573);
    # the release notes' "910B" is the A2 series
    assert family_from_npu_smi("910B").id == "910" and family_from_user("910B") == "910b"
    # and "Ascend910" is an A3 chip in both
    assert family_from_npu_smi("Ascend910").id == family_from_user("Ascend910") == "910_93"
    # npu-smi names are exact: a product name or a typed id is not something npu-smi prints
    assert family_from_npu_smi("Atlas 800I A2") is None and family_from_npu_smi("910b") is None
    assert family_from_npu_smi("xxx") is None and family_from_npu_smi("") is None


def test_kernel_facts():
    assert family_from_npu_smi("910B4").kernel_dir == "ascend910b"
    assert family_from_npu_smi("Ascend910").package == "A3"
    assert family_from_npu_smi("310P3").kernel_dir == "ascend310p"


def test_every_npu_smi_family_is_a_typed_family_and_has_kernel_facts():
    for fam in families().values():
        assert family_from_user(fam.id) == fam.id
        if fam.npu_smi is not None:
            assert fam.kernel_dir and fam.package, fam.id


def test_unknown_chip():
    with pytest.raises(ChipError) as info:
        family_from_user("H100")
    assert "\n" not in str(info.value) and "910B3" in str(info.value) and "910_93" in str(info.value)
    assert try_family_from_user("H100") is None and try_family_from_user(None) is None


def test_scopes():
    assert in_scope("910b", ["non_950"]) and not in_scope("atlas350", ["non_950"])
    assert in_scope("atlas350", ["atlas350"]) and in_scope(None, ["all"]) and in_scope(None, ["910b"])
    assert not in_scope(None, ["atlas350"])
    assert describe("910_93").startswith("Atlas A3") and describe("nope") == "nope"
