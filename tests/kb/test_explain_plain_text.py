"""``explain``'s text off a terminal is written without rich; it must be exactly what rich prints
with no styles, for every code of the tables, every entry and pasted lines (with brackets,
backslashes and tabs), and a one-line answer must not import rich at all."""
from __future__ import annotations

import io
import subprocess
import sys

import pytest

from ascend_doctor import kb
from ascend_doctor.commands.explain import explain, render_text

BASE = kb.load()
QUERIES = sorted({info.code for info in BASE.tables.all()}) + [e.id for e in BASE.entries] + [
    "7",  # ambiguous: HCCL and driver readings
    "EZ9998",  # not in the tables: by its prefix
    "no error here",
    'grep "\\[ERROR\\]" [bold]not markup[/bold] \\\\[dim]',
    "ImportError: libhccl.so: cannot open shared object file: No such file or directory",
    "EZ9999: Inner Error!\n\tTraceBack (most recent call last):\r\n[ERROR] RUNTIME(1,python):x",
]
# strings rich does not print as they are after escape (so those lines go through rich), and near misses
TRICKY = ["\\[dim]", "\\\\[ERROR\\]", "\\[ERROR\\]", "a\\", "[a]\\[b", "x\ty", "[#ff0000]", "[/]", "\\[/x]y[", "[@click]"]


def _both(query: str):
    result = explain(BASE, query)
    plain, styled = io.StringIO(), io.StringIO()
    render_text(result, plain, styled=False)
    render_text(result, styled, styled=True)  # rich markup, on a stream off a terminal: printed without styles
    return plain.getvalue(), styled.getvalue()


@pytest.mark.parametrize("chunk", range(8))
def test_plain_text_is_what_rich_prints(chunk):
    for query in QUERIES[chunk::8]:
        plain, rich_text = _both(query)
        assert plain == rich_text, query
        assert plain.strip()


def test_tricky_strings_in_every_field():
    result = explain(BASE, "EZ9999")
    for tricky in TRICKY:
        for i, m in enumerate(result["matches"][:2]):
            for key in ("title", "cause", "explanation"):
                m[key] = f"{tricky} {key} {tricky}"
            m["fix"]["commands"] = [tricky, "ok " + tricky]
        result["codes"][0]["meaning"] = tricky
        plain, styled = io.StringIO(), io.StringIO()
        render_text(result, plain, styled=False)
        render_text(result, styled, styled=True)
        assert plain.getvalue() == styled.getvalue(), tricky


def test_a_code_is_explained_without_importing_rich():
    code = ("import sys, io; from ascend_doctor.commands.explain import run_explain; "
            "out = io.StringIO(); assert run_explain('EZ9999', out=out) == 0; assert 'AclNN_Inner_Error' in out.getvalue(); "
            "print(sorted(m for m in sys.modules if m.split('.')[0] == 'rich'))")
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stderr
    assert res.stdout.strip() == "[]"
