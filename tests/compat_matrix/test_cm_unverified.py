"""Published torch_npu builds that no CANN table lists ("unverified" in torch_npu.yaml).

Facts: torch-npu 2.13.0 is a normal PyPI release with cp310..cp314 wheels
(https://pypi.org/simple/torch-npu/); no Ascend table names the CANN release it was made for.
The verdicts must say so (CANN unknown, with that reason) instead of advising against Python 3.11,
and `--suggest` must never end in an empty list with nothing said.
"""
from __future__ import annotations

import dataclasses
import json
import shlex

import pytest
from typer.testing import CliRunner

from ascend_doctor.cli import app
from compat_matrix import evaluate, scan, suggest
from compat_matrix.report import COMPATIBLE, INCOMPATIBLE, NOT_RECOMMENDED, UNKNOWN

runner = CliRunner(mix_stderr=False) if "mix_stderr" in CliRunner.__init__.__code__.co_varnames else CliRunner()
SEVERITY = {COMPATIBLE: 0, UNKNOWN: 1, NOT_RECOMMENDED: 2, INCOMPATIBLE: 3}


def invoke(*args: str):
    return runner.invoke(app, list(args))


def test_python_inside_the_published_range_is_compatible_not_advised_against():
    # the wheel tags answer the Python question; the CANN the build needs is the cann pairs' question
    p = evaluate({"torch": "2.13.0", "python": "3.11"}).pair("python", "torch")
    assert p.verdict == COMPATIBLE, p.reason
    assert "no source names the CANN release" in p.reason and "2.13.0" in p.reason
    assert p.required == "Python 3.10-3.14 (published torch_npu wheels)"
    assert p.source_id == "pypi_torch_npu"


@pytest.mark.parametrize("stack,verdict", [
    ({"torch": "2.12.0", "python": "3.11"}, COMPATIBLE),     # GA 2.12.0 ships cp311
    ({"torch": "2.13.0", "python": "3.9"}, INCOMPATIBLE),    # PyTorch 2.13 itself has no cp39 wheel
    ({"torch": "2.14.0", "python": "3.14"}, COMPATIBLE),     # 2.14.0 ships it; its wheel names its CANN
])
def test_python_verdicts_follow_the_best_build(stack, verdict):
    p = evaluate(stack).pair("python", "torch")
    assert p.verdict == verdict, p.reason


def _without_builds(matrix, torch_text: str):
    keep = [b for b in matrix.builds if b.torch.text != torch_text]
    return dataclasses.replace(matrix, builds=keep, _by_wheel={}, _by_release={})


def test_knowing_more_never_gives_a_worse_verdict(matrix):
    """For every PyTorch/Python pair: if a published build (GA or unverified) ships that Python,
    the verdict is no worse than with no build of that PyTorch known at all."""
    checked = 0
    for row in matrix.torch_python:
        blind = _without_builds(matrix, row.torch.text)
        for series in row.upstream:
            stack = {"torch": row.torch.text, "python": series}
            nothing = evaluate(stack, matrix=blind).pair("python", "torch").verdict
            assert nothing == UNKNOWN, (stack, nothing)
            builds = matrix.builds_for_torch(row.torch)
            if any(b.python and series in b.python and (b.is_ga or b.status == "unverified") for b in builds):
                known = evaluate(stack, matrix=matrix).pair("python", "torch")
                assert SEVERITY[known.verdict] <= SEVERITY[nothing], (stack, known.verdict, known.reason)
                checked += 1
    assert checked > 40


def test_torch_and_cann_name_the_inference_for_a_build_no_source_pairs():
    # 2.13.0: no source names its CANN; 2.12.0 (table) and 2.14.0 (its wheel) both name 9.1.0
    p = evaluate({"torch": "2.13.0", "cann": "9.1.0"}).pair("cann", "torch")
    assert p.verdict == NOT_RECOMMENDED and p.reason.startswith("inferred, not stated")
    assert "2.12.0 (CANN 9.1.0, stored table)" in p.reason and "2.14.0 (CANN 9.1.0" in p.reason
    q = evaluate({"torch_npu": "2.13.0", "cann": "9.1.0"}).pair("cann", "torch_npu")
    assert q.verdict == NOT_RECOMMENDED and q.required == "likely CANN 9.1.0" and q.source_id is None
    r = evaluate({"torch_npu": "2.13.0", "cann": "8.0.0"}).pair("cann", "torch_npu")
    assert r.verdict == UNKNOWN and "outside that range" in r.reason


def test_suggest_lists_unverified_builds_only_on_request():
    assert suggest({"torch": "2.13.0"}) == []
    stacks = suggest({"torch": "2.13.0"}, include_prerelease=True, include_unverified=True)
    # known CANN first (2.13.0rc1: its wheel's install example), then the build with none named
    assert [s.components["torch_npu"] for s in stacks] == ["2.13.0rc1", "2.13.0"]
    last = stacks[-1]
    assert "cann" not in last.components and last.pairing == "unpaired"
    assert last.verdict == UNKNOWN and last.python == ["3.10", "3.11", "3.12", "3.13", "3.14"]
    # post builds inherit their line's CANN: offered without asking for unverified builds
    ga = suggest({"torch": "2.12.0"})
    assert [s.components["torch_npu"] for s in ga][:3] == ["2.12.0.post3", "2.12.0.post2", "2.12.0"]
    assert ga[0].status == "published" and ga[0].components["cann"] == "9.1.0"


def test_scan_says_why_each_build_is_left_out():
    stacks, left = scan({"torch": "2.13.0"})
    assert stacks == []
    why = {lo.build.torch_npu.text: lo for lo in left}
    assert set(why) == {"2.13.0", "2.13.0rc1"}
    assert why["2.13.0"].reason == ("no source names the CANN release it was made for (likely CANN 9.1.0, "
                                    "inferred from the nearest builds that name one)")
    assert why["2.13.0"].non_ga_filter and why["2.13.0rc1"].non_ga_filter
    # a pin that no build can meet is not blamed on the GA filter
    _, left = scan({"torch": "2.12.0", "python": "3.9"})
    assert left and not any(lo.non_ga_filter for lo in left)
    assert all("no Python 3.9 wheel" in lo.reason or "not published" in lo.reason for lo in left)
    _, left = scan({"torch": "2.12.0", "cann": "9.1.0"})
    rc = next(lo for lo in left if lo.build.torch_npu.text == "2.12.0rc1")
    assert rc.reason == "a prerelease build, not GA; made for CANN 8.5.0, not 9.1.0" and not rc.non_ga_filter


def test_suggest_command_says_what_is_known_and_what_is_missing():
    res = invoke("compat", "--torch", "2.13.0", "--suggest")
    assert res.exit_code == 1
    out = res.stdout
    assert "torch_npu 2.13.0 " in out and "torch_npu 2.13.0rc1" in out and "Python 3.10-3.14" in out
    assert "likely CANN 9.1.0, inferred" in out and "a prerelease build, not GA" in out
    assert "ascend-doctor compat --torch 2.13.0 --suggest --prerelease" in out
    data = json.loads(invoke("compat", "--torch", "2.13.0", "--suggest", "--json").stdout)
    assert data["schema"] == 1 and data["count"] == 0 and data["stacks"] == []
    assert [b["torch_npu"] for b in data["not_listed"]] == ["2.13.0", "2.13.0rc1"]
    assert data["not_listed"][0]["cann"] is None and data["not_listed"][0]["listed_with_all_builds"] is True
    assert data["next"] == "ascend-doctor compat --torch 2.13.0 --suggest --prerelease"
    # the next command lists them: the advice does not dead-end
    again = invoke(*shlex.split(data["next"])[1:], "--json")
    listed = json.loads(again.stdout)
    assert again.exit_code == 0 and listed["count"] == 2 and listed["next"] is None
    assert [(s["components"].get("cann"), s["verdict"]) for s in listed["stacks"]] == [
        ("9.0.0", NOT_RECOMMENDED), (None, UNKNOWN)]
    md = invoke("compat", "--torch", "2.13.0", "--suggest", "--format", "md").stdout
    assert "| torch_npu 2.13.0 | unverified | PyPI | Python 3.10-3.14 |" in md and "Missing: " in md


def test_prerelease_table_marks_the_unknown_cann():
    out = invoke("compat", "--torch", "2.13.0", "--suggest", "--prerelease").stdout
    assert "unknown  2.13.0  2.13.0 " in out and "no source names the CANN release" in out
    # the rc names CANN 9.0.0 in its wheel's install example: that CANN's HDK lines are listed
    assert "9.0.0    2.13.0  2.13.0rc1" in out and "HDK lines allowed for CANN 9.0.0" in out


def test_all_builds_keyword_matches_prerelease():
    import io

    from ascend_doctor.commands.compat import run_compat

    a, b = io.StringIO(), io.StringIO()
    assert run_compat(torch="2.13.0", suggest=True, prerelease=True, fmt="json", stream=a) == 0
    assert run_compat(torch="2.13.0", suggest=True, all_builds=True, fmt="json", stream=b) == 0
    assert json.loads(a.getvalue()) == json.loads(b.getvalue())


def test_verdict_line_points_at_a_command_that_lists_something():
    out = invoke("compat", "--torch", "2.13.0", "--cann", "8.2.RC1").stdout
    assert "Verdict: unknown." in out
    assert out.rstrip().endswith("ascend-doctor compat --torch 2.13.0 --suggest --prerelease")
    # Python 3.11 is inside the published range: nothing to point at
    out = invoke("compat", "--torch", "2.13.0", "--python", "3.11").stdout
    assert out.rstrip().endswith("Verdict: compatible.")
    # with a GA build the plain command is enough
    out = invoke("compat", "--torch", "2.12.0", "--python", "3.9").stdout
    assert out.rstrip().endswith("ascend-doctor compat --torch 2.12.0 --suggest")


def test_no_torch_in_the_tables_is_never_an_empty_answer(matrix):
    """Every PyTorch the data knows gets stacks, or a reason and (when it helps) the next command."""
    for row in matrix.torch_python:
        stacks, left = scan({"torch": row.torch.text})
        if stacks:
            continue
        assert left, row.torch.text
        if any(lo.non_ga_filter for lo in left):
            more, _ = scan({"torch": row.torch.text}, include_prerelease=True, include_unverified=True)
            assert more, row.torch.text
    res = invoke("compat", "--torch", "2.99.0", "--suggest")
    assert res.exit_code == 1 and "no torch_npu build for PyTorch 2.99.0 is known" in res.stdout
    res = invoke("compat", "--cann", "7.0.T99", "--suggest")
    assert "CANN 7.0.T99 appears in no torch_npu table; the newest the tables name: 9.1.0" in res.stdout
