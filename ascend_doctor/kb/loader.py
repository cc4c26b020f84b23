"""Read the YAML data files into Entries and CodeInfos, refusing malformed data.

Every problem is raised as ``KBError("<file>: <entry id>: <field>: <what>")`` so a broken data
file names itself. The schema of each file is in kb/schema.py (checked with compat_matrix.schema,
the one validator of the data files); the YAML is read with libyaml's C loader when available.
"""
from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any, Dict, Iterable, List, Mapping, Optional, Tuple

from ascend_doctor.inputs import os_message
from ascend_doctor.kb.codes import canonical_keys, inner_key, ts_key
from ascend_doctor.kb.model import (
    Attach,
    CodeInfo,
    Entry,
    Example,
    Family,
    Fix,
    KBError,
    Pattern,
    Rule,
)
from ascend_doctor.kb.triggers import required_literal

from . import schema

DATA_DIR = Path(__file__).resolve().parent / "data"


def read_yaml(path: Path) -> Any:
    import yaml  # heavy; only when the KB is actually loaded

    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    try:
        with open(path, "r", encoding="utf-8") as fh:
            return yaml.load(fh, Loader=loader)
    except OSError as exc:
        raise KBError(os_message(f"{path}: cannot read", exc)) from None
    except yaml.YAMLError as exc:
        raise KBError(f"{path}: not valid YAML: {str(exc).splitlines()[0]}") from None


def yaml_files(directory: Path) -> List[Path]:
    if not directory.is_dir():
        return []
    return sorted(p for p in directory.iterdir() if p.suffix in (".yaml", ".yml") and p.is_file())


# ------------------------------------------------------------------ the compiled form
# The data files are YAML for people; the package also ships them compiled: one gzipped JSON
# document (kb/data/compiled.json.gz, written by tools/compile_kb.py) holding every file's
# parsed content, a stamp (the SHA-256 of the YAML files it was made from) and the name and
# size of each file. At run time the compiled form is used when the YAML beside it has the
# same names and sizes (a stat per file: reading and parsing YAML and compiling 400 regexes is
# what the compiled form saves); otherwise the YAML is read and checked as before. Nothing is
# written at run time. tests/kb/test_kb_compiled.py checks the stamp (the full content) and
# that the compiled documents equal the YAML, so the repository never ships a stale one.
COMPILED = "compiled.json.gz"  # rules and tables: what every run needs
COMPILED_CODES = "compiled-codes.json.gz"  # the code tables: read only when a code is looked up
SECTIONS = ("rules", "codes", "tables")
_DOCS: Dict[str, Tuple[Dict[str, Dict[str, Any]], bool]] = {}


def data_stamp(data_dir: Path) -> str:
    import hashlib

    digest = hashlib.sha256()
    for section in SECTIONS:
        for path in yaml_files(data_dir / section):
            digest.update(f"{section}/{path.name}\0".encode())
            digest.update(path.read_bytes())
            digest.update(b"\0")
    return digest.hexdigest()


def data_sizes(data_dir: Path) -> Dict[str, int]:
    """{"section/file.yaml": size in bytes} of every data file (the cheap run-time check)."""
    return {f"{section}/{p.name}": p.stat().st_size for section in SECTIONS for p in yaml_files(data_dir / section)}


def yaml_docs(data_dir: Path) -> Dict[str, Dict[str, Any]]:
    """Every data file parsed from YAML: {section: {file name: document}}."""
    return {section: {p.name: read_yaml(p) for p in yaml_files(data_dir / section)} for section in SECTIONS}


def _read_compiled(path: Path) -> Optional[Dict[str, Any]]:
    import gzip
    import json

    try:
        blob = json.loads(gzip.decompress(path.read_bytes()).decode("utf-8"))
    except (OSError, ValueError, EOFError):
        return None
    return blob if isinstance(blob, dict) else None


class _Docs(dict):
    """The compiled documents; the "codes" section is read from its own file when first used."""

    def __init__(self, docs: Dict[str, Any], data_dir: Path, stamp: Any) -> None:
        super().__init__(docs)
        self._data_dir, self._stamp = data_dir, stamp

    def __missing__(self, key: str) -> Any:
        if key != "codes":
            raise KeyError(key)
        blob = _read_compiled(self._data_dir / COMPILED_CODES)
        codes = blob.get("codes") if blob and blob.get("stamp") == self._stamp else None
        if not isinstance(codes, dict):  # missing or from another build: read the YAML of that section
            codes = {p.name: read_yaml(p) for p in yaml_files(self._data_dir / "codes")}
        self["codes"] = codes
        return codes


def compiled_docs(data_dir: Path) -> Optional[Dict[str, Dict[str, Any]]]:
    """The compiled documents when they were made from exactly these YAML files, else None."""
    blob = _read_compiled(data_dir / COMPILED)
    if blob is None or blob.get("sizes") != data_sizes(data_dir):
        return None
    docs = blob.get("docs")
    if not (isinstance(docs, dict) and all(isinstance(docs.get(s), dict) for s in ("rules", "tables"))):
        return None
    triggers = blob.get("triggers")
    if isinstance(triggers, dict):
        _TRIGGERS.update(triggers)
    return _Docs(docs, data_dir, blob.get("stamp"))


_TRIGGERS: Dict[str, Optional[str]] = {}  # regex source -> its literal trigger, shipped in the compiled form


def trigger_of(source: str) -> Optional[str]:
    if source in _TRIGGERS:
        return _TRIGGERS[source]
    found = _TRIGGERS[source] = required_literal(source)
    return found


def data_docs(data_dir: Path) -> Tuple[Dict[str, Dict[str, Any]], bool]:
    """(documents, validate): from the compiled form when it is current (already checked when it
    was made), else from the YAML (checked while loading)."""
    key = str(data_dir)
    hit = _DOCS.get(key)
    if hit is None:
        compiled = compiled_docs(data_dir)
        hit = (compiled, False) if compiled is not None else (yaml_docs(data_dir), True)
        _DOCS[key] = hit
    return hit


# ------------------------------------------------------------------ entries
def load_entries(data_dir: Path = DATA_DIR) -> List[Entry]:
    if _TABLE_DIR[0] != data_dir:
        _TABLE_DIR[0] = data_dir
        _TABLES.clear()
    entries: List[Entry] = []
    seen: Dict[str, str] = {}
    docs, _VALIDATE[0] = data_docs(data_dir)
    for name in sorted(docs["rules"]):
        doc = docs["rules"][name]
        if _VALIDATE[0]:
            _check_doc(doc, "RULES_FILE", name)
        for i, raw in enumerate(doc["entries"]):
            entry = _entry(raw, name, i)
            if entry.id in seen:
                raise KBError(f"{name}: {entry.id}: duplicate id (also in {seen[entry.id]})")
            seen[entry.id] = name
            entries.append(entry)
    return _close_edges(entries)


_VALIDATE = [True]  # check the schema and compile every regex (YAML source); the compiled form was checked when made


def _check_doc(raw: Any, spec: str, origin: str, path: str = "") -> None:
    """Check a document against its spec in kb/schema.py (imported only when the YAML is read)."""
    from compat_matrix.schema import check

    check(raw, getattr(schema, spec), origin, path, error=KBError)


def _entry(raw: Any, fname: str, index: int = 0) -> Entry:
    if _VALIDATE[0]:
        eid = raw.get("id") if isinstance(raw, dict) else None
        _check_doc(raw, "ENTRY", f"{fname}: {eid if isinstance(eid, str) and eid else f'entries[{index}]'}")
        _relations(raw, f"{fname}: {raw['id']}")
    where = f"{fname}: {raw['id']}"
    fix_raw = raw["fix"]
    family = raw.get("family")
    attach = raw.get("attach")
    return Entry(
        id=raw["id"],
        category=raw["category"],
        title=" ".join(raw["title"].split()),
        cause=" ".join(raw["cause"].split()),
        explanation=" ".join(raw["explanation"].split()),
        checks=tuple(raw.get("checks") or ()),
        fix=Fix(text=" ".join(fix_raw["text"].split()), commands=tuple(fix_raw.get("commands") or ()),
                collect=tuple(fix_raw.get("collect") or ())),
        links=tuple(raw.get("links") or ()),
        causes=tuple(raw.get("causes") or ()),
        caused_by=tuple(raw.get("caused_by") or ()),
        examples=tuple(_example(x) for x in raw["examples"]),
        rule=_rule(raw["match"], where),
        role=raw.get("role") or "cause",
        priority=raw.get("priority") or 0,
        counter_examples=tuple(_example(x) for x in raw.get("counter_examples") or ()),
        source_file=fname,
        weight=raw.get("weight"),
        broad=bool(raw.get("broad", False)),
        headline=raw.get("headline") or "",
        attach=None if attach is None else Attach(categories=tuple(attach["categories"]), note=" ".join(attach["note"].split())),
        family=None if family is None else _family(family, where),
    )


def _relations(raw: Dict[str, Any], where: str) -> None:
    """What the schema cannot say: fields that depend on each other, codes, regexes."""
    if raw.get("attach") is not None and raw.get("role", "cause") not in ("context", "noise"):
        raise KBError(f"{where}: attach: only context entries attach notes to incidents")
    match = raw["match"]
    if match.get("module_only") and not match.get("modules"):
        raise KBError(f"{where}: match.module_only: needs 'modules'")
    if not (match.get("codes") or match.get("patterns") or match.get("keywords") or match.get("module_only")):
        raise KBError(f"{where}: match: needs codes, patterns or keywords")
    for code in match.get("codes") or ():
        if len(canonical_keys(str(code))) != 1:
            raise KBError(f"{where}: match.codes: {code!r} is not one unambiguous code (write hccl:N / drv:N)")
    for item in match.get("patterns") or ():
        _compile(item if isinstance(item, str) else item["regex"], where)
    for source in match.get("unless") or ():
        _compile(source, where)


def _family(raw: Dict[str, Any], where: str) -> Family:
    table = _TABLES.get(raw["table"])
    if table is None:
        table = _TABLES[raw["table"]] = _read_table(raw["table"], where)
    return Family(capture=raw["capture"], table=raw["table"], rows=table[0], default=table[1])


_TABLES: Dict[str, Any] = {}


def _read_table(name: str, where: str) -> Any:
    """A family table (``data/tables/NAME.yaml``): rows of {match: regex, field: text}, and a default."""
    doc = data_docs(_TABLE_DIR[0])[0]["tables"].get(f"{name}.yaml")
    if doc is None:
        raise KBError(f"{where}: family.table: no table {name} (data/tables/{name}.yaml)")
    if _VALIDATE[0]:
        _check_doc(doc, "TABLE", f"{where}: family table {name}")
        for i, row in enumerate(doc["rows"]):
            _compile(row["match"], f"{where}: family table {name}: rows[{i}]")
    rows = []
    for row in doc["rows"]:
        fields = {str(k): " ".join(str(v).split()) for k, v in row.items() if k not in ("match", "source")}
        rows.append((Pattern(row["match"], None), fields))
    default = {str(k): " ".join(str(v).split()) for k, v in (doc.get("default") or {}).items()}
    return tuple(rows), default


_TABLE_DIR = [Path(__file__).resolve().parent / "data"]


def _rule(raw: Dict[str, Any], where: str) -> Rule:
    patterns: List[Pattern] = []
    for item in raw.get("patterns") or ():
        if isinstance(item, str):
            patterns.append(Pattern(item, trigger_of(item), None))
        else:
            patterns.append(Pattern(item["regex"], trigger_of(item["regex"]), item.get("condition")))
    return Rule(
        codes=tuple(canonical_keys(str(code))[0] for code in raw.get("codes") or ()),
        patterns=tuple(patterns),
        keywords=tuple(tuple(group) for group in raw.get("keywords") or ()),
        modules=tuple(m.upper() for m in raw.get("modules") or ()),
        unless=tuple(Pattern(s, None) for s in raw.get("unless") or ()),
        generic_codes=bool(raw.get("generic_codes", False)),
        module_only=bool(raw.get("module_only", False)),
    )


def _compile(source: str, where: str) -> Any:
    try:
        return re.compile(source)
    except re.error as exc:
        raise KBError(f"{where}: bad regex {source!r}: {exc}") from None


def _example(raw: Dict[str, Any]) -> Example:
    return Example(
        text=raw["text"].rstrip("\n"),
        source=raw["source"],
        codes=tuple(str(c) for c in raw.get("codes") or ()),
        module=raw.get("module"),
        captures=tuple((str(k), str(v)) for k, v in (raw.get("captures") or {}).items()),
    )


def _close_edges(entries: List[Entry]) -> List[Entry]:
    """Check every edge points somewhere and make each edge visible from both ends."""
    ids = {e.id for e in entries}
    causes: Dict[str, List[str]] = {e.id: list(e.causes) for e in entries}
    caused_by: Dict[str, List[str]] = {e.id: list(e.caused_by) for e in entries}
    for e in entries:
        for target in list(e.causes) + list(e.caused_by):
            if target not in ids:
                raise KBError(f"{e.source_file}: {e.id}: edge to unknown entry {target!r}")
            if target == e.id:
                raise KBError(f"{e.source_file}: {e.id}: an entry cannot cause itself")
        for target in e.causes:
            if e.id not in caused_by[target]:
                caused_by[target].append(e.id)
        for target in e.caused_by:
            if e.id not in causes[target]:
                causes[target].append(e.id)
    out = []
    for e in entries:
        out.append(
            Entry(
                **{
                    **e.__dict__,
                    "causes": tuple(causes[e.id]),
                    "caused_by": tuple(caused_by[e.id]),
                }
            )
        )
    return out


# ------------------------------------------------------------------ code tables
_KEY_FORMATS = ("decimal", "inner", "ts", "hccl", "drv", "dcmi", "ecode")
_KIND_TEXT = {
    "internal": "inner error: no template, the message printed after the code is the reason",
    "external": "catalogued error with a message template (and often a suggestion)",
    "warning": "warning: the job continues",
}


class CodeTables:
    """All numeric tables and the E-code catalog, indexed by canonical key and by name."""

    def __init__(self) -> None:
        self.by_key: Dict[str, List[CodeInfo]] = {}
        self.by_name: Dict[str, str] = {}
        self.families: Dict[str, Dict[str, str]] = {}
        self.classes: Dict[str, str] = {}
        self.prefixes: List[Tuple[str, str, str]] = []  # E-code prefix, component, what to do
        self.tables: Dict[str, int] = {}  # table name -> number of codes

    def add(self, info: CodeInfo) -> None:
        self.by_key.setdefault(info.key, []).append(info)
        for name in (info.name,) + info.aliases:
            if name and name.upper() not in self.by_name:
                self.by_name[name.upper()] = info.key

    def all(self) -> Iterable[CodeInfo]:
        for infos in self.by_key.values():
            yield from infos


def load_code_tables(data_dir: Path = DATA_DIR, entry_codes: Optional[Mapping[str, List[str]]] = None) -> CodeTables:
    tables = CodeTables()
    entry_codes = entry_codes or {}
    docs = []
    all_docs, validate = data_docs(data_dir)
    for name, doc in sorted(all_docs["codes"].items()):
        if validate:
            _check_doc(doc, "CODE_TABLE", name)
        docs.append((Path(name), doc))
        # families, classes and prefixes first: any table may use another file's
        for fam, meta in (doc.get("families") or {}).items():
            tables.families[fam] = {
                "title": str(meta.get("title", fam)),
                "advice": " ".join(str(meta.get("advice", "")).split()),
            }
        for digit, text in (doc.get("classes") or {}).items():
            tables.classes[str(digit)] = " ".join(str(text).split())
        for item in doc.get("prefixes") or []:
            tables.prefixes.append((str(item["prefix"]), str(item["component"]), " ".join(str(item.get("advice", "")).split())))
    for path, doc in docs:
        fmt = doc.get("key_format")
        sources = doc.get("sources") or {}
        if fmt == "torch_npu_err":
            count = _load_err_table(doc, path.name, tables, sources, entry_codes)
        elif fmt in _KEY_FORMATS:
            count = _load_plain_table(doc, fmt, path.name, tables, sources, entry_codes)
        else:
            raise KBError(f"{path.name}: unknown key_format {fmt!r}")
        tables.tables[str(doc["table"])] = count
    return tables


def _key_for(code: Any, fmt: str, where: str) -> Tuple[str, str]:
    text = str(code).strip()
    try:
        if fmt == "decimal":
            return str(int(text)), str(int(text))
        if fmt == "inner":
            value = int(text, 16)
            return inner_key(value), "0x%08X" % value
        if fmt == "ts":
            value = int(text, 16)
            return ts_key(value), "0x%X" % value
        if fmt == "hccl":
            return "hccl:%d" % int(text), str(int(text))
        if fmt == "drv":
            return "drv:%d" % int(text), str(int(text))
        if fmt == "dcmi":
            return str(int(text)), str(int(text))
        if fmt == "ecode":
            up = text.upper()
            if not re.match(r"^[EW][0-9A-Z]\d{4}$", up):
                raise ValueError(up)
            return up, up
    except ValueError:
        pass
    raise KBError(f"{where}: code {code!r} is not a valid {fmt} code")


def _resolve_sources(refs: Any, sources: Mapping[str, Any], where: str) -> Tuple[str, ...]:
    out = []
    for ref in refs or []:
        ref = str(ref)
        if ref in sources:
            out.append(str(sources[ref]))
        elif ref.startswith("https://"):
            out.append(ref)
        else:
            raise KBError(f"{where}: unknown source {ref!r}")
    return tuple(out)


def _load_plain_table(
    doc: Mapping[str, Any],
    fmt: str,
    fname: str,
    tables: CodeTables,
    sources: Mapping[str, Any],
    entry_codes: Mapping[str, List[str]],
) -> int:
    default_family = doc.get("family", str(doc["table"]))
    seen = set()
    count = 0
    for raw in doc.get("codes") or []:
        where = f"{fname}: {raw.get('code')!r}"
        key, shown = _key_for(raw.get("code"), fmt, where)
        family = str(raw.get("family", default_family))
        if (key, family) in seen:
            raise KBError(f"{where}: duplicate code in family {family}")
        seen.add((key, family))
        maps_to = raw.get("maps_to")
        if maps_to is not None:
            maps_keys = canonical_keys(str(maps_to))
            maps_to = maps_keys[0] if maps_keys else str(maps_to)
        klass = str(raw.get("kind", "") or "")
        klass = _KIND_TEXT.get(klass, klass)
        if not klass and fmt == "decimal":
            klass = tables.classes.get(key[0], "")
        tables.add(
            CodeInfo(
                key=key,
                code=shown,
                family=family,
                family_title=tables.families.get(family, {}).get("title", family),
                name=raw["name"],
                meaning=" ".join(raw["meaning"].split()),
                klass=klass,
                printed=str(raw.get("printed", "") or ""),
                maps_to=maps_to,
                component=str(raw.get("component", "") or ""),
                advice=" ".join(str(raw.get("advice", "") or "").split())
                or tables.families.get(family, {}).get("advice", ""),
                sources=_resolve_sources(raw.get("source"), sources, where),
                confirmed_by=tuple(str(x) for x in raw.get("confirmed_by", []) or []),
                entries=tuple(entry_codes.get(key, [])),
                aliases=tuple(str(a) for a in raw.get("aliases", []) or []),
            )
        )
        count += 1
    return count


def _load_err_table(
    doc: Mapping[str, Any],
    fname: str,
    tables: CodeTables,
    sources: Mapping[str, Any],
    entry_codes: Mapping[str, List[str]],
) -> int:
    family = str(doc.get("family", "torch_npu"))
    src = _resolve_sources(doc.get("source"), sources, fname)
    count = 0
    for sub in doc.get("submodules") or []:
        for typ in doc.get("types") or []:
            key = "ERR%s%s" % (sub["id"], typ["id"])
            name = "%s %s" % (sub["name"], typ["name"])
            meaning = "%s %s" % (" ".join(str(typ["meaning"]).split()), " ".join(str(sub["meaning"]).split()))
            confirmed = tuple(str(x) for x in doc.get("confirmed_by", []) or [])
            tables.add(
                CodeInfo(
                    key=key,
                    code=key,
                    family=family,
                    family_title=tables.families.get(family, {}).get("title", family),
                    name=name,
                    meaning=meaning,
                    klass="torch_npu %s" % sub["name"],
                    printed="%s %s %s" % (key, sub["name"], typ["name"]),
                    advice=" ".join(str(typ.get("advice", "")).split()),
                    sources=src,
                    confirmed_by=confirmed,
                    entries=tuple(entry_codes.get(key, [])),
                )
            )
            count += 1
    return count


def data_dir_from_env() -> Path:
    """The data directory: ASCEND_DOCTOR_KB_DIR for experiments, else the packaged one."""
    override = os.environ.get("ASCEND_DOCTOR_KB_DIR")
    return Path(override) if override else DATA_DIR
