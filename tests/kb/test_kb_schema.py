"""The data files hold together: taxonomy, check ids, causal edges, fixes, speed contract."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from ascend_doctor import kb

from . import refdata
from ascend_doctor.kb.loader import load_entries
from ascend_doctor.kb.model import CHECK_IDS, KBError
from ascend_doctor.model import CATEGORIES

BASE = kb.load()


def test_ids_unique_and_well_formed():
    ids = [e.id for e in BASE.entries]
    assert len(ids) == len(set(ids))
    assert len(ids) >= 60
    for eid in ids:
        assert re.match(r"^[a-z0-9_]+(\.[a-z0-9_]+)+$", eid), eid


def test_categories_in_taxonomy_and_all_used():
    used = {e.category for e in BASE.entries}
    assert used <= set(CATEGORIES)
    assert used == set(CATEGORIES), set(CATEGORIES) - used


def test_check_ids_exist():
    for e in BASE.entries:
        assert set(e.checks) <= set(CHECK_IDS), (e.id, set(e.checks) - set(CHECK_IDS))


def test_edges_point_to_entries_and_are_symmetric():
    for e in BASE.entries:
        for target in e.causes:
            assert BASE.has_entry(target), (e.id, target)
            assert e.id in BASE.entry(target).caused_by, (e.id, target)
        for source in e.caused_by:
            assert BASE.has_entry(source), (e.id, source)
            assert e.id in BASE.entry(source).causes, (source, e.id)


def test_symptoms_and_wrappers_name_what_causes_them():
    # triage attributes a symptom to its upstream cause only through these edges
    for e in BASE.entries:
        if e.role in ("symptom", "wrapper"):
            assert e.caused_by, e.id


def test_upstream_attribution_aicore_to_hccl_timeout():
    # rank 3's AI Core exception explains rank 5's HCCL timeout, not the other way round
    assert BASE.explains("aicore.exception", "hccl.notify_wait_timeout")
    assert BASE.explains("aicore.exception", "runtime.model_execute_failed")
    assert not BASE.explains("hccl.notify_wait_timeout", "aicore.exception")
    assert BASE.explains("hccl.peer_lost", "hccl.watchdog_timeout")


def test_every_fix_is_actionable():
    for e in BASE.entries:
        assert e.fix.text.strip(), e.id
        if e.role not in ("noise", "context"):
            assert e.fix.commands or e.fix.collect, e.id
        text = (e.fix.text + " " + e.explanation).lower()
        if "support" in text and ("contact" in text or "asking for help" in text):
            assert e.fix.collect, f"{e.id}: a help/support step needs the collect commands first"
        for cmd in e.fix.commands + e.fix.collect:
            assert cmd.strip() == cmd and "\n" not in cmd, (e.id, cmd)


def test_collect_steps_use_real_collection_tools():
    tools = ("msnpureport", "asys collect", "tar czf")
    for e in BASE.entries:
        for cmd in e.fix.collect:
            assert any(t in cmd for t in tools), (e.id, cmd)


def test_every_pattern_has_a_literal_trigger():
    # the matcher only reaches a regex whose literal occurs in the line: keep it that way
    loose = [(e.id, p.regex.pattern) for e in BASE.entries for p in e.rule.patterns if not p.trigger]
    assert loose == []


def test_links_and_titles():
    for e in BASE.entries:
        assert e.links, e.id
        for link in e.links:
            assert link.startswith("https://"), (e.id, link)
        assert len(e.title) <= 100, e.id
        assert len(e.cause) <= 260, e.id


def _write(tmp_path: Path, text: str) -> Path:
    (tmp_path / "rules").mkdir()
    (tmp_path / "rules" / "bad.yaml").write_text(text, encoding="utf-8")
    return tmp_path


GOOD = """entries:
- id: t.one
  category: other
  title: t
  cause: c
  explanation: e
  match: {patterns: ['some literal text']}
  fix: {text: f, commands: [echo]}
  examples: [{text: 'some literal text', source: 'https://github.com/a/b/issues/1'}]
"""


@pytest.mark.parametrize(
    "change,needle",
    [
        (("category: other", "category: hardware"), "category: 'hardware' is not one of"),
        (("fix: {text: f", "checks: [no.such_check]\n  fix: {text: f"), "checks[0]: 'no.such_check' is not a check id"),
        (("examples: [{text: 'some literal text', source: 'https://github.com/a/b/issues/1'}]", "examples: []"), "real example"),
        (("cause: c", "cause: c\n  causes: [t.missing]"), "unknown entry 't.missing'"),
        (("['some literal text']", "['bad(regex']"), "bad regex"),
        (("source: 'https://github.com/a/b/issues/1'", "source: 'made up'"), "https URL"),
        (("id: t.one", "id: One"), "must look like"),
        (("match: {patterns: ['some literal text']}", "match: {codes: ['7']}"), "unambiguous"),
        (("title: t", "title: t\n  alternative: {category: other, title: x}"), "alternative: names the entry's own category"),
        (("title: t", "title: t\n  alternative: {category: hardware, title: x}"), "alternative.category: 'hardware' is not one of"),
    ],
)
def test_bad_data_names_file_and_entry(tmp_path, change, needle):
    root = _write(tmp_path, GOOD.replace(*change))
    with pytest.raises(KBError) as info:
        load_entries(root)
    assert "bad.yaml" in str(info.value)
    assert needle in str(info.value)


def test_good_minimal_data_loads(tmp_path):
    entries = load_entries(_write(tmp_path, GOOD))
    assert [e.id for e in entries] == ["t.one"]


def test_not_valid_yaml_is_one_line(tmp_path):
    root = _write(tmp_path, "entries: [\n  - {")
    with pytest.raises(KBError) as info:
        load_entries(root)
    assert "\n" not in str(info.value) and "bad.yaml" in str(info.value)


def _shingles(text: str, n: int = 12):
    words = re.findall(r"[a-z0-9]+", text.lower())
    return {" ".join(words[i : i + n]) for i in range(len(words) - n + 1)}


def test_explanations_and_fixes_are_our_own_words():
    ref = set()
    acl = refdata.load("acl_error_codes.yaml")
    cann = refdata.load("cann_error_codes.yaml")
    for section in ("acl_codes", "aclnn_codes", "hccl_result_codes", "driver_codes"):
        for row in acl[section]:
            for field in ("handling", "field_notes", "note"):
                ref |= _shingles(str(row.get(field) or ""))
    for row in cann["codes"]:
        for field in ("handling", "practitioner_note"):
            ref |= _shingles(str(row.get(field) or ""))
    copied = []
    for e in BASE.entries:
        for text in (e.cause, e.explanation, e.fix.text):
            hit = _shingles(text) & ref
            if hit:
                copied.append((e.id, sorted(hit)[0]))
    for info in BASE.tables.all():
        hit = _shingles(info.meaning) & ref
        if hit:
            copied.append((info.key, sorted(hit)[0]))
    assert copied == []


def test_check_ids_are_the_check_registry():
    # the KB's list of check ids must not drift from the checks that exist (it had: 29 of 31)
    from ascend_doctor.checks import base, load_all

    load_all()
    assert sorted(CHECK_IDS) == sorted(c.id for c in base.registry())


FAMILY_ENTRY = GOOD.replace("match: {patterns: ['some literal text']}",
                            "match: {patterns: ['some literal (?P<library>text)']}\n  family: {capture: library, table: libs}")


@pytest.mark.parametrize(
    "table,needle",
    [
        ("rows:\n- {package: p}\n", "family table libs: rows[0].match: required field is missing"),
        ("rows:\n- {match: 'x', package: [p]}\n", "family table libs: rows[0].package: expected a string, got a list"),
        ("rows: {match: x}\n", "family table libs: rows: expected a list, got a mapping"),
        ("rows:\n- {match: '(x'}\n", "family table libs: rows[0]: bad regex"),
        ("rows: []\ncolour: red\n", "family table libs: colour: unknown field"),
    ],
)
def test_bad_family_table_names_entry_table_and_field(tmp_path, table, needle):
    root = _write(tmp_path, FAMILY_ENTRY)
    (root / "tables").mkdir()
    (root / "tables" / "libs.yaml").write_text(table, encoding="utf-8")
    with pytest.raises(KBError) as info:
        load_entries(root)
    assert str(info.value).startswith("bad.yaml: t.one: family table libs: ") and needle in str(info.value)


def test_family_table_that_does_not_exist(tmp_path):
    with pytest.raises(KBError, match="bad.yaml: t.one: family.table: no table libs"):
        load_entries(_write(tmp_path, FAMILY_ENTRY))


def test_schema_errors_name_the_field_path(tmp_path):
    bad = GOOD.replace("fix: {text: f, commands: [echo]}", "fix: {text: f, commands: [echo, '']}")
    with pytest.raises(KBError, match=r"^bad\.yaml: t\.one: fix\.commands\[1\]: must not be empty$"):
        load_entries(_write(tmp_path, bad))
    bad = GOOD.replace("- id: t.one\n  category", "- category")
    (tmp_path / "b").mkdir()
    with pytest.raises(KBError, match=r"^bad\.yaml: entries\[0\]: id: required field is missing$"):
        load_entries(_write(tmp_path / "b", bad))


@pytest.mark.parametrize(
    "change,needle",
    [
        (("meaning: m", "meaning: ''"), "t.yaml: codes[0].meaning: must not be empty"),
        (("key_format: decimal", "key_format: octal"), "t.yaml: key_format: 'octal' is not one of decimal"),
        (("  source: [s]", "  source: [s]\n  colour: red"), "t.yaml: codes[0].colour: unknown field"),
        (("s: https://example.com/h", "s: ftp://example.com/h"), "t.yaml: sources.s: 'ftp://example.com/h' must be an https URL"),
    ],
)
def test_bad_code_table_names_file_code_and_field(tmp_path, change, needle):
    from ascend_doctor.kb.loader import load_code_tables

    table = "table: t\nkey_format: decimal\nsources:\n  s: https://example.com/h\ncodes:\n- code: 107001\n  name: N\n  meaning: m\n  source: [s]\n"
    (tmp_path / "codes").mkdir()
    (tmp_path / "codes" / "t.yaml").write_text(table, encoding="utf-8")
    assert load_code_tables(tmp_path).tables == {"t": 1}
    (tmp_path / "codes" / "t.yaml").write_text(table.replace(*change), encoding="utf-8")
    from ascend_doctor.kb import loader

    loader._DOCS.pop(str(tmp_path), None)  # the good table was cached for this directory
    with pytest.raises(KBError) as info:
        load_code_tables(tmp_path)
    assert str(info.value).startswith(needle)
