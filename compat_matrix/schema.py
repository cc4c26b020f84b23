"""One small declarative validator for the data files, and the documentation of each file's schema.

A schema is a ``Record`` (the fields of a mapping) built from ``Field`` rows: the field's type,
whether it is required, the values it allows, a range, the items of a list or the values of a
map, a nested record, and a sentence saying what the field means. ``check(value, spec, origin)``
walks a parsed document and raises one one-line error naming the file (``origin``), the field
(a dotted path such as ``host.cann.layout`` or ``expect.check[0].category``) and the problem.
``markdown(spec)`` renders the same spec as tables, so the documentation is the schema.

It lives in compat_matrix because every package may import this pure one: ascend_doctor (the
knowledge base, the op manifest) and runtime_sim (the scenario files) both use it, and
runtime_sim never imports ascend_doctor. Checks that relate fields or entries to each other
(an id listed twice, an edge to an unknown entry, a regex that does not compile) stay with the
loader that knows them; they report in the same form through ``problem``.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple, Type, Union

__all__ = ["SchemaError", "Field", "Record", "check", "problem", "kind_of", "markdown", "join"]

Choices = Union[Sequence[Any], Callable[[], Sequence[Any]], None]
# the YAML/JSON types a field may have; "number" is an int or a float
KINDS = ("str", "int", "number", "bool", "list", "map", "record", "any")
_ARTICLE = {"str": "a string", "int": "an integer", "number": "a number", "bool": "true or false",
            "list": "a list", "map": "a mapping", "record": "a mapping", "any": "a value"}


class SchemaError(ValueError):
    """A data file that does not fit its schema; the message is one line: ``file: field: problem``."""


@dataclass(frozen=True)
class Field:
    """One field: its type and what values it may take.

    kind      one of KINDS
    required  must be present and not null (null is the same as absent)
    doc       what the field means (rendered in docs/data-files.md)
    default   the value a loader uses when the field is absent (documentation only)
    choices   the allowed values, or a function giving them (called when checking: lists that
              live elsewhere, such as the check registry, are read only then)
    item      the field every item of a list (or value of a map) must satisfy
    key       the field every key of a map must satisfy
    record    the fields of a nested mapping (kind "record")
    options   alternatives: the first whose kind fits the value is checked (e.g. a string or a mapping)
    nonempty  a string that is not blank, a list or mapping with at least one item
    minimum / maximum  the range of a number
    pattern   a regex a string must match as a whole; ``hint`` says in words what it must look like
    text      accept integers where a string is expected (YAML reads ``0`` as a number), but refuse
              floats: ``8.2`` is a version written without quotes
    test      a further test of the value: returns what is wrong, or None
    """

    kind: str
    required: bool = False
    doc: str = ""
    default: Any = None
    choices: Choices = None
    item: Optional["Field"] = None
    key: Optional["Field"] = None
    record: Optional["Record"] = None
    options: Tuple["Field", ...] = ()
    nonempty: bool = False
    minimum: Optional[float] = None
    maximum: Optional[float] = None
    pattern: Optional[str] = None
    hint: str = ""
    text: bool = False
    test: Optional[Callable[[Any], Optional[str]]] = None

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"unknown field kind {self.kind!r}")


@dataclass(frozen=True)
class Record:
    """The fields of a mapping, in the order they are documented.

    ``extra``: other keys are allowed, each value checked by this field (None: any other key is an error).
    """

    name: str
    fields: Dict[str, Field]
    doc: str = ""
    extra: Optional[Field] = None

    def default(self, name: str) -> Any:
        return self.fields[name].default

    def get(self, raw: Dict[str, Any], name: str) -> Any:
        """The value of ``name`` in a checked mapping, or the field's default when absent or null."""
        value = raw.get(name)
        return self.fields[name].default if value is None else value


def join(path: str, key: Any) -> str:
    """``host`` + ``cann`` -> ``host.cann``; an index is written ``[i]``."""
    if isinstance(key, int) and not isinstance(key, bool):
        return f"{path}[{key}]"
    return f"{path}.{key}" if path else str(key)


def kind_of(value: Any) -> str:
    """What a parsed value is, in words: ``a mapping``, ``a list``, ``nothing``..."""
    if value is None:
        return "nothing"
    return {dict: "a mapping", list: "a list", str: "a string", bool: "a boolean", int: "an integer",
            float: "a number"}.get(type(value), type(value).__name__)


def problem(origin: str, path: str, message: str, error: Type[Exception] = SchemaError) -> Exception:
    """The one-line error of every check: ``origin: path: message``."""
    return error(f"{origin}: {path or '(top level)'}: {message}")


def check(value: Any, spec: Union[Field, Record], origin: str, path: str = "",
          error: Type[Exception] = SchemaError) -> None:
    """Raise ``error`` (one line naming ``origin`` and the field) when ``value`` does not fit ``spec``.
    ``path`` is where ``value`` sits in its file (empty: the whole document)."""
    if isinstance(spec, Record):
        spec = Field("record", record=spec)
    found = _check(value, spec)
    if found is not None:
        keys, message = found
        where = path
        for key in reversed(keys):
            where = join(where, key)
        raise problem(origin, where, message, error)


# ---------------------------------------------------------------------------------- checking
# _check returns None, or (the keys from the bad field up to the value checked, innermost first:
# appended on the way back up, so that a good document builds no path at all; the message)
Found = Optional[Tuple[List[Any], str]]


def _fits(value: Any, kind: str, text: bool = False) -> bool:
    if kind == "any":
        return True
    if kind == "str":
        return isinstance(value, str) or (text and isinstance(value, (int, float)) and not isinstance(value, bool))
    if kind == "int":
        return isinstance(value, int) and not isinstance(value, bool)
    if kind == "number":
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if kind == "bool":
        return isinstance(value, bool)
    if kind == "list":
        return isinstance(value, list)
    return isinstance(value, dict)  # map, record


def _check(value: Any, spec: Field) -> Found:
    if spec.options:
        for option in spec.options:
            if _fits(value, option.kind, option.text):
                return _check(value, option)
        wanted = " or ".join(dict.fromkeys(_ARTICLE[o.kind] for o in spec.options))
        return [], f"expected {wanted}, got {kind_of(value)}"
    kind = spec.kind
    if not _fits(value, kind, spec.text):
        return [], f"expected {_ARTICLE[kind]}, got {kind_of(value)}"
    if kind == "str":
        if isinstance(value, float):
            return [], f"write versions as quoted strings (YAML read {value!r} as a number)"
        if not isinstance(value, str):
            value = str(value)
        if spec.nonempty and not value.strip():
            return [], "must not be empty"
        if spec.pattern is not None and not _pattern(spec.pattern).fullmatch(value):
            return [], f"{value!r} {spec.hint or 'does not match ' + spec.pattern}"
    elif kind == "int" or kind == "number":
        if spec.minimum is not None and value < spec.minimum:
            return [], f"must be >= {spec.minimum:g}, got {value}"
        if spec.maximum is not None and value > spec.maximum:
            return [], f"must be <= {spec.maximum:g}, got {value}"
    elif kind == "list":
        if spec.nonempty and not value:
            return [], "must not be empty" + (f" ({spec.hint})" if spec.hint else "")
        item = spec.item
        if item is not None:
            for i, v in enumerate(value):
                found = _check(v, item)
                if found is not None:
                    found[0].append(i)
                    return found
    elif kind == "map":
        if spec.nonempty and not value:
            return [], "must not be empty"
        for k, v in value.items():
            found = _check(k, spec.key) if spec.key is not None else None
            if found is None and spec.item is not None:
                found = _check(v, spec.item)
            if found is not None:
                found[0].append(k)
                return found
    elif kind == "record":
        found = _record(value, spec.record)  # type: ignore[arg-type]
        if found is not None:
            return found
    if spec.choices is not None:
        allowed = spec.choices() if callable(spec.choices) else spec.choices
        if value not in allowed:
            return [], f"{value!r} is not one of {', '.join(str(a) for a in allowed)}"
    if spec.test is not None:
        message = spec.test(value)
        if message:
            return [], message
    return None


def _record(value: Dict[Any, Any], record: Record) -> Found:
    fields = record.fields
    if record.extra is None:
        for key in value:
            if key not in fields:
                return [key], f"unknown field (allowed: {', '.join(fields)})"
    for name, f in fields.items():
        v = value.get(name)
        if v is None:
            if f.required:
                return [name], "required field is missing"
            continue
        found = _check(v, f)
        if found is not None:
            found[0].append(name)
            return found
    if record.extra is not None:
        for key, v in value.items():
            if key not in fields and v is not None:
                found = _check(v, record.extra)
                if found is not None:
                    found[0].append(key)
                    return found
    return None


_PATTERNS: Dict[str, Any] = {}


def _pattern(source: str) -> Any:
    compiled = _PATTERNS.get(source)
    if compiled is None:
        compiled = _PATTERNS[source] = re.compile(source)
    return compiled


# ---------------------------------------------------------------------------------- documentation
def _type_text(f: Field) -> str:
    if f.options:
        return " or ".join(_type_text(o) for o in f.options)
    if f.kind == "list":
        return f"list of {_type_text(f.item)}" if f.item is not None else "list"
    if f.kind == "map":
        value = _type_text(f.item) if f.item is not None else "value"
        return f"mapping of {value}"
    if f.kind == "record":
        return f.record.name if f.record is not None else "mapping"
    return {"str": "string", "int": "integer", "number": "number", "bool": "boolean", "any": "any"}[f.kind]


def _allowed_text(f: Field) -> str:
    parts: List[str] = []
    if f.choices is not None:
        allowed = f.choices() if callable(f.choices) else f.choices
        shown = ", ".join(f"`{a}`" for a in allowed)
        parts.append(shown if len(allowed) <= 12 else f"one of {len(allowed)} names: {shown}")
    if f.minimum is not None or f.maximum is not None:
        low = "" if f.minimum is None else f"{f.minimum:g} ≤ "
        high = "" if f.maximum is None else f" ≤ {f.maximum:g}"
        parts.append(f"{low}value{high}")
    if f.pattern is not None:
        parts.append(f.hint or f"matches `{f.pattern}`")
    elif f.hint and f.kind != "list":
        parts.append(f.hint)
    if f.nonempty:
        parts.append("not empty")
    inner = f.item if f.kind in ("list", "map") else None
    if inner is not None and not inner.record and not inner.options:
        sub = _allowed_text(inner)
        if sub:
            parts.append(f"each: {sub}")
    return "; ".join(parts)


def _records(spec: Union[Field, Record], seen: List[Record]) -> None:
    """Every record reachable from ``spec``, each once, in the order met."""
    if isinstance(spec, Record):
        if any(r is spec for r in seen):
            return
        seen.append(spec)
        for f in spec.fields.values():
            _records(f, seen)
        if spec.extra is not None:
            _records(spec.extra, seen)
        return
    if spec.record is not None:
        _records(spec.record, seen)
    for sub in (spec.item, spec.key) + tuple(spec.options):
        if sub is not None:
            _records(sub, seen)


def _cell(text: str) -> str:
    return " ".join(str(text).split()).replace("|", "\\|")


def markdown(spec: Record, level: int = 3) -> str:
    """The schema as Markdown: one table per record (field, type, required, allowed values, meaning)."""
    out: List[str] = []
    seen: List[Record] = []
    _records(spec, seen)
    for record in seen:
        out.append(f"{'#' * level} {record.name}\n")
        if record.doc:
            out.append(_cell(record.doc) + "\n")
        out.append("| field | type | required | allowed | meaning |")
        out.append("|---|---|---|---|---|")
        for name, f in record.fields.items():
            required = "yes" if f.required else ("no" if f.default is None else f"no (default `{f.default}`)")
            out.append(f"| `{name}` | {_cell(_type_text(f))} | {required} | {_cell(_allowed_text(f))} | {_cell(f.doc)} |")
        if record.extra is not None:
            out.append(f"| *(any other)* | {_cell(_type_text(record.extra))} | no | {_cell(_allowed_text(record.extra))} "
                       f"| {_cell(record.extra.doc)} |")
        out.append("")
    return "\n".join(out)
