"""The schema of the knowledge base's data files: rule entries (``data/rules/*.yaml``), family
tables (``data/tables/*.yaml``) and code tables (``data/codes/*.yaml``), as specs of the one
validator (``compat_matrix.schema``).

The loader checks a YAML document against these specs when it reads the YAML (the compiled
form was checked when it was made); what relates entries to each other (edges, duplicate ids)
or needs code (a regex that compiles, a code that is unambiguous) stays in the loader.
docs/data-files.md is rendered from these specs (tools/data_docs.py).
"""
from __future__ import annotations

from typing import Any, Sequence

from compat_matrix.schema import Field, Record

from ..model import CATEGORIES
from .conditions import CONDITIONS
from .model import CHECK_IDS, ROLES

ID_PATTERN = r"[a-z0-9_]+(\.[a-z0-9_]+)+"


def _conditions() -> Sequence[str]:
    return tuple(CONDITIONS)


def _text(doc: str, **kw: Any) -> Field:
    return Field("str", nonempty=True, doc=doc, **kw)


def _texts(doc: str, **kw: Any) -> Field:
    return Field("list", item=Field("str", nonempty=True, **kw), doc=doc)


EXAMPLE = Record("example", {
    "text": _text("a real line (or block) copied from a public source", required=True),
    "source": Field("str", required=True, pattern=r"https://.+", hint="must be an https URL",
                    doc="the https URL it was copied from"),
    "codes": Field("list", item=Field("str", text=True), doc="the codes the line carries"),
    "module": Field("str", doc="the plog module, as triage would pass it"),
    "captures": Field("map", item=Field("str", text=True), doc="named groups the match must extract: name: value"),
}, doc="A real line an entry must match (or, as a counter-example, must not rank first).")
PATTERN = Record("pattern", {
    "regex": Field("str", required=True, doc="a Python regex"),
    "condition": Field("str", choices=_conditions, doc="a predicate of kb/conditions.py the captured numbers must satisfy"),
}, doc="A pattern with a condition (a plain pattern is just the regex string).")
MATCH = Record("match", {
    "codes": Field("list", item=Field("str", text=True), doc="error codes (EI0002, '507048', 'hccl:9', 'ts:0x26', '-8005')"),
    "patterns": Field("list", item=Field("any", options=(Field("str", doc="a Python regex"), Field("record", record=PATTERN))),
                      doc="regexes searched in the text; named groups become captures"),
    "keywords": Field("list", item=Field("list", nonempty=True, hint="an empty keyword group", item=Field("str", nonempty=True)),
                      doc="groups of literals that must appear in this order within one line"),
    "modules": _texts("plog modules the patterns and keywords apply to"),
    "unless": _texts("regexes that veto the entry"),
    "generic_codes": Field("bool", default=False, doc="the codes alone say little (EZ9999): weigh them low"),
    "module_only": Field("bool", default=False, doc="any error line of `modules` matches (a module's catch-all)"),
}, doc="How an entry is recognised; at least one of codes, patterns, keywords (or module_only).")
FIX = Record("fix", {
    "text": _text("what to do, in our own words", required=True),
    "commands": _texts("exact commands"),
    "collect": _texts("what to gather before asking for help"),
}, doc="The fix of an entry.")
ATTACH = Record("attach", {
    "categories": Field("list", required=True, nonempty=True, item=Field("str", choices=CATEGORIES),
                        doc="incidents of these categories get the note"),
    "note": _text("the note; {count} lines, {first}/{last} their times", required=True),
}, doc="A context entry's note on an incident in the same process.")
ALTERNATIVE = Record("alternative", {
    "category": Field("str", required=True, choices=CATEGORIES, doc="the category of the other reading"),
    "title": _text("one line: the other cause the same line is known to have", required=True),
}, doc="The other well-known cause of an entry's lines: triage names it as the runner-up and says medium confidence at most.")
FAMILY = Record("family", {
    "capture": _text("the regex group whose text is looked up", required=True),
    "table": _text("the family table (data/tables/NAME.yaml)", required=True),
}, doc="One entry covering a family of lines: the captured text looked up in a table fills the placeholders.")
ENTRY = Record("entry", {
    "id": Field("str", required=True, pattern=ID_PATTERN, hint="must look like 'area.name' (lowercase, dots)",
                doc="stable id (triage JSON and `explain` use it)"),
    "category": Field("str", required=True, choices=CATEGORIES, doc="the failure category (docs/triage.md)"),
    "role": Field("str", choices=ROLES, default="cause",
                  doc="cause, symptom (waited for a peer), wrapper (generic), advisory (a warning survived), context"),
    "priority": Field("int", default=0, doc="tie-breaker between entries matching the same text"),
    "title": _text("one line", required=True),
    "cause": _text("one line: what went wrong", required=True),
    "explanation": _text("our own words", required=True),
    "match": Field("record", required=True, record=MATCH),
    "checks": Field("list", item=Field("str", choices=lambda: CHECK_IDS, hint="is not a check id of `ascend-doctor check`"),
                    doc="`ascend-doctor check` ids that confirm it"),
    "fix": Field("record", required=True, record=FIX),
    "links": _texts("further reading (URLs)"),
    "causes": _texts("ids of entries this leads to (the loader makes edges symmetric)"),
    "caused_by": _texts("ids of entries that lead here"),
    "examples": Field("list", required=True, nonempty=True, item=Field("record", record=EXAMPLE),
                      hint="needs at least one real example with its source", doc="real lines it must match, ranked first"),
    "counter_examples": Field("list", item=Field("record", record=EXAMPLE), doc="real lines it must not rank first"),
    "weight": Field("int", minimum=0, maximum=100, doc="how much a line says in triage; default by role"),
    "headline": Field("str", doc="incident title template filled from the event ({op})"),
    "attach": Field("record", record=ATTACH),
    "family": Field("record", record=FAMILY),
    "alternative": Field("record", record=ALTERNATIVE),
    "broad": Field("bool", default=False, doc="a failure class's catch-all: scores at half weight"),
}, doc="One knowledge-base entry (a list item of `entries:` in data/rules/*.yaml).")
RULES_FILE = Record("rules file", {
    "entries": Field("list", required=True, item=Field("any"), doc="the entries (each checked as `entry`)"),
}, doc="A file of data/rules/: one area's entries.")
TABLE_ROW = Record("table row", {
    "match": Field("str", required=True, doc="a regex searched in the captured text; the first row that finds it wins"),
    "source": Field("str", doc="where the row's facts come from (not shown)"),
}, doc="A row of a family table: its other fields fill the entry's placeholders ({package}, {setup}...).",
    extra=Field("str", text=True, doc="a placeholder's value"))
TABLE = Record("family table", {
    "rows": Field("list", required=True, item=Field("record", record=TABLE_ROW), doc="tried in order"),
    "default": Field("map", item=Field("str", text=True), doc="the placeholders' values when no row matches"),
}, doc="A family table (data/tables/NAME.yaml).")

# ------------------------------------------------------------------ code tables (data/codes/*.yaml)
KEY_FORMATS = ("decimal", "inner", "ts", "hccl", "drv", "dcmi", "ecode", "torch_npu_err")
_REFS = _texts("source ids of this file's `sources`, or https URLs")
CODE = Record("code", {
    "code": Field("str", required=True, text=True, doc="the code as the table writes it (its `key_format`)"),
    "name": _text("the name the source gives it", required=True),
    "meaning": _text("what it means, in our own words", required=True),
    "family": _text("its family, when not the file's"),
    "kind": _text("E-codes: internal, external or warning"),
    "component": _text("the component that raises it"),
    "printed": Field("str", doc="the exact text the stack prints with it"),
    "maps_to": Field("str", text=True, doc="the public code an internal one is reported as"),
    "advice": Field("str", doc="what to do, when the family's advice is not enough"),
    "category": Field("str", choices=CATEGORIES, doc="E-codes: triage's category for a line no entry explains, when not its prefix's"),
    "source": _REFS,
    "confirmed_by": _texts("torch-npu wheels whose headers carry the same name and value"),
    "aliases": _texts("other spellings of the name"),
}, doc="One code of a numeric table or of the E-code catalog.")
FAMILY_META = Record("code family", {
    "title": _text("the family's title"),
    "advice": Field("str", doc="what to do about any code of the family"),
}, doc="A family of codes.")
PREFIX = Record("E-code prefix", {
    "prefix": _text("the first two characters of the code", required=True),
    "component": _text("the component the prefix names", required=True),
    "advice": Field("str", doc="what to do about its codes"),
    "category": Field("str", required=True, choices=CATEGORIES, doc="triage's category for a line no entry explains that carries a catalogued code of this prefix"),
}, doc="What an E-code's prefix says.")
SUBMODULE = Record("torch_npu submodule", {
    "id": Field("str", required=True, text=True, doc="the two digits after ERR"),
    "name": _text("its name", required=True),
    "meaning": _text("what raises it", required=True),
}, doc="The submodule part of a torch_npu ERR code.")
ERR_TYPE = Record("torch_npu error type", {
    "id": Field("str", required=True, text=True, doc="the three digits at the end"),
    "name": _text("its name", required=True),
    "meaning": _text("what it means", required=True),
    "advice": Field("str", doc="what to do"),
}, doc="The type part of a torch_npu ERR code.")
CODE_TABLE = Record("code table", {
    "table": _text("the table's name", required=True),
    "key_format": Field("str", required=True, choices=KEY_FORMATS, doc="how its codes are written and keyed"),
    "family": _text("the default family of its codes"),
    "families": Field("map", item=Field("record", record=FAMILY_META), doc="family name: title and advice"),
    "classes": Field("map", item=Field("str", nonempty=True), doc="decimal codes: first digit -> what the class means"),
    "prefixes": Field("list", item=Field("record", record=PREFIX), doc="E-codes: what each prefix names"),
    "sources": Field("map", item=Field("str", pattern=r"https://.+", hint="must be an https URL"),
                     doc="source id: URL, for the codes' `source`"),
    "source": _REFS,
    "confirmed_by": _texts("torch-npu wheels whose headers carry the same table"),
    "codes": Field("list", item=Field("record", record=CODE), doc="the codes"),
    "submodules": Field("list", item=Field("record", record=SUBMODULE), doc="torch_npu_err: the submodules"),
    "types": Field("list", item=Field("record", record=ERR_TYPE), doc="torch_npu_err: the error types"),
}, doc="A table of error codes (data/codes/*.yaml).")
