"""The README's two commands stay true: CI runs the test command verbatim, and the first
command's simulated host exists."""
from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _blocks() -> list:
    return re.findall(r"```sh\n(.*?)\n```", (ROOT / "README.md").read_text(encoding="utf-8"), re.S)


def test_ci_runs_the_readme_test_command() -> None:
    run_cmd, test_cmd = _blocks()[:2]
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()
    assert test_cmd.strip() in [line.strip() for line in ci]


def test_readme_first_command_uses_a_real_scenario() -> None:
    from runtime_sim.scenarios import names

    run_cmd = _blocks()[0]
    scenario = re.search(r"--sim (\S+)", run_cmd).group(1)
    assert scenario in names()


def test_readme_says_the_first_command_exits_1_and_it_does() -> None:
    """The first command finds a problem by design: the README says so before the command,
    and the command's exit code is the one it states."""
    import subprocess
    import sys

    text = (ROOT / "README.md").read_text(encoding="utf-8")
    intro = text[:text.index("```sh")]
    stated = re.search(r"exits (\d)", intro)
    assert stated, "the README must say what the first command exits with"
    scenario = re.search(r"--sim (\S+)", _blocks()[0]).group(1)
    res = subprocess.run([sys.executable, "-m", "ascend_doctor", "check", "--sim", scenario],
                         capture_output=True, text=True, timeout=120)
    assert res.returncode == int(stated.group(1)) == 1, res.stderr
