"""Recording the example models on CPU and judging them across release lines (needs torch)."""
from __future__ import annotations

import json
import resource
import subprocess
import sys

import pytest

torch = pytest.importorskip("torch")

from compat_matrix import op_support as ops  # noqa: E402

from ascend_doctor.opcheck.check import check  # noqa: E402
from ascend_doctor.opcheck.classify import classify  # noqa: E402
from ascend_doctor.opcheck.recorder import record_ops  # noqa: E402

from .conftest import EXAMPLES, REPO, load_example  # noqa: E402

FUSED = "aten::_transformer_encoder_layer_fwd"
LINES = ("v2.1.0-5.0.0", "v2.1.0-6.0.0", "v2.1.0-7.2.0", "v2.7.1-26.1.0", "v2.12.0-26.1.0")


def kernel_ops(m):
    return {e.op for e in m.ops if e.level == "kernel"}


def composite_ops(m):
    return {e.op for e in m.ops if e.level == "composite"}


def test_transformer_block_op_set(recorded):
    m = recorded["block"]
    assert {"aten::linear", "aten::layer_norm", "aten::scaled_dot_product_attention", "aten::dropout", "aten::matmul"} <= composite_ops(m)
    assert {"aten::addmm", "aten::native_layer_norm", "aten::native_layer_norm_backward", "aten::gelu",
            "aten::gelu_backward", "aten::_softmax_backward_data", "aten::bmm"} <= kernel_ops(m)
    # AdamW(foreach=True): the multi-tensor kernels an NPU run uses
    assert {"aten::_foreach_addcdiv_.ScalarList", "aten::_foreach_lerp_.Scalar", "aten::_foreach_sqrt"} <= kernel_ops(m)
    # sdpa_math=True: the CPU-only flash kernel is not recorded, PyTorch's math path is
    assert "aten::_scaled_dot_product_flash_attention_for_cpu" not in kernel_ops(m)
    sdpa_kids = {e.op for e in m.ops if any(c.within[:1] == ("aten::scaled_dot_product_attention",) for c in e.contexts)}
    assert {"aten::_scaled_dot_product_attention_math", "aten::_safe_softmax"} <= sdpa_kids
    phases = {p for e in m.ops for p in e.phases}
    assert phases == {"forward", "backward"}
    assert m.entry("aten::gelu_backward").phases == ["backward"]
    assert m.entry("aten::addmm").dtypes == [["float32"]]
    assert m.recorded["composite_parents"] and m.recorded["explicit_children"] and m.recorded["complete"]


def test_unet_block_op_set(recorded):
    m = recorded["unet"]
    assert {"aten::conv2d", "aten::group_norm", "aten::upsample_nearest2d.vec", "aten::scaled_dot_product_attention"} <= composite_ops(m)
    assert {"aten::convolution", "aten::native_group_norm", "aten::silu", "aten::cat", "aten::exp", "aten::cos", "aten::sin"} <= kernel_ops(m)
    conv = m.entry("aten::convolution")
    assert conv.calls == 11 and all(c.within[:1] == ("aten::conv2d",) for c in conv.contexts)
    assert conv.shapes[0] == [[2, 4, 16, 16], [32, 4, 3, 3], [32]]  # input conv: image, weight, bias


def test_eval_encoder_layer_collapses_into_one_fused_op(recorded):
    assert kernel_ops(recorded["encoder_eval"]) == {FUSED}
    assert composite_ops(recorded["encoder_eval"]) == set()
    # fake tensors keep the CPU device, so PyTorch takes the same fast path
    assert FUSED in kernel_ops(recorded["encoder_eval_fake"])
    # on the meta device the fast path is not taken: the layer runs as ordinary ops
    meta = kernel_ops(recorded["encoder_eval_meta"])
    assert FUSED not in meta and "aten::native_layer_norm" in meta


def test_encoder_fast_path_is_flagged_on_every_release(recorded):
    for m in (recorded["encoder_eval"], recorded["encoder_eval_fake"]):
        for rel in ops.releases():
            v = classify(m, ops.load_branch(rel.branch))[FUSED]
            expect = "cpu_fallback" if rel.has_cpu_fallback else "unsupported"  # torch 2.0: no CPU fallback
            assert v.status == expect, rel.branch
    r = check(recorded["encoder_eval"], "2.1.0.post10", "2.7.1.post8")
    c = next(c for c in r.changes if c.op == FUSED)
    assert c.change == "still_fallback" and "set_fastpath_enabled" in c.hint
    assert r.exit_code("fallback") == 1 and r.exit_code() == 0


def _expected(op_status, info, rel):
    """What the data alone says about an op that runs on its own (independent of classify)."""
    if op_status.npu_kernel:
        return "npu"
    if op_status.kind == "unsupported":
        return "unsupported"
    if op_status.kind == "tocpu":
        return "tocpu"
    if info is not None and info.composite:
        return "decomposed"
    return "cpu_fallback" if rel.has_cpu_fallback else "unsupported"


@pytest.mark.parametrize("name", ["block", "unet", "encoder_eval"])
def test_verdicts_across_release_lines_match_the_data(recorded, name):
    m = recorded[name]
    seen = set()
    for branch in LINES:
        sup = ops.load_branch(branch)
        verdicts = classify(m, sup)
        for e in m.ops:
            if not e.op.startswith("aten::"):
                continue
            v = verdicts[e.op]
            if v.status == "covered":
                assert v.covered_by and all(sup.status(p).npu_kernel for p in v.covered_by)
                continue
            info = ops.dispatch.from_keys(e.op, e.dispatch, "2.13")
            expect = _expected(sup.status(e.op), info, sup.release)
            if e.op in ("aten::_scaled_dot_product_flash_attention_for_cpu",):
                expect = "decomposed"
            assert v.status == expect, (branch, e.op, v)
            if v.status == "npu":
                assert v.path == sup.status(e.op).path
            seen.add((e.op, branch, v.status))
    assert len({b for _, b, _ in seen}) >= 3


def test_block_verdicts_that_change_between_lines(recorded):
    m = recorded["block"]
    st = {b: classify(m, ops.load_branch(b)) for b in LINES}
    sdpa = "aten::scaled_dot_product_attention"
    assert st["v2.1.0-5.0.0"][sdpa].status == "decomposed"
    assert all(st[b][sdpa].status == "npu" and st[b][sdpa].path == "op_api" for b in LINES[1:])
    assert st["v2.1.0-6.0.0"]["aten::_safe_softmax"].status == "covered"
    # gelu and dropout left the op-plugin list in 26.0.0: PyTorch's kernels take over
    assert st["v2.1.0-7.2.0"]["aten::gelu"].status == "npu" and st["v2.7.1-26.1.0"]["aten::gelu"].status == "decomposed"
    assert st["v2.7.1-26.1.0"]["aten::gelu.out"].status == "npu"
    assert st["v2.1.0-7.2.0"]["aten::dropout"].status == "npu" and st["v2.7.1-26.1.0"]["aten::dropout"].status == "decomposed"
    r = check(m, "2.1.0.post17", "2.7.1.post8")
    kinds = {c.op: c.change for c in r.changes}
    assert kinds["aten::gelu"] == kinds["aten::dropout"] == "removed_but_decomposed"
    assert r.verdict == "changes" and r.exit_code() == 0


def test_composite_explicit_children_are_recorded():
    x = torch.randn(4, 5)
    with record_ops() as rec:
        x.argmax(1)
    m = rec.manifest()
    assert m.entry("aten::argmax.out").contexts[0].within == ("aten::argmax",)
    with record_ops(mode="fake") as rec:
        torch.randn(4, 5).argmax(1)
    assert rec.manifest().entry("aten::argmax.out") is not None


def test_paused_block_is_not_recorded():
    with record_ops() as rec:
        a = torch.ones(3)
        with rec.paused():
            torch.cumsum(a, 0)
        a.exp()
    assert "aten::cumsum" not in rec.ops and "aten::exp" in rec.ops


def test_error_inside_the_block_marks_the_manifest_incomplete():
    with pytest.raises(RuntimeError):
        with record_ops() as rec:
            torch.ones(2).exp()
            raise RuntimeError("model code failed")
    m = rec.manifest()
    assert m.recorded["complete"] is False and "model code failed" in m.recorded["error"]
    assert "aten::exp" in rec.ops


def test_7b_decoder_records_in_fake_mode_without_allocating_weights():
    dec = load_example("decoder")
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    with record_ops(mode="fake") as rec:
        model = dec.build("7b")
        dec.run(model, seq=64)
    grew_mb = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024
    assert dec.param_count(dec.CONFIGS["7b"]) > 6.5e9
    assert rec.ops["aten::mm"] >= 32 * 7 and "aten::embedding" in rec.ops
    assert grew_mb < 1024  # the bf16 weights alone would be 13 GB
    shapes = rec.manifest().entry("aten::embedding").shapes[0]
    assert shapes[0] == [32000, 4096]


def _run_cli(*args, cwd=REPO):
    return subprocess.run([sys.executable, "-m", "ascend_doctor", *args], cwd=cwd, capture_output=True, text=True, timeout=300)


def test_cli_record_then_check(tmp_path):
    out = tmp_path / "enc.ops.json"
    p = _run_cli("opcheck", "record", "-o", str(out), "--", sys.executable, str(EXAMPLES / "encoder_layer_eval.py"))
    assert p.returncode == 0, p.stderr
    assert "recorded" in p.stderr and str(out) in p.stderr
    # the README's own example: torch's NumPy complaint (NumPy is not installed here) stays hidden
    assert "NumPy" not in p.stderr, p.stderr
    doc = json.loads(out.read_text())
    assert doc["schema"] == 1 and doc["recorded"]["complete"]
    assert FUSED in {o["op"] for o in doc["ops"]}
    p = _run_cli("opcheck", "compare", str(out), "--from", "2.1.0.post10", "--to", "26.1.0", "--fail-on", "fallback")
    assert p.returncode == 1 and FUSED in p.stdout and "Already on the CPU in both versions" in p.stdout


def test_cli_record_keeps_a_partial_manifest_when_the_program_fails(tmp_path):
    script = tmp_path / "boom.py"
    script.write_text("import torch\ntorch.ones(3).exp()\nraise SystemExit(4)\n")
    out = tmp_path / "boom.ops.json"
    p = _run_cli("opcheck", "record", "-o", str(out), "--", str(script))
    assert p.returncode == 1
    doc = json.loads(out.read_text())
    assert doc["recorded"]["complete"] is False and doc["recorded"]["error"] == "the program exited with status 4"
    assert "Traceback" not in p.stderr and "the program exited with status 4; recorded the" in p.stderr
    assert "aten::exp" in {o["op"] for o in doc["ops"]}
