"""Real pasted logs (data/pastes.yaml gives each file's source) come out right, as a new user pastes them."""
from __future__ import annotations

import io
import json

import pytest

from ascend_doctor.commands.triage import run_triage

from .conftest import DATA, load_yaml

PASTES = load_yaml("pastes.yaml")["pastes"]


@pytest.mark.parametrize("case", PASTES, ids=[p["file"] for p in PASTES])
def test_paste(case):
    out = io.StringIO()
    rc = run_triage([str(DATA / case["file"])], fmt="json", out=out, err=io.StringIO())
    data = json.loads(out.getvalue())
    assert rc == 1, case["source"]
    first = data["incidents"][0]
    assert first["category"] == case["category"], (case["source"], first)
    if "role" in case:
        assert first["role"] == case["role"]
    fix = first["fix"]
    assert fix["text"] and fix["commands"], case["source"]
    blob = fix["text"] + " " + " ".join(fix["commands"])
    assert any(word.lower() in blob.lower() for word in case["fix_mentions"]), (case["source"], blob)
    assert first["evidence"] and all(e["line"] >= 1 for e in first["evidence"])


def test_paste_from_stdin():
    raw = (DATA / "vllm_ascend_12776_plog216.log").read_bytes()
    out = io.StringIO()
    rc = run_triage(["-"], fmt="json", out=out, err=io.StringIO(), stdin=io.BytesIO(raw))
    data = json.loads(out.getvalue())
    assert rc == 1 and data["incidents"][0]["evidence"][0]["file"] == "<stdin>"
