"""The start-up fast path (ascend_doctor/launch.py) answers plain triage/explain calls exactly as
the full command line (ascend_doctor/cli.py) does: same stdout, stderr and exit code."""
from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from ascend_doctor.launch import _plain

LINE = "ImportError: libhccl.so: cannot open shared object file: No such file or directory\n"
FULL = "import sys; from ascend_doctor.cli import main; sys.argv[0] = 'ascend-doctor'; main()"
FAST = "import sys; from ascend_doctor.launch import main; sys.argv[0] = 'ascend-doctor'; main()"
# timings differ from run to run: "in 0.01 s", "seconds": 0.2, "duration_ms": 4.0, "duration_s": ...
_SECONDS = re.compile(r"in \d+\.\d\d s|\"(?:seconds|duration_ms|duration_s)\": [\d.]+|\d+ ms\b")


@pytest.fixture(scope="module")
def sim_host(tmp_path_factory):
    """A simulated host with a failing driver check, so the check output has findings."""
    import runtime_sim

    built = runtime_sim.build("dcmi_8005", tmp_path_factory.mktemp("sim"))
    assert Path(built.env_file) == Path(built.root) / "user.env"
    return Path(built.root)


def _run(prog, args, tmp_path):
    proc = subprocess.run([sys.executable, "-c", prog, *args], capture_output=True, text=True, timeout=120, cwd=tmp_path)
    return proc.returncode, _SECONDS.sub("<t>", proc.stdout), proc.stderr


@pytest.mark.parametrize("args", [
    ["triage", "paste.log"],
    ["triage", "paste.log", "--json"],
    ["triage", "--format", "md", "paste.log"],
    ["triage", "-v", "paste.log"],
    ["triage", "missing.log"],
    ["triage", "paste.log", "--format", "yaml"],
    ["explain", "EZ9999"],
    ["explain", "--json", "507035"],
    ["explain", "cannot", "open", "shared", "object", "file"],
    ["explain", "no.such.entry"],
    ["check", "--root", "host", "--env-file", "host/user.env"],
    ["check", "--root=host", "--env-file=host/user.env", "--json"],
    ["check", "--root", "host", "-v", "--format", "md"],
    ["check", "--root", "host", "--format", "yaml"],
    ["check", "--root", "missing"],
], ids=lambda a: " ".join(a))
def test_fast_path_answers_like_the_full_command_line(tmp_path, args, sim_host):
    (tmp_path / "paste.log").write_text(LINE, encoding="utf-8")
    (tmp_path / "host").symlink_to(sim_host)
    assert _plain(args) is not None  # these are the forms the fast path takes
    assert _run(FAST, args, tmp_path) == _run(FULL, args, tmp_path)


@pytest.mark.parametrize("args", [["triage"], ["triage", "--help"], ["explain", "507035", "-8005"], ["check", "x"], ["check", "--sim", "dcmi_8005"],
                                  ["check", "--root", "a", "--root", "b"], ["triage", "-x", "a"]])
def test_everything_else_goes_to_the_full_parser(args):
    assert _plain(args) is None


def test_a_reader_that_leaves_early_is_not_an_internal_error():
    # `ascend-doctor opcheck versions | head -1` used to end with BrokenPipeError and exit 3
    proc = subprocess.Popen([sys.executable, "-m", "ascend_doctor", "opcheck", "versions"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    proc.stdout.readline()
    proc.stdout.close()
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=120) in (0, 1) and "internal error" not in err and "Traceback" not in err


_OTHER_VERBS = ("ascend_doctor.opcheck", "ascend_doctor.profile", "ascend_doctor.bundle", "ascend_doctor.fleet",
                "ascend_doctor.flows", "ascend_doctor.memory", "ascend_doctor.cli", "typer", "click", "yaml", "torch")
_MODULES = ("import sys, json; from ascend_doctor.launch import main; sys.argv[0] = 'ascend-doctor'\n"
            "try:\n    main()\nexcept SystemExit:\n    pass\n"
            "sys.stderr.write(json.dumps(sorted(sys.modules)))")


@pytest.mark.parametrize("args,also_absent", [
    (["triage", "paste.log"], ("ascend_doctor.checks", "rich")),
    (["explain", "EZ9999"], ("ascend_doctor.checks",)),
    # a host without CANN logs: the logs check has nothing to triage, so the engine stays unloaded
    (["check", "--root", "host"], ("ascend_doctor.commands.triage", "ascend_doctor.triage.engine")),
], ids=lambda a: " ".join(a) if isinstance(a, list) else "")
def test_a_verb_imports_only_what_it_runs(tmp_path, sim_host, args, also_absent):
    """The command line imports the verb it runs: no parser framework, no other verb's package,
    no YAML (the data is read from its compiled form)."""
    import json

    (tmp_path / "paste.log").write_text(LINE, encoding="utf-8")
    (tmp_path / "host").symlink_to(sim_host)
    proc = subprocess.run([sys.executable, "-c", _MODULES, *args], capture_output=True, text=True, timeout=120, cwd=tmp_path)
    loaded = set(json.loads(proc.stderr.strip().splitlines()[-1]))
    present = sorted(m for m in loaded for p in _OTHER_VERBS + also_absent if m == p or m.startswith(p + "."))
    assert present == []
