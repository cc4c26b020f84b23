"""Replaying a manifest on runtime_sim's simulated NPU at the target version (no torch needed)."""
from __future__ import annotations

import json
import re

from ascend_doctor.commands.opcheck import run_compare
from ascend_doctor.opcheck.manifest import from_json
from ascend_doctor.opcheck.replay import CONSOLE_FILE, replay

# The warning torch_npu prints once per op it sends to the CPU, as printed by newer builds
# (vllm-project/vllm-omni PR #755): "[W107 21:14:04.201960667 VariableFallbackKernel.cpp:250] Warning: CAUTION: ..."
# and older ones (Ascend/pytorch docs unsupported_op_called.md): "[W compiler_depend.ts:51] Warning: CAUTION: ...".
FALLBACK = re.compile(
    r"^\[W(\d{3,4} \d\d:\d\d:\d\d\.\d{9})? [\w.]+:\d+\] Warning: CAUTION: The operator '(?P<op>[\w:.]+)' is not currently "
    r"supported on the NPU backend and will fall back to run on the CPU\. This may have performance implications\."
    r" \(function npu_cpu_fallback\)$"
)


def manifest(*ops):
    return from_json({"schema": 1, "recorded": {"torch": "2.13.0"}, "ops": list(ops)})


ENCODER = manifest(
    {"op": "aten::_transformer_encoder_layer_fwd", "calls": 1, "dtypes": [["float32"]], "dispatch": ["CPU", "Meta"], "first": 1},
    {"op": "aten::add.Tensor", "calls": 2, "dtypes": [["float32"]], "first": 0},
)


def test_fallback_warning_on_the_console_in_the_real_shape(tmp_path):
    r = replay(ENCODER, "2.7.1.post8", tmp_path)
    assert r.failed is None and r.exit_code == 0
    assert [o["op"] for o in r.outcomes] == ["aten::add.Tensor", "aten::_transformer_encoder_layer_fwd"]  # recorded order
    assert {o["op"]: o["path"] for o in r.outcomes} == {"aten::add.Tensor": "op_api", "aten::_transformer_encoder_layer_fwd": "cpu_fallback"}
    lines = [ln for ln in r.console.splitlines() if "CAUTION" in ln]
    assert len(lines) == 1
    m = FALLBACK.match(lines[0])
    assert m and m.group("op") == "aten::_transformer_encoder_layer_fwd"
    assert (tmp_path / CONSOLE_FILE).read_text().strip() == r.console.strip()
    assert any(p.name.startswith("plog-") for p in r.logs) and all(p.exists() for p in r.logs)
    again = replay(ENCODER, "2.7.1.post8", tmp_path / "again")
    assert again.console == r.console  # deterministic


def test_ops_inside_a_fused_parent_are_not_replayed(tmp_path):
    m = manifest(
        {"op": "aten::scaled_dot_product_attention", "calls": 1, "level": "composite", "first": 0},
        {"op": "aten::_safe_softmax", "calls": 1, "contexts": [{"within": ["aten::scaled_dot_product_attention"], "calls": 1}], "first": 1},
    )
    ran = [o["op"] for o in replay(m, "2.7.1.post8", tmp_path, triage=False).outcomes]
    assert ran == ["aten::scaled_dot_product_attention"]
    ran_old = [o["op"] for o in replay(m, "2.1.0", tmp_path / "old", triage=False).outcomes]  # 5.0.0: SDPA decomposes
    assert "aten::_safe_softmax" in ran_old


def test_dtype_failure_stops_the_process_and_triage_names_it(tmp_path, capsys):
    # aclnnCast on Ascend910A lists no BF16 (hiyouga/LlamaFactory issue #4165, runtime_sim data).
    m = manifest(
        {"op": "aten::mm", "calls": 3, "dtypes": [["bfloat16"]], "first": 0},
        {"op": "aten::_to_copy", "calls": 1, "dtypes": [["bfloat16"]], "first": 1},
        {"op": "aten::relu", "calls": 1, "dtypes": [["bfloat16"]], "first": 2},
    )
    r = replay(m, "2.1.0.post10", tmp_path, soc="Ascend910A")
    assert r.failed["op"] == "aten::_to_copy" and r.failed["code"] == 161002
    assert [o["op"] for o in r.outcomes] == ["aten::mm", "aten::_to_copy"]  # relu never ran
    assert "not implemented for DT_BFLOAT16" in r.console
    incidents = r.triage["incidents"]
    assert incidents and "EZ1001" in incidents[0]["root_cause"]
    p = tmp_path / "m.json"
    p.write_text(json.dumps(m.to_json()))
    code = run_compare(str(p), from_v="2.1.0.post10", to_v="2.1.0.post10", replay_dir=str(tmp_path / "cli"), soc="Ascend910A", json_flag=True)
    doc = json.loads(capsys.readouterr().out)
    assert code == 1 and doc["replay"]["failed"]["op"] == "aten::_to_copy"


def test_missing_custom_op_stops_the_replay(tmp_path):
    m = manifest({"op": "npu::npu_fused_cross_entropy_loss_with_max_sum", "calls": 1, "first": 0})
    r = replay(m, "2.7.1.post2", tmp_path, triage=False)
    assert r.failed["op"] == "npu::npu_fused_cross_entropy_loss_with_max_sum" and r.outcomes[0]["path"] == "missing"
    assert r.console == ""  # nothing made up for the console


def test_text_report_with_replay(tmp_path, capsys):
    p = tmp_path / "enc.json"
    p.write_text(json.dumps(ENCODER.to_json()))
    assert run_compare(str(p), from_v="2.1.0.post10", to_v="2.7.1.post8", replay_dir=str(tmp_path / "logs")) == 0
    out = capsys.readouterr().out
    assert "Replay on a simulated Ascend910B2 with torch_npu 2.7.1.post8 and CANN 9.1.0" in out
    assert "aten::_transformer_encoder_layer_fwd' is not currently supported" in out
    assert f"ascend-doctor triage {tmp_path / 'logs'}" in out
