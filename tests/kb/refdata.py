"""The code tables in data/reference/ (see its README), parsed once per test run."""
from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

REFERENCE = Path(__file__).parent / "data" / "reference"


@functools.lru_cache(maxsize=None)
def load(name: str) -> Any:
    import yaml

    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    with open(REFERENCE / name, encoding="utf-8") as fh:
        return yaml.load(fh, Loader=loader)
