"""One version grammar: no module orders versions by hand beside compat_matrix.versions.

The usual shapes of a private version orderer are caught from the syntax tree, not by
grepping text: numbers read from the pieces of ``x.split(".")`` (``tuple(int(p) for p in
v.split("."))``, ``parts = v.split("."); int(parts[0])``) and ``packaging.version`` used
directly. Each exemption says why it is not a version.
"""
from __future__ import annotations

import ast
import functools
from pathlib import Path
from typing import Iterator, List, Set, Tuple

import pytest

REPO = Path(__file__).resolve().parents[2]
PACKAGES = ("ascend_doctor", "compat_matrix", "runtime_sim", "tools")
GRAMMAR = "compat_matrix/versions.py"

# (file, function) -> why the dotted numbers there are not versions
EXEMPT = {
    ("ascend_doctor/bundle/redact.py", "_ipv4"): "IPv4 octets",
}
# stand-ins run inside the simulated interpreter (python -I -S): they cannot import the
# package, and they copy what real torch / torch_npu code does
EXEMPT_DIRS = ("runtime_sim/host/standins/",)


def _files() -> Iterator[Path]:
    for pkg in PACKAGES:
        for path in sorted((REPO / pkg).rglob("*.py")):
            rel = path.relative_to(REPO).as_posix()
            if rel != GRAMMAR and not rel.startswith(EXEMPT_DIRS):
                yield path


def _is_dot_split(node: ast.AST) -> bool:
    return (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in ("split", "rsplit")
            and bool(node.args) and isinstance(node.args[0], ast.Constant) and node.args[0].value == ".")


def _int_calls(node: ast.AST) -> Iterator[ast.Call]:
    for sub in ast.walk(node):
        if isinstance(sub, ast.Call) and isinstance(sub.func, ast.Name) and sub.func.id == "int":
            yield sub


def _names(node: ast.AST) -> Set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}


def _split_of(value: ast.AST) -> bool:
    """x.split(".") or x.split(".")[...] (a slice of the pieces)."""
    while isinstance(value, ast.Subscript):
        value = value.value
    return _is_dot_split(value)


_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)


def _own(scope: ast.AST) -> Iterator[ast.AST]:
    """The nodes of one scope, without those of the functions defined inside it."""
    todo = list(ast.iter_child_nodes(scope))
    while todo:
        node = todo.pop()
        yield node
        if not isinstance(node, _SCOPES):
            todo.extend(ast.iter_child_nodes(node))


def _findings(tree: ast.AST) -> List[Tuple[str, int, str]]:
    out: List[Tuple[str, int, str]] = []
    scopes = [n for n in ast.walk(tree) if isinstance(n, _SCOPES)]
    scopes.append(tree)  # module level
    for scope in scopes:
        name = getattr(scope, "name", "<lambda>" if isinstance(scope, ast.Lambda) else "<module>")
        # 1. int() over the pieces of a "." split, inside one comprehension / generator
        for comp in _own(scope):
            if isinstance(comp, (ast.GeneratorExp, ast.ListComp, ast.SetComp)):
                if any(_split_of(g.iter) for g in comp.generators) and any(True for _ in _int_calls(comp.elt)):
                    out.append((name, comp.lineno, "int() over the pieces of split('.')"))
        # 2. pieces = v.split("."), then int(pieces[...]) or a, b = v.split(".")[:2], then int(a)
        pieces: Set[str] = set()
        for node in _own(scope):
            if isinstance(node, ast.Assign) and _split_of(node.value):
                for target in node.targets:
                    pieces |= _names(target)
        for call in (n for n in _own(scope) if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id == "int"):
            if call.args and _names(call.args[0]) & pieces:
                out.append((name, call.lineno, "int() of a piece of split('.')"))
        # 3. int(x) for x in v.split(".") written as a map
        for node in _own(scope):
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "map"
                    and len(node.args) == 2 and isinstance(node.args[0], ast.Name) and node.args[0].id == "int"
                    and _split_of(node.args[1])):
                out.append((name, node.lineno, "map(int, split('.'))"))
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module == "packaging.version":
            out.append(("<import>", node.lineno, "packaging.version used directly"))
        if isinstance(node, ast.Import) and any(a.name == "packaging.version" for a in node.names):
            out.append(("<import>", node.lineno, "packaging.version used directly"))
    return out


@functools.lru_cache(maxsize=1)
def _scan() -> Tuple[Tuple[str, str, int, str], ...]:
    """(file, function, line, what) for every package file; a file without a '.' string
    constant or a packaging import cannot match and is not parsed."""
    out = []
    for path in _files():
        rel = path.relative_to(REPO).as_posix()
        src = path.read_text(encoding="utf-8")
        if '"."' not in src and "'.'" not in src and "packaging" not in src:
            continue
        for func, line, what in sorted(set(_findings(ast.parse(src, filename=rel)))):
            out.append((rel, func, line, what))
    return tuple(out)


def _all_findings() -> List[str]:
    return ["%s:%d (%s): %s" % (rel, line, func, what) for rel, func, line, what in _scan() if (rel, func) not in EXEMPT]


def test_no_private_version_ordering():
    found = _all_findings()
    assert not found, ("order versions with compat_matrix.versions (parse_version(text, kind), .series, "
                       ".base, .line_key) instead of by hand:\n  " + "\n  ".join(found))


@pytest.mark.parametrize("src", [
    "def key(v):\n    return tuple(int(p) for p in v.split('.'))\n",
    "def key(v):\n    parts = v.split('.')\n    return int(parts[0]), int(parts[1])\n",
    "def key(v):\n    major, minor = v.split('.')[:2]\n    return int(major), int(minor)\n",
    "key = lambda t: tuple(int(x) for x in t.split('.'))\n",
    "def key(v):\n    return list(map(int, v.split('.')))\n",
    "from packaging.version import Version\n",
])
def test_the_detector_catches_the_usual_shapes(src):
    assert _findings(ast.parse(src))


@pytest.mark.parametrize("src", [
    "def f(key):\n    return key.split('.')[0] in ('a', 'b')\n",
    "def f(text):\n    return len(text.split('.')[1])\n",
    "def f(v):\n    return parse_version(v, 'torch').series\n",
])
def test_the_detector_leaves_other_code_alone(src):
    assert not _findings(ast.parse(src))


def test_exemptions_are_still_needed():
    """An exemption whose code no longer matches is stale and goes."""
    live = {(rel, func) for rel, func, _, _ in _scan()}
    assert set(EXEMPT) <= live, set(EXEMPT) - live
