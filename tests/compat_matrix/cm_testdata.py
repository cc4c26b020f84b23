"""Test-data helpers for tests/compat_matrix (a unique module name: no clash with other areas)."""
from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

DATA = Path(__file__).resolve().parent / "data"


def load_test_data(name: str) -> Any:
    with open(DATA / name, "r", encoding="utf-8") as fh:
        return yaml.safe_load(fh)
