"""The workload entry point the scenario catalog calls."""
from __future__ import annotations

import re

import pytest

from runtime_sim import workloads

try:
    from plog_samples import parse
except ImportError:
    from tests.runtime_sim.plog_samples import parse

FAST_HCCL = {"world_size": 4, "ranks_per_node": 4, "fault_step": 2, "root_rank": 2}


@pytest.mark.parametrize("kind,params,category,exit_code", [
    ("healthy", {"steps": 3}, None, 0),
    ("set_device_fail", {"fault": "invalid_device"}, "env_path", 1),
    ("set_device_fail", {"fault": "visible_out_of_range"}, "env_path", 1),
    ("set_device_fail", {"fault": "device_memory_taken"}, "device_busy_permission", 1),
    ("set_device_fail", {"fault": "driver_internal", "cann": "9.1.0", "torch_npu": "2.7.1.post8"}, "driver_init", 1),
    ("aicore_exception", {"steps_before": 2}, "aicore_exec", 1),
    ("aicore_exception", {"steps_before": 2, "detect": "queue", "fault": "aicore_timeout"}, "aicore_exec", 1),
    ("unsupported_op", {"soc": "Ascend910A", "cann": "8.0.RC2", "torch_npu": "2.1.0.post6"}, "unsupported_op", 1),
    ("unsupported_op", {"op": "aten::index_copy.out", "dtype": "float32", "cann": "8.0.0"}, "version_mismatch", 1),
    ("cpu_fallback", {"steps": 2}, "unsupported_op", 0),
    ("oom_capacity", {}, "oom_capacity", 1),
    ("hccl_timeout", FAST_HCCL, "aicore_exec", 1),
    ("hccl_timeout", dict(FAST_HCCL, root_fault="stuck"), "hccl_comm", 1),
])
def test_each_kind_runs_and_says_what_happened(tmp_path, kind, params, category, exit_code):
    result = workloads.run(kind, params, tmp_path / "log", seed=3)
    assert result.kind == kind and result.exit_code == exit_code
    assert result.facts["category"] == category
    assert result.logs and all(p.exists() for p in result.logs)
    assert all(str(p).startswith(str(tmp_path / "log")) for p in result.logs)
    for path in result.logs:
        for line in path.read_text().splitlines():
            parse(line)
    if exit_code:
        assert "Traceback (most recent call last):" in result.console
        assert re.search(r"^(\[rank\d\]: )?(RuntimeError|torch\.OutOfMemoryError): ", result.console, re.M)


def test_fragmentation_fails_by_default_and_passes_with_expandable_segments(tmp_path):
    bad = workloads.run("oom_fragmentation", {"trace": "llm_serving_kv_concat"}, tmp_path / "a", seed=1)
    assert bad.exit_code == 1 and bad.facts["category"] == "oom_fragmentation"
    assert bad.facts["gap"] > 2 ** 30  # gigabytes reserved but unusable
    assert "NPU out of memory. Tried to allocate" in bad.console
    retry = [l for p in bad.logs for l in p.read_text().splitlines()
             if "Try to free cached blocks and reallocate" in l]
    assert retry and parse(retry[0]).group("module") == "APP"
    good = workloads.run("oom_fragmentation", {"trace": "llm_serving_kv_concat",
                                               "alloc_conf": "expandable_segments:True"}, tmp_path / "b", seed=1)
    assert good.exit_code == 0 and good.facts["completed"]


def test_hccl_consoles_are_per_rank_and_merged_with_prefixes(tmp_path):
    result = workloads.run("hccl_timeout", FAST_HCCL, tmp_path, seed=2)
    assert set(result.consoles) == {"rank0", "rank1", "rank2", "rank3"}
    assert result.facts["first_failing_rank"] == 2
    assert all(line.startswith("[rank") for line in result.console.splitlines())
    multi = workloads.run("hccl_timeout", {"world_size": 16, "ranks_per_node": 8, "fault_step": 1},
                          tmp_path / "multi", seed=2)
    assert [p.name for p in multi.log_roots] == ["127.10.0.1", "127.10.0.2"]


def test_same_seed_same_output(tmp_path):
    a = workloads.run("aicore_exception", {"steps_before": 3}, tmp_path / "a", seed=5)
    b = workloads.run("aicore_exception", {"steps_before": 3}, tmp_path / "b", seed=5)
    assert a.console == b.console
    assert [p.read_bytes() for p in a.logs] == [p.read_bytes() for p in b.logs]
    c = workloads.run("aicore_exception", {"steps_before": 3}, tmp_path / "c", seed=6)
    assert c.console != a.console


@pytest.mark.parametrize("kind,params,field", [
    ("nope", {}, "kind"),
    ("healthy", {"stepz": 3}, "'stepz'"),
    ("healthy", {"steps": "3"}, "'steps'"),
    ("set_device_fail", {"fault": "cosmic_ray"}, "'fault'"),
    ("aicore_exception", {"detect": "psychic"}, "'detect'"),
    ("oom_fragmentation", {"trace": "t9"}, "'trace'"),
    ("hccl_timeout", {"root_rank": 99}, "root_rank"),
    ("healthy", {"cann": "banana"}, "banana"),
    ("oom_capacity", {"alloc_conf": "expandable_segments:Maybe"}, "'alloc_conf'"),
])
def test_bad_input_is_one_clear_line_naming_the_field(tmp_path, kind, params, field):
    with pytest.raises(workloads.WorkloadError) as info:
        workloads.run(kind, params, tmp_path, seed=1)
    message = str(info.value)
    assert field in message and "\n" not in message


def test_describe_lists_every_parameter():
    assert set(workloads.kinds()) >= {"aicore_exception", "hccl_timeout", "unsupported_op", "cpu_fallback",
                                      "oom_capacity", "oom_fragmentation", "set_device_fail"}
    info = workloads.describe("hccl_timeout")
    assert info["root_rank"][0] == 3 and "cann" in info


def test_aicore_exception_console_ends_with_the_exit_warning(tmp_path):
    # https://github.com/vllm-project/vllm-ascend/issues/2105: "[W730 06:16:22.869118032 compiler_depend.ts:526]
    # Warning: NPU warning, error code is 507018[Error]: " ... " (function npuSynchronizeDevice)"
    result = workloads.run("aicore_exception", {"steps_before": 1, "torch_npu": "2.6.0.post3"}, tmp_path, seed=4)
    lines = result.console.splitlines()
    warn = [i for i, l in enumerate(lines) if "Warning: NPU warning, error code is 507015[Error]: " in l]
    assert len(warn) == 1
    assert re.match(r"^\[W\d{3,4} \d\d:\d\d:\d\d\.\d{9} compiler_depend\.ts:526\] Warning: NPU warning", lines[warn[0]])
    assert lines[warn[0] + 1].rstrip() == "[Error]: The aicore execution is abnormal."
    assert lines[-1] == " (function npuSynchronizeDevice)"
    assert "wait for compute device to finish failed, runtime result = 507015" in result.console
