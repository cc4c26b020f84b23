"""Scripts run inside the *target* Python interpreter (``check --python``).

They are plain files executed with ``python -c <source>``: standard library only,
syntax that Python 3.6 still accepts, one JSON object on stdout.
"""
from __future__ import annotations

from pathlib import Path

_HERE = Path(__file__).parent


def probe_source(name: str) -> str:
    """Source text of a probe script in this package (``stack`` or ``runtime``)."""
    return (_HERE / f"{name}_probe.py").read_text(encoding="utf-8")
