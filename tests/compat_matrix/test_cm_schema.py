"""compat_matrix.schema: the one validator of the data files (specs, one-line errors, Markdown)."""
from __future__ import annotations

import pytest

from compat_matrix.schema import Field, Record, SchemaError, check, markdown

ITEM = Record("item", {
    "name": Field("str", required=True, pattern=r"[a-z_]+", hint="must be lower_snake_case", doc="its name"),
    "count": Field("int", minimum=0, maximum=10, default=1, doc="how many"),
    "kind": Field("str", choices=("a", "b"), default="a"),
}, doc="One item.")
DOC = Record("doc", {
    "version": Field("str", text=True, doc="a version"),
    "items": Field("list", required=True, nonempty=True, hint="needs at least one item", item=Field("record", record=ITEM)),
    "tags": Field("map", key=Field("str", pattern=r"[A-Z]+", hint="is not upper case"), item=Field("str")),
    "either": Field("any", options=(Field("str"), Field("record", record=ITEM))),
    "ids": Field("list", item=Field("str", choices=lambda: ("x.y",), hint="is not a known id")),
    "flag": Field("bool"),
    "even": Field("int", test=lambda v: None if v % 2 == 0 else f"{v} is odd"),
}, doc="A document.", extra=None)
GOOD = {"version": "1.0", "items": [{"name": "first"}, {"name": "second", "count": 10, "kind": "b"}],
        "tags": {"AB": "x"}, "either": "plain", "ids": ["x.y"], "flag": True, "even": 4}


def _error(doc):
    with pytest.raises(SchemaError) as err:
        check(doc, DOC, "f.yaml")
    message = str(err.value)
    assert "\n" not in message and message.startswith("f.yaml: ")
    return message[len("f.yaml: "):]


def _with(**changes):
    doc = {**GOOD, **changes}
    return {k: v for k, v in doc.items() if v is not KeyError}


def test_a_good_document_passes():
    check(GOOD, DOC, "f.yaml")
    check({"items": [{"name": "x"}], "version": None}, DOC, "f.yaml")  # null is absent


@pytest.mark.parametrize("changes,expected", [
    ({"items": KeyError}, "items: required field is missing"),
    ({"colour": "red"}, "colour: unknown field (allowed: version, items, tags, either, ids, flag, even)"),
    ({"items": []}, "items: must not be empty (needs at least one item)"),
    ({"items": {"name": "x"}}, "items: expected a list, got a mapping"),
    ({"items": [{"name": "ok"}, {"name": "Bad"}]}, "items[1].name: 'Bad' must be lower_snake_case"),
    ({"items": [{"name": "ok", "count": 11}]}, "items[0].count: must be <= 10, got 11"),
    ({"items": [{"name": "ok", "count": -1}]}, "items[0].count: must be >= 0, got -1"),
    ({"items": [{"name": "ok", "count": True}]}, "items[0].count: expected an integer, got a boolean"),
    ({"items": [{"name": "ok", "kind": "c"}]}, "items[0].kind: 'c' is not one of a, b"),
    ({"version": 8.2}, "version: write versions as quoted strings (YAML read 8.2 as a number)"),
    ({"version": [1]}, "version: expected a string, got a list"),
    ({"tags": {"lower": "x"}}, "tags.lower: 'lower' is not upper case"),
    ({"tags": {"AB": 3}}, "tags.AB: expected a string, got an integer"),
    ({"either": 3}, "either: expected a string or a mapping, got an integer"),
    ({"either": {"name": "x", "count": "many"}}, "either.count: expected an integer, got a string"),
    ({"ids": ["x.y", "z"]}, "ids[1]: 'z' is not a known id"),
    ({"flag": "yes"}, "flag: expected true or false, got a string"),
    ({"even": 3}, "even: 3 is odd"),
])
def test_problems_name_the_field(changes, expected):
    assert _error(_with(**changes)) == expected


def test_top_level_and_error_class():
    assert _error([1]) == "(top level): expected a mapping, got a list"

    class MyError(ValueError):
        pass

    with pytest.raises(MyError, match=r"^x\.yaml: entries\[3\]\.items: required field is missing$"):
        check({}, DOC, "x.yaml", path="entries[3]", error=MyError)


def test_integers_as_text():
    spec = Record("r", {"v": Field("str", text=True, choices=("0", "1"))})
    check({"v": 0}, spec, "f")
    with pytest.raises(SchemaError, match="v: '2' is not one of 0, 1"):
        check({"v": 2}, spec, "f")


def test_extra_fields_checked_by_their_field():
    spec = Record("row", {"match": Field("str", required=True)}, extra=Field("str", text=True))
    check({"match": "x", "package": "p", "n": 3}, spec, "t.yaml")
    with pytest.raises(SchemaError, match=r"t\.yaml: package: expected a string, got a list"):
        check({"match": "x", "package": ["p"]}, spec, "t.yaml")


def test_defaults_for_loaders():
    assert ITEM.get({"name": "x"}, "count") == 1 and ITEM.get({"name": "x", "count": None}, "count") == 1
    assert ITEM.get({"name": "x", "count": 3}, "count") == 3


def test_markdown_has_a_table_per_record():
    text = markdown(DOC)
    assert text.startswith("### doc\n\nA document.\n")
    assert "### item" in text and text.count("| field | type | required | allowed | meaning |") == 2
    assert "| `name` | string | yes | matches `[a-z_]+` | its name |" in text
    assert "| `count` | integer | no (default `1`) | 0 ≤ value ≤ 10 | how many |" in text
    assert "| `either` | string or item | no |" in text
    assert "| `ids` | list of string | no | each: `x.y` |" in text


def test_unknown_kind_is_a_programming_error():
    with pytest.raises(ValueError):
        Field("text")


def test_compat_data_files_fit_their_specs_and_bad_rows_are_named():
    import copy

    from compat_matrix import tables
    from compat_matrix.data_schema import FILES
    from compat_matrix.errors import DataError

    assert set(FILES) == set(tables.DATA_FILES)
    for name in tables.DATA_FILES:
        check(tables.raw_data(name), FILES[name], f"{name}.yaml", error=DataError)
    doc = copy.deepcopy(tables.raw_data("torch_npu"))
    doc["builds"][2]["status"] = "retired"
    with pytest.raises(DataError, match=r"^torch_npu\.yaml: builds\[2\]\.status: 'retired' is not one of active, eol"):
        check(doc, FILES["torch_npu"], "torch_npu.yaml", error=DataError)
    doc = copy.deepcopy(tables.raw_data("cann_hdk"))
    del doc["statements"][0]["hdk"]
    with pytest.raises(DataError, match=r"^cann_hdk\.yaml: statements\[0\]\.hdk: required field is missing$"):
        check(doc, FILES["cann_hdk"], "cann_hdk.yaml", error=DataError)
