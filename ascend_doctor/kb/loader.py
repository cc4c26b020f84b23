"""Read the YAML data files into Entries and CodeInfos, refusing malformed data.

Every problem is raised as ``KBError("<file>: <entry id>: <what>")`` so a broken data
file names itself. The YAML is read with libyaml's C loader when available.
"""
from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any, Dict, Iterable, List, Mapping, Optional, Tuple

from ascend_doctor.kb.codes import canonical_keys, inner_key, ts_key
from ascend_doctor.kb.conditions import CONDITIONS
from ascend_doctor.kb.model import (
    CHECK_IDS,
    ROLES,
    Attach,
    CodeInfo,
    Family,
    Entry,
    Example,
    Fix,
    KBError,
    Pattern,
    Rule,
)
from ascend_doctor.kb.triggers import required_literal
from ascend_doctor.inputs import os_message
from ascend_doctor.model import CATEGORIES

DATA_DIR = Path(__file__).resolve().parent / "data"
_ID = re.compile(r"^[a-z0-9_]+(\.[a-z0-9_]+)+$")
_ENTRY_KEYS = {
    "id", "category", "role", "priority", "title", "cause", "explanation", "match", "checks",
    "fix", "links", "causes", "caused_by", "examples", "counter_examples", "weight", "headline", "attach", "family", "broad",
}
_MATCH_KEYS = {"codes", "patterns", "keywords", "modules", "unless", "generic_codes", "module_only"}


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
        if not isinstance(doc, dict) or not isinstance(doc.get("entries"), list):
            raise KBError(f"{name}: expected a mapping with an 'entries' list")
        for raw in doc["entries"]:
            entry = _entry(raw, name)
            if entry.id in seen:
                raise KBError(f"{name}: {entry.id}: duplicate id (also in {seen[entry.id]})")
            seen[entry.id] = name
            entries.append(entry)
    return _close_edges(entries)


_VALIDATE = [True]  # compile every regex while loading (YAML source); the compiled form was checked when made


def _entry(raw: Any, fname: str) -> Entry:
    if not isinstance(raw, dict):
        raise KBError(f"{fname}: every entry must be a mapping, got {type(raw).__name__}")
    eid = raw.get("id")
    where = f"{fname}: {eid}"
    if not isinstance(eid, str) or not _ID.match(eid):
        raise KBError(f"{fname}: entry id {eid!r} must look like 'area.name' (lowercase, dots)")
    unknown = set(raw) - _ENTRY_KEYS
    if unknown:
        raise KBError(f"{where}: unknown keys {sorted(unknown)}")
    for key in ("category", "title", "cause", "explanation"):
        if not isinstance(raw.get(key), str) or not raw[key].strip():
            raise KBError(f"{where}: '{key}' must be a non-empty string")
    if raw["category"] not in CATEGORIES:
        raise KBError(f"{where}: category {raw['category']!r} is not one of {', '.join(CATEGORIES)}")
    role = raw.get("role", "cause")
    if role not in ROLES:
        raise KBError(f"{where}: role {role!r} is not one of {', '.join(ROLES)}")
    checks = _str_list(raw.get("checks", []), where, "checks")
    bad = [c for c in checks if c not in CHECK_IDS]
    if bad:
        raise KBError(f"{where}: unknown check ids {bad}")
    fix_raw = raw.get("fix")
    if not isinstance(fix_raw, dict) or not isinstance(fix_raw.get("text"), str):
        raise KBError(f"{where}: 'fix' must be a mapping with 'text'")
    fix = Fix(
        text=" ".join(fix_raw["text"].split()),
        commands=tuple(_str_list(fix_raw.get("commands", []), where, "fix.commands")),
        collect=tuple(_str_list(fix_raw.get("collect", []), where, "fix.collect")),
    )
    examples = tuple(_example(x, where) for x in _list(raw.get("examples"), where, "examples"))
    if not examples:
        raise KBError(f"{where}: needs at least one real example with its source")
    counter = tuple(_example(x, where) for x in _list(raw.get("counter_examples", []), where, "counter_examples"))
    priority = raw.get("priority", 0)
    if not isinstance(priority, int):
        raise KBError(f"{where}: priority must be an integer")
    weight = raw.get("weight")
    if weight is not None and (not isinstance(weight, int) or not 0 <= weight <= 100):
        raise KBError(f"{where}: weight must be an integer from 0 to 100")
    headline = raw.get("headline", "")
    if not isinstance(headline, str):
        raise KBError(f"{where}: headline must be a string")
    attach = _attach(raw.get("attach"), role, where)
    family = _family(raw.get("family"), where)
    return Entry(
        id=eid,
        category=raw["category"],
        title=" ".join(raw["title"].split()),
        cause=" ".join(raw["cause"].split()),
        explanation=" ".join(raw["explanation"].split()),
        checks=tuple(checks),
        fix=fix,
        links=tuple(_str_list(raw.get("links", []), where, "links")),
        causes=tuple(_str_list(raw.get("causes", []), where, "causes")),
        caused_by=tuple(_str_list(raw.get("caused_by", []), where, "caused_by")),
        examples=examples,
        rule=_rule(raw.get("match"), where),
        role=role,
        priority=priority,
        counter_examples=counter,
        source_file=fname,
        weight=weight,
        broad=bool(raw.get("broad", False)),
        headline=headline,
        attach=attach,
        family=family,
    )


def _attach(raw: Any, role: str, where: str) -> Optional[Attach]:
    if raw is None:
        return None
    if role not in ("context", "noise"):
        raise KBError(f"{where}: only context entries attach notes to incidents")
    if not isinstance(raw, dict) or not isinstance(raw.get("note"), str):
        raise KBError(f"{where}: attach needs 'categories' and 'note'")
    cats = _str_list(raw.get("categories"), where, "attach.categories")
    bad = [c for c in cats if c not in CATEGORIES]
    if bad or not cats:
        raise KBError(f"{where}: attach categories must be categories, got {cats!r}")
    return Attach(categories=tuple(cats), note=" ".join(raw["note"].split()))


def _family(raw: Any, where: str) -> Optional[Family]:
    if raw is None:
        return None
    if not isinstance(raw, dict) or not isinstance(raw.get("capture"), str) or not isinstance(raw.get("table"), str):
        raise KBError(f"{where}: family needs 'capture' and 'table'")
    table = _TABLES.get(raw["table"])
    if table is None:
        table = _TABLES[raw["table"]] = _read_table(raw["table"], where)
    return Family(capture=raw["capture"], table=raw["table"], rows=table[0], default=table[1])


_TABLES: Dict[str, Any] = {}


def _read_table(name: str, where: str) -> Any:
    """A family table (``data/tables/NAME.yaml``): rows of {match: regex, field: text}, and a default."""
    doc = data_docs(_TABLE_DIR[0])[0]["tables"].get(f"{name}.yaml")
    if not isinstance(doc, dict) or not isinstance(doc.get("rows"), list):
        raise KBError(f"{where}: family table {name}: expected a mapping with 'rows'")
    rows = []
    for row in doc["rows"]:
        if not isinstance(row, dict) or not isinstance(row.get("match"), str):
            raise KBError(f"{where}: family table {name}: every row needs 'match'")
        fields = {str(k): " ".join(str(v).split()) for k, v in row.items() if k not in ("match", "source")}
        rows.append((Pattern(row["match"], None), fields))
    default = {str(k): " ".join(str(v).split()) for k, v in (doc.get("default") or {}).items()}
    return tuple(rows), default


_TABLE_DIR = [Path(__file__).resolve().parent / "data"]


def _rule(raw: Any, where: str) -> Rule:
    if not isinstance(raw, dict):
        raise KBError(f"{where}: 'match' must be a mapping")
    unknown = set(raw) - _MATCH_KEYS
    if unknown:
        raise KBError(f"{where}: unknown match keys {sorted(unknown)}")
    codes: List[str] = []
    for code in _list(raw.get("codes", []), where, "match.codes"):
        keys = canonical_keys(str(code))
        if len(keys) != 1:
            raise KBError(f"{where}: match code {code!r} is not one unambiguous code (write hccl:N / drv:N)")
        codes.append(keys[0])
    patterns: List[Pattern] = []
    for item in _list(raw.get("patterns", []), where, "match.patterns"):
        if isinstance(item, str):
            source, condition = item, None
        elif isinstance(item, dict) and isinstance(item.get("regex"), str):
            source, condition = item["regex"], item.get("condition")
        else:
            raise KBError(f"{where}: a pattern is a regex string or {{regex, condition}}")
        if condition is not None and condition not in CONDITIONS:
            raise KBError(f"{where}: unknown condition {condition!r}")
        if _VALIDATE[0]:
            _compile(source, where)
        patterns.append(Pattern(source, trigger_of(source), condition))
    keywords: List[Tuple[str, ...]] = []
    for group in _list(raw.get("keywords", []), where, "match.keywords"):
        words = _str_list(group, where, "match.keywords group")
        if not words:
            raise KBError(f"{where}: empty keyword group")
        keywords.append(tuple(words))
    unless = tuple(Pattern(s, None) for s in _str_list(raw.get("unless", []), where, "match.unless"))
    if _VALIDATE[0]:
        for veto in unless:
            _compile(veto.source, where)
    modules = tuple(m.upper() for m in _str_list(raw.get("modules", []), where, "match.modules"))
    module_only = bool(raw.get("module_only", False))
    if module_only and not modules:
        raise KBError(f"{where}: module_only needs 'modules'")
    if not (codes or patterns or keywords or module_only):
        raise KBError(f"{where}: 'match' needs codes, patterns or keywords")
    return Rule(
        codes=tuple(codes),
        patterns=tuple(patterns),
        keywords=tuple(keywords),
        modules=modules,
        unless=unless,
        generic_codes=bool(raw.get("generic_codes", False)),
        module_only=module_only,
    )


def _compile(source: str, where: str) -> Any:
    try:
        return re.compile(source)
    except re.error as exc:
        raise KBError(f"{where}: bad regex {source!r}: {exc}") from None


def _example(raw: Any, where: str) -> Example:
    if not isinstance(raw, dict) or not isinstance(raw.get("text"), str) or not raw["text"].strip():
        raise KBError(f"{where}: an example needs 'text'")
    source = raw.get("source")
    if not isinstance(source, str) or not source.startswith("https://"):
        raise KBError(f"{where}: example source must be an https URL, got {source!r}")
    caps = raw.get("captures", {}) or {}
    if not isinstance(caps, dict):
        raise KBError(f"{where}: example captures must be a mapping")
    return Example(
        text=raw["text"].rstrip("\n"),
        source=source,
        codes=tuple(str(c) for c in raw.get("codes", []) or []),
        module=raw.get("module"),
        captures=tuple((str(k), str(v)) for k, v in caps.items()),
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


def _list(value: Any, where: str, what: str) -> List[Any]:
    if value is None:
        return []
    if not isinstance(value, list):
        raise KBError(f"{where}: '{what}' must be a list")
    return value


def _str_list(value: Any, where: str, what: str) -> List[str]:
    items = _list(value, where, what)
    for item in items:
        if not isinstance(item, str) or not item.strip():
            raise KBError(f"{where}: '{what}' must hold non-empty strings, got {item!r}")
    return list(items)


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
    for name, doc in sorted(data_docs(data_dir)[0]["codes"].items()):
        if not isinstance(doc, dict) or "table" not in doc:
            raise KBError(f"{name}: expected a mapping with 'table'")
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
        for field in ("name", "meaning"):
            if not isinstance(raw.get(field), str) or not raw[field].strip():
                raise KBError(f"{where}: '{field}' must be a non-empty string")
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
