"""Which aten / torch_npu ops each torch_npu release runs on the NPU, and by which path.

Data: one small gzip'd JSON per torch_npu release branch (``data/releases/``), reduced from
Ascend/op-plugin ``op_plugin_functions.yaml`` at the commit each Ascend/pytorch release
branch pins, plus torch_npu's own ``npu_native_functions.yaml``; provenance (repo, path,
commit) per file in ``data/index.json``. Rebuild with ``python -m
tools.op_regenerate`` (see that module). Nothing here imports torch or
ascend_doctor; files are read on first use.

API::

    from compat_matrix import op_support as ops

    ops.releases() -> List[Release]                 # every branch with data, oldest line first
    ops.resolve("2.1.0.post10") -> Resolution       # wheel / release line / branch / CANN -> branch
    ops.resolve("7.2.0", torch="2.1").branch        # 'v2.1.0-7.2.0' (torch picks among one line)
    ops.load_release("8.3.RC1") -> OpSupport        # any form resolve() accepts
    sup.status("aten::matmul") -> OpStatus          # .kind: both|op_api|acl_op|torch_npu|other|
                                                    #        tocpu|unsupported|absent; .npu_kernel; .path
    sup.status("aten::gelu", dtype="float64")       # .dtype_supported (None = unknown), .dtype_note
    ops.dispatch_info("aten::argmax") -> DispatchInfo | None
                                                    # PyTorch kernels: .composite_implicit,
                                                    # .composite_explicit, .backend_only
    ops.known_versions() -> str                     # one line, for error messages

Errors: ``UnknownVersionError`` (a ``ValueError``; one-line message listing the known
versions) for a version the data cannot answer for; ``DataError`` if the shipped files are
damaged.

Op names are ``OpOverload.name()`` keys (``aten::add.Tensor``, ``aten::addmm``,
``npu::npu_fusion_attention``); ``aten.add.Tensor`` and ``addmm.default`` are accepted.
"absent" means the release registers no NPU kernel: the op is then decomposed by PyTorch
(``dispatch_info(op).composite``) or falls back to the CPU (torch >= 2.1) / fails
(torch <= 2.0, ``Release.has_cpu_fallback``).
"""
from __future__ import annotations

from typing import Optional

from compat_matrix.op_support.dispatch import DispatchInfo
from compat_matrix.op_support.dispatch import info as dispatch_info
from compat_matrix.op_support.resolve import Resolution, UnknownVersionError, known_versions, resolve
from compat_matrix.op_support.store import (
    DataError,
    OpStatus,
    OpSupport,
    Provenance,
    Release,
    load_branch,
    normalize_op_name,
    releases,
)


def load_release(version: str, torch: Optional[str] = None) -> OpSupport:
    """The op list answering for ``version`` (branch, wheel, release line or CANN version)."""
    return load_branch(resolve(version, torch=torch).data_key)


__all__ = [
    "DataError",
    "DispatchInfo",
    "OpStatus",
    "OpSupport",
    "Provenance",
    "Release",
    "Resolution",
    "UnknownVersionError",
    "dispatch_info",
    "known_versions",
    "load_branch",
    "load_release",
    "normalize_op_name",
    "releases",
    "resolve",
]
