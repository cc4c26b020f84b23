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


def _str_list(value: Any, where: str) -> List[str]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise _fail(where, "expected a list of strings")
    return list(value)


def from_json(doc: Any, where: str = "manifest") -> Manifest:
    """Validate a parsed manifest; every problem is reported as one line naming the field."""
    if not isinstance(doc, dict):
        raise _fail(where, "not an op manifest (top level is not a JSON object)")
    if "schema" not in doc or "ops" not in doc:
        raise _fail(where, "not an op manifest (no 'schema'/'ops'; record one with `ascend-doctor opcheck record`)")
    if doc["schema"] != SCHEMA:
        raise _fail(where, f"manifest schema {doc['schema']!r} is not supported (this ascend-doctor reads schema {SCHEMA})")
    if not isinstance(doc["ops"], list):
        raise _fail(where, "'ops' must be a list")
    entries: List[OpEntry] = []
    seen = set()
    for i, raw in enumerate(doc["ops"]):
        at = f"{where}: ops[{i}]"
        if isinstance(raw, str):  # a bare op name is accepted for hand-written manifests
            raw = {"op": raw, "calls": 1}
        if not isinstance(raw, dict) or not isinstance(raw.get("op"), str) or not raw["op"].strip():
            raise ManifestError(f"{at}: needs an 'op' name")
        op = raw["op"].strip()
        if "::" not in op:
            raise ManifestError(f"{at}: op {op!r} needs a namespace, e.g. 'aten::{op}'")
        if op in seen:
            raise ManifestError(f"{at}: op {op!r} listed twice")
        seen.add(op)
        calls = raw.get("calls", 1)
        if not isinstance(calls, int) or isinstance(calls, bool) or calls < 0:
            raise ManifestError(f"{at}: 'calls' must be a non-negative integer")
        level = raw.get("level", "kernel")
        if not isinstance(level, str) or level not in LEVELS:
            raise ManifestError(f"{at}: 'level' must be one of {', '.join(LEVELS)}")
        contexts: List[OpContext] = []
        raw_contexts = raw.get("contexts") or []
        if not isinstance(raw_contexts, list):
            raise ManifestError(f"{at}: 'contexts' must be a list")
        for j, c in enumerate(raw_contexts):
            if not isinstance(c, dict):
                raise ManifestError(f"{at}.contexts[{j}]: expected an object")
            within = tuple(_str_list(c.get("within", []), f"{at}.contexts[{j}].within"))
            n = c.get("calls", 1)
            if not isinstance(n, int) or isinstance(n, bool) or n < 0:
                raise ManifestError(f"{at}.contexts[{j}]: 'calls' must be a non-negative integer")
            contexts.append(OpContext(within, n))
        if not contexts:
            contexts = [OpContext((), calls)]
        dtypes = raw.get("dtypes", [])
        if not isinstance(dtypes, list) or not all(isinstance(s, list) and all(isinstance(d, str) for d in s) for s in dtypes):
            raise ManifestError(f"{at}: 'dtypes' must be a list of lists of dtype names")
        shapes = raw.get("shapes", [])
        if not isinstance(shapes, list):
            raise ManifestError(f"{at}: 'shapes' must be a list")
        dispatch = raw.get("dispatch")
        if dispatch is not None:
            dispatch = _str_list(dispatch, f"{at}.dispatch")
        first = raw.get("first")
        if first is not None and (not isinstance(first, int) or isinstance(first, bool) or first < 0):
            raise ManifestError(f"{at}: 'first' must be a non-negative integer")
        entries.append(
            OpEntry(
                op=op,
                calls=calls,
                level=level,
                contexts=contexts,
                dtypes=[list(s) for s in dtypes],
                shapes=list(shapes),
                phases=_str_list(raw.get("phases", []), f"{at}.phases"),
                dispatch=dispatch,
                first=first,
            )
        )
    recorded = doc.get("recorded") or {}
    if not isinstance(recorded, dict):
        raise _fail(where, "'recorded' must be an object")
    tool = doc.get("tool") or {}
    return Manifest(ops=entries, recorded=recorded, tool=tool if isinstance(tool, dict) else {})


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
