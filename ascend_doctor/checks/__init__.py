"""Checks, one module per area; ``base`` holds the protocol and the registry."""
from __future__ import annotations

import importlib

# Area modules in the order their groups are reported; optional ones may be absent.
AREA_MODULES = (
    "container",
    "driver",
    "devices",
    "toolkit",
    "environment",
    "python_stack",
    "compat_checks",
    "runtime",
    "logs",
)

_loaded = [False]


def load_all() -> None:
    if _loaded[0]:
        return
    for name in AREA_MODULES:
        try:
            importlib.import_module(f"{__name__}.{name}")
        except ModuleNotFoundError as exc:
            if exc.name != f"{__name__}.{name}":
                raise
    _loaded[0] = True
