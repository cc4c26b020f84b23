"""`ascend-doctor opcheck record | compare | versions` as a sub-app: the help, the choices, the old
`opcheck MANIFEST` form, and the edges of issue #11 (each reproduced, each one line + exit 2).

The command line runs in this process through ``ascend_doctor.cli._run`` (what ``main`` runs);
recording needs a child interpreter and torch, so those tests run the real command."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from ascend_doctor import cli
from ascend_doctor.opcheck.choices import Soc

REPO = Path(__file__).resolve().parents[2]
MANIFEST = {
    "schema": 1,
    "recorded": {"torch": "2.1.0", "mode": "eager", "complete": True},
    "ops": [{"op": "aten::_transformer_encoder_layer_fwd", "calls": 1}, {"op": "aten::mm", "calls": 5}],
}
VERSIONS = ["--from", "2.1.0.post10", "--to", "2.1.0.post12"]


@pytest.fixture()
def mpath(tmp_path):
    p = tmp_path / "model.ops.json"
    p.write_text(json.dumps(MANIFEST))
    return str(p)


def run(capsys, *args):
    code = cli._run(cli.app, list(args), "ascend-doctor")
    out, err = capsys.readouterr()
    return code, out, err


def one_line_error(err: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("ascend-doctor: error: "), err
    assert "Traceback" not in err and "internal error" not in err
    return lines[0]


def test_three_sub_commands_with_real_metavars(capsys):
    code, out, _ = run(capsys, "opcheck", "--help")
    assert code == 0 and all(f"  {c}  " in out for c in ("record", "compare", "versions"))
    _, compare, _ = run(capsys, "opcheck", "compare", "--help")
    _, record, _ = run(capsys, "opcheck", "record", "--help")
    _, versions, _ = run(capsys, "opcheck", "versions", "--help")
    assert "--fail-on [unsupported|fallback|change]" in compare and "--soc SOC" in compare and "Ascend910_9392" in compare
    assert "--mode [eager|fake|meta]" in record and "-- python SCRIPT.py ARGS..." in record
    for text in (compare, record, versions):
        assert "--json" in text and "--format FORMAT" in text and "text | json | md" in text
        assert "<str>" not in text and "TEXT" not in text and "list[" not in text


def test_replay_into_an_existing_file_is_a_usage_error(capsys, mpath, tmp_path):
    # was: internal error FileExistsError, exit 3
    empty = tmp_path / "empty.log"
    empty.write_text("")
    code, out, err = run(capsys, "opcheck", "compare", mpath, *VERSIONS, "--replay", str(empty))
    assert code == 2 and out == ""
    assert "--replay" in one_line_error(err) and "not a directory" in err


def test_replay_under_proc_is_a_usage_error(capsys, mpath):
    # was: internal error FileNotFoundError, exit 3
    code, _, err = run(capsys, "opcheck", "compare", mpath, *VERSIONS, "--replay", "/proc/foo")
    assert code == 2 and "--replay /proc/foo: cannot create the directory" in one_line_error(err)
    assert not os.path.exists("/proc/foo")


def test_an_unknown_chip_is_rejected_with_the_valid_ones(capsys, mpath, tmp_path):
    # was: accepted, and the simulated host carried a chip named banana
    code, _, err = run(capsys, "opcheck", "compare", mpath, *VERSIONS, "--replay", str(tmp_path / "logs"), "--soc", "banana")
    line = one_line_error(err)
    assert code == 2 and "'banana' is not one of" in line and all(s.value in line for s in Soc)
    assert not (tmp_path / "logs").exists()  # rejected before anything ran


def test_a_valid_chip_reaches_the_simulated_host(capsys, mpath, tmp_path):
    code, out, _ = run(capsys, "opcheck", "compare", mpath, *VERSIONS, "--replay", str(tmp_path / "logs"),
                       "--soc", "Ascend910_9392", "--json")
    replay = json.loads(out)["replay"]
    assert code == 0 and replay["soc"] == "Ascend910_9392" and replay["failed"] is None
    assert "aten::_transformer_encoder_layer_fwd' is not currently supported" in replay["console"]


@pytest.mark.parametrize("args, needle", [
    (["--fail-on", "sometimes"], "'sometimes' is not one of 'unsupported', 'fallback', 'change'"),
    (["--format", "xml"], "--format xml: choose one of text, json, md"),
])
def test_bad_choices_are_one_line(capsys, mpath, args, needle):
    code, _, err = run(capsys, "opcheck", "compare", mpath, *VERSIONS, *args)
    assert code == 2 and needle in one_line_error(err)


def test_record_without_a_program_is_one_line(capsys):
    code, _, err = run(capsys, "opcheck", "record", "-o", "x.json")
    assert code == 2 and "Missing argument" in one_line_error(err)


def test_the_old_form_is_compare(capsys, mpath):
    code, new, _ = run(capsys, "opcheck", "compare", mpath, *VERSIONS, "--json")
    assert code == 0
    assert run(capsys, "opcheck", mpath, *VERSIONS, "--json") == (0, new, "")
    assert run(capsys, "opcheck", *VERSIONS, "--json", mpath) == (0, new, "")  # options first, as before


def test_a_mistyped_sub_command_says_which_one(capsys):
    code, _, err = run(capsys, "opcheck", "versoins")
    assert code == 2 and "did you mean `opcheck versions`?" in one_line_error(err)


def test_versions_in_each_format(capsys):
    code, text, _ = run(capsys, "opcheck", "versions")
    assert code == 0 and text.startswith("torch_npu lines")
    _, md, _ = run(capsys, "opcheck", "versions", "--format", "md")
    assert md.startswith("# opcheck versions") and "| 2.7.1 | 2.7 | 2.7.1.post11 |" in md and "## Release branches" in md
    _, js, _ = run(capsys, "opcheck", "versions", "--json")
    doc = json.loads(js)
    assert doc["schema"] == 1 and len(doc["lines"]) == md.count("\n| 2.")


def test_the_command_line_loads_only_the_choices_of_opcheck():
    code = "import sys, ascend_doctor.cli; print(sorted(m for m in sys.modules if m.startswith('ascend_doctor.opcheck')))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True).stdout
    assert out.strip() == "['ascend_doctor.opcheck', 'ascend_doctor.opcheck.choices']"


def test_every_chip_the_simulator_knows_is_a_choice():
    import yaml

    data = REPO / "runtime_sim"
    failures = yaml.safe_load((data / "runtime" / "data" / "op_failures.yaml").read_text(encoding="utf-8"))
    chips = yaml.safe_load((data / "host" / "data" / "chips.yaml").read_text(encoding="utf-8"))["chips"]
    known = {s for row in failures["dtype_limits"] for s in row["soc"]} | {c["soc"] for c in chips.values()}
    assert known <= {s.value for s in Soc}, known - {s.value for s in Soc}


# ---------------------------------------------------------------- record (a child interpreter)


def _cli(*args, cwd, env=None):
    return subprocess.run([sys.executable, "-m", "ascend_doctor", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=300, env=env)


def test_record_of_a_program_that_exits_3_says_so_without_a_traceback(tmp_path):
    pytest.importorskip("torch")
    # was: our own "Traceback ... RuntimeError: the program exited with status 3"
    p = _cli("opcheck", "record", "-o", "x.json", "--", "python", "-c", "raise SystemExit(3)", cwd=tmp_path)
    assert p.returncode == 1 and "Traceback" not in p.stderr
    assert p.stderr.strip().splitlines()[-1] == (
        "ascend-doctor: opcheck record: the program exited with status 3 before running any op: "
        "nothing recorded (x.json holds an empty, incomplete manifest)")
    doc = json.loads((tmp_path / "x.json").read_text())
    assert doc["recorded"]["complete"] is False and doc["recorded"]["error"] == "the program exited with status 3"


def test_record_of_a_failing_program_shows_only_the_program_frames(tmp_path):
    pytest.importorskip("torch")
    (tmp_path / "boom.py").write_text("import torch\ntorch.ones(3).exp()\n1 / 0\n")
    p = _cli("opcheck", "record", "-o", "b.json", "--json", "--", "python", "boom.py", cwd=tmp_path)
    assert p.returncode == 1 and json.loads(p.stdout)["complete"] is False
    assert 'File "boom.py", line 3' in p.stderr and "ZeroDivisionError: division by zero" in p.stderr
    assert "runner.py" not in p.stderr and "runpy" not in p.stderr
    assert "the program failed (ZeroDivisionError: division by zero); recorded the" in p.stderr


def test_torch_numpy_complaints_are_not_shown_but_the_rest_is(tmp_path):
    # torch without NumPy (or with a NumPy of another ABI) complains on import; the recorder
    # never uses NumPy, so `opcheck record` keeps that off the user's screen. A stand-in torch
    # says exactly what torch 2.x says in each case; a third line of its own must pass through.
    fake = tmp_path / "fake"
    fake.mkdir()
    (fake / "torch.py").write_text(textwrap.dedent('''
        import sys, warnings
        sys.stderr.write("\\nA module that was compiled using NumPy 1.x cannot be run in\\nNumPy 2.1.0 as it may crash.\\n")
        warnings.warn("Failed to initialize NumPy: No module named 'numpy' (Triggered internally at "
                      "../torch/csrc/utils/tensor_numpy.cpp:84.)", UserWarning)
    '''))
    code = "from ascend_doctor.opcheck.runner import import_torch_quietly as q; print(q())"
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(fake), str(REPO)]))
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, env=env)
    assert p.stdout.strip() == "True" and p.stderr == ""
    (fake / "torch.py").write_text("import sys\nsys.stderr.write('torch: something else\\n')\n")
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, env=env)
    assert p.stdout.strip() == "True" and p.stderr == "torch: something else\n"
