"""The python3 / torch / torch_npu stand-ins of simulated hosts, against real texts
(tests/runtime_sim/data/torch_npu_errors.yaml says where each one comes from)."""
from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path
from typing import Dict, Optional

import pytest
import yaml

from runtime_sim.host import build

REAL = yaml.safe_load((Path(__file__).parent / "data" / "torch_npu_errors.yaml").read_text(encoding="utf-8"))

# What the doctor's deep probe does, reduced to the facts compared here.
PROBE = r"""
import json, traceback
out = {}
try:
    import torch, torch_npu
    out["version"] = torch_npu.__version__
    out["available"] = torch.npu.is_available()
    out["count"] = torch.npu.device_count()
    x = torch.ones(2, 2).to("npu:0")
    out["op"] = (x @ x).sum().item()
except BaseException as exc:
    out["error"] = "".join(traceback.format_exception_only(type(exc), exc)).strip()
print(json.dumps(out))
"""


@pytest.fixture(scope="module")
def hosts(tmp_path_factory):
    base = tmp_path_factory.mktemp("py")
    wanted = (
        "healthy_910b", "healthy_310p", "set_env_not_sourced", "toolkit_missing", "no_driver", "torch_npu_mismatch",
        "cann_torch_npu_mismatch", "user_not_in_group", "container_no_device_nodes", "visible_devices_out_of_order",
        "toolkit_wrong_arch",
    )
    return {name: build(name, base / name) for name in wanted}


def python(host, *args: str, env: Optional[Dict[str, str]] = None, stdin: str = "") -> subprocess.CompletedProcess:
    """Run the host's python3 the way the doctor does: argv, clean environment."""
    return subprocess.run(
        [str(host.root / "usr/bin/python3"), *args],
        capture_output=True, text=True, timeout=60, input=stdin, env=env or {"PATH": "/usr/bin:/bin"},
    )


def probe(host, env=None) -> dict:
    out = python(host, "-c", PROBE, env=env)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_healthy_hosts_import_and_run_an_op(hosts):
    assert probe(hosts["healthy_910b"]) == {"version": "2.1.0.post13", "available": True, "count": 8, "op": 8.0}
    assert probe(hosts["healthy_310p"]) == {"version": "2.6.0.post5", "available": True, "count": 8, "op": 8.0}


@pytest.mark.parametrize("scenario", ["set_env_not_sourced", "toolkit_missing", "toolkit_wrong_arch"])
def test_without_reachable_cann_libraries_import_fails_like_the_real_wheel(hosts, scenario):
    assert probe(hosts[scenario])["error"] == REAL["no_cann_import"]["text"]


def test_without_driver_the_hal_library_is_missing(hosts):
    assert probe(hosts["no_driver"])["error"] == REAL["no_driver_import"]["text"]


def test_torch_mismatch_is_an_undefined_symbol_in_libtorch_npu(hosts):
    error = probe(hosts["torch_npu_mismatch"])["error"]
    assert re.match(REAL["torch_mismatch_import"]["pattern"], error), error
    assert error.startswith("ImportError: /usr/local/lib/")  # the path as the host's user sees it


def test_torch_25_autoload_wraps_the_import_error(hosts):
    host = hosts["cann_torch_npu_mismatch"]  # torch 2.6: `import torch` loads torch_npu itself
    assert probe(host)["error"] == REAL["no_cann_autoload"]["text"]
    # with auto-loading off, the cause shows: CANN 8.0.0 lacks what a CANN 8.5.0 build links against
    direct = probe(host, env={"PATH": "/usr/bin", "TORCH_DEVICE_BACKEND_AUTOLOAD": "0"})
    assert direct["error"].startswith("ImportError: /usr/local/lib/") and "undefined symbol: " in direct["error"]


def test_unopenable_devices_are_unavailable_and_set_device_fails_with_507033(hosts):
    for name in ("user_not_in_group", "container_no_device_nodes"):
        result = probe(hosts[name])
        assert result["available"] is False and result["count"] == 0, name
        lines = result["error"].split("\n")
        assert lines[0].startswith("RuntimeError: ")
        lines[0] = lines[0][len("RuntimeError: "):]
        for pattern, line in zip(REAL["set_device_failed"]["lines"], lines):
            assert re.match(pattern, line), (name, line)


def test_error_patterns_match_the_real_example():
    example = REAL["set_device_failed"]["example"].splitlines()
    example[0] = example[0][len("RuntimeError: "):]
    for pattern, line in zip(REAL["set_device_failed"]["lines"], example):
        assert re.match(pattern, line), line


def test_visible_devices_follow_the_runtime_parsing_rules(hosts):
    host = hosts["visible_devices_out_of_order"]  # ASCEND_RT_VISIBLE_DEVICES=3,1: only 3 counts
    assert probe(host)["count"] == 1
    env = {"PATH": "/usr/bin", "ASCEND_RT_VISIBLE_DEVICES": "8"}  # caller's value wins over the env file
    result = probe(hosts["healthy_910b"], env=env)
    assert result["available"] is False
    lines = result["error"].split("\n")
    lines[0] = lines[0][len("RuntimeError: "):]
    for pattern, line in zip(REAL["device_count_failed"]["lines"], lines):
        assert re.match(pattern, line), line
    assert probe(hosts["healthy_910b"], env={"PATH": "/usr/bin", "ASCEND_RT_VISIBLE_DEVICES": "1, 2,3"})["count"] == 1


def test_launcher_behaves_like_python3(hosts, tmp_path):
    host = hosts["healthy_910b"]
    assert re.match(r"^Python 3\.\d+\.\d+$", python(host, "-V").stdout.strip())
    assert python(host, "-c", "import yaml").returncode == 1  # only the stdlib and the host's packages
    missing = python(host, "-c", "import yaml").stderr.strip().splitlines()
    assert missing[0] == "Traceback (most recent call last):" and missing[-1] == "ModuleNotFoundError: No module named 'yaml'"
    assert "python3_launcher" not in "".join(missing) and "usr/bin/python3" not in "".join(missing)
    no_site = python(host, "-S", "-c", "import torch")
    assert no_site.returncode == 1 and "No module named 'torch'" in no_site.stderr
    assert python(host, "-m", "json.tool", stdin='{"a": 1}').stdout.split() == ["{", '"a":', "1", "}"]
    script = tmp_path / "s.py"
    script.write_text("import sys, os; print(sys.argv[1:], os.environ['USER'], os.environ['ASCEND_OPP_PATH'])")
    out = python(host, str(script), "x", "y").stdout.split()
    assert out == ["['x',", "'y']", "root", "/usr/local/Ascend/ascend-toolkit/latest/opp"]
    assert python(host, "-c", "import sys; sys.exit(3)").returncode == 3
    assert python(host, "--bogus").returncode == 2


def test_package_metadata_is_pip_shaped(hosts):
    site = next((hosts["healthy_310p"].root / "usr/local/lib").glob("python3.*/site-packages"))
    meta = (site / "torch_npu-2.6.0.post5.dist-info/METADATA").read_text()
    assert "Name: torch_npu\nVersion: 2.6.0.post5\n" in meta and "Requires-Dist: torch==2.6.0.*" in meta
    entry = (site / "torch_npu-2.6.0.post5.dist-info/entry_points.txt").read_text()
    assert "[torch.backends]\ntorch_npu = torch_npu:_autoload" in entry  # as in the torch-npu 2.13.0 wheel
    old = next((hosts["healthy_910b"].root / "usr/local/lib").glob("python3.*/site-packages"))
    assert "torch.backends" not in (old / "torch_npu-2.1.0.post13.dist-info/entry_points.txt").read_text()
    assert "Version: 2.1.0\n" in (old / "torch-2.1.0.dist-info/METADATA").read_text()


def test_standins_compile_on_the_oldest_supported_python():
    # The stand-ins run on the judged host's Python; keep them free of 3.10+ syntax.
    import ast

    for path in (Path(__file__).parents[2] / "runtime_sim/host/standins").glob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"), feature_version=(3, 9))
        assert not [n for n in ast.walk(tree) if type(n).__name__ == "Match"], path
