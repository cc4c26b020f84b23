"""The scenario catalog: one YAML file per scenario, each with its ground truth.

    from runtime_sim.scenarios import load, names, load_all, load_file, ScenarioError

    names()                 # ['aicore_exception', 'cann_too_new_for_driver', ...]
    s = load("no_driver")   # Scenario (see schema.py), validated
    s.failing_ids           # {'driver.installed': 'fail'}

A bad file raises ScenarioError with one line naming the file and the field, e.g.
``no_driver.yaml: host.cann.layout: 'toolkit' is not one of ascend-toolkit, cann``.
"""
from __future__ import annotations

import os
from functools import lru_cache
from typing import Any, List, Optional

from .schema import (
    CATEGORIES,
    ExpectedFinding,
    Expectation,
    HostSpec,
    KnownValues,
    Scenario,
    ScenarioError,
    WorkloadSpec,
    validate,
)

CATALOG_DIR = os.path.dirname(os.path.abspath(__file__))


def names() -> List[str]:
    """Scenario names in the catalog, sorted."""
    return sorted(f[:-5] for f in os.listdir(CATALOG_DIR) if f.endswith(".yaml") and not f.startswith("_"))


def load(name: str) -> Scenario:
    """A catalog scenario by name (or a path to a scenario file)."""
    if name.endswith((".yaml", ".yml")) or os.sep in name:
        return load_file(name)
    name = name.replace("-", "_")  # healthy-910b and healthy_910b name the same scenario
    path = os.path.join(CATALOG_DIR, name + ".yaml")
    if not os.path.isfile(path):
        close = [n for n in names() if name in n or n in name]
        hint = f" (did you mean {', '.join(close[:3])}?)" if close else " (python -m runtime_sim list shows them)"
        raise ScenarioError(f"unknown scenario {name!r}{hint}")
    return _load_cached(path)


def load_all() -> List[Scenario]:
    return [load(n) for n in names()]


def load_file(path: str) -> Scenario:
    return _load_cached(os.path.abspath(path))


@lru_cache(maxsize=None)
def _load_cached(path: str) -> Scenario:
    label = os.path.basename(path)
    try:
        with open(path, "rb") as fh:
            raw = fh.read(MAX_SCENARIO_BYTES + 1)
    except OSError as exc:
        raise ScenarioError(f"{label}: cannot read: {exc.strerror or exc}") from None
    if len(raw) > MAX_SCENARIO_BYTES:
        raise ScenarioError(f"{label}: larger than {MAX_SCENARIO_BYTES >> 10} KB; not a scenario file")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise ScenarioError(f"{label}: not UTF-8 text; a scenario is a YAML file") from None
    if "\x00" in text:
        raise ScenarioError(f"{label}: binary data; a scenario is a YAML file")
    return parse(text, label)


MAX_SCENARIO_BYTES = 1 << 20
MAX_SCENARIO_DEPTH = 32


def _nesting(text: str) -> int:
    """An upper bound of the YAML nesting: flow brackets outside quotes, plus indentation
    levels (a cheap, linear test that keeps yaml's recursive parser out of trouble)."""
    depth = best = 0
    for ch in text:
        if ch in "[{":
            depth += 1
            if depth > best:
                best = depth
        elif ch in "]}":
            depth = max(depth - 1, 0)
    indent = max((len(line) - len(line.lstrip(" -")) for line in text.splitlines()), default=0)
    return best + indent // 2


def parse(text: str, label: str = "<scenario>") -> Scenario:
    """Validate scenario YAML text; ``label`` names it in error messages."""
    import yaml  # lazy: the catalog is only read when a scenario is used

    depth = _nesting(text)
    if depth > MAX_SCENARIO_DEPTH:
        raise ScenarioError(f"{label}: nested {depth} levels deep; a scenario is at most {MAX_SCENARIO_DEPTH}")
    try:
        raw: Any = yaml.safe_load(text)
    except RecursionError:
        raise ScenarioError(f"{label}: nested too deeply to be a scenario") from None
    except (ValueError, OverflowError) as exc:  # yaml's int() of a 5,000-digit number, say
        raise ScenarioError(f"{label}: a value YAML cannot read ({str(exc).splitlines()[0][:80]})") from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"line {mark.line + 1}" if mark is not None else "YAML"
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise ScenarioError(f"{label}: {where}: not valid YAML ({problem})") from None
    scenario = validate(raw, label, known_values())
    expected_name = label[:-5] if label.endswith(".yaml") else None
    if expected_name and expected_name != scenario.name and not label.startswith("<"):
        raise ScenarioError(f"{label}: name: {scenario.name!r} does not match the file name")
    return scenario


@lru_cache(maxsize=1)
def known_values() -> Optional[KnownValues]:
    """Chips, drivers, firmwares, toolkits and torch_npu builds the host builder knows."""
    from runtime_sim.host.catalog import host_catalog

    cat = host_catalog()
    return KnownValues(
        chips=tuple(sorted(cat.chips)),
        drivers=tuple(sorted(cat.drivers)),
        firmwares=tuple(sorted(cat.firmwares)),
        toolkits=tuple(sorted(cat.toolkits)),
        torch_npu=tuple(sorted(cat.torch_npu_builds)),
    )


__all__ = [
    "CATEGORIES",
    "ExpectedFinding",
    "Expectation",
    "HostSpec",
    "Scenario",
    "ScenarioError",
    "WorkloadSpec",
    "load",
    "load_all",
    "load_file",
    "names",
    "parse",
]
