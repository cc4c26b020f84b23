"""opcheck covers every published torch_npu build, from each wheel's own registration (issue #15).

The version list is the committed snapshot of the package index
(tests/compat_matrix/data/pip_index_torch_npu.txt, from https://pypi.org/simple/torch-npu/); the op
data under compat_matrix/op_support/data/wheels/ was read by tools/harvest_wheels.py from each
wheel's torch_npu/csrc/aten/npu_native_functions_by_codegen.yaml.
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from ascend_doctor.commands.opcheck import run_versions
from ascend_doctor.opcheck.check import check
from compat_matrix import op_support as ops
from compat_matrix.op_support import store

REPO = Path(__file__).resolve().parents[2]
SNAPSHOT = REPO / "tests" / "compat_matrix" / "data" / "pip_index_torch_npu.txt"
sys.path.insert(0, str(REPO))

from tools.harvest_wheels import _vkey, inventory_from_snapshot  # noqa: E402


def _snapshot():
    return sorted(inventory_from_snapshot(SNAPSHOT.read_text(encoding="utf-8")), key=_vkey)


def _line(v: str) -> str:
    return ".".join(v.split(".")[:3]).split("rc")[0].rstrip(".")


def test_versions_lists_every_torch_2_line_on_the_index(capsys):
    assert run_versions(json_flag=True) == 0
    doc = json.loads(capsys.readouterr().out)
    lines = {ln["line"]: ln for ln in doc["lines"]}
    on_index = {_line(v) for v in _snapshot()}
    assert set(lines) == on_index
    assert {".".join(x.split(".")[:2]) for x in lines} == {"2.%d" % n for n in range(1, 15)}
    for ln in lines.values():
        assert ln["counts"]["aten"] > 900 and ln["counts"]["npu"] > 100, ln["line"]
    builds = {b["wheel"] for ln in doc["lines"] for b in ln["builds"]}
    assert builds == set(_snapshot()) and doc["unreadable"] == []
    # the two builds the issue names both carry the registration
    assert lines["2.3.1"]["newest"] == "2.3.1.post6" and lines["2.14.0"]["newest"] == "2.14.0"
    assert lines["2.14.0"]["counts"]["npu"] == 419


def test_versions_text_table(capsys):
    run_versions()
    out = capsys.readouterr().out
    assert "67 builds" in out and "every build on the index was read" in out
    assert any(row.split()[:3] == ["2.14.0", "2.14", "2.14.0"] for row in out.splitlines())


@pytest.mark.parametrize("version", _snapshot())
def test_every_published_build_is_a_valid_version(version):
    res = ops.resolve(version)
    assert res.form == "wheel" and res.data_key == "torch-npu==" + version
    sup = ops.load_branch(res.data_key)
    rel = sup.release
    # the post build rebuilt from its line's base plus its stored difference has the harvested counts
    assert len(sup) == rel.counts["total"]
    assert len(sup.ops("aten")) == rel.counts["aten"] and len(sup.ops("npu")) == rel.counts["npu"]
    assert res.to_json()["source"] == "pypi: torch-npu==" + version


def test_each_line_is_stored_once_and_post_builds_as_differences():
    import gzip

    for ln in store.wheel_lines():
        with gzip.open(ops.store.DATA_DIR / ln["file"], "rt", encoding="utf-8") as fh:
            doc = json.load(fh)
        assert doc["base"] == ln["base"] and set(doc["builds"]) == set(ln["builds"]) - {ln["base"]}
        for v, diff in doc["builds"].items():
            assert set(diff) == {"add", "del"}
            assert len(diff["add"]) + len(diff["del"]) < len(doc["ops"]), v


def test_shipped_op_data_stays_small():
    data = ops.store.DATA_DIR
    wheels = sum(p.stat().st_size for p in (data / "wheels").glob("*.json.gz"))
    compat = (REPO / "compat_matrix" / "data" / "wheels.yaml").stat().st_size
    index = (data / "index.json").stat().st_size
    assert wheels + compat + index < 400_000, (wheels, compat, index)


def test_the_wheel_wins_over_branch_data_and_the_difference_is_listed():
    contra = {c["wheel"]: c for c in store.index()["wheels"]["contradictions"]}
    with_branch = {r.wheel for r in ops.releases() if ops.store.wheel_release(r.wheel) is not None}
    assert set(contra) == with_branch and len(contra) >= 10
    for c in contra.values():
        assert c["trusted"] == "pypi: torch-npu==" + c["wheel"]
        assert {"only_in_branch_data", "only_in_wheel", "kernel_paths_differ"} <= set(c)
    # read independently, the wheels and the branch data agree on all but a few ops
    assert sum(c["only_in_branch_data"] + c["only_in_wheel"] + c["kernel_paths_differ"] for c in contra.values()) < 10
    assert contra["2.7.1"]["examples"]["only_in_wheel"] == ["aten::split_with_sizes_copy"]
    # a release-line argument is answered from the wheel of the branch it names
    res = ops.resolve("26.1.0", torch="2.7")
    assert res.branch == "v2.7.1-26.1.0" and res.data_key == "torch-npu==2.7.1.post8"
    # the explicit branch still reads the branch data
    assert ops.resolve("v2.7.1-26.1.0").data_key == "v2.7.1-26.1.0"


@pytest.mark.parametrize("example", ["encoder_eval", "block"])
def test_examples_from_2_7_1_post8_to_2_14_0_judge_every_op_from_the_wheels(recorded, example):
    rep = check(recorded[example], "2.7.1.post8", "2.14.0")
    doc = rep.to_json()
    assert doc["from"]["source"] == "pypi: torch-npu==2.7.1.post8" and doc["from"]["branch"] == "v2.7.1-26.1.0"
    assert doc["to"]["source"] == "pypi: torch-npu==2.14.0" and doc["to"]["cann"] == "9.1.0"
    assert len(doc["ops"]) == len(recorded[example].ops) > 0
    for op in doc["ops"]:
        assert op["to"]["status"] and op["source"] == {"from": "pypi: torch-npu==2.7.1.post8",
                                                       "to": "pypi: torch-npu==2.14.0"}
    if example == "encoder_eval":
        fused = next(o for o in doc["ops"] if o["op"] == "aten::_transformer_encoder_layer_fwd")
        assert fused["to"]["status"] == "cpu_fallback"


def test_regenerating_branch_data_keeps_the_wheel_section(tmp_path):
    from tools import op_regenerate as regenerate

    (tmp_path / "index.json").write_text((ops.store.DATA_DIR / "index.json").read_text(encoding="utf-8"), encoding="utf-8")
    regenerate.write_index([], [], {}, "reference test", data_dir=tmp_path)
    doc = json.loads((tmp_path / "index.json").read_text(encoding="utf-8"))
    assert doc["last_command"] == "reference test"
    assert doc["wheels"] == store.index()["wheels"]


def test_a_wheel_that_could_not_be_read_is_listed_with_its_reason(monkeypatch, capsys):
    import copy

    doc = copy.deepcopy(store.index())
    doc["wheels"]["unreadable"] = [{"wheel": "2.15.0", "reason": "the wheel carries no operator registration yaml"}]
    monkeypatch.setattr(store, "_index", doc)
    with pytest.raises(ops.UnknownVersionError, match="the wheel of torch_npu 2.15.0 could not be read: the wheel "
                                                      "carries no operator registration yaml"):
        ops.resolve("2.15.0")
    run_versions()
    assert "not readable: 2.15.0: the wheel carries no operator registration yaml" in capsys.readouterr().out
