"""Read the YAML data files into Entries and CodeInfos, refusing malformed data.

Every problem is raised as ``KBError("<file>: <entry id>: <field>: <what>")`` so a broken data
file names itself. The schema of each file is in kb/schema.py (checked with compat_matrix.schema,
the one validator of the data files); the YAML is read with libyaml's C loader when available.
"""
from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any, Callable, Dict, Iterable, Iterator, List, Mapping, Optional, Sequence, Tuple

from ascend_doctor.inputs import os_message
from ascend_doctor.kb.codes import canonical_keys, inner_key, ts_key
from ascend_doctor.kb.model import (
    Alternative,
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
# The data files are YAML for people; the package also ships them compiled by
# tools/compile_kb.py, as two JSON Lines files: a header line, then one JSON document per line.
# kb/data/compiled.jsonl: the header holds a stamp (the SHA-256 of the YAML files it was made
# from), the name and size of each file, the byte offset of every document, one row per entry
# with what the matcher and the causal graph need (id, codes, literal triggers, edges made
# symmetric; see ``index_row``) and each trigger's whole word (matcher.whole_word); each rule entry and each family table
# is a document of its own, parsed when that entry is first asked for: a one-line question
# builds the few entries its line can match, not all of them. kb/data/compiled-codes.jsonl.gz holds
# the code tables already decoded (one row per code), read only when a code is looked up.
# At run time the compiled form is used when the YAML beside it has the same names and sizes (a
# stat per file); otherwise the YAML is read and checked as before. Nothing is written at run
# time. tests/kb/test_kb_compiled.py checks the stamp (the full content), that the documents
# equal the YAML and that the entries and code rows equal those built from the YAML, so the
# repository never ships a stale one.
COMPILED = "compiled.jsonl"  # rules and family tables: what every run needs
COMPILED_CODES = "compiled-codes.jsonl.gz"  # the code tables (gzipped: 1.3 MB of JSON): read only when a code is looked up
FORMAT = 2  # of the compiled files; another number (an older build) is not read
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


class Compiled:
    """A compiled file: its header and its documents, each parsed when first read."""

    def __init__(self, header: Dict[str, Any], body: bytes) -> None:
        self.header = header
        self._body = body
        self._offsets: List[int] = header["offsets"]

    def doc(self, number: int) -> Any:
        import json

        return json.loads(self._body[self._offsets[number]:self._offsets[number + 1]])


def _read_compiled(path: Path) -> Optional[Compiled]:
    import json

    try:
        blob = path.read_bytes()
        if path.suffix == ".gz":
            import gzip

            blob = gzip.decompress(blob)
        head, _, body = blob.partition(b"\n")
        header = json.loads(head)
    except (OSError, ValueError, EOFError):
        return None
    if not isinstance(header, dict) or header.get("format") != FORMAT:
        return None
    offsets = header.get("offsets")
    if not (isinstance(offsets, list) and offsets and offsets[0] == 0 and offsets[-1] == len(body)):
        return None
    return Compiled(header, body)


def write_compiled(header: Dict[str, Any], docs: List[Any]) -> bytes:
    """The bytes of a compiled file: ``header`` (with the offsets added, keys sorted) and one line
    per document (keys in the order of the YAML: a mapping such as an example's captures keeps it)."""
    import json

    lines = [json.dumps(doc, ensure_ascii=False, separators=(",", ":")).encode("utf-8") + b"\n"
             for doc in docs]
    offsets = [0]
    for line in lines:
        offsets.append(offsets[-1] + len(line))
    head = json.dumps(dict(header, format=FORMAT, offsets=offsets), sort_keys=True, ensure_ascii=False,
                      separators=(",", ":")).encode("utf-8")
    return head + b"\n" + b"".join(lines)


class _Section(Mapping):
    """One section of the compiled documents ({file name: document}), each parsed on first use."""

    def __init__(self, compiled: Compiled, numbers: Dict[str, Any]) -> None:
        self._compiled, self._numbers, self._parsed = compiled, numbers, {}  # type: ignore[var-annotated]

    def __getitem__(self, name: str) -> Any:
        if name not in self._parsed:
            number = self._numbers[name]
            # a rules file is stored entry by entry: its document is rebuilt from their numbers
            doc = {"entries": [self._compiled.doc(n) for n in number]} if isinstance(number, list) else self._compiled.doc(number)
            self._parsed[name] = doc
        return self._parsed[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._numbers)

    def __len__(self) -> int:
        return len(self._numbers)


class _Docs(dict):
    """The compiled documents; the "codes" section (YAML) is read only if the code tables are
    not compiled (load_code_tables reads their compiled rows)."""

    def __init__(self, compiled: Compiled, data_dir: Path) -> None:
        files = compiled.header["files"]
        super().__init__(rules=_Section(compiled, files["rules"]), tables=_Section(compiled, files["tables"]))
        self.compiled, self._data_dir = compiled, data_dir

    def __missing__(self, key: str) -> Any:
        if key != "codes":
            raise KeyError(key)
        codes = {p.name: read_yaml(p) for p in yaml_files(self._data_dir / "codes")}
        self["codes"] = codes
        return codes


def compiled_docs(data_dir: Path) -> Optional[Dict[str, Any]]:
    """The compiled documents when they were made from exactly these YAML files, else None."""
    compiled = _read_compiled(data_dir / COMPILED)
    if compiled is None or compiled.header.get("sizes") != data_sizes(data_dir):
        return None
    files = compiled.header.get("files")
    if not (isinstance(files, dict) and all(isinstance(files.get(s), dict) for s in ("rules", "tables"))
            and isinstance(compiled.header.get("entries"), list) and isinstance(compiled.header.get("words"), dict)):
        return None
    return _Docs(compiled, data_dir)


def data_docs(data_dir: Path) -> Tuple[Dict[str, Any], bool]:
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
    """Every entry, built now (the YAML is checked; see ``load_store`` for entries built on demand)."""
    return load_store(data_dir).all()


def load_store(data_dir: Path = DATA_DIR) -> "EntryStore":
    """The entries of ``data_dir``: from the compiled form, each built when first asked for;
    from the YAML, all built and checked now."""
    docs, validate = data_docs(data_dir)
    if isinstance(docs, _Docs):
        header = docs.compiled.header
        return EntryStore(header["entries"], lambda i, row: _compiled_entry(docs.compiled, row, data_dir), header["words"])
    entries: List[Entry] = []
    seen: Dict[str, str] = {}
    for name in sorted(docs["rules"]):
        doc = docs["rules"][name]
        if validate:
            _check_doc(doc, "RULES_FILE", name)
        for i, raw in enumerate(doc["entries"]):
            entry = _entry(raw, name, i, validate, data_dir)
            if entry.id in seen:
                raise KBError(f"{name}: {entry.id}: duplicate id (also in {seen[entry.id]})")
            seen[entry.id] = name
            entries.append(entry)
    return EntryStore.of(_close_edges(entries))


# What the matcher and the causal graph know of an entry without building it (a row of the
# compiled header): its id, where its document is (rules file, position, document number),
# its codes (canonical keys), its triggers (each pattern's literal and each keyword group's
# first word, lower-cased), whether a pattern has no trigger, the modules of a module's
# catch-all, its edges made symmetric, and whether it is a class's catch-all.
# The last field is each pattern's trigger, in order (what the compiled entry's rule gets).
(ROW_ID, ROW_PLACE, ROW_CODES, ROW_TRIGGERS, ROW_UNTRIGGERED, ROW_MODULES, ROW_CAUSES, ROW_CAUSED_BY, ROW_BROAD,
 ROW_PATTERN_TRIGGERS) = range(10)


def index_row(entry: Entry, place: Sequence[Any] = ()) -> List[Any]:
    rule = entry.rule
    triggers = {p.trigger for p in rule.patterns if p.trigger} | {group[0].lower() for group in rule.keywords}
    return [entry.id, list(place), list(rule.codes), sorted(triggers), any(not p.trigger for p in rule.patterns),
            list(rule.modules) if rule.module_only else [], list(entry.causes), list(entry.caused_by), entry.broad,
            [p.trigger for p in rule.patterns]]


class EntryStore:
    """The entries of a knowledge base by position, each built on first use (and kept).

    ``rows[i]`` is ``index_row`` of entry i: enough to index the matcher, find the entries of a
    code and walk the causal graph without building any entry."""

    def __init__(self, rows: List[List[Any]], build: Callable[[int, List[Any]], Entry],
                 words: Optional[Dict[str, Optional[str]]] = None) -> None:
        self.rows = rows
        self.words = words  # {trigger: its whole word (matcher.whole_word)}, when shipped compiled
        self.position: Dict[str, int] = {row[ROW_ID]: i for i, row in enumerate(rows)}
        self._build = build
        self._built: Dict[int, Entry] = {}

    @classmethod
    def of(cls, entries: Sequence[Entry]) -> "EntryStore":
        """A store of entries already built."""
        store = cls([index_row(e) for e in entries], lambda i, row: entries[i])
        store._built = dict(enumerate(entries))
        return store

    def __len__(self) -> int:
        return len(self.rows)

    def at(self, i: int) -> Entry:
        entry = self._built.get(i)
        if entry is None:  # two threads may both build it: the first one kept is the one every caller gets
            entry = self._built.setdefault(i, self._build(i, self.rows[i]))
        return entry

    def all(self) -> List[Entry]:
        return [self.at(i) for i in range(len(self.rows))]


def _compiled_entry(compiled: Compiled, row: List[Any], data_dir: Path) -> Entry:
    fname, index, number = row[ROW_PLACE]
    return _entry(compiled.doc(number), fname, index, False, data_dir, (row[ROW_CAUSES], row[ROW_CAUSED_BY]),
                  row[ROW_PATTERN_TRIGGERS])


def _check_doc(raw: Any, spec: str, origin: str, path: str = "") -> None:
    """Check a document against its spec in kb/schema.py (imported only when the YAML is read)."""
    from compat_matrix.schema import check

    check(raw, getattr(schema, spec), origin, path, error=KBError)


def _entry(raw: Any, fname: str, index: int, validate: bool, data_dir: Path,
           edges: Optional[Tuple[Sequence[str], Sequence[str]]] = None,
           triggers: Optional[Sequence[Optional[str]]] = None) -> Entry:
    """An entry from its document; ``validate``: check it first (the YAML path); ``edges``: its
    causes and caused_by already made symmetric, ``triggers``: its patterns' (the compiled path)."""
    if validate:
        eid = raw.get("id") if isinstance(raw, dict) else None
        _check_doc(raw, "ENTRY", f"{fname}: {eid if isinstance(eid, str) and eid else f'entries[{index}]'}")
        _relations(raw, f"{fname}: {raw['id']}")
    where = f"{fname}: {raw['id']}"
    fix_raw = raw["fix"]
    family = raw.get("family")
    attach = raw.get("attach")
    alt = raw.get("alternative")
    causes, caused_by = edges if edges is not None else (raw.get("causes") or (), raw.get("caused_by") or ())
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
        causes=tuple(causes),
        caused_by=tuple(caused_by),
        examples=tuple(_example(x) for x in raw["examples"]),
        rule=_rule(raw["match"], where, triggers),
        role=raw.get("role") or "cause",
        priority=raw.get("priority") or 0,
        counter_examples=tuple(_example(x) for x in raw.get("counter_examples") or ()),
        source_file=fname,
        weight=raw.get("weight"),
        broad=bool(raw.get("broad", False)),
        headline=raw.get("headline") or "",
        attach=None if attach is None else Attach(categories=tuple(attach["categories"]), note=" ".join(attach["note"].split())),
        family=None if family is None else _family(family, where, validate, data_dir),
        alternative=None if alt is None else Alternative(category=alt["category"], title=" ".join(alt["title"].split())),
    )


def _relations(raw: Dict[str, Any], where: str) -> None:
    """What the schema cannot say: fields that depend on each other, codes, regexes."""
    alt = raw.get("alternative")
    if alt is not None and alt["category"] == raw["category"]:
        raise KBError(f"{where}: alternative: names the entry's own category")
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


def _family(raw: Dict[str, Any], where: str, validate: bool, data_dir: Path) -> Family:
    key = (str(data_dir), raw["table"])
    table = _TABLES.get(key)
    if table is None:
        table = _TABLES[key] = _read_table(raw["table"], where, validate, data_dir)
    return Family(capture=raw["capture"], table=raw["table"], rows=table[0], default=table[1])


_TABLES: Dict[Tuple[str, str], Any] = {}


def _read_table(name: str, where: str, validate: bool, data_dir: Path) -> Any:
    """A family table (``data/tables/NAME.yaml``): rows of {match: regex, field: text}, and a default."""
    doc = data_docs(data_dir)[0]["tables"].get(f"{name}.yaml")
    if doc is None:
        raise KBError(f"{where}: family.table: no table {name} (data/tables/{name}.yaml)")
    if validate:
        _check_doc(doc, "TABLE", f"{where}: family table {name}")
        for i, row in enumerate(doc["rows"]):
            _compile(row["match"], f"{where}: family table {name}: rows[{i}]")
    rows = []
    for row in doc["rows"]:
        fields = {str(k): " ".join(str(v).split()) for k, v in row.items() if k not in ("match", "source")}
        rows.append((Pattern(row["match"], None), fields))
    default = {str(k): " ".join(str(v).split()) for k, v in (doc.get("default") or {}).items()}
    return tuple(rows), default


def _rule(raw: Dict[str, Any], where: str, triggers: Optional[Sequence[Optional[str]]] = None) -> Rule:
    patterns: List[Pattern] = []
    for i, item in enumerate(raw.get("patterns") or ()):
        source = item if isinstance(item, str) else item["regex"]
        trigger = triggers[i] if triggers is not None else required_literal(source)
        patterns.append(Pattern(source, trigger, None if isinstance(item, str) else item.get("condition")))
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
        self.prefixes: List[Tuple[str, str, str, str]] = []  # E-code prefix, component, what to do, category
        self.tables: Dict[str, int] = {}  # table name -> number of codes

    def add(self, info: CodeInfo) -> None:
        self.by_key.setdefault(info.key, []).append(info)
        for name in (info.name,) + info.aliases:
            if name and name.upper() not in self.by_name:
                self.by_name[name.upper()] = info.key

    def all(self) -> Iterable[CodeInfo]:
        for infos in self.by_key.values():
            yield from infos


class _CompiledRows(Mapping):
    """{canonical key: [CodeInfo]} of the compiled code tables, each key's rows built on first use."""

    def __init__(self, compiled: Compiled, entry_codes: Mapping[str, List[str]]) -> None:
        self._compiled, self._entry_codes = compiled, entry_codes
        self._numbers: Dict[str, List[int]] = dict(compiled.header["keys"])
        self._built: Dict[str, List[CodeInfo]] = {}

    def __getitem__(self, key: str) -> List[CodeInfo]:
        infos = self._built.get(key)
        if infos is None:
            infos = self._built[key] = [code_info(self._compiled.doc(n), self._entry_codes) for n in self._numbers[key]]
        return infos

    def __iter__(self) -> Iterator[str]:
        return iter(self._numbers)

    def __len__(self) -> int:
        return len(self._numbers)


class _LazyDoc(Mapping):
    """A mapping stored as one document of a compiled file, parsed on first use."""

    def __init__(self, compiled: Compiled, number: int) -> None:
        self._compiled, self._number, self._doc = compiled, number, None

    def _get(self) -> Dict[str, Any]:
        if self._doc is None:
            self._doc = self._compiled.doc(self._number)
        return self._doc  # type: ignore[return-value]

    def __getitem__(self, key: str) -> Any:
        return self._get()[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._get())

    def __len__(self) -> int:
        return len(self._get())


_CODE_DEFAULTS = {"family_title": "", "klass": "", "printed": "", "maps_to": None, "component": "", "advice": "",
                  "sources": (), "confirmed_by": (), "aliases": (), "category": ""}


def code_row(info: CodeInfo) -> Dict[str, Any]:
    """A CodeInfo as a document of the compiled code tables, without the fields left at their
    default (its ``entries`` come from the rules when it is read)."""
    return {k: list(v) if isinstance(v, tuple) else v for k, v in info.__dict__.items()
            if k != "entries" and not (k in _CODE_DEFAULTS and v == _CODE_DEFAULTS[k])}


def code_info(row: Dict[str, Any], entry_codes: Mapping[str, List[str]]) -> CodeInfo:
    fields = {k: tuple(v) if isinstance(v, list) else v for k, v in row.items()}
    return CodeInfo(**fields, entries=tuple(entry_codes.get(row["key"], [])))


def compiled_code_tables(tables: CodeTables, stamp: str) -> bytes:
    """The compiled code tables (kb/data/compiled-codes.jsonl) of ``tables``, loaded without entry codes."""
    rows: List[Dict[str, Any]] = []
    keys = []
    for key, infos in tables.by_key.items():
        keys.append([key, list(range(len(rows), len(rows) + len(infos)))])
        rows.extend(code_row(info) for info in infos)
    rows.append(tables.by_name)
    header = {"stamp": stamp, "keys": keys, "by_name": len(rows) - 1, "families": tables.families,
              "classes": tables.classes, "prefixes": [list(p) for p in tables.prefixes],
              "tables": [[name, count] for name, count in tables.tables.items()]}
    import gzip

    return gzip.compress(write_compiled(header, rows), compresslevel=9, mtime=0)


def load_code_tables(data_dir: Path = DATA_DIR, entry_codes: Optional[Mapping[str, List[str]]] = None) -> CodeTables:
    tables = CodeTables()
    entry_codes = entry_codes or {}
    docs = []
    all_docs, validate = data_docs(data_dir)
    if isinstance(all_docs, _Docs):
        compiled = _read_compiled(data_dir / COMPILED_CODES)
        if compiled is not None and compiled.header.get("stamp") == all_docs.compiled.header.get("stamp"):
            header = compiled.header
            tables.by_key = _CompiledRows(compiled, entry_codes)  # type: ignore[assignment]
            tables.by_name = _LazyDoc(compiled, header["by_name"])  # type: ignore[assignment]
            tables.families, tables.classes = header["families"], header["classes"]
            tables.prefixes = [tuple(p) for p in header["prefixes"]]  # type: ignore[misc]
            tables.tables = {name: count for name, count in header["tables"]}
            return tables
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
            tables.prefixes.append((str(item["prefix"]), str(item["component"]), " ".join(str(item.get("advice", "")).split()),
                                    str(item["category"])))
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
                category=str(raw.get("category", "") or ""),
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
