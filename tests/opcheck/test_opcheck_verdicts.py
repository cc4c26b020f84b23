"""Verdicts per release and the upgrade diff, on hand-written manifests (no torch needed).

The op facts used here are in the shipped data (see test_opcheck_data.py) and PyTorch's
dispatch table; each case names the upstream change it exercises.
"""
from __future__ import annotations

from compat_matrix import op_support as ops

from ascend_doctor.opcheck.check import check, status_matrix
from ascend_doctor.opcheck.classify import classify
from ascend_doctor.opcheck.manifest import from_json


def manifest(*entries, recorded=None):
    return from_json({"schema": 1, "ops": list(entries), "recorded": recorded or {"torch": "2.13.0"}})


def by_op(report):
    return {c.op: c for c in report.changes}


def test_composite_children_are_covered_when_the_parent_has_a_kernel():
    m = manifest(
        {"op": "aten::scaled_dot_product_attention", "calls": 1, "level": "composite", "dispatch": ["CompositeImplicitAutograd"]},
        {"op": "aten::_scaled_dot_product_flash_attention_for_cpu", "calls": 1,
         "contexts": [{"within": ["aten::scaled_dot_product_attention"], "calls": 1}], "dispatch": ["CPU"]},
        {"op": "aten::bmm", "calls": 3, "contexts": [{"within": ["aten::scaled_dot_product_attention", "aten::matmul"], "calls": 2},
                                                    {"within": [], "calls": 1}]},
    )
    old, new = classify(m, ops.load_branch("v2.1.0-5.0.0")), classify(m, ops.load_branch("v2.1.0-6.0.0"))
    assert old["aten::scaled_dot_product_attention"].status == "decomposed"  # no SDPA kernel in 5.0.0
    assert new["aten::scaled_dot_product_attention"].status == "npu"
    # The CPU-only flash kernel is PyTorch's CPU choice, never an NPU fallback:
    assert old["aten::_scaled_dot_product_flash_attention_for_cpu"].status == "decomposed"
    assert new["aten::_scaled_dot_product_flash_attention_for_cpu"].status == "covered"
    assert new["aten::bmm"].status == "npu" and new["aten::bmm"].own_calls == 1
    assert new["aten::bmm"].covered_by == ("aten::scaled_dot_product_attention",)
    # In 5.0.0 SDPA decomposes, but the matmul inside it has its own NPU kernel and absorbs the bmm:
    assert old["aten::bmm"].own_calls == 1 and old["aten::bmm"].covered_by == ("aten::matmul",)


def test_removed_but_decomposed_lists_what_runs_instead():
    # argmax left the op-plugin list in 7.0.0; PyTorch's CompositeExplicitNonFunctional kernel calls argmax.out.
    m = manifest(
        {"op": "aten::argmax", "calls": 2, "dispatch": ["CPU", "CompositeExplicitAutogradNonFunctional", "Meta"]},
        {"op": "aten::argmax.out", "calls": 2, "contexts": [{"within": ["aten::argmax"], "calls": 2}]},
    )
    r = check(m, "2.1.0.post10", "2.1.0.post12")
    c = by_op(r)["aten::argmax"]
    assert c.change == "removed_but_decomposed" and c.impact == "test"
    assert c.children == [("aten::argmax.out", "npu")]
    assert by_op(r)["aten::argmax.out"].change == "no_longer_covered"
    assert r.verdict == "changes" and r.exit_code() == 0


def test_backend_only_op_removed_becomes_cpu_fallback():
    # _embedding_bag_backward: acl_op kernel in 6.0.0, gone in 7.0.0, and PyTorch has only CPU/Meta kernels.
    m = manifest({"op": "aten::_embedding_bag_backward", "calls": 1, "phases": ["backward"]})
    r = check(m, "2.1.0.post10", "2.1.0.post12")
    c = by_op(r)["aten::_embedding_bag_backward"]
    assert (c.before.status, c.after.status, c.change, c.impact) == ("npu", "cpu_fallback", "newly_fallback", "slower")
    assert r.verdict == "slower"
    assert r.exit_code("unsupported") == 0 and r.exit_code("fallback") == 1


def test_custom_op_removed_is_a_break_and_exit_1():
    # npu_fused_cross_entropy_loss_with_max_sum was renamed (npu_ prefix dropped) in 7.3.0.
    m = manifest({"op": "npu::npu_fused_cross_entropy_loss_with_max_sum", "calls": 8}, {"op": "aten::mm", "calls": 1})
    r = check(m, "2.7.1", "2.7.1.post2")
    c = by_op(r)["npu::npu_fused_cross_entropy_loss_with_max_sum"]
    assert c.change == "newly_unsupported" and c.impact == "breaks"
    assert r.verdict == "breaks" and r.exit_code() == 1
    assert r.to_json()["summary"]["breaks"] == ["npu::npu_fused_cross_entropy_loss_with_max_sum"]


def test_acl_op_dropped_is_a_path_change():
    m = manifest({"op": "aten::reflection_pad3d", "calls": 1})
    c = by_op(check(m, "2.1.0.post10", "2.1.0.post12"))["aten::reflection_pad3d"]
    assert c.change == "path_changed" and "acl_op dropped" in c.why
    assert c.before.path == "acl_op+op_api" and c.after.path == "op_api"


def test_torch_2_0_has_no_cpu_fallback():
    m = manifest({"op": "aten::_transformer_encoder_layer_fwd", "calls": 1, "dispatch": ["CPU", "Meta"]},
                 {"op": "aten::trace", "calls": 1})
    v = classify(m, ops.load_branch("v2.0.1-5.0.0"))
    assert v["aten::_transformer_encoder_layer_fwd"].status == "unsupported"
    assert v["aten::trace"].status == "tocpu"
    v21 = classify(m, ops.load_branch("v2.1.0-5.0.0"))
    assert v21["aten::_transformer_encoder_layer_fwd"].status == "cpu_fallback"


def test_fallback_fixed_and_the_fast_path_hint():
    m = manifest({"op": "aten::_native_multi_head_attention", "calls": 1, "dispatch": ["CPU", "Meta"]})
    c = by_op(check(m, "2.1.0.post12", "2.1.0.post13"))["aten::_native_multi_head_attention"]
    assert (c.change, c.impact) == ("fallback_fixed", "faster")
    assert "set_fastpath_enabled" in c.hint


def test_third_party_and_unknown_ops():
    m = manifest({"op": "torchvision::nms", "calls": 1, "dispatch": ["CPU"]},
                 {"op": "aten::op_pytorch_does_not_know", "calls": 1})
    v = classify(m, ops.load_branch("v2.1.0-6.0.0"))
    assert v["torchvision::nms"].status == "unknown" and "torchvision::nms" in v["torchvision::nms"].note
    assert v["aten::op_pytorch_does_not_know"].status == "unknown"


def test_float64_inputs_are_flagged_to_test():
    m = manifest({"op": "aten::addmm", "calls": 1, "dtypes": [["float64"]]})
    c = by_op(check(m, "2.1.0.post10", "2.1.0.post12"))["aten::addmm"]
    assert c.change == "dtype_warning" and "float64" in c.why


def test_versions_resolve_with_the_other_sides_torch():
    m = manifest({"op": "aten::mm", "calls": 1})
    r = check(m, "2.1.0.post10", "8.3.RC1")  # CANN upgrade, same PyTorch
    assert r.target["branch"] == "v2.1.0-7.2.0"
    r = check(m, "7.2.0", "2.7.1.post8")
    assert r.source["branch"] == "v2.7.1-7.2.0"


def test_status_matrix_across_releases():
    m = manifest({"op": "aten::isin.Tensor_Tensor_out", "calls": 1, "dispatch": ["CPU", "Meta"]})
    mat = status_matrix(m)
    assert len(mat) == 15
    assert mat["v2.1.0-5.0.0"]["aten::isin.Tensor_Tensor_out"].status == "cpu_fallback"
    assert mat["v2.1.0-6.0.rc3"]["aten::isin.Tensor_Tensor_out"].status == "npu"


def test_incomplete_recording_is_noted():
    m = manifest({"op": "aten::mm", "calls": 1}, recorded={"torch": "2.13.0", "complete": False, "error": "RuntimeError: boom"})
    r = check(m, "2.1.0.post10", "2.1.0.post12")
    assert any("did not finish" in n and "boom" in n for n in r.notes)
