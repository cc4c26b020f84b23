"""The packages form layers, and an import never runs up a layer.

Every import of the three packages is read from the source (module level and inside
functions alike), mapped to its unit (a sub-package or top-level module of ascend_doctor),
and checked against LAYERS: a unit may import units of lower layers only. Inside the
runtime packages, imports sit at module level; the command layer and the entry points may
import inside a function (the CLI imports only the verb it runs; an output format imports
its renderer when it is asked for), and so may an import of a module listed in HEAVY.
docs/architecture.md explains the layers.
"""
from __future__ import annotations

import ast
from pathlib import Path
from typing import Dict, Iterator, List, Set, Tuple

import pytest

REPO = Path(__file__).resolve().parents[1]
PACKAGE = "ascend_doctor"

# lowest first; a unit imports only units of strictly lower layers (and itself)
LAYERS: List[Set[str]] = [
    {"__init__"},  # the version string
    {"model", "errors", "children", "inputs", "lazyre"},
    {"core", "output"},  # output: the JSON envelope, text tables and Markdown every renderer shares
    {"parsers", "host"},
    {"probes", "kb"},
    {"facts", "triage"},
    {"memory", "checks", "opcheck", "profile", "fleet"},
    {"report", "flows"},
    {"bundle"},
    {"commands"},
    {"cli"},
    {"launch"},
    {"__main__"},
]
# units whose function-level imports are by design: the verb dispatch and optional renderers
LAZY_ALLOWED = {"commands", "cli", "launch"}
# modules that pull torch (or another heavy optional dependency) in when imported, and the
# triage engine with its parsers and knowledge base, which `check` needs only when the host has logs
HEAVY = {"ascend_doctor.opcheck.recorder",
         "ascend_doctor.triage.engine", "ascend_doctor.triage.render", "ascend_doctor.triage.sources"}


def _modules(package: str) -> Iterator[Tuple[str, Path]]:
    for path in sorted((REPO / package).rglob("*.py")):
        rel = path.relative_to(REPO).with_suffix("")
        parts = list(rel.parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        yield ".".join(parts), path


def _imports(module: str, path: Path) -> Iterator[Tuple[str, int, bool]]:
    """(imported module, line, at module level) for each import in ``path``."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    in_function: Set[int] = set()
    for fn in ast.walk(tree):
        if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            in_function.update(id(n) for n in ast.walk(fn) if n is not fn)
    is_pkg = path.name == "__init__.py"
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name, node.lineno, id(node) not in in_function
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = module.split(".")
                base = base if is_pkg else base[:-1]
                base = base[: len(base) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            if node.module is None or target == PACKAGE:  # `from . import x`: x may be a module or a name
                for alias in node.names:
                    sub = f"{target}.{alias.name}"
                    yield (sub if _is_module(sub) else target), node.lineno, id(node) not in in_function
            else:
                yield target, node.lineno, id(node) not in in_function


def _is_module(dotted: str) -> bool:
    base = REPO.joinpath(*dotted.split("."))
    return base.with_suffix(".py").is_file() or (base / "__init__.py").is_file()


def _unit(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def _layer_of() -> Dict[str, int]:
    return {unit: i for i, layer in enumerate(LAYERS) for unit in layer}


def _edges():
    for module, path in _modules(PACKAGE):
        for target, line, at_top in _imports(module, path):
            if target == PACKAGE or target.startswith(PACKAGE + "."):
                yield module, path, target, line, at_top


def test_every_unit_has_a_layer():
    units = {_unit(m) for m, _ in _modules(PACKAGE)}
    missing = sorted(units - set(_layer_of()))
    assert not missing, f"add these to LAYERS (and docs/architecture.md): {missing}"
    stale = sorted(set(_layer_of()) - units)
    assert not stale, f"LAYERS names units that no longer exist: {stale}"


def test_no_import_runs_up_a_layer():
    layer = _layer_of()
    bad = []
    for module, path, target, line, _ in _edges():
        src, dst = _unit(module), _unit(target)
        if src != dst and layer[dst] >= layer[src]:
            bad.append(f"{path.relative_to(REPO)}:{line}: {src} (layer {layer[src]}) imports {target} (layer {layer[dst]})")
    assert not bad, "imports that run up (or across) a layer:\n" + "\n".join(bad)


def test_imports_are_at_module_level():
    bad = []
    for module, path, target, line, at_top in _edges():
        if at_top or _unit(module) in LAZY_ALLOWED or target in HEAVY:
            continue
        bad.append(f"{path.relative_to(REPO)}:{line}: {target} imported inside a function")
    assert not bad, "move these imports to module level (or list a heavy module in HEAVY):\n" + "\n".join(bad)


@pytest.mark.parametrize("package,forbidden", [
    ("compat_matrix", ("ascend_doctor", "runtime_sim")),
    ("runtime_sim", ("ascend_doctor",)),
])
def test_libraries_stay_below_the_doctor(package, forbidden):
    bad = [f"{path.relative_to(REPO)}:{line}: {target}"
           for module, path in _modules(package) for target, line, _ in _imports(module, path)
           if target.split(".")[0] in forbidden]
    assert not bad, f"{package} must not import {forbidden}:\n" + "\n".join(bad)


def test_the_checker_sees_an_upward_import(tmp_path):
    """The import reader resolves relative imports, so an upward edge cannot hide behind dots."""
    pkg = tmp_path / "ascend_doctor" / "parsers"
    pkg.mkdir(parents=True)
    mod = pkg / "x.py"
    mod.write_text("def f():\n    from ..triage import engine\n    from . import plog\n", encoding="utf-8")
    (pkg / "plog.py").write_text("", encoding="utf-8")
    got = list(_imports("ascend_doctor.parsers.x", mod))
    assert ("ascend_doctor.triage", 2, False) in got
    assert ("ascend_doctor.parsers.plog", 3, False) in got
    layer = _layer_of()
    assert layer[_unit("ascend_doctor.triage")] > layer[_unit("ascend_doctor.parsers.x")]
