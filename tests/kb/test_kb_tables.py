"""The numeric tables and the E-code catalog are complete and written in our own words."""
from __future__ import annotations

import re


from ascend_doctor import kb

from . import refdata

BASE = kb.load()
TABLES = BASE.tables


def test_table_sizes():
    # the reference holds 252 ACL/runtime/GE codes; 107046 comes from the torch-npu 2.14.0 headers
    assert TABLES.tables == {
        "acl": 253,
        "aclnn": 27,
        "hccl_result": 25,
        "driver": 97,
        "runtime_inner": 409,
        "task_scheduler": 133,
        "dcmi": 21,
        "cann_ecodes": 542,
        "torch_npu_err": 96,
    }


def _norm(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", " ", text.lower()).strip()


def test_every_reference_code_is_in_the_kb():
    acl = refdata.load("acl_error_codes.yaml")
    cann = refdata.load("cann_error_codes.yaml")
    spelled = {
        "acl_codes": lambda c: str(c),
        "aclnn_codes": lambda c: str(c),
        "hccl_result_codes": lambda c: "hccl:%s" % c,
        "driver_codes": lambda c: "drv:%s" % c,
        "runtime_inner_codes": lambda c: str(c),
    }
    missing = []
    for section, spell in spelled.items():
        for row in acl[section]:
            # code 0 (success) is also a valid HcclResult/drvError_t spelling: read the table directly
            infos = TABLES.by_key.get("0", []) if row["code"] == 0 and section in ("acl_codes", "aclnn_codes") else BASE.lookup_codes(spell(row["code"]))
            names = {n for i in infos for n in (i.name,) + i.aliases}
            if row["name"] not in names:
                missing.append((section, row["code"], row["name"]))
    for row in cann["codes"]:
        info = BASE.lookup_code(row["code"])
        if info is None:
            missing.append(("cann", row["code"], row.get("title")))
    assert missing == []


def test_meanings_are_not_the_reference_sentences():
    acl = refdata.load("acl_error_codes.yaml")
    cann = refdata.load("cann_error_codes.yaml")
    ref = set()
    for section in ("acl_codes", "aclnn_codes", "hccl_result_codes", "driver_codes"):
        for row in acl[section]:
            ref.add(_norm(str(row.get("meaning", ""))))
            ref.add(_norm(str(row.get("handling", ""))))
    for row in cann["codes"]:
        ref.add(_norm(str(row.get("meaning", ""))))
        ref.add(_norm(str(row.get("handling", ""))))
    same = [i.key for i in TABLES.all() if _norm(i.meaning) in ref]
    assert same == []


def test_dcmi_codes_from_the_install_notes():
    for code in ("-8001", "-8002", "-8005", "-8007", "-8008", "-8012", "-8013", "-8017", "-8020", "-8255"):
        info = BASE.lookup_code(code)
        assert info is not None and info.family == "dcmi", code
    assert BASE.lookup_code("-8005").name == "DCMI_ERR_CODE_INNER_ERR"
    assert BASE.lookup_code("-8020").name == "DCMI_ERR_CODE_RESOURCE_OCCUPIED"


def test_every_code_has_meaning_family_and_sources():
    for info in TABLES.all():
        assert info.meaning and len(info.meaning) >= 9, info.key
        assert info.family_title, info.key
        assert info.sources, info.key
        for src in info.sources:
            assert src.startswith("https://"), (info.key, src)


def test_header_confirmation_recorded():
    # every public ACL/runtime/GE code was checked against the headers in two torch-npu wheels;
    # 207021 is newer than both wheels' CANN headers
    unconfirmed = [i.code for i in TABLES.all() if i.family in ("acl", "runtime_passthrough", "ge_passthrough") and not i.confirmed_by]
    assert unconfirmed == ["207021"]
    assert all(BASE.lookup_code("hccl:%d" % n).confirmed_by for n in range(25))
    assert "torch-npu 2.14.0" in " ".join(BASE.lookup_code("107045").confirmed_by)


def test_renamed_code_keeps_both_readings():
    info = BASE.lookup_code("107045")
    assert "ACL_ERROR_RT_STREAM_NOT_SUPPORT_OPERA" in info.aliases
    assert BASE.lookup_code("ACL_ERROR_RT_STREAM_NOT_SUPPORT_OPERA").key == "107045"
    assert BASE.lookup_code("107046").name == "ACL_ERROR_RT_SUB_ACLGRAPH_IS_CAPTURING"


def test_internal_and_ts_codes_map_to_public_codes():
    inner = BASE.lookup_code("0x7150050")
    assert inner.maps_to == "507011" and inner.printed == "the model stream execute failed"
    ts = BASE.lookup_code("0x26")
    assert ts.printed == "aicore exception" and ts.maps_to == "0x07150026"
    assert BASE.lookup_code(ts.maps_to).maps_to == "507015"
    for info in TABLES.all():
        if info.family in ("runtime_inner",):
            assert BASE.lookup_code(info.maps_to) is not None, info.key


def test_torch_npu_err_codes_compose():
    info = BASE.lookup_code("ERR02200")
    assert info.name == "DIST call hccl api failed"
    assert BASE.lookup_code("ERR99999").printed == "ERR99999 UNKNOWN applicaiton exception"
    assert BASE.lookup_code("ERR01007").name == "OPS feature not supported"


def test_ecode_catalog_fields():
    ez = BASE.lookup_code("EZ9999")
    assert ez.klass.startswith("inner error") and "aclnn" in ez.meaning
    ei = BASE.lookup_code("EI0002")
    assert "Notify" in ei.printed and ei.component.startswith("HCCL")
    assert BASE.ecode_component("EX0001") is None
    assert "Driver" in BASE.ecode_component("EL0123")
