"""`ascend-doctor explain`: codes in any spelling, pasted blocks, unknown input, formats."""
from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
import yaml

from ascend_doctor import kb
from ascend_doctor.commands.explain import explain, is_code_query, run_explain

BASE = kb.load()
PASTES = yaml.safe_load((Path(__file__).parent / "data" / "pastes.yaml").read_text(encoding="utf-8"))


def run(query, fmt="text", stdin=None):
    out, err = io.StringIO(), io.StringIO()
    code = run_explain(query, fmt=fmt, out=out, err=err, stdin=stdin)
    return code, out.getvalue(), err.getvalue()


@pytest.mark.parametrize("paste", PASTES, ids=[p["name"] for p in PASTES])
def test_pasted_blocks_name_the_root_cause(paste):
    result = explain(BASE, paste["text"])
    assert result["kind"] == "text"
    assert result["matches"], paste["name"]
    assert result["matches"][0]["id"] == paste["expect"], [m["id"] for m in result["matches"]]
    first = result["matches"][0]
    assert first["fix"]["text"] and (first["fix"]["commands"] or first["fix"]["collect"])


def test_code_query_text_output():
    code, out, err = run("507035")
    assert code == 0 and err == ""
    assert "ACL_ERROR_RT_VECTOR_CORE_EXCEPTION" in out
    assert "Likely cause: Vector core (AIV) kernel raised an exception" in out
    assert "ASCEND_LAUNCH_BLOCKING=1" in out
    assert "ascend-doctor check --only toolkit.kernels" in out


def test_ts_code_follows_the_mapping_to_the_public_code():
    result = explain(BASE, "0x26")
    assert result["codes"][0]["reported_as"][-1]["code"] == "507015"
    assert result["matches"][0]["id"] == "aicore.exception"


def test_json_output_schema():
    code, out, _ = run("EI0002", fmt="json")
    assert code == 0
    data = json.loads(out)
    assert data["schema"] == 1 and data["kind"] == "code" and data["found"] is True
    assert data["tool"]["name"] == "ascend-doctor"
    assert data["codes"][0]["key"] == "EI0002"
    first = data["matches"][0]
    assert first["id"] == "hccl.notify_wait_timeout" and first["category"] == "hccl_comm"
    for field in ("title", "cause", "explanation", "checks", "fix", "links", "causes", "caused_by", "upstream"):
        assert field in first
    assert {"aicore.exception", "hccl.peer_lost"} <= {u["id"] for u in first["upstream"]}


def test_markdown_output():
    code, out, _ = run("-8005", fmt="md")
    assert code == 0
    assert out.startswith("# ascend-doctor explain")
    assert "## `-8005` DCMI_ERR_CODE_INNER_ERR" in out
    assert "```sh" in out


def test_ambiguous_number_shows_both_readings():
    code, out, _ = run("7")
    assert code == 0
    assert "ambiguous" in out and "HCCL_E_UNAVAIL" in out and "DRV_ERROR_INNER_ERR" in out


def test_unknown_code_exit_1_with_a_next_step():
    code, out, err = run("EH0999")
    assert code == 1
    assert "EH0999 is not in the knowledge base" in err
    assert "ACL" in err  # named by its prefix
    assert "ascend-doctor triage" in err and "\n" == err[-1] and err.count("\n") == 1


def test_unknown_text_exit_1():
    code, _, err = run("everything went fine today")
    assert code == 1
    assert "no known error code or message" in err


@pytest.mark.parametrize("query", ["", "   ", "\n\t"])
def test_empty_input_is_usage_error(query):
    code, out, err = run(query)
    assert code == 2 and out == ""
    assert err.startswith("ascend-doctor explain: give an error code")


def test_bad_format_is_usage_error():
    code, out, err = run("507035", fmt="yaml")
    assert code == 2 and out == "" and "--format yaml" in err


def test_stdin_dash_reads_the_paste():
    code, out, _ = run("-", stdin=io.StringIO(PASTES[0]["text"]))
    assert code == 0 and "No compiled kernel for this operator" in out


def test_huge_paste_is_cut_not_fatal():
    text = ("[INFO] GE(1,p):2024-01-01-00:00:00.000.000 [a.cc:1]1 noise line\n" * 20000) + "EZ9999: Inner Error!\n"
    code, out, _ = run("-", fmt="json", stdin=io.StringIO(text))
    data = json.loads(out)
    assert code in (0, 1) and len(data["query"]) <= 2003


@pytest.mark.parametrize(
    "query,is_code",
    [("507035", True), ("hccl 7", True), ("EZ9999", True), ("EZ9999: Inner Error!", False), ("error code is 507035", False), ("a b c", False)],
)
def test_code_or_text(query, is_code):
    assert is_code_query(query) is is_code


def test_broken_kb_is_exit_3(tmp_path, monkeypatch):
    (tmp_path / "rules").mkdir()
    (tmp_path / "rules" / "x.yaml").write_text("entries: [{id: bad}]", encoding="utf-8")
    monkeypatch.setenv("ASCEND_DOCTOR_KB_DIR", str(tmp_path))
    code, out, err = run("507035")
    assert code == 3 and out == ""
    assert "knowledge base is broken" in err and "x.yaml" in err


# ------------------------------------------------------------------ through the CLI
def _cli(*args, input=None):
    from typer.testing import CliRunner

    from ascend_doctor.cli import app

    try:
        runner = CliRunner(mix_stderr=False)
    except TypeError:  # click >= 8.2 always keeps stderr apart
        runner = CliRunner()
    return runner.invoke(app, ["explain", *args], input=input)


def test_cli_json_is_alone_on_stdout():
    res = _cli("507015", "--json")
    assert res.exit_code == 0
    data = json.loads(res.stdout)
    assert data["schema"] == 1 and data["matches"][0]["id"] == "aicore.exception"


def test_cli_negative_dcmi_code_is_not_an_option():
    res = _cli("-8005")
    assert res.exit_code == 0
    assert "DCMI_ERR_CODE_INNER_ERR" in res.stdout


def test_cli_words_are_joined_into_one_text():
    res = _cli("dcmi", "module", "initialize", "failed.", "ret", "is", "-8005", "--format", "md")
    assert res.exit_code == 0
    assert "npu-smi / DCMI could not initialise" in res.stdout


def test_cli_stdin_and_unknown_and_empty():
    res = _cli("-", input=PASTES[1]["text"])
    assert res.exit_code == 0 and "could not open the device" in res.stdout
    res = _cli("EQ4242")
    assert res.exit_code == 1 and res.stdout.startswith("Not in the knowledge base")
    res = _cli("-", input="  \n")
    assert res.exit_code == 2
    res = _cli()
    assert res.exit_code == 2


def test_an_entry_id_that_other_verbs_print_is_explained():
    # triage and oom end with "more: ascend-doctor explain <entry id>": that command must work
    code, out, _ = run("env.kernels_package_missing", fmt="json")
    data = json.loads(out)
    assert code == 0 and data["kind"] == "entry" and data["matches"][0]["id"] == "env.kernels_package_missing"


def test_several_codes_are_each_explained():
    # `explain 507035 EZ9999` explained only the last code and `explain 507035 -8005` found nothing
    for query, keys in (("507035 EZ9999", {"507035", "EZ9999"}), ("507035 -8005", {"507035", "-8005"})):
        code, out, _ = run(query, fmt="json")
        data = json.loads(out)
        assert code == 0 and data["kind"] == "code" and keys <= {c["key"] for c in data["codes"]}, query


def test_every_pointer_triage_and_oom_print_is_runnable():
    """Each "more: ascend-doctor explain X" that triage prints on the real logs of
    tests/triage/data, and that oom prints on the real messages of tests/oom/data, is a command
    that works (exit 0 and an explanation)."""
    import re
    from pathlib import Path

    import yaml

    from ascend_doctor.commands.oom import run_oom
    from ascend_doctor.commands.triage import run_triage

    tests = Path(__file__).resolve().parents[1]
    printed = []
    for log in sorted((tests / "triage" / "data").glob("*.log")):
        out = io.StringIO()
        run_triage([str(log)], out=out, err=io.StringIO())
        printed.append(out.getvalue())
    for msg in yaml.safe_load((tests / "oom" / "data" / "messages.yaml").read_text(encoding="utf-8"))["messages"]:
        out = io.StringIO()
        try:
            run_oom(msg["text"], out=out)
        except Exception:  # a line the oom verb refuses prints no pointer
            continue
        printed.append(out.getvalue())
    pointers = {m for text in printed for m in re.findall(r"ascend-doctor explain (\S+)", text)}
    assert len(pointers) >= 3, pointers
    for target in sorted(pointers):
        code, out, err = run(target)
        assert code == 0 and out.strip() and not err, (target, err)
