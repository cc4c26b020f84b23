"""The ``ascend-doctor`` command ends a one-line question's process without the interpreter's
teardown (ascend_doctor/launch.py ``run``): same stdout, stderr and exit code as ``main``, output
flushed to a pipe, and the ordinary exit whenever an exit handler other than children's is set."""
from __future__ import annotations


import pytest

from .test_launch import FAST as MAIN
from .test_launch import LINE, _run

RUN = "import sys; from ascend_doctor.launch import run; sys.argv[0] = 'ascend-doctor'; run()"


@pytest.mark.parametrize("args", [
    ["triage", "paste.log"],
    ["triage", "paste.log", "--json"],
    ["triage", "missing.log"],
    ["triage", "empty.log"],
    ["explain", "EZ9999"],
    ["explain", "--format", "md", "507035"],
    ["explain", "no.such.entry"],
    ["explain", "--format", "yaml", "7"],
], ids=lambda a: " ".join(a))
def test_run_answers_like_main(tmp_path, args):
    (tmp_path / "paste.log").write_text(LINE, encoding="utf-8")
    (tmp_path / "empty.log").write_text("", encoding="utf-8")
    got = _run(RUN, args, tmp_path)
    assert got == _run(MAIN, args, tmp_path)
    assert got[1] or got[2]


def test_a_long_answer_reaches_a_pipe_whole(tmp_path):
    """Everything written is flushed before the process ends (a pipe, not a terminal)."""
    (tmp_path / "paste.log").write_text(LINE * 2000 + "".join(f"RuntimeError: case {i} failed\n" for i in range(300)), encoding="utf-8")
    args = ["triage", "paste.log", "--json"]
    got = _run(RUN, args, tmp_path)
    assert got == _run(MAIN, args, tmp_path)
    assert got[1].rstrip().endswith("}")


def test_another_exit_handler_gets_the_ordinary_exit(tmp_path):
    (tmp_path / "paste.log").write_text(LINE, encoding="utf-8")
    prog = ("import atexit, sys; atexit.register(lambda: sys.stderr.write('handler ran\\n'))\n" + RUN.replace("; ", "\n"))
    code, out, err = _run(prog, ["triage", "paste.log"], tmp_path)
    assert code == 1 and "env_path" in out and err.endswith("handler ran\n")
