"""Bad input to `check`: one clear line on stderr, exit 2, no traceback."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "ascend_doctor", *args], capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize(
    "args, message",
    [
        (["check", "--root", "/definitely/not/here"], "--root /definitely/not/here: no such directory"),
        (["check", "--env-file", "/definitely/not/here.env"], "--env-file /definitely/not/here.env: no such file"),
        (["check", "--tier", "deepest"], "--tier deepest: choose quick or deep"),
        (["check", "--format", "xml"], "--format xml: choose one of text, json, md"),
        (["check", "--fail-on", "never"], "--fail-on never: choose warn or fail"),
        (["check", "--sim", "no-such-scenario"], "--sim no-such-scenario"),
    ],
)
def test_usage_errors(args, message) -> None:
    res = run(*args)
    assert res.returncode == 2
    assert message in res.stderr
    assert "Traceback" not in res.stderr and res.stdout == ""
    assert len(res.stderr.strip().splitlines()) == 1


def test_malformed_env_file(tmp_path: Path) -> None:
    env = tmp_path / "env"
    env.write_text("PATH=/usr/bin\nthis line is not an assignment\n")
    res = run("check", "--root", str(tmp_path), "--env-file", str(env))
    assert res.returncode == 2
    assert "line 2: expected KEY=VALUE" in res.stderr and "Traceback" not in res.stderr


def test_this_machine_without_ascend_says_so() -> None:
    """On this machine (no Ascend at all) check says plainly that no driver is installed."""
    if Path("/usr/local/Ascend").exists():
        pytest.skip("this machine has an Ascend install")
    res = run("check")
    assert res.returncode == 1
    assert "no Ascend driver is installed on this machine" in res.stdout
    assert "Traceback" not in res.stdout + res.stderr


def test_an_empty_machine_says_no_driver(tmp_path: Path) -> None:
    """The same statement on an empty tree, independent of what this machine has."""
    env = tmp_path / "env"
    env.write_text("USER=root\nHOME=/root\nPATH=/usr/bin\n")
    res = run("check", "--root", str(tmp_path), "--env-file", str(env))
    assert res.returncode == 1
    assert "no Ascend driver is installed on this machine" in res.stdout
    assert "Traceback" not in res.stdout + res.stderr


@pytest.mark.parametrize("args", [["check", "--env-file", "{fifo}"], ["opcheck", "compare", "{fifo}", "--from", "2.1.0.post10", "--to", "26.1.0"]])
def test_a_fifo_is_refused_not_waited_on(tmp_path: Path, args) -> None:
    import os

    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    res = run(*[a.format(fifo=fifo) for a in args])
    assert res.returncode == 2 and "named pipe (FIFO)" in res.stderr and "Traceback" not in res.stderr
