"""The Kubernetes manifests: valid against the Kubernetes API schemas (kubernetes-validate,
schemas bundled, no network), host paths read-only, and the node-problem-detector plugin
run for real on simulated hosts so its exit codes become the right node conditions."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest
import yaml

import runtime_sim

K8S = Path(__file__).resolve().parents[2] / "deploy" / "kubernetes"
MANIFESTS = sorted(K8S.glob("*.yaml"))


def _docs():
    out = []
    for path in MANIFESTS:
        out.extend(d for d in yaml.safe_load_all(path.read_text()) if d)
    return out


def _tool(name):
    path = Path(sys.executable).parent / name
    return str(path) if path.exists() else shutil.which(name)


def test_manifests_pass_the_kubernetes_schemas():
    assert len(MANIFESTS) == 2
    assert _tool("kubernetes-validate"), "kubernetes-validate is in the test extra"
    proc = subprocess.run([_tool("kubernetes-validate"), "--strict", *map(str, MANIFESTS)], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    passed = [line for line in proc.stdout.splitlines() + proc.stderr.splitlines() if " passed for resource " in line]
    assert len(passed) == len(_docs()) == 7


def test_a_broken_manifest_fails_validation(tmp_path):
    ds = next(d for d in _docs() if d["kind"] == "DaemonSet")
    ds["spec"]["template"]["spec"]["containers"][0]["volumeMounts"][0]["readOnly"] = "yes"  # a string, not a boolean
    bad = tmp_path / "bad.yaml"
    bad.write_text(yaml.safe_dump(ds))
    proc = subprocess.run([_tool("kubernetes-validate"), "--strict", str(bad)], capture_output=True, text=True, timeout=120)
    assert proc.returncode != 0


def test_host_paths_are_read_only():
    for ds in (d for d in _docs() if d["kind"] == "DaemonSet"):
        spec = ds["spec"]["template"]["spec"]
        host = {v["name"]: v["hostPath"] for v in spec["volumes"] if "hostPath" in v}
        for c in spec["containers"]:
            for m in c["volumeMounts"]:
                if m["name"] in host and m["name"] != "textfile":
                    assert m.get("readOnly") is True, (ds["metadata"]["name"], m["name"])
        for name, hp in host.items():
            assert name == "textfile" or not hp["type"].endswith("OrCreate"), name
        paths = {hp["path"] for hp in host.values()}
        assert {"/usr/local/Ascend", "/dev"} <= paths
    doctor = next(d for d in _docs() if d["kind"] == "DaemonSet" and d["metadata"]["name"] == "ascend-doctor")
    assert "/root/ascend/log" in {v["hostPath"]["path"] for v in doctor["spec"]["template"]["spec"]["volumes"] if "hostPath" in v}


def _npd():
    cm = next(d for d in _docs() if d["kind"] == "ConfigMap" and d["metadata"]["name"] == "ascend-doctor-npd")
    return json.loads(cm["data"]["ascend-doctor-monitor.json"]), cm["data"]["ascend-doctor-check.sh"]


# The custom plugin monitor config, as node-problem-detector reads it
# (pkg/custompluginmonitor/types/{config,types}.go in kubernetes/node-problem-detector).
NPD_SCHEMA = {
    "type": "object",
    "required": ["plugin", "pluginConfig", "source", "conditions", "rules"],
    "additionalProperties": False,
    "properties": {
        "plugin": {"const": "custom"},
        "pluginConfig": {"type": "object", "additionalProperties": False, "properties": {
            "invoke_interval": {"type": "string", "pattern": "^[0-9]+(ms|s|m|h)$"},
            "timeout": {"type": "string", "pattern": "^[0-9]+(ms|s|m|h)$"},
            "max_output_length": {"type": "integer", "minimum": 1},
            "concurrency": {"type": "integer", "minimum": 1},
            "enable_message_change_based_condition_update": {"type": "boolean"},
            "skip_initial_status": {"type": "boolean"}}},
        "source": {"type": "string", "minLength": 1},
        "metricsReporting": {"type": "boolean"},
        "conditions": {"type": "array", "items": {"type": "object", "required": ["type", "reason", "message"],
                                                  "additionalProperties": False,
                                                  "properties": {"type": {"type": "string"}, "reason": {"type": "string"},
                                                                 "message": {"type": "string"}}}},
        "rules": {"type": "array", "minItems": 1, "items": {
            "type": "object", "required": ["type", "reason", "path"], "additionalProperties": False,
            "properties": {"type": {"enum": ["temporary", "permanent"]}, "condition": {"type": "string"},
                           "reason": {"type": "string"}, "path": {"type": "string"},
                           "args": {"type": "array", "items": {"type": "string"}},
                           "timeout": {"type": "string", "pattern": "^[0-9]+(ms|s|m|h)$"},
                           "invoke_interval": {"type": "string"}}}},
    },
}


def test_npd_config_declares_the_two_conditions():
    config, _ = _npd()
    jsonschema.validate(config, NPD_SCHEMA)
    declared = {c["type"] for c in config["conditions"]}
    assert declared == {"NPUEnvironmentProblem", "NPUDriverProblem"}
    for rule in config["rules"]:
        assert rule["type"] == "permanent" and rule["condition"] in declared
        assert int(rule["timeout"][:-1]) < int(config["pluginConfig"]["timeout"][:-1])
        assert rule["path"] == "/config/ascend-doctor-check.sh" and rule["args"][0] == "--only"


@pytest.fixture(scope="module")
def plugin(tmp_path_factory):
    """The plugin script as NPD runs it, pointed at a simulated host instead of /host."""
    _, script = _npd()
    tmp = tmp_path_factory.mktemp("npd")

    def run(scenario, condition):
        config, _ = _npd()
        rule = next(r for r in config["rules"] if r["condition"] == condition)
        root = tmp / scenario
        if not root.exists():
            runtime_sim.build(scenario, root)
        path = tmp / f"{scenario}.sh"
        path.write_text(script.replace("--root /host", f"--root {root}").replace("/etc/ascend-doctor/node.env", str(root / "user.env")))
        path.chmod(0o755)
        env = dict(os.environ, PATH=str(Path(sys.executable).parent) + os.pathsep + os.environ.get("PATH", ""))
        proc = subprocess.run(["/bin/sh", str(path), *rule["args"]], capture_output=True, text=True, timeout=120, env=env)
        return proc.returncode, proc.stdout.strip()

    return run


def test_plugin_exit_codes_become_conditions(plugin):
    assert plugin("healthy_910b", "NPUDriverProblem")[0] == 0
    assert plugin("healthy_910b", "NPUEnvironmentProblem")[0] == 0
    code, message = plugin("set_env_not_sourced", "NPUEnvironmentProblem")
    assert code == 1 and "1 failed" in message and "env.set_env" in message  # NonOK: the condition is set
    assert plugin("set_env_not_sourced", "NPUDriverProblem")[0] == 0
    code, message = plugin("dcmi_8005", "NPUDriverProblem")
    assert code == 1 and "failed" in message
    assert len(message) <= 200


def test_plugin_reports_unknown_when_the_doctor_cannot_run(tmp_path):
    _, script = _npd()
    path = tmp_path / "plugin.sh"
    path.write_text(script.replace("/etc/ascend-doctor/node.env", str(tmp_path / "missing.env")).replace("--root /host", f"--root {tmp_path}"))
    env = dict(os.environ, PATH=str(Path(sys.executable).parent) + os.pathsep + os.environ.get("PATH", ""))
    proc = subprocess.run(["/bin/sh", str(path), "--only", "driver"], capture_output=True, text=True, timeout=60, env=env)
    assert proc.returncode == 2 and "missing.env" in proc.stdout  # Unknown, with the doctor's one-line error
