"""Ops on the simulated NPU, decided by the op-support data of the installed versions."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from runtime_sim.ops import OpRunner, kernel_name, op_type_of
from runtime_sim.runtime import Machine, NpuError, SimClock, SimProcess, Stack, TorchNpu


def runner(tmp_path: Path, cann: str, torch_npu: str, soc: str = "Ascend910B2", env=None) -> OpRunner:
    p = SimProcess(tmp_path, 6547, "python3", env or {}, Stack(cann=cann, torch_npu=torch_npu),
                   SimClock.at("2024-11-28 11:37:15"), 3)
    t = TorchNpu(p, Machine(soc=soc))
    t.set_device(0)
    return OpRunner(t)


def test_cpu_fallback_warns_once_with_the_real_text(tmp_path):
    # Ascend/pytorch docs/zh/user_guide/troubleshooting/troubleshooting_cases/unsupported_op_called.md
    real = ("[W compiler_depend.ts:51] Warning: CAUTION: The operator 'aten::linalg_lstsq.out' is not currently "
            "supported on the NPU backend and will fall back to run on the CPU. This may have performance "
            "implications. (function npu_cpu_fallback)")
    r = runner(tmp_path, "8.0.0", "2.1.0.post10")
    for _ in range(3):
        out = r.run("aten::linalg_lstsq.out")
        assert out.path == "cpu_fallback"
    assert r.p.console == [real]


def test_fallback_warning_is_dated_from_torch_2_4(tmp_path):
    r = runner(tmp_path, "8.3.RC1", "2.6.0.post3")
    r.run("aten::linalg_lstsq.out")
    assert re.match(r"^\[W\d{3,4} \d\d:\d\d:\d\d\.\d{9} compiler_depend\.ts:51\] Warning: CAUTION: ", r.p.console[0])


def test_warning_can_be_switched_off(tmp_path):
    r = runner(tmp_path, "8.0.0", "2.1.0.post10", env={"TORCH_NPU_WARNING_DISABLE": "1"})
    assert r.run("aten::linalg_lstsq.out").path == "cpu_fallback"
    assert r.p.console == []


def test_npu_kernel_and_decomposition(tmp_path):
    r = runner(tmp_path, "8.3.RC1", "2.1.0.post17")
    out = r.run("aten::add.Tensor")
    assert out.path == "op_api" and out.kernel and out.kernel.startswith("Add_")
    assert re.fullmatch(r"Add_[0-9a-f]{32}_high_performance_\d{9}", out.kernel)
    stream = r.t.stream()
    assert stream.tail_us > 0
    assert r.run("aten::linear").path in ("decomposed", "op_api", "acl_op", "torch_npu")


def test_dtype_outside_the_list_fails_like_llamafactory_4165(tmp_path):
    # https://github.com/hiyouga/LlamaFactory/issues/4165 (bf16 on an Atlas training (910A) card, CANN 8.0.RC2)
    r = runner(tmp_path, "8.0.RC2", "2.1.0.post6", soc="Ascend910A")
    with pytest.raises(NpuError) as info:
        r.run("aten::_to_copy", "bfloat16")
    text = info.value.console.splitlines()
    assert re.fullmatch(
        r"RuntimeError: call aclnnCast failed, detail:EZ1001: \d{4}-\d\d-\d\d-\d\d:\d\d:\d\d\.\d{3}\.\d{3} self not "
        r"implemented for DT_BFLOAT16, should be in dtype support list \[DT_FLOAT16,DT_FLOAT,DT_DOUBLE,DT_INT8,"
        r"DT_UINT8,DT_INT16,DT_INT32,DT_INT64,DT_UINT16,DT_UINT32,DT_UINT64,DT_BOOL,DT_COMPLEX64,DT_COMPLEX128,\]\.",
        text[0])
    assert info.value.category == "unsupported_op" and info.value.code == 161002
    assert r.run("aten::_to_copy", "float16").path  # a listed dtype goes through


def test_dtype_failure_new_wording_like_vllm_ascend_6636(tmp_path):
    # https://github.com/vllm-project/vllm-ascend/issues/6636 (torch_npu 7.3.0 line, CANN 8.5)
    r = runner(tmp_path, "8.5.0", "2.7.1.post2")
    with pytest.raises(NpuError) as info:
        r.run("npu::npu_quant_matmul", "float16")
    text = info.value.console.splitlines()
    assert text[0] == ("RuntimeError: npu_quant_matmul:build/CMakeFiles/torch_npu.dir/compiler_depend.ts:211 NPU "
                       "function error: call aclnnQuantMatmulWeightNz failed, error code is 161002")
    assert text[1].endswith("ERR00100 PTA call acl api failed.")
    assert re.fullmatch(r"\[PID: 6547\] \S+ AclNN_Parameter_Error\(EZ1001\): Tensor scale not implemented for "
                        r"DT_FLOAT16, should be in dtype support list \[DT_UINT64,DT_BFLOAT16,DT_INT64,DT_FLOAT,\]\.",
                        text[2])


def test_aclnn_newer_than_the_installed_cann(tmp_path):
    # torch_npu 7.2.0 (pairs with CANN 8.3.RC1) on CANN 8.0.0: aten::index_copy.out has only an
    # op_api kernel, added after the 6.0.0 release -> the symbol is missing from libopapi.so
    r = runner(tmp_path, "8.0.0", "2.1.0.post17")
    with pytest.raises(NpuError) as info:
        r.run("aten::index_copy.out")
    lines = info.value.console.splitlines()
    assert lines[0] == ("RuntimeError: aclnnIndexCopy or aclnnIndexCopyGetWorkspaceSize not in libopapi.so, "
                        "or libopapi.so not found.")
    assert lines[1].endswith("ERR01004 OPS invalid pointer")
    assert info.value.category == "version_mismatch"
    # the same op on the CANN it was built for runs
    ok = runner(tmp_path / "ok", "8.3.RC1", "2.1.0.post17")
    assert ok.run("aten::index_copy.out").path == "op_api"


def test_missing_aclnn_with_an_acl_op_kernel_falls_back_with_a_plog_warning(tmp_path):
    from compat_matrix import op_support as ops

    new, old = ops.load_branch("v2.1.0-7.2.0"), ops.load_branch("v2.1.0-6.0.0")
    both = [k for k in new.ops("aten") if {"op_api", "acl_op"} <= set(new.status(k).impl)
            and "op_api" not in old.status(k).impl and new.status(k).aclnn]
    assert both, "the data should have such an op"
    p_settings = {"ASCEND_GLOBAL_LOG_LEVEL": "2"}
    r = runner(tmp_path, "8.0.0", "2.1.0.post17", env=p_settings)
    assert r.run(both[0]).path == "acl_op"
    r.p.close()
    text = "".join(path.read_text() for path in r.p.log.paths)
    assert "[WARNING] APP(6547,python3)" in text and "not in libopapi.so, or libopapi.so not found. Will call" in text


def test_torch_2_0_has_no_cpu_fallback(tmp_path):
    from compat_matrix import op_support as ops

    sup = ops.load_branch("v2.0.1-5.0.0")
    unsupported = [k for k in sup.ops("aten") if sup.status(k).kind == "unsupported"]
    r = runner(tmp_path, "7.0.0", "2.0.1.post1")
    with pytest.raises(NpuError) as info:
        r.run(unsupported[0])
    assert info.value.console.startswith("RuntimeError: %s is unsupported!" % unsupported[0].split("::")[1])


def test_names():
    assert op_type_of("aten::add.Tensor", None) == "Add"
    assert op_type_of("aten::index_copy.out", "aclnnInplaceIndexCopy") == "IndexCopy"
    assert kernel_name("Add", "x") == kernel_name("Add", "x") != kernel_name("Add", "y")
