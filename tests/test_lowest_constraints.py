"""The lowest declared dependency versions are the ones CI tests (tools/lowest_constraints.py)."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tools.lowest_constraints import lowest

ROOT = Path(__file__).resolve().parent.parent


def test_floors_become_pins() -> None:
    assert lowest(["typer>=0.15.4,<0.26", "click>=8.0", "tomli>=1.1; python_version < '3.11'"]) == [
        "typer==0.15.4", "click==8.0", 'tomli==1.1; python_version < "3.11"']


@pytest.mark.parametrize("req", ["rich", "rich<14", "rich>=12,>=13", "rich>=12,!=12"])
def test_a_dependency_without_one_usable_floor_is_refused(req: str) -> None:
    with pytest.raises(ValueError, match="rich"):
        lowest([req])


def test_every_runtime_dependency_of_the_project_has_a_floor_and_ci_installs_them() -> None:
    res = subprocess.run([sys.executable, str(ROOT / "tools" / "lowest_constraints.py")], capture_output=True,
                         text=True, timeout=60)
    assert res.returncode == 0, res.stderr
    pins = [line for line in res.stdout.splitlines() if not line.startswith("#")]
    assert {p.split("==")[0] for p in pins} >= {"typer", "click", "rich", "pyyaml"}
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert "python tools/lowest_constraints.py > /tmp/ascend-doctor-ci-lowest.txt" in ci
    assert "pip install -c /tmp/ascend-doctor-ci-lowest.txt" in ci
    assert ci.rstrip().endswith("python -m pytest -q -n 2 -x")
