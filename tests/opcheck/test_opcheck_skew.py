"""The warning when the recording PyTorch is not the PyTorch of a compared torch_npu line."""
from __future__ import annotations

import json

import pytest

from ascend_doctor.commands.opcheck import run_compare
from ascend_doctor.opcheck import render
from ascend_doctor.opcheck.check import check
from ascend_doctor.opcheck.manifest import from_json
from ascend_doctor.opcheck.skew import minor

OPS = [
    {"op": "aten::argmax", "calls": 2, "dispatch": ["CPU", "CompositeExplicitAutogradNonFunctional", "Meta"]},
    {"op": "aten::mm", "calls": 5, "dispatch": ["CPU", "Meta"]},
]


def manifest(torch=None, ops=OPS):
    recorded = {"torch": torch} if torch else {}
    return from_json({"schema": 1, "recorded": recorded, "ops": ops})


@pytest.mark.parametrize("text,want", [("2.13.0+cpu", "2.13"), ("2.1.0", "2.1"), ("2.1", "2.1"), ("2", None),
                                       (None, None), ("nightly", None), ("2.10.0a0+git", "2.10")])
def test_minor(text, want):
    assert minor(text) == want


def test_readme_example_warns_and_says_what_can_go_wrong():
    rep = check(manifest("2.13.0+cpu"), "2.1.0.post10", "2.7.1.post8")
    skew = rep.skew
    assert skew is not None
    assert (skew.recorded, skew.source, skew.target, skew.dispatch_from) == ("2.13", "2.1", "2.7", "recording")
    note = skew.note
    assert note.startswith("the manifest was recorded with torch 2.13, but the --from line is built for torch 2.1 "
                           "and the --to line is built for torch 2.7")
    for words in ("'decomposed by PyTorch' can really be a CPU fallback", "'unknown'", "call counts",
                  "pip install torch==2.1.0"):
        assert words in note, words
    assert rep.notes[0] == note
    data = rep.to_json()
    assert data["torch_skew"]["recorded_torch"] == "2.13" and data["torch_skew"]["note"] == note


def test_same_minor_on_both_sides_is_quiet():
    rep = check(manifest("2.7.1"), "2.7.1.post4", "2.7.1.post8")
    assert rep.skew is None and rep.to_json()["torch_skew"] is None
    assert not any("recorded with torch" in n for n in rep.notes)


def test_one_side_differing_is_enough():
    rep = check(manifest("2.7.1"), "2.1.0.post10", "2.7.1.post8")
    assert rep.skew is not None and rep.skew.note.startswith(
        "the manifest was recorded with torch 2.7, but the --from line is built for torch 2.1.")


def test_without_recorded_torch_the_shipped_table_decides():
    from compat_matrix.op_support import dispatch

    bare = [{"op": "aten::mm", "calls": 5}]
    rep = check(manifest(None, bare), "2.1.0.post10", "2.7.1.post8")
    table = minor(dispatch.table_torch_version())
    assert rep.skew is not None and rep.skew.dispatch_from == "shipped table" and rep.skew.dispatch == table
    assert rep.skew.note.startswith("the manifest does not say which torch recorded it")
    assert "judged with torch %s's dispatch table" % table in rep.skew.note


def test_text_and_markdown_show_the_warning_once_before_the_verdict():
    rep = check(manifest("2.13.0+cpu"), "2.1.0.post10", "2.7.1.post8")
    text = render.to_text(rep)
    lines = text.splitlines()
    warn = next(i for i, line in enumerate(lines) if line.startswith("  warning: the manifest was recorded"))
    verdict = next(i for i, line in enumerate(lines) if line.startswith(("SAME", "CHANGES", "SLOWER", "BREAKS")))
    assert warn < verdict and text.count("recorded with torch 2.13, but") == 1
    md = render.to_markdown(rep)
    assert "> **warning:** the manifest was recorded with torch 2.13" in md and md.count("recorded with torch 2.13, but") == 1


def test_cli_json_has_the_warning(tmp_path, capsys):
    path = tmp_path / "m.ops.json"
    path.write_text(json.dumps({"schema": 1, "recorded": {"torch": "2.13.0+cpu"}, "ops": OPS}))
    run_compare(str(path), from_v="2.1.0.post10", to_v="2.7.1.post8", fmt="json")
    data = json.loads(capsys.readouterr().out)
    assert data["torch_skew"]["from_torch"] == "2.1" and data["torch_skew"]["to_torch"] == "2.7"
    assert "recorded with torch 2.13" in data["notes"][0]
