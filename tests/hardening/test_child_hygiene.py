"""Children write nothing into the judged machine, and an internal error can show its
traceback: the target Python runs with -B, PYTHONDONTWRITEBYTECODE and caches in a
private temporary directory that is gone afterwards; ASCEND_DOCTOR_DEBUG=1 prints the
traceback of an exit-3 error."""
from __future__ import annotations

import json
import os
import sys
from pathlib import Path

from typer.testing import CliRunner

from ascend_doctor.cli import app
from ascend_doctor.facts import Facts
from ascend_doctor.host import Host


def test_the_target_python_runs_with_B_and_a_private_scratch(tmp_path):
    record = tmp_path / "record.json"
    py = tmp_path / "root/usr/bin/python3"
    py.parent.mkdir(parents=True)
    py.write_text("#!%s\nimport json, os, sys\njson.dump({'argv': sys.argv[1:3], 'env': dict(os.environ), 'cwd': os.getcwd()}, "
                  "open(%r, 'w'))\nprint('{}')\n" % (sys.executable, str(record)))
    py.chmod(0o755)
    facts = Facts(Host(str(tmp_path / "root"), env={"PATH": "/usr/bin"}, trusted=True))
    facts.python_stack()
    seen = json.loads(record.read_text())
    assert seen["argv"] == ["-B", "-c"]
    assert seen["env"]["PYTHONDONTWRITEBYTECODE"] == "1"
    scratch = seen["cwd"]
    assert seen["env"]["PYTHONPYCACHEPREFIX"].startswith(scratch)
    assert not str(scratch).startswith(str(tmp_path)) and not os.path.exists(scratch)


def test_debug_shows_the_traceback_of_an_internal_error(monkeypatch):
    import ascend_doctor.commands.explain as explain

    def boom(*args, **kwargs):
        raise RuntimeError("deliberate failure for the test")

    monkeypatch.setattr(explain, "run_explain", boom)
    runner = CliRunner()
    quiet = runner.invoke(app, ["explain", "507035"])
    assert quiet.exit_code == 3 and "Traceback" not in quiet.output
    assert "ASCEND_DOCTOR_DEBUG=1 shows the traceback" in quiet.output
    monkeypatch.setenv("ASCEND_DOCTOR_DEBUG", "1")
    loud = runner.invoke(app, ["explain", "507035"])
    assert loud.exit_code == 3
    assert "Traceback (most recent call last)" in loud.output and "deliberate failure for the test" in loud.output
