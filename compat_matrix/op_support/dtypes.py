"""What the data knows about an op's dtypes on the NPU.

The torch_npu op lists carry no dtype information: per-op dtype limits
live in the CANN aclnn documentation, per chip and per CANN version, and are not part of
this data set yet. What is known for every op: NPU kernels are built for
float16/bfloat16/float32 and integer types, so float64 and complex inputs deserve a
warning whatever the op. ``judge`` returns ``(supported, note)``;
``supported`` stays None because no per-op list says yes or no.
"""
from __future__ import annotations

from typing import Optional, Tuple

WIDE_OR_COMPLEX = frozenset({"float64", "double", "complex32", "complex64", "complex128", "cdouble", "cfloat"})


def normalize_dtype(dtype: str) -> str:
    """'torch.float64' / 'Float64' -> 'float64'."""
    return dtype.replace("torch.", "").strip().lower()


def judge(op: str, dtype: str, impl: Tuple[str, ...], release: object) -> Tuple[Optional[bool], Optional[str]]:
    """Is ``dtype`` known to work for ``op`` on this release? (None = the data does not say)."""
    name = normalize_dtype(dtype)
    if not impl or set(impl) <= {"tocpu", "unsupported"}:
        return None, None  # no NPU kernel: the dtype question does not arise
    if name in WIDE_OR_COMPLEX:
        return None, f"{name} input: NPU kernels are mostly built for float16/bfloat16/float32; check {op}'s {name} support"
    return None, None
