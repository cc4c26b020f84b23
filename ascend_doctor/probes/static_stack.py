"""The Python stack of a tree that is not trusted to run: read from files, nothing executed.

Without ``--trust-root`` the tree's ``python3`` must not run here, so the versions come
from what pip leaves on disk: ``<name>-<version>.dist-info/METADATA`` (and ``.egg-info``)
in the site directories such an interpreter would use -- ``<prefix>/lib/pythonX.Y/
site-packages`` of the interpreter's own prefix (a venv or conda env), the system
``/usr/local/lib/pythonX.Y/{site,dist}-packages`` and ``/usr/lib/python3/dist-packages``
(Debian), and the judged ``PYTHONPATH``. The Python version is the ``X.Y`` of the
``lib/pythonX.Y`` directory next to the interpreter (or of the interpreter's file name),
when the tree shows one. Each METADATA is read through the Host (re-rooted, size-capped).
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Dict, List, Optional

from ..host import ReadError
from .stack_probe import WANTED, norm

_PYDIR = re.compile(r"^python(3\.\d{1,2})$")
_METADATA_LIMIT = 64 << 10


@dataclass
class StaticStack:
    python: Optional[str]  # X.Y, or None when the tree does not show it
    packages: Dict[str, Dict[str, str]] = field(default_factory=dict)
    searched: List[str] = field(default_factory=list)


def _headers(text: str) -> Dict[str, str]:
    out: Dict[str, str] = {}
    for line in text.splitlines():
        if not line.strip():
            break
        key, sep, value = line.partition(":")
        if sep and key in ("Name", "Version") and key not in out:
            out[key] = value.strip()
    return out


def site_dirs(host, interpreter: Optional[str]) -> List[str]:
    """Site directories to read, most specific first (judged-machine paths that exist)."""
    prefixes: List[str] = []
    if interpreter and interpreter.startswith("/"):
        real = host.realpath(interpreter)
        for path in (interpreter, real):
            parent = path.rsplit("/", 2)[0] if path.count("/") >= 2 else "/"
            if parent and parent not in prefixes:
                prefixes.append(parent or "/")
    for p in ("/usr/local", "/usr"):
        if p not in prefixes:
            prefixes.append(p)
    dirs: List[str] = []
    for entry in (host.env.get("PYTHONPATH") or "").split(":"):
        if entry.startswith("/") and host.is_dir(entry):
            dirs.append(entry.rstrip("/"))
    for prefix in prefixes:
        lib = (prefix.rstrip("/") or "") + "/lib"
        for name in sorted(host.listdir(lib), reverse=True):
            if _PYDIR.match(name):
                for sub in ("site-packages", "dist-packages"):
                    d = f"{lib}/{name}/{sub}"
                    if host.is_dir(d):
                        dirs.append(d)
        d = f"{lib}/python3/dist-packages"
        if host.is_dir(d):
            dirs.append(d)
    seen = set()
    return [d for d in dirs if not (d in seen or seen.add(d))]


def python_version(host, interpreter: Optional[str]) -> Optional[str]:
    if not interpreter or not interpreter.startswith("/"):
        return None
    real = host.realpath(interpreter)
    m = _PYDIR.match(real.rsplit("/", 1)[-1])
    if m:
        return m.group(1)
    prefix = real.rsplit("/", 2)[0] if real.count("/") >= 2 else ""
    found = [m.group(1) for m in (_PYDIR.match(n) for n in host.listdir((prefix or "") + "/lib")) if m]
    if len(found) == 1:
        return found[0]
    return None


def read_static_stack(host, interpreter: Optional[str]) -> StaticStack:
    stack = StaticStack(python=python_version(host, interpreter))
    for d in site_dirs(host, interpreter):
        stack.searched.append(d)
        for item in host.listdir(d):
            if item.endswith(".dist-info"):
                meta = f"{d}/{item}/METADATA"
            elif item.endswith(".egg-info"):
                meta = f"{d}/{item}/PKG-INFO" if host.is_dir(f"{d}/{item}") else f"{d}/{item}"
            else:
                continue
            try:
                head = _headers(host.read_text(meta, _METADATA_LIMIT))
            except ReadError:
                head = {}
            name, version = head.get("Name"), head.get("Version")
            if not name:
                stem = item.rsplit(".", 1)[0]
                name, _, version = stem.partition("-")
            key = norm(name)
            if key in WANTED and key not in stack.packages:
                stack.packages[key] = {"version": version or "", "location": d}
    return stack


__all__ = ["StaticStack", "read_static_stack", "site_dirs", "python_version"]
