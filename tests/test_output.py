"""The output contracts of docs/output.md, in every verb: the JSON envelope (schema, tool, summary
object, then the payload), the Markdown heading, and text tables whose columns line up, with no
ANSI codes when the output is not a terminal."""
from __future__ import annotations

import io
import json
import re
from pathlib import Path
from typing import Dict, List, Optional, Tuple

import pytest
import typer
from typer.testing import CliRunner

from ascend_doctor import __version__, output
from ascend_doctor.cli import app, oom_tools

ROOT = Path(__file__).resolve().parent.parent
PROFILE = ROOT / "tests" / "profile" / "data" / "level1"
OOM_LOG = ROOT / "tests" / "oom" / "data" / "vllm_ascend_1987_env_and_oom.log"
# https://github.com/Ascend/pytorch/issues (the dcmi line of README.md's triage example)
TRIAGE_LINE = "dcmi module initialize failed. ret is -8020\n"
HEADING = re.compile(r"# ascend-doctor [a-z]+(?: [a-z-]+)*(?: · \S.*)?\n\n")
ANSI = "\x1b["
runner = CliRunner()

# (row, cell, side): in the first line holding ``row``, where ``cell`` (searched after ``row``,
# or at it when ``row`` contains it) starts or ends; "eol": where the line ends. A verb's "start" anchors name one left-aligned column and its
# "end" anchors one right-aligned column: each set must hold one offset.
Anchor = Tuple[str, str, str]


def _opcheck_compare(manifest: str) -> List[str]:
    """`opcheck compare M` where opcheck is a sub-app, else the older `opcheck M`."""
    group = typer.main.get_command(app)
    sub = group.commands.get("opcheck")  # type: ignore[attr-defined]
    head = ["opcheck", "compare"] if hasattr(sub, "commands") and "compare" in sub.commands else ["opcheck"]
    return head + [manifest, "--from", "2.1.0.post10", "--to", "2.7.1.post8", "--all"]


@pytest.fixture(scope="module")
def files(tmp_path_factory) -> Dict[str, str]:
    tmp = tmp_path_factory.mktemp("output")
    log = tmp / "paste.log"
    log.write_text(TRIAGE_LINE)
    manifest = tmp / "m.ops.json"
    manifest.write_text(json.dumps({"schema": 1, "ops": ["aten::add.Tensor", "aten::mm",
                                                         "npu::npu_fused_cross_entropy_loss_with_max_sum"]}))
    from runtime_sim.allocator import load_trace, replay

    trace = load_trace("training_varlen")
    alloc = trace.allocator("")
    replay(trace, alloc)
    stats = tmp / "stats.json"
    stats.write_text(json.dumps(dict(alloc.memory_stats())))
    nodes = []
    for i, sim in enumerate(("healthy_910b", "healthy_910b", "torch_npu_mismatch")):
        res = runner.invoke(app, ["check", "--sim", sim, "--json"])
        node = tmp / f"node{i}.json"
        node.write_text(res.stdout)
        nodes.append(str(node))
    return {"log": str(log), "manifest": str(manifest), "nodes": " ".join(nodes), "bundle": str(tmp / "b.tar.gz"),
            "stats": str(stats)}


# verb name -> (argv with {placeholders}, anchors of one text table or None when the text has none)
VERBS: Dict[str, Tuple[List[str], Optional[List[Anchor]]]] = {
    "check": (["check", "--sim", "torch_npu_mismatch"],
              [("Driver and firmware  ", "driver 25.0", "start"), ("NPU devices  ", "8 devices", "start"),
               ("Environment  ", "toolkit environment", "start")]),
    "compat": (["compat", "--torch", "2.1.0", "--torch-npu", "2.4.0.post2"],
               [("torch ~ torch_npu", "torch_npu 2.4.0.post2 is built", "start"), ("required torch", "required", "start")]),
    "compat --suggest": (["compat", "--torch", "2.4.0", "--suggest"],
                         [("CANN     torch", "torch_npu", "start"), ("2.4.0.post4  ", "2.4.0.post4", "start"),
                          ("2.4.0.post2  ", "2.4.0.post2", "start")]),
    "compat --upgrade": (["compat", "--sim", "healthy_910b", "--upgrade", "--torch-npu", "2.7.1.post8"], None),
    "triage": (["triage", "{log}"], None),
    "explain": (["explain", "507035"], None),
    "oom": (["oom", "--file", str(OOM_LOG)],
            [("requested (Tried", "3.47 GiB", "end"), ("free on the device", "1.66 GiB", "end"),
             ("device capacity", "60.97 GiB", "end"), ("allocated  ", "[message]", "start")]),
    "oom simulate": (["oom", "simulate", "llm_serving_kv_concat"],
                     [("setting  ", "outcome", "start"), ("expandable_segments:True", "finishes", "start"),
                      ("setting  ", "retries", "end"), ("expandable_segments:True", "", "eol")]),
    "oom watch": (["oom", "watch", "--stats", "{stats}"], None),
    "opcheck": (["{opcheck}"],
                [("  op  ", "from", "start"), ("aten::mm  ", "NPU acl_op+op_api ", "start"),
                 ("  op  ", "calls", "end"), ("aten::mm  ", "1", "end")]),
    "opcheck versions": (["opcheck", "versions"],
                         [("line  ", "CANN", "start"), ("2.14.0  2.14", "9.1.0", "start"), ("line  ", "ops", "end"),
                          ("2.14.0  2.14", "1502", "end")]),
    "diagnose": (["diagnose", "--sim", "user_not_in_group"],
                 [("1.  ", "driver: Is the driver", "start"), ("2.  ", "permissions: May", "start"),
                  ("found: devices.access", "found:", "start")]),
    "profile": (["profile", str(PROFILE)],
                [("top ops", "core", "start"), ("hcom_allReduce_", "HCCL", "start"), ("TransData", "AI_VECTOR_CORE", "start"),
                 ("top ops", "total", "end"), ("hcom_allReduce_", "105.99 ms", "end")]),
    "profile compare": (["profile", "compare", str(PROFILE / "rank0_ascend_pt"), str(PROFILE / "rank1_ascend_pt")],
                        [("op type", "ratio", "end"), ("hcom_allReduce_", "x0.95", "end"), ("MatMulV2", "x1.03", "end")]),
    "fleet": (["fleet", "{nodes}"], None),
    "bundle": (["bundle", "--sim", "healthy_910b", "-o", "{bundle}"], None),
}


def _argv(verb: str, files: Dict[str, str]) -> List[str]:
    argv: List[str] = []
    for a in VERBS[verb][0]:
        if a == "{opcheck}":
            argv += _opcheck_compare(files["manifest"])
        elif a.startswith("{"):
            argv += files[a.strip("{}")].split()
        else:
            argv.append(a)
    return argv


def _run(argv: List[str]) -> str:
    if argv[:2] in (["oom", "simulate"], ["oom", "watch"]):  # as ascend_doctor.cli.main routes them
        res = runner.invoke(oom_tools, argv[1:])
    else:
        res = runner.invoke(app, argv)
    assert res.exit_code in (0, 1), (argv, res.exit_code, res.output[-800:])
    return res.stdout


@pytest.mark.parametrize("verb", list(VERBS))
def test_json_has_the_envelope(verb, files):
    doc = json.loads(_run(_argv(verb, files) + ["--json"]))
    assert list(doc)[:3] == ["schema", "tool", "summary"]
    assert doc["schema"] == 1 and isinstance(doc["schema"], int)
    assert doc["tool"] == {"name": "ascend-doctor", "version": __version__}
    assert isinstance(doc["summary"], dict) and doc["summary"]
    assert len(doc) > 3  # the verb's own payload follows


@pytest.mark.parametrize("verb", list(VERBS))
def test_markdown_starts_with_the_shared_heading(verb, files):
    md = _run(_argv(verb, files) + ["--format", "md"])
    assert HEADING.match(md), md[:200]
    first = md.splitlines()[0]
    assert first.startswith(f"# ascend-doctor {verb}"), first


@pytest.mark.parametrize("verb", list(VERBS))
def test_text_tables_are_aligned_and_plain(verb, files):
    text = _run(_argv(verb, files))
    assert ANSI not in text
    anchors = VERBS[verb][1]
    if not anchors:
        return
    lines = text.splitlines()
    starts, ends = set(), set()
    for row, cell, side in anchors:
        line = next((ln for ln in lines if row in ln), None)
        assert line is not None, f"no line with {row!r} in:\n{text}"
        if side == "eol":
            ends.add(len(line.rstrip()))
        else:
            pos = line.index(row)
            i = line.index(cell, pos if cell in row else pos + len(row))
            (starts if side == "start" else ends).add(i if side == "start" else i + len(cell))
    # each verb's anchors name one left-aligned and/or one right-aligned column
    assert len(starts) <= 1 and len(ends) <= 1, (starts, ends, text)


def test_envelope_puts_the_contract_first_and_keeps_the_payload():
    doc = output.envelope({"n": 1}, {"items": [1], "schema": 9, "summary": "not this"})
    assert doc == {"schema": 1, "tool": {"name": "ascend-doctor", "version": __version__}, "summary": {"n": 1},
                   "items": [1]}
    with pytest.raises(TypeError):
        output.envelope("a line", {})  # type: ignore[arg-type]


def test_markdown_table_escapes_cells():
    assert output.md_table(["a", "b"], [["x|y", "1\n2"]], right=(1,)) == ["| a | b |", "|---|---:|", "| x\\|y | 1 2 |"]


def test_table_lines_align_columns_and_carry_cell_text_verbatim():
    lines = output.table_lines(["name", "size"], [["a", "1"], ["[bold]long[/bold]", "12345"]], right=(1,),
                               stream=io.StringIO())
    assert lines == ["  name                size", "  a                      1", "  [bold]long[/bold]  12345"]


class _Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_console_styles_only_a_terminal_without_no_color(monkeypatch):
    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.setenv("TERM", "xterm-256color")
    rows = [["[red]x[/red] one", "a"], ["[green]ok[/green] two", "b"]]
    for stream, styled in ((_Tty(), True), (io.StringIO(), False)):
        output.print_table(output.make_console(stream), None, rows)
        assert (ANSI in stream.getvalue()) is styled, stream.getvalue()
    monkeypatch.setenv("NO_COLOR", "1")
    tty = _Tty()
    output.print_table(output.make_console(tty), None, rows)
    assert ANSI not in tty.getvalue() and tty.getvalue().splitlines()[1] == "  ok two  b"


def test_off_a_terminal_nothing_is_folded():
    long = "word " * 80
    lines = output.table_lines(["k", "v"], [["a", long]], stream=io.StringIO())
    assert len(lines) == 2 and lines[1].endswith("word")
