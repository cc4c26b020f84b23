"""The same behaviour at the edges in every verb: a usage error is one line on stderr, exit 2,
nothing on stdout, and its message agrees with what it refuses."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from ascend_doctor.cli import app

runner = CliRunner(mix_stderr=False) if "mix_stderr" in CliRunner.__init__.__code__.co_varnames else CliRunner()


def cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "ascend_doctor", *args], capture_output=True, text=True, timeout=120)


def one_usage_line(res, exit_code: int, stdout: str, stderr: str) -> str:
    assert exit_code == 2, (stdout, stderr)
    assert stdout == "" and "Traceback" not in stderr
    lines = stderr.strip().splitlines()
    assert len(lines) == 1, stderr
    return lines[0]


def invoke(*args: str) -> str:
    res = runner.invoke(app, list(args))
    return one_usage_line(res, res.exit_code, res.stdout, res.stderr)


# --- --json with another --format -------------------------------------------------------
VERBS = [
    ("check", "--sim", "healthy_910b"),
    ("compat", "--cann", "8.0.RC1"),
    ("triage", "/nonexistent"),
    ("explain", "507035"),
    ("oom", "NPU out of memory"),
    ("diagnose", "init"),
    ("profile", "/nonexistent"),
    ("bundle",),
    ("fleet", "/nonexistent"),
    ("opcheck", "versions"),
]


@pytest.mark.parametrize("verb", VERBS, ids=[v[0] for v in VERBS])
def test_json_and_another_format_conflict_in_every_verb(verb) -> None:
    line = invoke(*verb, "--json", "--format", "md")
    assert line == ("ascend-doctor: error: --json and --format md ask for two outputs: give one "
                    "(--json is --format json)")


def test_json_and_another_format_conflict_on_the_fast_path_and_the_oom_tools() -> None:
    for args in (("triage", "/nonexistent", "--json", "--format", "md"), ("explain", "507035", "--format=text", "--json"),
                 ("oom", "watch", "--stats", "/nonexistent", "--json", "--format", "text")):
        res = cli(*args)
        assert "--json and --format" in one_usage_line(res, res.returncode, res.stdout, res.stderr)


def test_json_with_format_json_and_the_defaults_are_no_conflict() -> None:
    res = runner.invoke(app, ["explain", "507035", "--json", "--format", "json"])
    assert res.exit_code == 0 and res.stdout.lstrip().startswith("{")
    res = cli("oom", "watch", "--stats", "/nonexistent", "--json")  # its default format is prometheus
    assert "no such file or directory" in one_usage_line(res, res.returncode, res.stdout, res.stderr)


# --- --timeout: the message states the range it enforces -------------------------------
@pytest.mark.parametrize("verb", [("check",), ("diagnose", "init"), ("bundle",)], ids=lambda v: v[0])
@pytest.mark.parametrize("value", ["0", "-1", "601", "nan", "inf"])
def test_timeout_outside_its_range(verb, value) -> None:
    line = invoke(*verb, "--timeout", value)
    assert "--timeout" in line and "give seconds above 0 and at most 600" in line


def test_timeout_at_the_edges_of_its_range_is_accepted(tmp_path: Path) -> None:
    env = tmp_path / "env"
    env.write_text("USER=root\nHOME=/root\nPATH=/usr/bin\n")
    for value in ("600", "0.01"):
        res = runner.invoke(app, ["check", "--root", str(tmp_path), "--env-file", str(env), "--timeout", value])
        assert res.exit_code == 1 and "--timeout" not in res.stderr  # an empty tree: no driver


# --- --sim: a mistyped name gets the closest names, in one line --------------------------
def test_mistyped_sim_gets_did_you_mean() -> None:
    line = invoke("check", "--sim", "set_env_not_source")
    assert "did you mean set_env_not_sourced?" in line and "runtime_sim list" in line
    assert "healthy_910b" not in line  # not the whole list


def test_unrelated_sim_name_points_at_the_list() -> None:
    line = invoke("compat", "--sim", "banana")
    assert "unknown scenario" in line and "did you mean" not in line and "runtime_sim list" in line


# --- --python: a path that is not an interpreter is a usage error, like a bad --root -----
def test_python_that_is_not_an_interpreter_is_a_usage_error(tmp_path: Path) -> None:
    text = tmp_path / "notes.txt"
    text.write_text("not a program\n")
    text.chmod(0o755)
    cases = {"/etc/passwd": "not executable, not a Python interpreter",
             str(tmp_path): "is a directory, not a Python interpreter",
             str(tmp_path / "absent"): "no such file or directory",
             str(text): "neither a program (ELF) nor a #! script, not a Python interpreter",
             "no-such-python3.99": "not found on the judged PATH"}
    for given, why in cases.items():
        line = invoke("check", "--python", given, "--only", "python")
        assert line == f"ascend-doctor: error: --python {given}: {why}"
    root_line = invoke("check", "--root", str(tmp_path / "absent"))
    assert root_line.startswith("ascend-doctor: error: --root")  # the same kind of message


def test_a_real_interpreter_is_accepted() -> None:
    res = runner.invoke(app, ["check", "--sim", "healthy_910b", "--python", "/usr/bin/python3", "--only", "python", "--json"])
    assert res.exit_code == 0, res.stderr
