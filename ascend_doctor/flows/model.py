"""Troubleshooting flows as data: one YAML file per symptom (``flows/data/<symptom>.yaml``).

A flow is an ordered list of steps. A step asks one question and answers it from one kind
of evidence:

- ``checks``: named checks of ``ascend-doctor check`` (ids of the check registry);
- ``triage``: the incidents ``ascend-doctor triage`` finds in the logs (by category);
- ``oom``: the verdict of ``ascend-doctor oom`` on the logs;
- ``profile``: the findings of ``ascend-doctor profile`` (by layer);
- ``baseline``: a profile compared with a baseline profile (operators that got slower);
- ``opcheck``: the op-support tables (which release supports the failing operator).

Each step says what each outcome means (``means``: confirmed / ruled_out / inconclusive /
not_run), where it leads (``next``: a step id, default the following step; a confirmed
cause always ends the flow), and, for a step that needs input nobody gave, what to collect
and the exact command (``collect``, ``command``). The loader refuses a malformed file with
one line naming the file and the field.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Dict, List, Mapping, Optional, Tuple

from compat_matrix.schema import Field, Record, check

from ..checks.base import registry
from ..kb.loader import read_yaml
from ..kb.model import KBError
from ..model import CATEGORIES

DATA_DIR = Path(__file__).resolve().parent / "data"
SYMPTOMS = ("init", "oom", "unsupported_op", "slow", "jitter", "multi_card")
KINDS = ("checks", "triage", "oom", "profile", "baseline", "opcheck")
VERDICTS = ("confirmed", "ruled_out", "inconclusive", "not_run")
LAYERS = ("dispatch", "copy", "fusion", "dynamic_shape", "slow_path", "communication")
OOM_VERDICTS = ("oom_capacity", "oom_fragmentation", "external")
NEEDS_INPUT = ("triage", "oom", "profile", "baseline", "opcheck")  # may be not_run: say what to collect


class FlowError(ValueError):
    """A flow file is malformed; one line naming the file and the field."""


@dataclass(frozen=True)
class Step:
    id: str
    question: str
    kind: str
    means: Mapping[str, str]
    checks: Tuple[str, ...] = ()
    categories: Tuple[str, ...] = ()
    verdicts: Tuple[str, ...] = ()
    layers: Tuple[str, ...] = ()
    category: Optional[str] = None  # the cause's category when the evidence does not carry one
    ratio: float = 1.5  # baseline: an operator this many times slower is a regression
    retries: bool = False  # oom: cache-flush lines alone confirm (allocation jitter)
    next: Optional[str] = None
    collect: Optional[str] = None
    command: Optional[str] = None


@dataclass(frozen=True)
class Flow:
    symptom: str
    title: str
    source: str
    steps: Tuple[Step, ...] = field(default_factory=tuple)

    def step(self, step_id: str) -> Step:
        for s in self.steps:
            if s.id == step_id:
                return s
        raise KeyError(step_id)

    def index(self, step_id: str) -> int:
        return [s.id for s in self.steps].index(step_id)


_TEXT = Field("str", nonempty=True)
STEP = Record("flow step", {
    "id": Field("str", required=True, nonempty=True, doc="the step's id (unique in the flow)"),
    "question": Field("str", required=True, nonempty=True, doc="the one question the step asks"),
    "kind": Field("str", required=True, choices=KINDS, doc="the evidence that answers it"),
    "checks": Field("list", item=_TEXT, doc="checks step: ids of `ascend-doctor check` checks (at least one)"),
    "categories": Field("list", item=Field("str", choices=CATEGORIES),
                        doc="triage step: the incident categories that confirm it (at least one)"),
    "verdicts": Field("list", item=Field("str", choices=OOM_VERDICTS), doc="oom step: the verdicts that confirm it (at least one)"),
    "layers": Field("list", item=Field("str", choices=LAYERS), doc="profile step: the layers it reads (at least one)"),
    "category": Field("str", choices=CATEGORIES, doc="the cause's category when the evidence does not carry one"),
    "ratio": Field("number", default=1.5, test=lambda v: None if v > 1 else "a number above 1",
                   doc="baseline step: an operator this many times slower is a regression (above 1)"),
    "retries": Field("bool", default=False, doc="oom step: cache-flush lines alone confirm (allocation jitter)"),
    "means": Field("map", required=True, nonempty=True, key=Field("str", choices=VERDICTS), item=_TEXT,
                   doc="what each outcome means: confirmed and ruled_out always, not_run for a step that needs input"),
    "next": Field("str", doc="the step it leads to (a later one); default: the following step"),
    "collect": Field("str", nonempty=True, doc="a step that needs input: what to collect"),
    "command": Field("str", nonempty=True, doc="a step that needs input: the exact command"),
}, doc="One step of a troubleshooting flow.")
FLOW = Record("flow", {
    "symptom": Field("str", required=True, choices=SYMPTOMS, doc="the symptom (the file is named after it)"),
    "title": Field("str", required=True, nonempty=True, doc="the flow's title"),
    "source": Field("str", required=True, nonempty=True, doc="the public guide the order of the steps follows"),
    "steps": Field("list", required=True, nonempty=True, item=Field("record", record=STEP), doc="the steps, in order"),
}, doc="A troubleshooting flow (ascend_doctor/flows/data/<symptom>.yaml).")
# what a step of each kind must name, beyond the schema
_NAMES = {"checks": ("checks", "a checks step names at least one check"),
          "triage": ("categories", "a triage step names the incident categories it confirms"),
          "oom": ("verdicts", "an oom step names the verdicts it confirms"),
          "profile": ("layers", "a profile step names the layers it reads")}


def _step(raw: Dict[str, Any], where: str, known_checks: Optional[set]) -> Step:
    """A checked step; raises FlowError for what depends on its kind."""
    kind, means = raw["kind"], raw["means"]
    for verdict in ("confirmed", "ruled_out"):
        if verdict not in means:
            raise FlowError(f"{where}.means: says nothing for {verdict}")
    if kind in _NAMES:
        key, message = _NAMES[kind]
        if not raw.get(key):
            raise FlowError(f"{where}.{key}: {message}")
    for i, cid in enumerate(raw.get("checks") or () if known_checks is not None else ()):
        if cid not in known_checks:  # type: ignore[operator]
            raise FlowError(f"{where}.checks[{i}]: {cid} is not a check id")
    if kind in NEEDS_INPUT:
        for key in ("collect", "command"):
            if not raw.get(key):
                raise FlowError(f"{where}.{key}: a {kind} step says what to collect and the exact command")
        if "not_run" not in means:
            raise FlowError(f"{where}.means: a {kind} step says what not_run means")
    return Step(
        id=raw["id"], question=raw["question"].strip(), kind=kind, means=dict(means),
        checks=tuple(raw.get("checks") or ()), categories=tuple(raw.get("categories") or ()),
        verdicts=tuple(raw.get("verdicts") or ()), layers=tuple(raw.get("layers") or ()), category=raw.get("category"),
        ratio=float(STEP.get(raw, "ratio")), retries=STEP.get(raw, "retries"), next=raw.get("next"),
        collect=raw.get("collect"), command=raw.get("command"),
    )


def parse_flow(doc: Any, name: str, known_checks: Optional[set] = None) -> Flow:
    check(doc, FLOW, name, error=FlowError)
    steps = tuple(_step(s, f"{name}: steps[{i}]", known_checks) for i, s in enumerate(doc["steps"]))
    ids = [s.id for s in steps]
    if len(set(ids)) != len(ids):
        raise FlowError(f"{name}: steps: duplicate step id {next(i for i in ids if ids.count(i) > 1)}")
    for i, s in enumerate(steps):
        if s.next is not None and (s.next not in ids or ids.index(s.next) <= i):
            raise FlowError(f"{name}: steps[{i}].next: {s.next!r} is not a later step of the flow")
    return Flow(symptom=doc["symptom"], title=doc["title"].strip(), source=doc["source"].strip(), steps=steps)


_CACHE: Dict[str, Flow] = {}


def load_flow(symptom: str, data_dir: Path = DATA_DIR) -> Flow:
    """The flow of a symptom (cached). Raises FlowError for an unknown symptom or a bad file."""
    if symptom not in SYMPTOMS:
        raise FlowError(f"unknown symptom {symptom!r}: choose one of {', '.join(SYMPTOMS)}")
    key = f"{data_dir}:{symptom}"
    if key not in _CACHE:
        path = data_dir / f"{symptom}.yaml"
        if not path.is_file():
            raise FlowError(f"{path}: missing flow file")
        try:
            doc = read_yaml(path)
        except KBError as exc:
            raise FlowError(str(exc)) from None
        flow = parse_flow(doc, path.name, {c.id for c in registry()})
        if flow.symptom != symptom:
            raise FlowError(f"{path.name}: symptom: says {flow.symptom}, the file is for {symptom}")
        _CACHE[key] = flow
    return _CACHE[key]


def load_all(data_dir: Path = DATA_DIR) -> List[Flow]:
    return [load_flow(s, data_dir) for s in SYMPTOMS]
