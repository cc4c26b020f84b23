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
    pattern   a regex a string must match as a whole
    hint      the error message's words for a value that misses ``pattern`` or ``choices``
              ("must look like 'area.name'"), or that an empty list lacks
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
    found = _validator(spec)(value)
    if found is not None:
        keys, message = found
        where = path
        for key in reversed(keys):
            where = join(where, key)
        raise problem(origin, where, message, error)


# ---------------------------------------------------------------------------------- checking
# Each spec is turned once into a function (value -> None, or the problem): the knowledge base
# checks ~300 entries of ~20 fields when it reads its YAML, so the tests a field does not need
# are not even looked at. A problem is (the keys from the bad field up to the value checked,
# innermost first: appended on the way back up, so that a good document builds no path at all;
# the message).
Found = Optional[Tuple[List[Any], str]]
Validator = Callable[[Any], Found]
_VALIDATORS: Dict[int, Tuple[Any, Validator]] = {}  # id(spec) -> (spec, its function); the spec is kept alive


def _validator(spec: Union[Field, Record]) -> Validator:
    hit = _VALIDATORS.get(id(spec))
    if hit is not None and hit[0] is spec:
        return hit[1]
    fn = _record_validator(spec) if isinstance(spec, Record) else _field_validator(spec)
    _VALIDATORS[id(spec)] = (spec, fn)
    return fn


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


def _options_validator(spec: Field) -> Validator:
    options = [(o.kind, o.text, _validator(o)) for o in spec.options]
    wanted = " or ".join(dict.fromkeys(_ARTICLE[o.kind] for o in spec.options))

    def validate(value: Any) -> Found:
        for kind, text, fn in options:
            if _fits(value, kind, text):
                return fn(value)
        return [], f"expected {wanted}, got {kind_of(value)}"

    return validate


def _field_validator(spec: Field) -> Validator:
    if spec.options:
        return _options_validator(spec)
    kind, text = spec.kind, spec.text
    steps: List[Callable[[Any], Found]] = []  # run in order once the type fits
    if kind == "str":
        steps.append(_str_step(spec))
    elif kind in ("int", "number") and (spec.minimum is not None or spec.maximum is not None):
        steps.append(_range_step(spec))
    elif kind == "list":
        steps.append(_list_step(spec))
    elif kind == "map":
        steps.append(_map_step(spec))
    elif kind == "record":
        assert spec.record is not None, "a record field needs its record"
        steps.append(_validator(spec.record))
    if spec.choices is not None:
        steps.append(_choices_step(spec))
    if spec.test is not None:
        steps.append(_test_step(spec))
    expected = f"expected {_ARTICLE[kind]}, got "

    def validate(value: Any) -> Found:
        if not _fits(value, kind, text):
            return [], expected + kind_of(value)
        for step in steps:
            found = step(value)
            if found is not None:
                return found
        return None

    return validate


def _str_step(spec: Field) -> Validator:
    nonempty, text = spec.nonempty, spec.text
    regex = _pattern(spec.pattern) if spec.pattern is not None else None
    miss = spec.hint or f"does not match {spec.pattern}"

    def step(value: Any) -> Found:
        if text and not isinstance(value, str):
            if isinstance(value, float):
                return [], f"write versions as quoted strings (YAML read {value!r} as a number)"
            value = str(value)
        if nonempty and not value.strip():
            return [], "must not be empty"
        if regex is not None and not regex.fullmatch(value):
            return [], f"{value!r} {miss}"
        return None

    return step


def _range_step(spec: Field) -> Validator:
    low, high = spec.minimum, spec.maximum

    def step(value: Any) -> Found:
        if low is not None and value < low:
            return [], f"must be >= {low:g}, got {value}"
        if high is not None and value > high:
            return [], f"must be <= {high:g}, got {value}"
        return None

    return step


def _list_step(spec: Field) -> Validator:
    nonempty = spec.nonempty
    empty = "must not be empty" + (f" ({spec.hint})" if spec.hint else "")
    item = _validator(spec.item) if spec.item is not None else None

    def step(value: Any) -> Found:
        if nonempty and not value:
            return [], empty
        if item is not None:
            for i, v in enumerate(value):
                found = item(v)
                if found is not None:
                    found[0].append(i)
                    return found
        return None

    return step


def _map_step(spec: Field) -> Validator:
    nonempty = spec.nonempty
    key = _validator(spec.key) if spec.key is not None else None
    item = _validator(spec.item) if spec.item is not None else None

    def step(value: Any) -> Found:
        if nonempty and not value:
            return [], "must not be empty"
        if key is None and item is None:
            return None
        for k, v in value.items():
            found = key(k) if key is not None else None
            if found is None and item is not None:
                found = item(v)
            if found is not None:
                found[0].append(k)
                return found
        return None

    return step


def _choices_step(spec: Field) -> Validator:
    choices, text, hint, pattern = spec.choices, spec.text, spec.hint, spec.pattern

    def step(value: Any) -> Found:
        allowed = choices() if callable(choices) else choices
        if text and not isinstance(value, str):
            value = str(value)
        if value in allowed:  # type: ignore[operator]
            return None
        if hint and pattern is None:
            return [], f"{value!r} {hint}"
        return [], f"{value!r} is not one of {', '.join(str(a) for a in allowed)}"  # type: ignore[union-attr]

    return step


def _test_step(spec: Field) -> Validator:
    test, as_text = spec.test, spec.text and spec.kind == "str"

    def step(value: Any) -> Found:
        message = test(str(value) if as_text else value)  # type: ignore[misc]
        return ([], message) if message else None

    return step


def _record_validator(record: Record) -> Validator:
    fields = [(name, f.required, _validator(f)) for name, f in record.fields.items()]
    names = frozenset(record.fields)
    extra = _validator(record.extra) if record.extra is not None else None
    unknown = f"unknown field (allowed: {', '.join(record.fields)})"

    def validate(value: Any) -> Found:
        if not isinstance(value, dict):
            return [], f"expected a mapping, got {kind_of(value)}"
        if extra is None:
            for key in value:
                if key not in names:
                    return [key], unknown
        get = value.get
        for name, required, fn in fields:
            v = get(name)
            if v is None:
                if required:
                    return [name], "required field is missing"
                continue
            found = fn(v)
            if found is not None:
                found[0].append(name)
                return found
        if extra is not None:
            for key, v in value.items():
                if key not in names and v is not None:
                    found = extra(v)
                    if found is not None:
                        found[0].append(key)
                        return found
        return None

    return validate


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
        parts.append(f"matches `{f.pattern}`")
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


def _shown(value: Any) -> str:
    """A default as it is written in YAML."""
    if isinstance(value, bool):
        return "true" if value else "false"
    return '""' if value == "" else str(value)


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
            required = "yes" if f.required else ("no" if f.default is None else f"no (default `{_shown(f.default)}`)")
            doc = f.doc or (f.record.doc if f.record is not None else "")
            out.append(f"| `{name}` | {_cell(_type_text(f))} | {required} | {_cell(_allowed_text(f))} | {_cell(doc)} |")
        if record.extra is not None:
            out.append(f"| *(any other)* | {_cell(_type_text(record.extra))} | no | {_cell(_allowed_text(record.extra))} "
                       f"| {_cell(record.extra.doc)} |")
        out.append("")
    return "\n".join(out)
