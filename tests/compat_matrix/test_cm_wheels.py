"""Every published torch-npu build gets a CANN statement, from the wheels themselves (issue #14).

The version list is the committed snapshot of the package index (pip_index_torch_npu.txt, written
by tools/harvest_wheels.py from https://pypi.org/simple/torch-npu/); the parser tests run on
excerpts of real wheel METADATA (see data/wheel_metadata/SOURCES.md).
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from compat_matrix import evaluate, suggest
from compat_matrix.report import COMPATIBLE, INCOMPATIBLE, NOT_RECOMMENDED, UNKNOWN
from compat_matrix.versions import parse_version
from compat_matrix.wheels import KINDS

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
SNAPSHOT = HERE / "data" / "pip_index_torch_npu.txt"
META = HERE / "data" / "wheel_metadata"
sys.path.insert(0, str(REPO))

from tools import harvest_wheels as hw  # noqa: E402


def _snapshot_versions():
    return sorted(hw.inventory_from_snapshot(SNAPSHOT.read_text(encoding="utf-8")), key=hw._vkey)


def test_snapshot_is_the_whole_index():
    versions = _snapshot_versions()
    assert len(versions) == 67  # 53 final releases and 14 release candidates, 2.1.0rc1 .. 2.14.0
    assert versions[0] == "2.1.0rc1" and versions[-1] == "2.14.0"
    lines = {".".join(v.split(".")[:2]) for v in versions}
    assert lines == {"2.%d" % n for n in range(1, 15)}


def test_every_published_build_has_a_cann_statement(matrix):
    """None silently missing: a source, an inherited statement, or an inference with its bounds."""
    kinds = {}
    for text in _snapshot_versions():
        v = parse_version(text, "torch_npu")
        b = matrix.build(v)
        assert b is not None and b.on_pypi, text
        st = matrix.cann_statement(v)
        assert st is not None, text
        assert st.kind in KINDS and st.kind != "none", (text, st.text)
        kinds[st.kind] = kinds.get(st.kind, 0) + 1
        if st.kind in ("table", "wheel", "inherited"):
            assert st.specs and st.source in matrix.sources, (text, st)
            assert b.cann is not None and b.cann.text == st.specs[0].text
        if st.kind == "wheel":
            assert st.source == "pypi: torch-npu==%s METADATA" % text
        if st.kind == "inherited":
            assert v.pep440.is_postrelease and "is a build of the %s line" % text.split(".post")[0] in st.text
        if st.kind == "inferred":
            assert b.cann is None and st.range is not None and (st.lower or st.upper)
            assert "an inference, not a statement" in st.text
    assert kinds["table"] >= 50 and kinds["wheel"] >= 3 and kinds["inherited"] >= 10 and kinds["inferred"] >= 1


def test_wheels_yaml_covers_the_snapshot(matrix):
    from compat_matrix.tables import raw_data

    rows = raw_data("wheels")["builds"]
    assert sorted((r["torch_npu"] for r in rows), key=hw._vkey) == _snapshot_versions()
    assert not [r for r in rows if r.get("unreadable")]
    pins = {r["torch_npu"]: r.get("torch_pin") for r in rows}
    assert pins["2.14.0"] == "torch==2.14.0.*" and pins["2.7.1.post8"] == "torch==2.7.1"
    py = {r["torch_npu"]: r for r in rows}
    assert py["2.10.0.post6"]["python_x86_64"] == ["3.10", "3.11"]


def test_2_14_0_with_9_1_0_is_compatible_from_its_wheel():
    p = evaluate({"torch_npu": "2.14.0", "cann": "9.1.0"}).pair("cann", "torch_npu")
    assert p.verdict == COMPATIBLE, p.reason
    assert p.source_id == "pypi: torch-npu==2.14.0 METADATA"
    assert p.source == "https://pypi.org/project/torch-npu/2.14.0/#files"
    assert "2.14.0 wheel's own description says to install CANN 9.1.0" in p.reason


def test_2_14_0_with_8_0_0_is_not_compatible_and_says_why():
    p = evaluate({"torch_npu": "2.14.0", "cann": "8.0.0"}).pair("cann", "torch_npu")
    assert p.verdict == INCOMPATIBLE
    assert "CANN 9.1.0" in p.reason and "older than every CANN named for this build" in p.reason


def test_post_build_inherits_its_line_and_says_so():
    p = evaluate({"torch_npu": "2.12.0.post3", "cann": "8.5.0"}).pair("cann", "torch_npu")
    assert p.verdict == COMPATIBLE
    assert p.reason.startswith("torch_npu 2.12.0.post3 is a build of the 2.12.0 line")
    assert "its own description pairs the 2.12.0 line with CANN 8.5.0 (2.12.0rc1, branch v2.12.0)" in p.reason
    q = evaluate({"torch_npu": "2.12.0.post3", "cann": "9.1.0"}).pair("cann", "torch_npu")
    assert q.verdict == COMPATIBLE and "2.12.0 is made for CANN 9.1.0 by the stored table" in q.reason


def test_a_newer_cann_than_any_statement_is_unknown_not_refused():
    p = evaluate({"torch_npu": "2.12.0.post3", "cann": "9.2.0"}).pair("cann", "torch_npu")
    assert p.verdict == UNKNOWN


def test_inference_is_never_compatible(matrix):
    seen = 0
    for v, st in matrix.cann_statements.items():
        if st.kind != "inferred":
            continue
        lo, hi = st.range
        for cann in {x for x in (lo, hi) if x is not None}:
            p = evaluate({"torch_npu": v.text, "cann": cann.text}).pair("cann", "torch_npu")
            assert p.verdict == NOT_RECOMMENDED and "inferred, not stated" in p.reason, (v, p.reason)
            seen += 1
    assert seen >= 1


def test_product_number_in_the_cann_column_is_read_as_the_release_line():
    p = evaluate({"torch_npu": "2.9.1", "cann": "9.0.0"}).pair("cann", "torch_npu")
    assert p.verdict == COMPATIBLE and "TorchNPU 26.0.0, made for CANN 9.0.0" in p.reason
    # the cell's "26.0.0" is a TorchNPU number, not a CANN release: never taken as one
    q = evaluate({"torch_npu": "2.9.1", "cann": "26.0.0"}).pair("cann", "torch_npu")
    assert q.verdict != COMPATIBLE


def test_suggest_offers_the_newest_builds_when_the_host_fits():
    top = suggest({})[0]
    assert top.components["torch_npu"] == "2.14.0" and top.components["cann"] == "9.1.0"
    host = suggest({"cann": "9.1.0", "python": "3.14"})
    assert [s.components["torch_npu"] for s in host[:3]] == ["2.14.0", "2.12.0.post3", "2.11.0.post3"]
    # a host that cannot take them gets the newest that fits
    old = suggest({"python": "3.9"})[0]
    assert old.components["torch_npu"] == "2.7.1.post11"


def test_harvest_contradictions_are_recorded():
    import yaml

    doc = yaml.safe_load((REPO / "compat_matrix" / "data" / "contradictions.yaml").read_text(encoding="utf-8"))
    rows = {(c["torch_npu"], c["cann"]): c for c in doc["wheel_contradictions"]}
    assert rows[("2.1.0.post4", "8.0.RC1")]["see"] == "c03"
    assert "TorchNPU release number 26.0.0" in rows[("2.9.1", "26.0.0")]["why"]


# ------------------------------------------------------------------ the harvester's parsers
def test_release_table_of_a_real_description():
    facts = hw.parse_metadata((META / "torch_npu-2.9.1.METADATA").read_text(encoding="utf-8"))
    assert facts["version"] == "2.9.1" and facts["torch_pin"] == "torch==2.9.1" and facts["torch"] == "2.9.1"
    rows = facts["table"]
    assert rows[0] == {"cann": "26.0.0", "torch": "2.9.1", "torch_npu": "2.9.1", "branch": "v2.9.1-26.0.0"}
    # a blank CANN cell continues the group above; '(beta)' is dropped from the version
    assert {"cann": "8.5.0", "torch": "2.8.0", "torch_npu": "2.8.0.post2", "branch": "v2.8.0-7.3.0"} in rows
    assert any(r["torch_npu"] == "1.11.0.rc2" and r["cann"] == "6.0.1" for r in rows)
    assert facts["install_cann"] is None


def test_install_statement_of_a_real_description():
    facts = hw.parse_metadata((META / "torch_npu-2.14.0.METADATA").read_text(encoding="utf-8"))
    assert facts["torch_pin"] == "torch==2.14.0.*" and facts["torch"] == "2.14.0"
    assert (facts["install_cann"], facts["install_example"]) == ("9.1.0", "2.12.0")
    assert facts["table"] == []


def test_codegen_registration_of_a_real_wheel():
    from tools import op_reduce as red
    from tools.op_regenerate import aten_name_lookup, load_yaml_keep_duplicates

    doc = load_yaml_keep_duplicates((META / "npu_native_functions_by_codegen-2.14.0.yaml").read_text(encoding="utf-8"))
    ops = red.reduce_codegen(doc, aten_name_lookup())
    assert ops["aten::_local_scalar_dense"]["impl"] == {"torch_npu"}
    assert ops["aten::embedding"]["impl"] == {"acl_op", "op_api"} and ops["aten::embedding"]["src"] == {"codegen_symint"}
    assert ops["npu::npu_gather_backward"]["impl"] == {"op_api"}  # symint entry that is not an aten op
    assert ops["npu::npu_format_cast.Tensor"]["impl"] == {"torch_npu"}
    assert ops["aten::_thnn_fused_gru_cell"]["src"] == {"codegen_autograd"}
    assert ops["aten::dequantize.self"]["src"] == {"codegen_quant"}
    # 'sparse: op_api' names the sparse kernel's namespace; a bare native name with op_api: true
    assert ops["aten::add.out"]["impl"] == {"acl_op", "op_api", "sparse"}
    assert ops["aten::_coalesce"]["impl"] == {"sparse"}
    assert ops["aten::clone"]["impl"] == {"torch_npu", "op_api"}
    with pytest.raises(red.ReduceError):
        red.reduce_codegen({"mystery": [{"func": "x() -> ()"}]}, lambda n: True)


def test_pip_index_answer_parser():
    text = "torch-npu (2.14.0)\nAvailable versions: 2.14.0, 2.13.0rc1\n  INSTALLED: \n"
    assert hw.parse_available(text) == ["2.14.0", "2.13.0rc1"]
    assert hw.parse_available("ERROR: No matching distribution found for torch-npu\n") == []
