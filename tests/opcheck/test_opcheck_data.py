"""The shipped op-support data, its loader, the version resolver and the regenerate script.

Expected facts come from the upstream files the data was reduced from (Ascend/op-plugin
op_plugin_functions.yaml at the commit each Ascend/pytorch release branch pins, and
Ascend/pytorch torch_npu/csrc/aten/npu_native_functions.yaml).
"""
from __future__ import annotations

import gzip
import json
import re
import shutil
from pathlib import Path

import pytest

from compat_matrix import op_support as ops
from tools import op_reduce as red
from tools import op_regenerate as rg

from .conftest import DATA

# branch -> (total, aten, npu, aten acl_op only, aten op_api only, aten both, aten torch_npu native)
# Counted from the upstream files at the pinned commits (op_plugin/config/op_plugin_functions.yaml of https://github.com/Ascend/op-plugin at the commit each Ascend/pytorch release branch pins,
# plus torch_npu/csrc/aten/npu_native_functions.yaml of that branch).
COUNTS = {
    "v2.0.1-5.0.0": (1353, 1182, 171, 825, 31, 24, 87),
    "v2.1.0-5.0.rc3": (1085, 932, 153, 117, 9, 753, 53),
    "v2.1.0-5.0.0": (1162, 989, 173, 105, 85, 747, 52),
    "v2.1.0-6.0.rc3": (1308, 1087, 221, 81, 177, 776, 52),
    "v2.1.0-6.0.0": (1320, 1097, 223, 74, 189, 781, 52),
    "v2.4.0-6.0.0": (1311, 1096, 215, 76, 186, 781, 52),
    "v2.1.0-7.0.0": (1340, 1085, 255, 56, 197, 780, 51),
    "v2.1.0-7.1.0": (1379, 1094, 285, 54, 206, 782, 51),
    "v2.1.0-7.2.0": (1395, 1074, 321, 22, 213, 787, 51),
    "v2.6.0-7.2.0": (1387, 1074, 313, 25, 210, 787, 51),
    "v2.7.1-7.2.0": (1387, 1074, 313, 25, 210, 787, 51),
    "v2.7.1-7.3.0": (1409, 1074, 335, 25, 210, 787, 51),
    "v2.7.1-26.0.0": (1480, 1076, 404, 7, 217, 802, 49),
    "v2.7.1-26.1.0": (1501, 1083, 418, 7, 221, 803, 51),
    "v2.12.0-26.1.0": (1509, 1091, 418, 7, 229, 803, 51),
}


def test_every_release_line_is_shipped_with_its_counts():
    rels = {r.branch: r for r in ops.releases()}
    assert set(rels) == set(COUNTS)
    for branch, (total, aten, npu, acl, api, both, native) in COUNTS.items():
        sup = ops.load_branch(branch)
        assert len(sup) == total, branch
        c = red.counts(red.ordered({k: {"impl": set(sup.status(k).impl), "src": set(sup.status(k).src), "aclnn": None} for k in sup}))
        assert (c["aten"], c["npu"]) == (aten, npu), branch
        assert (c.get("aten_acl_op_only", 0), c.get("aten_op_api_only", 0), c.get("aten_both", 0)) == (acl, api, both), branch
        assert c.get("aten_torch_npu_native", 0) == native, branch
        assert dict(rels[branch].counts)["total"] == total


def test_provenance_names_repo_path_and_commit_per_file():
    for rel in ops.releases():
        repos = {s.repo: s for s in rel.sources}
        assert set(repos) == {"Ascend/op-plugin", "Ascend/pytorch"}
        for s in rel.sources:
            assert re.fullmatch(r"[0-9a-f]{40}", s.commit), (rel.branch, s)
            assert s.url == f"https://github.com/{s.repo}/blob/{s.commit}/{s.path}"
        assert repos["Ascend/op-plugin"].path.endswith("op_plugin_functions.yaml")
        assert repos["Ascend/pytorch"].path == "torch_npu/csrc/aten/npu_native_functions.yaml"
    six = {s.repo: s.commit for s in ops.load_release("v2.1.0-6.0.0").release.sources}
    assert six["Ascend/op-plugin"].startswith("06dba7a9e00b")


@pytest.mark.parametrize(
    "branch, op, kind",
    [
        ("v2.1.0-6.0.0", "aten::matmul", "both"),
        ("v2.1.0-6.0.0", "aten::view", "torch_npu"),
        ("v2.1.0-6.0.0", "aten::clone", "torch_npu"),  # torch_npu kernel with op_api: True
        ("v2.1.0-5.0.0", "aten::scaled_dot_product_attention", "absent"),
        ("v2.1.0-6.0.rc3", "aten::scaled_dot_product_attention", "op_api"),
        ("v2.1.0-5.0.0", "aten::isin.Tensor_Tensor_out", "absent"),
        ("v2.1.0-6.0.rc3", "aten::isin.Tensor_Tensor_out", "op_api"),
        ("v2.1.0-7.0.0", "aten::_native_multi_head_attention", "absent"),
        ("v2.1.0-7.1.0", "aten::_native_multi_head_attention", "op_api"),
        ("v2.1.0-6.0.0", "aten::argmax", "both"),
        ("v2.1.0-7.0.0", "aten::argmax", "absent"),  # removed in 7.0.0 ...
        ("v2.1.0-7.0.0", "aten::argmax.out", "both"),  # ... while argmax.out stays
        ("v2.1.0-6.0.0", "aten::reflection_pad3d", "both"),
        ("v2.1.0-7.0.0", "aten::reflection_pad3d", "op_api"),  # acl_op dropped in 7.0.0
        ("v2.0.1-5.0.0", "aten::trace", "tocpu"),
        ("v2.0.1-5.0.0", "aten::_conj", "unsupported"),
        ("v2.7.1-7.2.0", "npu::npu_fused_cross_entropy_loss_with_max_sum", "op_api"),
        ("v2.7.1-7.3.0", "npu::npu_fused_cross_entropy_loss_with_max_sum", "absent"),  # renamed in 7.3.0
        ("v2.7.1-26.1.0", "aten::_fused_sdp_choice", "op_api"),
        ("v2.12.0-26.1.0", "aten::mm.dtype", "op_api"),
        ("v2.7.1-26.1.0", "aten::mm.dtype", "absent"),
    ],
)
def test_known_facts(branch, op, kind):
    assert ops.load_branch(branch).status(op).kind == kind


def test_transformer_encoder_fast_path_op_has_no_kernel_in_any_release():
    for rel in ops.releases():
        st = ops.load_branch(rel.branch).status("aten::_transformer_encoder_layer_fwd")
        assert st.kind == "absent" and not st.npu_kernel, rel.branch
    info = ops.dispatch_info("aten::_transformer_encoder_layer_fwd")
    assert info.backend_only


def test_status_spellings_and_aclnn():
    sup = ops.load_branch("v2.1.0-6.0.0")
    for name in ("aten::addmm", "aten.addmm.default", "addmm", "torch.ops.aten.addmm.default"):
        assert sup.status(name).op == "aten::addmm"
    st = sup.status("aten::_adaptive_avg_pool3d")
    assert st.aclnn == "aclnnAdaptiveAvgPool3d" and st.path == "acl_op+op_api" and st.npu_kernel
    assert sup.status("aten::no_such_op").kind == "absent"
    assert "aten::matmul" in sup and "aten::nope" not in sup


def test_dtype_argument_gives_a_note_for_float64_only():
    sup = ops.load_branch("v2.1.0-6.0.0")
    assert sup.status("aten::addmm", dtype="float32").dtype_note is None
    st = sup.status("aten::addmm", dtype="float64")
    assert st.dtype == "float64" and st.dtype_supported is None and "float64" in st.dtype_note


def test_has_cpu_fallback_follows_torch_version():
    assert not ops.load_branch("v2.0.1-5.0.0").release.has_cpu_fallback
    assert ops.load_branch("v2.1.0-5.0.rc3").release.has_cpu_fallback


@pytest.mark.parametrize(
    "text, torch, branch, form",
    [
        ("2.1.0.post10", None, "v2.1.0-6.0.0", "wheel"),
        ("torch_npu==2.1.0.post10", None, "v2.1.0-6.0.0", "wheel"),
        ("2.7.1.post8+gitabc", None, "v2.7.1-26.1.0", "wheel"),
        ("v2.1.0-7.2.0", None, "v2.1.0-7.2.0", "branch"),
        ("2.1.0-7.2.0", None, "v2.1.0-7.2.0", "branch"),
        ("7.2.0", "2.1", "v2.1.0-7.2.0", "release"),
        ("7.2.0", None, "v2.7.1-7.2.0", "release"),  # newest PyTorch with data
        ("6.0.RC3", "2.1", "v2.1.0-6.0.rc3", "release"),
        ("8.3.RC1", "2.1", "v2.1.0-7.2.0", "cann"),
        ("cann 8.3.rc1", "2.1", "v2.1.0-7.2.0", "cann"),
        ("CANN 8.0.0", "2.4", "v2.4.0-6.0.0", "cann"),
        ("cann:7.0.0", "2.1", "v2.1.0-5.0.0", "cann"),
        ("release:7.0.0", "2.1", "v2.1.0-7.0.0", "release"),
        ("9.1.0", "2.12", "v2.12.0-26.1.0", "cann"),
    ],
)
def test_resolve(text, torch, branch, form):
    r = ops.resolve(text, torch=torch)
    assert (r.branch, r.form) == (branch, form)


def test_resolve_a_build_without_branch_data_reads_its_wheel():
    r = ops.resolve("2.3.1.post4")  # v2.3.1-6.0.0 has no branch data; the 2.3.1.post4 wheel was read
    assert r.branch == "v2.3.1-6.0.0" and r.data_key == "torch-npu==2.3.1.post4" and r.note is None
    assert r.to_json()["source"] == "pypi: torch-npu==2.3.1.post4"
    # a release line whose only build with data is its wheel
    assert ops.resolve("6.0.rc2", torch="2.3").data_key == "torch-npu==2.3.1"


def test_resolve_errors_are_one_line_and_list_known_versions():
    with pytest.raises(ops.UnknownVersionError) as e:
        ops.resolve("banana")
    msg = str(e.value)
    assert "\n" not in msg and "unknown version 'banana'" in msg
    for known in ("26.1.0", "8.3.RC1", "v2.1.0-6.0.0", "2.7.1.post8"):
        assert known in msg
    with pytest.raises(ops.UnknownVersionError, match="ambiguous"):
        ops.resolve("7.0.0")  # release line 7.0.0 and CANN 7.0.0 both exist
    with pytest.raises(ops.UnknownVersionError, match="no op data for 2.0.1"):
        ops.resolve("2.0.1")  # torch 2.0 at 5.0.rc3: no data, and 2.1 data would mislead (no fallback in 2.0)
    with pytest.raises(ops.UnknownVersionError, match="no op data"):
        ops.resolve("2.1.0.post4")  # the table's 6.0.rc1 build: never published, no branch data
    with pytest.raises(ValueError):
        ops.load_release("")


def test_dispatch_table_facts():
    assert ops.dispatch_info("aten::matmul").composite_implicit
    argmax = ops.dispatch_info("aten::argmax")
    assert argmax.composite_explicit and not argmax.composite_implicit
    assert ops.dispatch_info("aten::_embedding_bag_backward").backend_only  # CPU/Meta kernels only
    assert ops.dispatch_info("aten::definitely_not_an_op") is None
    assert ops.dispatch.table_torch_version().startswith("2.")
    assert "torch._C._dispatch_has_kernel_for_dispatch_key" in ops.dispatch.how_generated()


# ----------------------------------------------------------------------------- reducer / regenerate


def _aten_names(*names):
    known = set(names)
    return lambda n: n in known or n.split(".")[0] in known


def test_reduce_unified_layout_resolves_version_specs():
    doc = rg.load_yaml_keep_duplicates((DATA / "op_plugin_unified_26.1.0.yaml").read_text())
    is_aten = _aten_names("embedding")
    t21 = red.reduce_op_plugin(doc, "2.1", is_aten)
    t27 = red.reduce_op_plugin(doc, "v2.7", is_aten)
    t213 = red.reduce_op_plugin(doc, "2.13", is_aten)
    assert t21["aten::_conv_depthwise2d.out"]["impl"] == {"acl_op", "op_api"}  # [v2.1, v2.6]
    assert t27["aten::_conv_depthwise2d.out"]["impl"] == {"acl_op", "op_api"}  # [v2.7, newest]
    assert "aten::_unsafe_index.Tensor" in t21 and "aten::_unsafe_index.Tensor" not in t27  # v2.1 only
    assert t21["aten::_weight_norm"]["impl"] == {"op_api", "internal_format_opapi"}
    assert t21["aten::_foreach_add_.Scalar"]["impl"] == {"op_api", "dvm"}
    assert "aten::_thnn_fused_gru_cell" not in t21 and t27["aten::_thnn_fused_gru_cell"]["src"] == {"autograd"}
    assert "npu::npu_renorm_backward" not in t21 and "npu::npu_renorm_backward" in t27
    assert t21["npu::ffn_worker_scheduler_"]["aclnn"] == "aclnnInplaceFfnWorkerScheduler"
    assert t21["aten::embedding"]["src"] == {"symint"}  # symint entry named like an aten op
    assert "npu::npu_gather_backward" in t21  # symint entry that is a custom op
    assert "aten::q_scale" not in t21 and "aten::q_scale" not in t27  # quant entry for v2.2 only
    assert "aten::q_scale" in red.reduce_op_plugin(doc, "2.2", is_aten)
    assert "aten::stft" in t21 and "aten::stft" in t213
    assert "aten::repeat_interleave.self_int" in t21 and "aten::repeat_interleave.self_int" in t27


def test_reduce_per_version_layout_and_bare_name_sections():
    doc = rg.load_yaml_keep_duplicates((DATA / "op_plugin_v2r0_5.0.0.yaml").read_text())
    out = red.reduce_op_plugin(doc, "2.0", _aten_names("embedding", "embedding_backward", "_embedding_bag_backward"))
    assert out["aten::addmm"]["impl"] == {"acl_op"}
    assert out["aten::__ilshift__.Scalar"]["impl"] == {"acl_op"}
    assert out["aten::_cholesky_helper"]["impl"] == {"tocpu"}
    assert out["aten::_conj"]["impl"] == {"unsupported"}
    assert out["aten::embedding"]["src"] == {"symint"}
    assert out["npu::npu_transpose.out"]["impl"] == {"acl_op"}


def test_reduce_native_yaml():
    doc = rg.load_yaml_keep_duplicates((DATA / "npu_native_v2.1.0-6.0.0.yaml").read_text())
    out = red.reduce_native(doc)
    assert out["aten::clone"]["impl"] == {"torch_npu", "op_api"}
    assert out["aten::as_strided_"]["src"] == {"native_supported", "native_symint"}
    assert out["npu::npu_format_cast.Tensor"]["impl"] == {"torch_npu"}
    merged = red.ordered(red.merge(out, {"aten::clone": {"impl": {"acl_op"}, "src": {"official"}, "aclnn": None}}))
    assert merged["aten::clone"][0] == ["acl_op", "op_api", "torch_npu"]
    assert merged["aten::clone"][1] == ["native_supported", "official"]


def test_a_repeated_key_keeps_both_specs():
    # Defensive: YAML would keep only the last value of a repeated key.
    doc = rg.load_yaml_keep_duplicates("all_version: [v2.1, v2.7]\nofficial:\n  - func: f(Tensor a) -> Tensor\n    op_api: v2.1\n    op_api: v2.7\n")
    assert "aten::f" in red.reduce_op_plugin(doc, "2.1", lambda n: True)
    assert "aten::f" in red.reduce_op_plugin(doc, "2.7", lambda n: True)


def test_parse_compatibility_table():
    text = (
        "| TorchNPU installation package version | GitCode Branch | PyTorch Version | CANN version |\n"
        "|:-------------------------------------:|:--------------:|:---------------:|:------------:|\n"
        "|                2.12.0                 | v2.12.0-26.1.0 |     2.12.0      |  CANN 9.1.0  |\n"
        "|             2.1.0.post17              |  v2.1.0-7.2.0  |      2.1.0      | CANN 8.3.RC1 |\n"
    )  # rows of https://github.com/Ascend/pytorch/blob/b48e64812a56717e36110acd4f8f3cb748cbed9d/COMPATIBILITY.en.md
    rows = rg.parse_compatibility_md(text)
    assert rows == [
        {"wheel": "2.12.0", "branch": "v2.12.0-26.1.0", "torch": "2.12.0", "cann": "CANN 9.1.0", "torch_npu_release": "26.1.0"},
        {"wheel": "2.1.0.post17", "branch": "v2.1.0-7.2.0", "torch": "2.1.0", "cann": "CANN 8.3.RC1", "torch_npu_release": "7.2.0"},
    ]


def test_regenerate_reference_mode_is_deterministic(tmp_path):
    # Rebuild two releases from the shipped data written back in the reduced-yaml format.
    ref = tmp_path / "ref"
    ref.mkdir()
    idx = ops.store.index()
    lines = ["releases:"] + [
        "  - {" + ", ".join(f'{k}: "{v}"' for k, v in row.items()) + "}" for row in idx["release_map"]["rows"]
    ]
    (ref / "release-map.yaml").write_text(
        "# source: github.com/Ascend/pytorch  path COMPATIBILITY.en.md  commit b48e64812a56717e36110acd4f8f3cb748cbed9d\n"
        + "\n".join(lines) + "\n"
    )
    for branch in ("v2.1.0-6.0.0", "v2.7.1-26.1.0"):
        rel = ops.load_branch(branch).release
        plugin, native = rel.sources
        meta = {
            "torch_npu_branch": branch, "torch_version": rel.torch, "op_plugin_repo": plugin.repo,
            "op_plugin_path": plugin.path, "op_plugin_commit": plugin.commit, "op_plugin_branch": plugin.branch,
            "torch_npu_repo": native.repo, "torch_npu_path": native.path, "torch_npu_commit": native.commit,
        }
        sup = ops.load_branch(branch)
        body = ["meta:"] + [f'  {k}: "{v}"' for k, v in meta.items()] + ["ops:"]
        for op in sup:
            st = sup.status(op)
            extra = f", aclnn: {st.aclnn}" if st.aclnn else ""
            body.append(f'  "{op}": {{impl: [{", ".join(st.impl)}], src: [{", ".join(st.src)}]{extra}}}')
        (ref / f"{branch}.yaml").write_text("\n".join(body) + "\n")
    out1, out2 = tmp_path / "d1", tmp_path / "d2"
    for out in (out1, out2):
        shutil.copy(ops.store.DATA_DIR / "aten_dispatch.json.gz", out.mkdir() or out / "aten_dispatch.json.gz")
        assert rg.main(["--data-dir", str(out), "reference", str(ref)]) == 0
    for branch in ("v2.1.0-6.0.0", "v2.7.1-26.1.0"):
        a = (out1 / "releases" / f"{branch}.json.gz").read_bytes()
        assert a == (out2 / "releases" / f"{branch}.json.gz").read_bytes()
        assert a == (ops.store.DATA_DIR / "releases" / f"{branch}.json.gz").read_bytes()  # same as shipped
    doc = json.loads((out1 / "index.json").read_text())
    assert [r["branch"] for r in doc["releases"]] == ["v2.1.0-6.0.0", "v2.7.1-26.1.0"]
    assert doc["aten_dispatch"]["ops"] > 2000


def test_shipped_data_is_small():
    total = sum(p.stat().st_size for p in ops.store.DATA_DIR.rglob("*") if p.is_file())
    assert total < 400_000
    with gzip.open(ops.store.DATA_DIR / "releases" / "v2.1.0-6.0.0.json.gz", "rt") as fh:
        assert json.load(fh)["schema"] == 1
