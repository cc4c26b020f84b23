"""``explain`` on one pasted line gives the incident ``triage`` gives for that line (issue: one answer).

Checked on every real example line of the knowledge base (each with its public source in the
rules files) and on the single error lines of the development part of the real-failure corpus.
"""
from __future__ import annotations

import io
import json

import pytest

from ascend_doctor import kb
from ascend_doctor.commands.explain import explain, is_code_query
from ascend_doctor.commands.triage import run_triage

BASE = kb.load()
LINES = sorted({ex.text for e in BASE.entries for ex in e.examples if "\n" not in ex.text and not is_code_query(ex.text)})


def _triage_top(text: str):
    out = io.StringIO()
    run_triage(["-"], fmt="json", out=out, err=io.StringIO(), stdin=io.BytesIO(text.encode("utf-8")))
    incidents = json.loads(out.getvalue())["incidents"]
    return incidents[0] if incidents else None


@pytest.mark.parametrize("line", LINES, ids=range(len(LINES)))
def test_explain_first_answer_is_triage_first_incident(line):
    top = _triage_top(line)
    result = explain(BASE, line)
    if top is None:  # a context line (an INFO line, a setting): no incident, and explain says no more
        assert "triage" not in result, line
        return
    assert result["triage"]["category"] == top["category"] and result["triage"]["kb"] == top["kb"]
    if top["kb"] is not None:
        first = result["matches"][0]
        assert (first["id"], first["category"]) == (top["kb"], top["category"]), line


def test_a_line_triage_files_by_its_code_reads_the_same_in_explain():
    # https://e.gitee.com/mind_spore/dashboard?issue=ICWM5W: no entry explains the line; triage files it by EZ1001
    line = "E       EZ1001: [PID: 2942910] 2025-09-05-01:37:17.462.248 Dim 2 appears multiple times in the list of dims.[THREAD:2942910]"
    top = _triage_top(line)
    result = explain(BASE, line)
    assert (top["signal"], top["category"]) == ("code.EZ1001", "other")
    assert (result["triage"]["category"], result["triage"]["title"]) == (top["category"], top["title"])
    from ascend_doctor.commands.explain import render_md, render_text

    text = io.StringIO()
    render_text(result, text, styled=False)
    assert text.getvalue().startswith("Triage reads it as: " + top["title"])
    assert "**Triage reads it as:** " + top["title"] in render_md(result)
