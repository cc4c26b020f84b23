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
_STEP_KEYS = {"id", "question", "kind", "checks", "categories", "verdicts", "layers", "category", "ratio",
              "retries", "means", "next", "collect", "command"}


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


def _strings(value: Any, where: str) -> Tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
        raise FlowError(f"{where}: must be a list of strings")
    return tuple(value)


def _step(raw: Any, where: str, known_checks: Optional[set]) -> Step:
    if not isinstance(raw, dict):
        raise FlowError(f"{where}: must be a mapping")
    extra = set(raw) - _STEP_KEYS
    if extra:
        raise FlowError(f"{where}: unknown key {sorted(extra)[0]}")
    for key in ("id", "question", "kind"):
        if not isinstance(raw.get(key), str) or not raw[key].strip():
            raise FlowError(f"{where}.{key}: required text")
    where = f"{where} ({raw['id']})"
    kind = raw["kind"]
    if kind not in KINDS:
        raise FlowError(f"{where}.kind: {kind!r} is not one of {', '.join(KINDS)}")
    means = raw.get("means")
    if not isinstance(means, dict) or not means:
        raise FlowError(f"{where}.means: required mapping of outcome -> meaning")
    for verdict, text in means.items():
        if verdict not in VERDICTS:
            raise FlowError(f"{where}.means.{verdict}: not one of {', '.join(VERDICTS)}")
        if not isinstance(text, str) or not text.strip():
            raise FlowError(f"{where}.means.{verdict}: required text")
    for verdict in ("confirmed", "ruled_out"):
        if verdict not in means:
            raise FlowError(f"{where}.means: says nothing for {verdict}")
    checks = _strings(raw["checks"], f"{where}.checks") if "checks" in raw else ()
    categories = _strings(raw["categories"], f"{where}.categories") if "categories" in raw else ()
    verdicts = _strings(raw["verdicts"], f"{where}.verdicts") if "verdicts" in raw else ()
    layers = _strings(raw["layers"], f"{where}.layers") if "layers" in raw else ()
    if kind == "checks":
        if not checks:
            raise FlowError(f"{where}.checks: a checks step names at least one check")
        if known_checks is not None:
            for cid in checks:
                if cid not in known_checks:
                    raise FlowError(f"{where}.checks: {cid} is not a check id")
    if kind == "triage" and not categories:
        raise FlowError(f"{where}.categories: a triage step names the incident categories it confirms")
    for cat in categories + ((raw["category"],) if raw.get("category") else ()):
        if cat not in CATEGORIES:
            raise FlowError(f"{where}: {cat!r} is not a category ({', '.join(CATEGORIES)})")
    if kind == "oom":
        if not verdicts:
            raise FlowError(f"{where}.verdicts: an oom step names the verdicts it confirms")
        for v in verdicts:
            if v not in OOM_VERDICTS:
                raise FlowError(f"{where}.verdicts: {v!r} is not one of {', '.join(OOM_VERDICTS)}")
    if kind == "profile":
        if not layers:
            raise FlowError(f"{where}.layers: a profile step names the layers it reads")
        for layer in layers:
            if layer not in LAYERS:
                raise FlowError(f"{where}.layers: {layer!r} is not one of {', '.join(LAYERS)}")
    if kind in NEEDS_INPUT:
        for key in ("collect", "command"):
            if not isinstance(raw.get(key), str) or not raw[key].strip():
                raise FlowError(f"{where}.{key}: a {kind} step says what to collect and the exact command")
        if "not_run" not in means:
            raise FlowError(f"{where}.means: a {kind} step says what not_run means")
    ratio = raw.get("ratio", 1.5)
    if not isinstance(ratio, (int, float)) or isinstance(ratio, bool) or ratio <= 1:
        raise FlowError(f"{where}.ratio: a number above 1")
    return Step(
        id=raw["id"], question=raw["question"].strip(), kind=kind, means=dict(means), checks=checks,
        categories=categories, verdicts=verdicts, layers=layers, category=raw.get("category"),
        ratio=float(ratio), retries=bool(raw.get("retries", False)), next=raw.get("next"),
        collect=raw.get("collect"), command=raw.get("command"),
    )


def parse_flow(doc: Any, name: str, known_checks: Optional[set] = None) -> Flow:
    if not isinstance(doc, dict):
        raise FlowError(f"{name}: must be a mapping with symptom, title, source, steps")
    symptom = doc.get("symptom")
    if symptom not in SYMPTOMS:
        raise FlowError(f"{name}.symptom: {symptom!r} is not one of {', '.join(SYMPTOMS)}")
    for key in ("title", "source"):
        if not isinstance(doc.get(key), str) or not doc[key].strip():
            raise FlowError(f"{name}.{key}: required text")
    raw_steps = doc.get("steps")
    if not isinstance(raw_steps, list) or not raw_steps:
        raise FlowError(f"{name}.steps: a non-empty list")
    steps = tuple(_step(s, f"{name}.steps[{i}]", known_checks) for i, s in enumerate(raw_steps))
    ids = [s.id for s in steps]
    if len(set(ids)) != len(ids):
        raise FlowError(f"{name}.steps: duplicate step id {next(i for i in ids if ids.count(i) > 1)}")
    for i, s in enumerate(steps):
        if s.next is not None and (s.next not in ids or ids.index(s.next) <= i):
            raise FlowError(f"{name}.steps ({s.id}).next: {s.next!r} is not a later step of the flow")
    return Flow(symptom=symptom, title=doc["title"].strip(), source=doc["source"].strip(), steps=steps)


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
            raise FlowError(f"{path.name}.symptom: says {flow.symptom}, the file is for {symptom}")
        _CACHE[key] = flow
    return _CACHE[key]


def load_all(data_dir: Path = DATA_DIR) -> List[Flow]:
    return [load_flow(s, data_dir) for s in SYMPTOMS]
