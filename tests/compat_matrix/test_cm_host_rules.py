"""Rules the host states itself, judged on version files copied from real hosts."""
from __future__ import annotations

import pytest

from compat_matrix.host_rules import (HostRuleError, judge_driver_firmware, judge_toolkit_driver,
                                      judge_version_files, parse_families, parse_key_values,
                                      parse_ranges, range_accepts)
from compat_matrix.report import COMPATIBLE, INCOMPATIBLE, UNKNOWN

from cm_testdata import load_test_data

DATA = load_test_data("host_version_files.yaml")
SAMPLES = DATA["samples"]


@pytest.mark.parametrize("sample", SAMPLES, ids=[s["id"] for s in SAMPLES])
def test_real_version_files(sample):
    assert sample["url"].startswith("https://")
    pairs = judge_version_files(sample.get("driver"), sample.get("firmware"), sample.get("toolkit"))
    got = {"%s~%s" % (p.a, p.b): p for p in pairs}
    for key, want in sample["expect"].items():
        if key == "decided_by":
            continue
        assert got[key].verdict == want, got[key].reason
    if sample["expect"].get("decided_by") == "driver":
        assert "compatible_version_fw" in got["driver~firmware"].reason


def test_key_values_of_a_real_file():
    kv = parse_key_values(SAMPLES[0]["driver"])
    assert kv["Version"] == "23.0.7" and kv["Innerversion"] == "V100R001C15SPC012B220"
    assert parse_ranges(kv["compatible_version_fw"]) == [("7.0.0", "7.1.99")]
    assert parse_families(kv["compatible_version"]) == ["V100R001C29", "V100R001C30", "V100R001C13", "V100R001C15"]


def test_range_semantics_of_the_driver_tooling():
    assert range_accepts("7.1.0.11.220", "7.0.0", "7.1.99")
    assert not range_accepts("7.2.0.1.100", "7.0.0", "7.1.99")
    assert range_accepts("24.1.rc3", "24.1", "24.1.")
    assert range_accepts("24.1.0", "24.1", "24.1.")
    assert not range_accepts("24.10.0", "24.1", "24.1.")  # '0' sorts after '.'
    assert range_accepts("23.0.rc3.1", "23.0.rc3", "23.0.rc3.")
    assert not range_accepts("23.0.7", "23.0.0", "23.0.0.")  # only the driver's own list takes it


def test_firmware_list_decides_when_the_driver_list_does_not():
    fw_list = parse_ranges("[23.0.0,23.0.0.],[24.0,24.0.],[24.1,24.1.],[25.0,25.0.]")
    p = judge_driver_firmware("25.0.rc1.1", "7.9.0.1.100", [("7.0.0", "7.7.99")], fw_list)
    assert p.verdict == COMPATIBLE and "compatible_version_drv" in p.reason
    p = judge_driver_firmware("25.2.0", "7.9.0.1.100", [("7.0.0", "7.7.99")], fw_list)
    assert p.verdict == INCOMPATIBLE and "neither side" in p.reason
    p = judge_driver_firmware("25.2.0", "7.9.0.1.100", [("7.0.0", "7.7.99")], None)
    assert p.verdict == UNKNOWN


def test_firmware_older_than_6_4_is_refused():
    p = judge_driver_firmware("23.0.rc3", "6.3.0.1.241", [("6.0.0", "7.9.99")], None)
    assert p.verdict == INCOMPATIBLE and "6.4" in p.reason
    # a 22.x driver predates the floor: when its own list names the firmware, the files cannot settle it
    old = judge_driver_firmware("22.0.2", "6.3.0.1.241", [("6.0.0", "6.4.99")], None)
    assert old.verdict == UNKNOWN and "6.4" in old.reason


def test_toolkit_driver_family():
    tk = {t["id"]: parse_key_values(t["text"]) for t in DATA["toolkits"]}
    fams_85 = parse_families(tk["mindcluster_doc_cann_8_5"]["compatible_version"])
    # driver 25.0.rc1.1 is family C21: CANN 8.5.0 lists it
    assert judge_toolkit_driver(fams_85, "V100R001C21SPC002B220", "8.5.0", "25.0.rc1.1").verdict == COMPATIBLE
    # a C17 driver is not in 8.5.0's list
    p = judge_toolkit_driver(fams_85, "V100R001C17SPC001B100", "8.5.0")
    assert p.verdict == INCOMPATIBLE and "V100R001C17" in p.reason
    fams_81 = parse_families(tk["vllm_ascend_1047_cann_8_1"]["compatible_version"])
    assert judge_toolkit_driver(fams_81, "V100R001C19SPC001B124", "8.1.RC1", "24.1.rc3").verdict == COMPATIBLE


def test_bad_lists_are_one_line_errors():
    for bad in ("", "7.0.0-7.1.99", "[7.0.0]"):
        with pytest.raises(HostRuleError) as info:
            parse_ranges(bad)
        assert isinstance(info.value, ValueError) and "\n" not in str(info.value)
    with pytest.raises(HostRuleError):
        parse_families("C15,C18")
    with pytest.raises(ValueError):
        judge_toolkit_driver(["V100R001C15"], "not-an-inner-version")


def test_missing_fields_give_no_pair():
    assert judge_version_files("Version=23.0.7\n", None, None) == []
    pairs = judge_version_files("Version=23.0.7\n", "Version=7.1.0.11.220\n", None)
    assert len(pairs) == 1 and pairs[0].verdict == UNKNOWN
