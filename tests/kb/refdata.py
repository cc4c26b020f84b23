"""The research notes' YAML tables (outside the repository), parsed once per test run."""
from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

REFERENCE = Path("/work/shared/reference")
HAS_REF = (REFERENCE / "acl_error_codes.yaml").is_file() and (REFERENCE / "cann_error_codes.yaml").is_file()


@functools.lru_cache(maxsize=None)
def load(name: str) -> Any:
    import yaml

    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    with open(REFERENCE / name, encoding="utf-8") as fh:
        return yaml.load(fh, Loader=loader)
