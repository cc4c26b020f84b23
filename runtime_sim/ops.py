"""Running an aten / torch_npu op on the simulated NPU, as the installed versions allow.

What happens to an op is decided by the op-support data of the process's torch_npu
release (``compat_matrix.op_support``):

- an NPU kernel exists -> its kernel is launched (op_api / aclnn first, else acl_op);
  - a dtype outside the aclnn's support list on this chip -> the aclnn parameter check
    fails (161002, ``EZ1001 ... not implemented for DT_X``; data/op_failures.yaml);
  - the op's aclnn is newer than the installed CANN (no op_api kernel in the release
    paired with that CANN) -> with an acl_op kernel, torch_npu logs the DO_COMPATIBILITY
    warning and uses it; without one the call fails with ``aclnnX or
    aclnnXGetWorkspaceSize not in libopapi.so`` (op-plugin op_api_common.h);
- no NPU kernel -> a composite op is decomposed by PyTorch; any other op falls back to
  the CPU with the real one-time warning (torch >= 2.1) or fails (torch <= 2.0,
  op-plugin's ``unsupported`` kernels).
"""
from __future__ import annotations

import functools
import hashlib
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Dict, List, Optional

from runtime_sim.plog import line as L
from compat_matrix.versions import parse_version
from runtime_sim.runtime import console
from runtime_sim.runtime.acl import Stream
from runtime_sim.runtime.errors import NpuError
from runtime_sim.runtime.torch_npu import TorchNpu

_DATA = Path(__file__).with_name("runtime") / "data" / "op_failures.yaml"

DT_NAMES = {
    "float32": "DT_FLOAT", "float": "DT_FLOAT", "float16": "DT_FLOAT16", "half": "DT_FLOAT16",
    "bfloat16": "DT_BFLOAT16", "float64": "DT_DOUBLE", "double": "DT_DOUBLE",
    "int8": "DT_INT8", "uint8": "DT_UINT8", "int16": "DT_INT16", "int32": "DT_INT32",
    "int64": "DT_INT64", "bool": "DT_BOOL", "complex64": "DT_COMPLEX64",
    "complex128": "DT_COMPLEX128",
}


@functools.lru_cache(maxsize=1)
def _failures() -> Dict[str, Any]:
    import yaml  # lazy

    with open(_DATA, encoding="utf-8") as fh:
        return yaml.safe_load(fh)


def dtype_limit(op: str, aclnn: Optional[str], soc: str) -> Optional[Dict[str, Any]]:
    """The real support list of the aclnn ``op`` reaches on ``soc``, if one is known."""
    for row in _failures()["dtype_limits"]:
        if soc in row["soc"] and (row["aclnn"] == aclnn or op in row.get("ops", ())):
            return row
    return None


@dataclass(frozen=True)
class OpOutcome:
    """How one op ran: ``path`` is op_api | acl_op | torch_npu | other | decomposed |
    cpu_fallback | tocpu; ``kernel`` the launched kernel's name (NPU paths)."""

    op: str
    path: str
    kernel: Optional[str] = None
    warned: bool = False


def kernel_name(op_type: str, salt: str) -> str:
    """``Add_ee98c6628030785f610b924ab1557b31_high_performance_210000000``-style names
    (hicann/runtime docs/zh/FAQ sample)."""
    digest = hashlib.md5((op_type + "|" + salt).encode("ascii")).hexdigest()
    return "%s_%s_high_performance_%d" % (op_type, digest, 210000000 + int(digest[:4], 16) % 1000)


def op_type_of(op: str, aclnn: Optional[str]) -> str:
    if aclnn:
        name = aclnn[len("aclnn"):] if aclnn.startswith("aclnn") else aclnn
        return name[len("Inplace"):] if name.startswith("Inplace") and len(name) > 7 else name
    base = op.split("::")[-1].split(".")[0].strip("_")
    return "".join(part.capitalize() for part in base.split("_")) or "Op"


class OpRunner:
    """Runs ops for one ``TorchNpu`` process. ``soc`` is the chip (``Ascend910B2``)."""

    def __init__(self, torch: TorchNpu, soc: Optional[str] = None) -> None:
        from compat_matrix import op_support  # lazy: the data is read on first use

        self.t = torch
        self.p = torch.p
        self.soc = soc or torch.acl.machine.soc
        stack = self.p.stack
        torch_minor = "%d.%d" % parse_version(stack.torch_version, "torch").series
        self.support = _load(stack.line, torch_minor, "release")
        self.release = self.support.release
        self._cann_support = None
        if parse_version(stack.cann, "cann") < parse_version(self.release.cann, "cann"):
            older = _load(stack.cann, torch_minor, "cann")
            if older.release.branch != self.release.branch:
                self._cann_support = older
        self._dispatch = op_support.dispatch_info
        self.warned: List[str] = []

    def run(self, op: str, dtype: str = "float32", duration_us: int = 200,
            stream: Optional[Stream] = None) -> OpOutcome:
        """Run ``op`` once with inputs of ``dtype``; raises ``NpuError`` on failure."""
        status = self.support.status(op)
        key = status.op
        limit = dtype_limit(key, status.aclnn, self.soc)
        dt = DT_NAMES.get(dtype.replace("torch.", ""), dtype.upper())
        if limit is not None and dt not in limit["supported"]:
            self._dtype_failure(key, limit["aclnn"], limit, dt)
        if status.kind == "unsupported":
            self._raise_plain("%s is unsupported!" % key.split("::")[-1], "OPS:NOT_SUPPORT",
                              "unsupported_op", key)
        if status.kind == "tocpu":
            return OpOutcome(key, "tocpu")
        if not status.npu_kernel:
            info = self._dispatch(key)
            if info is not None and info.composite:
                return OpOutcome(key, "decomposed")
            if not self.release.has_cpu_fallback:
                self._raise_plain("%s is unsupported!" % key.split("::")[-1], "OPS:NOT_SUPPORT",
                                  "unsupported_op", key)
            return self._fallback(key)
        path = "op_api" if "op_api" in status.impl else (
            "acl_op" if "acl_op" in status.impl else status.path.split("+")[0])
        if path == "op_api" and status.aclnn:
            if self._aclnn_missing(key):
                if "acl_op" in status.impl:
                    self._compat_warning(status.aclnn, key)
                    path = "acl_op"
                else:
                    self._raise_plain(
                        "%s or %sGetWorkspaceSize not in libopapi.so, or libopapi.so not found."
                        % (status.aclnn, status.aclnn), "OPS:PTR", "version_mismatch", key)
        op_type = op_type_of(key, status.aclnn)
        kernel = kernel_name(op_type, key + dtype)
        self.t.launch(op_type, kernel, duration_us, stream)
        return OpOutcome(key, path, kernel)

    # --- outcomes ----------------------------------------------------------------
    def _aclnn_missing(self, key: str) -> bool:
        if self._cann_support is None:
            return False
        older = self._cann_support.status(key)
        return "op_api" not in older.impl

    def _fallback(self, key: str) -> OpOutcome:
        warned = False
        if key not in self.warned:
            self.warned.append(key)
            if self.p.env.get("TORCH_NPU_WARNING_DISABLE", "0") != "1" and \
                    self.p.env.get("TORCH_NPU_DISABLED_WARNING", "0") != "1":
                self.p.say(console.fallback_warning(self.p.stack, key, self.p.clock.now,
                                                    self.p.rng.randrange(0, 1000)))
                warned = True
        # inputs go to the host and back: the op costs a copy each way
        self.p.clock.advance(self.p.rng.randrange(300, 3000))
        return OpOutcome(key, "cpu_fallback", warned=warned)

    def _compat_warning(self, aclnn: str, key: str) -> None:
        p = self.p
        p.plog("WARNING", "APP", "log_inner.cpp:77", L.app_pta(
            p.tid_queue, "%s:operator():128" % console.COMPILER_DEPEND,
            "%s or %sGetWorkspaceSize not in libopapi.so, or libopapi.so not found. Will call "
            "acl_op::%s" % (aclnn, aclnn, key.split("::")[-1].split(".")[0])))

    def _dtype_failure(self, key: str, aclnn: str, limit: Dict[str, Any], dt: str) -> None:
        p = self.p
        arg = limit["arg"]
        listed = "[%s,]" % ",".join(limit["supported"])
        subject = ("Tensor %s" % arg) if limit.get("style") == "tensor" else arg
        text = "%s not implemented for %s, should be in dtype support list %s." % (subject, dt, listed)
        p.record("EZ1001", text)
        code = int(_failures()["param_invalid_code"])
        out = console.aclnn_error(p.stack, op_ctx(key), 211, aclnn, code, p.clock.now,
                                  self.t.where(), p.take_messages())
        raise NpuError(out, "RuntimeError", code, "unsupported_op",
                       {"op": key, "aclnn": aclnn, "dtype": dt})

    def _raise_plain(self, message: str, errcode: str, category: str, key: str) -> None:
        p = self.p
        lines = ["RuntimeError: %s" % message]
        if p.stack.rules["banner"]:
            lines.append(console.banner(errcode, p.clock.now, self.t.where()))
        raise NpuError("\n".join(lines), "RuntimeError", None, category, {"op": key})


def _load(version: str, torch_minor: str, form: str) -> Any:
    """The op data for ``version`` (a release line or a CANN version); a version without
    data of its own borrows the newest release at or below it (its op set is the closest
    one known), and the oldest one when none is below."""
    from compat_matrix import op_support

    try:
        return op_support.load_release(version, torch=torch_minor)
    except ValueError:
        pass
    kind = "torch_npu_release" if form == "release" else "cann"
    key = parse_version(version, kind)
    rels = op_support.releases()
    pick = lambda r: parse_version(r.release if form == "release" else r.cann, kind)  # noqa: E731
    same_torch = [r for r in rels if r.torch == torch_minor] or rels
    below = [r for r in same_torch if pick(r) <= key]
    chosen = max(below, key=pick) if below else min(same_torch, key=pick)
    return op_support.load_branch(chosen.branch)


def op_ctx(key: str) -> str:
    """The C++ function torch_npu names before ``:build/...``: ``<op>_symint`` style
    (https://github.com/vllm-project/vllm-ascend/issues/6636 ``npu_quant_matmul_symint``)."""
    base = key.split("::")[-1].split(".")[0]
    return re.sub(r"[^0-9A-Za-z_]", "_", base)
