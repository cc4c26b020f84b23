"""The op manifest: which ops a model ran, as recorded on CPU (JSON, ``"schema": 1``).

::

    {"schema": 1, "kind": "ascend-doctor/op-manifest",
     "tool": {"name": "ascend-doctor", "version": "0.1.0"},
     "recorded": {"torch": "2.13.0+cpu", "python": "3.11.9", "mode": "fake",
                  "command": ["python", "train.py"], "complete": true, "error": null,
                  "seconds": 2.1, "composite_parents": true, "explicit_children": true},
     "ops": [{"op": "aten::addmm", "calls": 3, "level": "kernel",
              "contexts": [{"within": ["aten::linear"], "calls": 3}],
              "dtypes": [["float32"]], "shapes": [[[64], [20, 64], [64, 64]]],
              "phases": ["forward"], "dispatch": ["CPU", "CompositeExplicitAutogradNonFunctional", "Meta"],
              "first": 12}]}

``level``: ``kernel`` (the op reached backend dispatch on CPU) or ``composite`` (a
CompositeImplicit op seen before PyTorch decomposed it; its children are entries whose
``within`` chain names it). ``within`` lists the enclosing composite ops, outermost first:
on a release where one of them has an NPU kernel, the child does not run on its own.
``dispatch`` holds the dispatch keys that had a kernel in the recording PyTorch; ``first``
is the position of the op's first call in the run (replay follows that order).

This module has no torch dependency: manifests are read and checked anywhere.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple, Union

from compat_matrix.schema import Field, Record, check, problem

from ..inputs import InputError, load_json
from ..inputs.openable import open_for_reading

SCHEMA = 1
KIND = "ascend-doctor/op-manifest"
LEVELS = ("kernel", "composite")


class ManifestError(ValueError):
    """A manifest that cannot be used; the message is one line."""


@dataclass
class OpContext:
    within: Tuple[str, ...]
    calls: int

    def to_json(self) -> Dict[str, Any]:
        return {"within": list(self.within), "calls": self.calls}


@dataclass
class OpEntry:
    op: str
    calls: int
    level: str = "kernel"
    contexts: List[OpContext] = field(default_factory=list)
    dtypes: List[List[str]] = field(default_factory=list)
    shapes: List[List[Any]] = field(default_factory=list)
    phases: List[str] = field(default_factory=list)
    dispatch: Optional[List[str]] = None
    first: Optional[int] = None  # position of the op's first call in the recorded run

    def to_json(self) -> Dict[str, Any]:
        out: Dict[str, Any] = {
            "op": self.op,
            "calls": self.calls,
            "level": self.level,
            "contexts": [c.to_json() for c in self.contexts],
            "dtypes": self.dtypes,
            "shapes": self.shapes,
            "phases": self.phases,
        }
        if self.dispatch is not None:
            out["dispatch"] = self.dispatch
        if self.first is not None:
            out["first"] = self.first
        return out

    @property
    def all_dtypes(self) -> List[str]:
        seen: List[str] = []
        for sig in self.dtypes:
            for d in sig:
                if d not in seen:
                    seen.append(d)
        return seen


@dataclass
class Manifest:
    ops: List[OpEntry]
    recorded: Dict[str, Any] = field(default_factory=dict)
    tool: Dict[str, Any] = field(default_factory=dict)
    path: Optional[str] = None

    def to_json(self) -> Dict[str, Any]:
        return {
            "schema": SCHEMA,
            "kind": KIND,
            "tool": self.tool,
            "recorded": self.recorded,
            "ops": [e.to_json() for e in sorted(self.ops, key=lambda e: e.op)],
        }

    def dumps(self) -> str:
        """JSON text with one op per line (readable, diffable, still plain JSON)."""
        doc = self.to_json()
        ops = doc.pop("ops")
        head = json.dumps(doc, indent=1)[:-2]  # drop the closing brace
        body = ",\n".join("  " + json.dumps(o, separators=(", ", ": ")) for o in ops)
        return head + ',\n "ops": [\n' + body + ("\n" if ops else "") + " ]\n}\n"

    def save(self, path: Union[str, Path]) -> None:
        Path(path).write_text(self.dumps(), encoding="utf-8")

    def entry(self, op: str) -> Optional[OpEntry]:
        for e in self.ops:
            if e.op == op:
                return e
        return None

    @property
    def total_calls(self) -> int:
        return sum(e.calls for e in self.ops)


def _fail(where: str, why: str) -> ManifestError:
    return ManifestError(f"{where}: {why}")


def _namespaced(op: str) -> Optional[str]:
    name = op.strip()
    return None if "::" in name else f"op {name!r} needs a namespace, e.g. 'aten::{name}'"


_OTHER = Field("any", doc="ignored (a newer recorder may add fields)")
CONTEXT = Record("ops[].contexts[]", {
    "within": Field("list", item=Field("str"), doc="the enclosing composite ops, outermost first"),
    "calls": Field("int", minimum=0, default=1, doc="calls of the op within that chain"),
}, doc="Where the op was called from.", extra=_OTHER)
OP = Record("ops[]", {
    "op": Field("str", required=True, nonempty=True, test=_namespaced, doc="the op's qualified name, e.g. aten::addmm"),
    "calls": Field("int", minimum=0, default=1, doc="how many times it ran"),
    "level": Field("str", choices=LEVELS, default="kernel",
                   doc="kernel: it reached backend dispatch on CPU; composite: a CompositeImplicit op seen before "
                       "PyTorch decomposed it (its children name it in `within`)"),
    "contexts": Field("list", item=Field("record", record=CONTEXT), doc="the call chains it ran in; default: one, top level"),
    "dtypes": Field("list", item=Field("list", item=Field("str")), doc="the dtype signatures it ran with"),
    "shapes": Field("list", doc="the input shapes it ran with (one list per call signature)"),
    "phases": Field("list", item=Field("str"), doc="forward, backward, optimizer"),
    "dispatch": Field("list", item=Field("str"), doc="the dispatch keys that had a kernel in the recording PyTorch"),
    "first": Field("int", minimum=0, doc="position of the op's first call in the run (replay follows that order)"),
}, doc="One op the model ran.", extra=_OTHER)
MANIFEST = Record("op manifest", {
    "schema": Field("int", required=True, choices=(SCHEMA,), doc="the format's version"),
    "kind": Field("str", doc=f"`{KIND}`"),
    "tool": Field("map", doc="the tool that wrote it: name, version"),
    "recorded": Field("map", doc="how it was recorded: torch, python, mode, command, complete, error, seconds"),
    "ops": Field("list", required=True, item=Field("any", options=(
        Field("str", test=_namespaced, doc="a bare op name (hand-written manifests): one call"),
        Field("record", record=OP))), doc="the ops, one entry each"),
}, doc="An op manifest (JSON), written by `ascend-doctor opcheck record`: which ops a model ran, recorded on CPU.",
    extra=_OTHER)


def from_json(doc: Any, where: str = "manifest") -> Manifest:
    """Validate a parsed manifest; every problem is reported as one line naming the field."""
    if not isinstance(doc, dict):
        raise _fail(where, "not an op manifest (top level is not a JSON object)")
    if "schema" not in doc or "ops" not in doc:
        raise _fail(where, "not an op manifest (no 'schema'/'ops'; record one with `ascend-doctor opcheck record`)")
    if doc["schema"] != SCHEMA:
        raise _fail(where, f"manifest schema {doc['schema']!r} is not supported (this ascend-doctor reads schema {SCHEMA})")
    check(doc, MANIFEST, where, error=ManifestError)
    entries: List[OpEntry] = []
    seen = set()
    for i, raw in enumerate(doc["ops"]):
        if isinstance(raw, str):  # a bare op name is accepted for hand-written manifests
            raw = {"op": raw}
        op = raw["op"].strip()
        if op in seen:
            raise problem(where, f"ops[{i}].op", f"op {op!r} listed twice", ManifestError)
        seen.add(op)
        calls = OP.get(raw, "calls")
        contexts = [OpContext(tuple(c.get("within") or ()), CONTEXT.get(c, "calls")) for c in raw.get("contexts") or ()]
        entries.append(
            OpEntry(
                op=op,
                calls=calls,
                level=OP.get(raw, "level"),
                contexts=contexts or [OpContext((), calls)],
                dtypes=[list(s) for s in raw.get("dtypes") or ()],
                shapes=list(raw.get("shapes") or ()),
                phases=list(raw.get("phases") or ()),
                dispatch=list(raw["dispatch"]) if raw.get("dispatch") is not None else None,
                first=raw.get("first"),
            )
        )
    return Manifest(ops=entries, recorded=doc.get("recorded") or {}, tool=doc.get("tool") or {})


def load(path: Union[str, Path]) -> Manifest:
    p = Path(path)
    if p.is_dir():
        raise ManifestError(f"{p}: is a directory, expected an op manifest (JSON)")
    try:
        with open_for_reading(str(p), allow_pipe=True) as fh:  # never blocks on a FIFO or device
            text = fh.read().decode("utf-8")
    except FileNotFoundError:
        raise ManifestError(f"{p}: no such file") from None
    except IsADirectoryError:
        raise ManifestError(f"{p}: is a directory, expected an op manifest (JSON)") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ManifestError(f"{p}: cannot read: {exc}") from None

    try:
        doc = load_json(text, what=str(p))
    except InputError as exc:
        raise ManifestError(f"{exc}; expected an op manifest written by `ascend-doctor opcheck record`") from None
    m = from_json(doc, where=str(p))
    m.path = str(p)
    return m
