"""torch_npu as seen from a Python script: the calls that touch the NPU, and the exact
console text each failure produces.

``TorchNpu`` wraps an ``AclRuntime``; every failure becomes an ``NpuError`` whose
``console`` is what the user's terminal showed. Memory goes through a caching
allocator when one is given (``runtime_sim.allocator``), else straight to the driver
(what ``PYTORCH_NO_NPU_MEMORY_CACHING=1`` does).
"""
from __future__ import annotations

from typing import Any, Dict, List, Optional

from runtime_sim.plog import line as L
from runtime_sim.runtime import console
from runtime_sim.runtime.acl import AclRuntime, Stream, device_failures, kernel_faults
from runtime_sim.runtime.errors import AclError, NpuError
from runtime_sim.runtime.machine import Machine
from runtime_sim.runtime.process import SimProcess

# The call torch_npu makes when Python waits for a stream: a D2H copy for .item() / .cpu()
# (https://github.com/Ascend/pytorch/issues/66) or torch.npu.synchronize()
# (https://github.com/vllm-project/vllm-ascend/issues/7676).
SYNC_SITES = {
    "copy": ("operator()", 25, "c10_npu::acl::AclrtSynchronizeStreamWithTimeout(copy_stream)"),
    "synchronize": ("synchronize", 361, "c10_npu::acl::AclrtSynchronizeStreamWithTimeout(stream())"),
}


class TorchNpu:
    """The NPU side of one Python process running torch + torch_npu."""

    def __init__(self, process: SimProcess, machine: Optional[Machine] = None,
                 allocator: Any = None) -> None:
        self.p = process
        self.acl = AclRuntime(process, machine)
        self.allocator = None
        self.device: int = -1
        self._tensors: Dict[int, Any] = {}
        self._next_tensor = 0
        self.fallback_warned: List[str] = []
        if allocator is not None:
            self.attach_allocator(allocator)

    def attach_allocator(self, allocator: Any, tick_us: Optional[int] = None) -> None:
        """Route tensor memory through ``allocator`` (``runtime_sim.allocator``) and log its
        events the way torch_npu does: the cache-flush retry and the OOM text go to plog as
        APP ERROR lines (ASCEND_LOGE). ``tick_us`` stamps events by the allocator's own
        tick (for trace replays that bypass this object); default: the process clock."""
        self.allocator = allocator
        p = self.p
        start = p.clock.now

        def on_event(ev: Any) -> None:
            if ev.kind not in ("retry", "oom"):
                return
            ts = p.clock.now if tick_us is None else start + ev.tick * tick_us
            p.plog(ev.level, "APP", "log_inner.cpp:77", L.app_pta(
                p.tid_main, "%s:malloc:%d" % (console.COMPILER_DEPEND, 1147 if ev.kind == "retry" else 1203),
                ev.text), ts)

        allocator.add_listener(on_event)

    @property
    def compact(self) -> bool:
        return self.p.env.get("TORCH_NPU_COMPACT_ERROR_OUTPUT", "0").strip() == "1"

    def where(self) -> console.Where:
        return console.Where(self.p.pid, self.device, self.p.rank)

    # --- devices ----------------------------------------------------------------------
    def init(self) -> None:
        """``import torch_npu`` + first NPU use: ACL initialises."""
        self.acl.init()

    def set_device(self, index: int) -> None:
        """``torch.npu.set_device(index)``."""
        self.acl.init()
        try:
            self.acl.set_device(index)
        except AclError as err:
            spec = device_failures()[err.fault]
            surface = spec["surface"]
            text = console.check_error(
                self.p.stack, surface["ctx"], int(surface["line"]), surface["call"],
                int(surface["code"]), self.p.clock.now, self.where(), self.p.take_messages(),
                compact=self.compact)
            raise NpuError(text, "RuntimeError", err.code, spec["category"],
                           {"fault": err.fault, "device": index}) from None
        self.device = index

    # --- kernels --------------------------------------------------------------------
    def stream(self) -> Stream:
        return self.acl.default_stream()

    def launch(self, op_type: str, kernel: str, duration_us: int,
               stream: Optional[Stream] = None, fault: Optional[str] = None) -> int:
        """An op's kernel goes to the device; failures show up at the next sync."""
        return self.acl.launch(kernel, stream or self.stream(), duration_us, op_type=op_type,
                               fault=fault)

    def synchronize(self, stream: Optional[Stream] = None, site: str = "copy") -> None:
        """Python waits for the NPU (``.item()``, ``.cpu()``, ``torch.npu.synchronize()``)."""
        stream = stream or self.stream()
        try:
            self.acl.synchronize_stream(stream)
        except AclError as err:
            ctx, ctx_line, call = SYNC_SITES[site]
            msgs = self.p.take_messages()
            text = console.check_error(self.p.stack, ctx, ctx_line, call, err.code,
                                       self.p.clock.now, self.where(), msgs, compact=self.compact)
            raise NpuError(text, "RuntimeError", err.code, "aicore_exec",
                           {"fault": err.fault}) from None

    def queue_error(self, op_type: str) -> NpuError:
        """The task queue found a failed task while launching the next op (asynchronous
        "Inner error"): the APP line in plog and the console text, as an ``NpuError``."""
        self.acl.pump()
        p = self.p
        p.plog("ERROR", "APP", "log_inner.cpp:77", L.app_pta(
            p.tid_queue, "%s:MakeSureQueueEmpty:343" % console.COMPILER_DEPEND,
            '"Inner error happened with CAN_EXIT status, detail: the current working operator '
            'name is %s"' % op_type))
        text = console.async_inner_error(p.stack, op_type, p.clock.now, self.where(),
                                         p.take_messages())
        return NpuError(text, "RuntimeError", None, "aicore_exec", {"op": op_type})

    # --- memory -----------------------------------------------------------------------
    def empty(self, nbytes: int, stream_id: int = 0) -> int:
        """Allocate a tensor's storage; returns a handle for ``release``."""
        handle = self._next_tensor
        self._next_tensor += 1
        if self.allocator is None:
            try:
                self._tensors[handle] = ("raw", self.acl.malloc(nbytes))
            except AclError as err:
                text = console.check_error(
                    self.p.stack, "malloc", 94, "aclrtMalloc(&ptr, size, ACL_MEM_MALLOC_HUGE_FIRST)",
                    err.code, self.p.clock.now, self.where(), self.p.take_messages(),
                    compact=self.compact, exc_type=self.p.stack.oom_exception)
                raise NpuError(text, self.p.stack.oom_exception, err.code, "oom_capacity") from None
            return handle
        self.p.clock.advance(self.p.rng.randrange(2, 12))
        try:
            block = self.allocator.malloc(nbytes, stream_id)
        except Exception as err:  # the allocator's OOM carries the real text
            text = getattr(err, "text", None)
            if text is None:
                raise
            exc_type = getattr(err, "python_type", "RuntimeError")
            raise NpuError("%s: %s" % (exc_type, text), exc_type, None, "oom",
                           {"fields": dict(getattr(err, "fields", {}) or {}),
                            "exception": exc_type}) from None
        self._tensors[handle] = ("alloc", block)
        return handle

    def release(self, handle: int) -> None:
        kind, obj = self._tensors.pop(handle)
        if kind == "raw":
            self.acl.free(obj)
        else:
            self.allocator.free(obj)


def fault_category(kind: str) -> str:
    if kind not in kernel_faults():
        raise KeyError(kind)
    return "aicore_exec"
