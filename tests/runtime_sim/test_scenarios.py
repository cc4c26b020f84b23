"""The scenario catalog and its schema: every file valid, bad files rejected in one line."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from runtime_sim.scenarios import CATALOG_DIR, ScenarioError, load, load_all, load_file, names, parse

# Item 4 of issue 4: the catalog has at least these (names as in the catalog).
REQUIRED = {
    "healthy_910b", "healthy_310p", "no_driver", "driver_firmware_mismatch", "toolkit_missing",
    "set_env_not_sourced", "toolkit_wrong_arch", "cann_too_new_for_driver", "torch_npu_mismatch",
    "cann_torch_npu_mismatch", "container_no_device_nodes", "container_no_driver_mounts",
    "visible_devices_out_of_range", "visible_devices_out_of_order", "user_not_in_group",
    "npu_held_by_other_process", "npu_smi_hangs", "dcmi_8005", "unsupported_op", "cpu_fallback",
    "oom_capacity", "oom_fragmentation_training", "oom_fragmentation_serving", "oom_fragmentation_diffusion",
    "hccl_timeout", "aicore_exception",
}
GOOD = (Path(CATALOG_DIR) / "healthy_910b.yaml").read_text(encoding="utf-8")


def test_catalog_has_every_required_scenario_and_all_are_valid():
    assert REQUIRED <= set(names())
    scenarios = load_all()
    assert len(scenarios) == len(names())
    for s in scenarios:
        assert s.sources, f"{s.name}: every scenario says where its facts come from"
        assert s.expect.check or s.workload or s.name.startswith("healthy"), f"{s.name}: nothing to check"


def test_runtime_scenarios_carry_their_triage_truth():
    for s in load_all():
        if s.workload is None:
            assert s.expect.triage_category is None
            continue
        if s.workload.kind == "perf":  # a slow job, not a failed one: its truth is what profile finds
            assert s.expect.triage_category is None and s.expect.profile is not None, s.name
            continue
        assert s.expect.triage_category, s.name
        if s.workload.kind.startswith("oom"):
            assert s.expect.oom_verdict == s.workload.kind, s.name
    assert load("hccl_timeout").expect.first_failing_rank == 3
    assert load("npu_smi_hangs").failing_ids == {"npu_smi.info": "timeout"}


def _mutate(path: str, value):
    doc = yaml.safe_load(GOOD)
    node = doc
    keys = path.split(".")
    for k in keys[:-1]:
        node = node[int(k)] if isinstance(node, list) else node[k]
    if value is KeyError:
        del node[keys[-1]]
    else:
        node[keys[-1]] = value
    return yaml.safe_dump(doc)


@pytest.mark.parametrize(
    "path,value,expected",
    [
        ("host.cann.layout", "toolkit", "host.cann.layout: 'toolkit' is not one of ascend-toolkit, cann"),
        ("host.chip", "910C", "host.chip: '910C' is not one of"),
        ("host.driver", "99.9.9", "host.driver: '99.9.9' is not one of"),
        ("host.npus", 0, "host.npus: must be >= 1, got 0"),
        ("host.npus", "eight", "host.npus: expected an integer, got a string"),
        ("host.arch", KeyError, "host.arch: required field is missing"),
        ("host.colour", "blue", "host.colour: unknown field"),
        ("host.cann.version", 8.2, "host.cann.version: write versions as quoted strings"),
        ("expect.check", [{"id": "driver.installed", "category": "driverinit"}], "expect.check[0].category: 'driverinit' is not one of"),
        ("expect.check", [{"id": "driver", "category": "driver_init"}], "expect.check[0].id: 'driver' is not a check id"),
        ("expect.check", [{"id": "a.b", "category": "other", "status": "broken"}], "expect.check[0].status: 'broken' is not one of"),
        ("expect.triage", {"category": "hccl_comm", "first_failing_rank": -1}, "expect.triage.first_failing_rank: must be >= 0"),
        ("host.user", {"name": "root", "uid": 5}, "host.user.uid: uid 0 is root's and root's alone"),
        ("host.npu_smi", {"behaviour": "explode"}, "host.npu_smi.behaviour: 'explode' is not one of"),
        ("host.npu_smi", {"code": 8005}, "host.npu_smi.code: dcmi error codes are negative"),
        ("host.container", {"mounts": ["driver", "gpu"]}, "host.container.mounts[1]: 'gpu' is not one of"),
        ("name", "Healthy-910B", "name: 'Healthy-910B' must be lower_snake_case"),
    ],
)
def test_bad_fields_are_named_in_one_line(path, value, expected):
    with pytest.raises(ScenarioError) as err:
        parse(_mutate(path, value), "healthy_910b.yaml")
    message = str(err.value)
    assert message.startswith("healthy_910b.yaml: ") and expected in message
    assert "\n" not in message


def test_yaml_errors_name_the_line_and_mismatched_names_are_caught(tmp_path):
    broken = tmp_path / "broken.yaml"
    broken.write_text("name: broken\nsummary: a: b\n")
    with pytest.raises(ScenarioError, match=r"^broken\.yaml: line 2: not valid YAML"):
        load_file(str(broken))
    other = tmp_path / "other.yaml"
    other.write_text(GOOD)
    with pytest.raises(ScenarioError, match=r"other\.yaml: name: 'healthy_910b' does not match the file name"):
        load_file(str(other))
    with pytest.raises(ScenarioError, match=r"^top\.yaml: \(top level\): expected a mapping, got a list"):
        parse("- 1\n", "top.yaml")
    with pytest.raises(ScenarioError, match=r"unknown scenario 'healthy'.*did you mean healthy_310p, healthy_910b"):
        load("healthy")
    assert load("healthy-910b") is load("healthy_910b")  # dashes are accepted for underscores


def _cli(*args, cwd=None):
    return subprocess.run([sys.executable, "-m", "runtime_sim", *args], capture_output=True, text=True, timeout=60, cwd=cwd)


def test_cli_list_prints_one_scenario_a_line_name_first():
    out = _cli("list")
    assert out.returncode == 0 and out.stderr == ""
    lines = out.stdout.splitlines()
    assert [line.split()[0] for line in lines] == names()
    assert all(line.split()[1] in ("host", "runtime") for line in lines)


def test_cli_build_and_show(tmp_path):
    out = _cli("build", "user_not_in_group", str(tmp_path / "h"))
    assert out.returncode == 0, out.stderr
    assert f"--root {tmp_path / 'h'} --env-file {tmp_path / 'h' / 'user.env'}" in out.stdout
    assert (tmp_path / "h/usr/local/bin/npu-smi").is_file()
    show = _cli("show", "npu_held_by_other_process")
    assert show.returncode == 0 and "check fails: devices.busy (device_busy_permission, fail)" in show.stdout
    assert "| 0       0                 | 1333928       |" in show.stdout


@pytest.mark.parametrize(
    "args,status,message",
    [
        ((), 2, "give a command"),
        (("build", "nope", "/tmp/never-used"), 2, "unknown scenario 'nope'"),
        (("build", "healthy_910b"), 2, "the following arguments are required: dir"),
        (("frobnicate",), 2, "invalid choice"),
        (("run", "healthy_910b", "DIR"), 1, "healthy_910b: has no workload"),
    ],
)
def test_cli_errors_are_one_line_without_traceback(tmp_path, args, status, message):
    args = tuple(str(tmp_path / "d") if a == "DIR" else a for a in args)
    out = _cli(*args)
    assert out.returncode == status
    assert message in out.stderr and "Traceback" not in out.stderr
    assert out.stdout == ""


def test_cli_refuses_a_non_empty_directory(tmp_path):
    (tmp_path / "keep.txt").write_text("mine")
    out = _cli("build", "healthy_910b", str(tmp_path))
    assert out.returncode == 1 and "not empty and not a previous runtime_sim build" in out.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["keep.txt"]
