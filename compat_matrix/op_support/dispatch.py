"""Which PyTorch kernels an aten op has, from a table generated from PyTorch itself.

An op missing from a torch_npu release's list is not automatically unsupported:
if PyTorch has a Composite kernel for it, that kernel runs on
the NPU and calls other ops; only an op with backend-only kernels (CPU/CUDA/Meta) and no
NPU kernel goes to the CPU fallback. The table was made with
``python -m tools.op_regenerate dispatch`` (see ``how`` in the file) for
the PyTorch version named in ``torch``; a manifest recorded with torch carries the same
facts for its own torch version and takes precedence.
"""
from __future__ import annotations

import gzip
import json
from dataclasses import dataclass
from typing import Dict, Optional

from compat_matrix.op_support.store import DATA_DIR, DataError, normalize_op_name

_FILE = DATA_DIR / "aten_dispatch.json.gz"
_table: Optional[Dict[str, str]] = None
_meta: Dict[str, str] = {}

LETTERS = {
    "I": "CompositeImplicitAutograd",
    "E": "CompositeExplicitAutograd",
    "N": "CompositeExplicitAutogradNonFunctional",
    "C": "CPU",
    "M": "Meta",
    "U": "CUDA",
}
KEY_TO_LETTER = {v: k for k, v in LETTERS.items()}


@dataclass(frozen=True)
class DispatchInfo:
    op: str
    keys: frozenset  # dispatch key names that have a kernel
    torch: str  # the PyTorch version the facts come from

    @property
    def composite_implicit(self) -> bool:
        """Decomposed above the backend: on any device its children run instead."""
        return "CompositeImplicitAutograd" in self.keys

    @property
    def composite_explicit(self) -> bool:
        """Has a device-generic kernel that runs on a backend without its own kernel."""
        return bool({"CompositeExplicitAutograd", "CompositeExplicitAutogradNonFunctional"} & self.keys)

    @property
    def composite(self) -> bool:
        return self.composite_implicit or self.composite_explicit

    @property
    def backend_only(self) -> bool:
        """Only device kernels (CPU/CUDA/Meta): without an NPU kernel it falls back to the CPU."""
        return not self.composite

    def to_json(self) -> Dict[str, object]:
        return {"op": self.op, "keys": sorted(self.keys), "torch": self.torch}


def _load() -> Dict[str, str]:
    global _table
    if _table is None:
        try:
            with gzip.open(_FILE, "rt", encoding="utf-8") as fh:
                doc = json.load(fh)
        except (OSError, ValueError) as exc:
            raise DataError(f"aten dispatch table unreadable: {_FILE}: {exc}") from exc
        _meta.update({"torch": doc["torch"], "how": doc["how"]})
        _table = dict(doc["ops"])
    return _table


def table_torch_version() -> str:
    _load()
    return _meta["torch"]


def how_generated() -> str:
    _load()
    return _meta["how"]


def info(op: str) -> Optional[DispatchInfo]:
    """Kernels of an aten op per the shipped table; None if that PyTorch does not know the op."""
    key = normalize_op_name(op)
    letters = _load().get(key)
    if letters is None:
        return None
    return DispatchInfo(op=key, keys=frozenset(LETTERS[c] for c in letters), torch=_meta["torch"])


def from_keys(op: str, keys, torch: str) -> DispatchInfo:
    """Build the same record from facts a recorder read off a live dispatcher."""
    return DispatchInfo(op=normalize_op_name(op), keys=frozenset(keys), torch=torch)
