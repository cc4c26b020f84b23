"""An ACL-like runtime on a simulated clock: devices, contexts, streams, events, memory
and kernel launches, failing the way CANN fails and logging the way CANN logs.

Time model: the host clock (``process.clock``) moves with every call; each stream
has a task queue whose tasks run back to back on the device (``tail_us`` is when its
last task ends). ``record_event`` stamps an event with its stream's tail;
``stream_wait_event`` keeps later tasks of another stream from starting earlier — the
cross-stream dependency. Synchronising moves the host clock to the stream's tail.

A kernel launched with a fault fails on the device at a known time; the runtime's
error thread writes its report to plog at that time (``pump``) and the host learns
about it at its next synchronisation, as on real hardware.
"""
from __future__ import annotations

import functools
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

from runtime_sim.plog import line as L
from runtime_sim.runtime.errors import AclError
from runtime_sim.runtime.machine import DeviceSpec, Machine
from runtime_sim.runtime.process import SimProcess

_DATA = Path(__file__).with_name("data")

# Memory the runtime itself takes on a device when it is opened (contexts, default
# streams, workspace); a fixed, documented simplification.
RUNTIME_RESERVED = 1536 * 1024 * 1024


@functools.lru_cache(maxsize=None)
def _data(name: str) -> Dict[str, Any]:
    import yaml  # lazy

    with open(_DATA / name, encoding="utf-8") as fh:
        return yaml.safe_load(fh)


def device_failures() -> Dict[str, Any]:
    return _data("device_failures.yaml")["failures"]


def kernel_faults() -> Dict[str, Any]:
    return _data("kernel_faults.yaml")["faults"]


@dataclass
class Context:
    """An ACL context: the device it belongs to and the streams made in it."""

    id: int
    device: int
    default: bool = False


@dataclass
class Event:
    id: int
    ts_us: Optional[int] = None
    stream_id: Optional[int] = None


@dataclass
class Fault:
    """A kernel that failed on the device."""

    kind: str
    code: int
    ts_us: int
    device: int
    stream_id: int
    task_id: int
    kernel: str
    op_type: str
    reported: bool = False


@dataclass
class Stream:
    id: int
    device: int
    tail_us: int
    floor_us: int = 0
    next_task: int = 0
    failed: Optional[Fault] = None


@dataclass
class DeviceState:
    logical: int
    spec: DeviceSpec
    used_bytes: int = 0
    allocations: Dict[int, int] = field(default_factory=dict)
    next_addr: int = 0x12C0C0000000
    streams: Dict[int, Stream] = field(default_factory=dict)
    fault: Optional[Fault] = None
    serial: int = 0

    @property
    def total(self) -> int:
        return self.spec.hbm_bytes

    @property
    def free(self) -> int:
        return max(0, self.spec.hbm_bytes - self.spec.used_by_others - RUNTIME_RESERVED
                   - self.used_bytes)


class AclRuntime:
    """ACL for one process on one ``Machine``."""

    def __init__(self, process: SimProcess, machine: Optional[Machine] = None) -> None:
        self.p = process
        self.machine = machine or Machine()
        self.initialized = False
        self.visible: List[int] = [d.phy_id for d in self.machine.devices]
        self.visible_fault: Optional[str] = None
        self.current: Optional[int] = None
        self.devices: Dict[int, DeviceState] = {}
        self._next_stream = 2
        self._next_event = 0
        self._next_context = 0
        self.contexts: Dict[int, Context] = {}
        self.current_context: Optional[Context] = None
        self._pending: List[Fault] = []

    # --- init and devices -------------------------------------------------------------
    def init(self) -> None:
        """``aclInit``: reads ASCEND_RT_VISIBLE_DEVICES the way the runtime does."""
        if self.initialized:
            return
        self.initialized = True
        p = self.p
        start = p.noise(self.p.noise_device).start(p.clock.now)
        p.clock.advance_to(start)
        raw = p.env.get("ASCEND_RT_VISIBLE_DEVICES")
        physical = len(self.machine.devices)
        if raw is None or raw.strip() == "":
            return
        ids: List[int] = []
        for part in raw.split(","):
            part = part.strip()
            if not part.isdigit():
                self.visible_fault = "visible_out_of_range"
                self.visible = []
                return
            ids.append(int(part))
        if any(i >= physical for i in ids):
            self.visible_fault = "visible_out_of_range"
        elif ids != sorted(ids) or len(set(ids)) != len(ids):
            self.visible_fault = "visible_out_of_order"
        self.visible = [] if self.visible_fault else ids
        if self.visible_fault:
            # The runtime complains while it initialises, long before anyone asks.
            self._log_failure_lines(self.visible_fault, {"visible": raw, "count": physical},
                                    only_first=True)

    def get_device_count(self) -> int:
        self._require_init()
        if self.visible_fault:
            self._fail(self.visible_fault, {"visible": self.p.env.get("ASCEND_RT_VISIBLE_DEVICES", ""),
                                            "count": len(self.machine.devices)},
                       skip_first_line=True)
        return len(self.visible)

    def set_device(self, logical: int) -> None:
        """``aclrtSetDevice``."""
        self._require_init()
        self.pump()
        p = self.p
        p.clock.advance(p.rng.randrange(200, 900))
        count = self.get_device_count()
        if logical < 0 or logical >= count:
            self._fail("invalid_device", {"dev": logical, "count": count})
        spec = self.machine.device(self.visible[logical])
        values = {"dev": logical, "drv_dev": spec.phy_id, "count": count,
                  "size": RUNTIME_RESERVED}
        if spec.open_fault:
            self._fail(spec.open_fault, values)
        if spec.hbm_bytes - spec.used_by_others < RUNTIME_RESERVED:
            self._fail("device_memory_taken", values)
        if logical not in self.devices:
            state = DeviceState(logical, spec)
            self.devices[logical] = state
            p.clock.advance_to(p.noise(logical).open(p.clock.now))
            default = Stream(self._new_stream_id(), logical, p.clock.now)
            state.streams[default.id] = default
            self.current_context = self._new_context(logical, default=True)
        self.current = logical

    # --- contexts ---------------------------------------------------------------------
    def _new_context(self, logical: int, default: bool = False) -> Context:
        self._next_context += 1
        ctx = Context(self._next_context, logical, default)
        self.contexts[ctx.id] = ctx
        return ctx

    def create_context(self, logical: int) -> Context:
        """``aclrtCreateContext``: opens the device if needed, makes the context current."""
        if logical not in self.devices:
            self.set_device(logical)
        ctx = self._new_context(logical)
        self.set_context(ctx)
        return ctx

    def set_context(self, ctx: Context) -> None:
        """``aclrtSetCurrentContext``: later calls act on the context's device."""
        if ctx.id not in self.contexts:
            raise AclError(107017, "aclrtSetCurrentContext", "invalid resource handle")
        self.current_context = ctx
        self.current = ctx.device

    def destroy_context(self, ctx: Context) -> None:
        if ctx.default or self.contexts.pop(ctx.id, None) is None:
            raise AclError(107017, "aclrtDestroyContext", "invalid resource handle")
        if self.current_context is ctx:
            self.current_context = None

    def _require_init(self) -> None:
        if not self.initialized:
            raise AclError(100001, "aclrtSetDevice", "ACL uninitialized")

    def _state(self) -> DeviceState:
        if self.current is None or self.current_context is None:
            raise AclError(107002, "aclrtGetCurrentContext", "the context is empty")
        return self.devices[self.current]

    def _new_stream_id(self) -> int:
        sid = self._next_stream
        self._next_stream += 1
        return sid

    # --- streams and events -------------------------------------------------------
    def default_stream(self) -> Stream:
        return min(self._state().streams.values(), key=lambda s: s.id)

    def create_stream(self) -> Stream:
        state = self._state()
        self.p.clock.advance(self.p.rng.randrange(20, 120))
        stream = Stream(self._new_stream_id(), state.logical, self.p.clock.now)
        state.streams[stream.id] = stream
        return stream

    def create_event(self) -> Event:
        self._next_event += 1
        return Event(self._next_event)

    def record_event(self, event: Event, stream: Stream) -> None:
        """The event completes when everything queued on ``stream`` so far has run."""
        self.p.clock.advance(self.p.rng.randrange(2, 8))
        event.ts_us = max(stream.tail_us, stream.floor_us, self.p.clock.now)
        event.stream_id = stream.id
        stream.next_task += 1

    def stream_wait_event(self, stream: Stream, event: Event) -> None:
        """Later tasks on ``stream`` start after ``event``; an unrecorded event is a no-op."""
        self.p.clock.advance(self.p.rng.randrange(2, 8))
        if event.ts_us is not None:
            stream.floor_us = max(stream.floor_us, event.ts_us)
        stream.next_task += 1

    def query_event(self, event: Event) -> bool:
        self.pump()
        return event.ts_us is not None and event.ts_us <= self.p.clock.now

    # --- kernels ---------------------------------------------------------------------
    def launch(self, kernel: str, stream: Stream, duration_us: int, op_type: str = "",
               fault: Optional[str] = None, fault_after_us: Optional[int] = None) -> int:
        """Queue a kernel; returns its task id. ``fault`` is a key of kernel_faults.yaml."""
        p = self.p
        state = self.devices[stream.device]
        p.clock.advance(p.rng.randrange(3, 15))
        task_id = stream.next_task
        stream.next_task += 1
        if state.fault is not None:
            return task_id  # a faulted device runs nothing more
        start = max(stream.tail_us, stream.floor_us, p.clock.now + p.rng.randrange(2, 12))
        if fault is None:
            stream.tail_us = start + max(1, int(duration_us))
            return task_id
        spec = kernel_faults()[fault]
        after = duration_us if fault_after_us is None else min(fault_after_us, duration_us)
        failure = Fault(fault, int(spec["code"]), start + max(1, int(after)), stream.device,
                        stream.id, task_id, kernel, op_type or kernel.split("_")[0])
        stream.tail_us = failure.ts_us
        stream.failed = failure
        state.fault = failure
        self._pending.append(failure)
        return task_id

    def pump(self, until_us: Optional[int] = None) -> None:
        """Write the reports of device failures that happened up to ``until_us``."""
        now = self.p.clock.now if until_us is None else until_us
        due = [f for f in self._pending if f.ts_us <= now and not f.reported]
        for fault in sorted(due, key=lambda f: f.ts_us):
            self._report_device_fault(fault)
            fault.reported = True
        self._pending = [f for f in self._pending if not f.reported]

    def synchronize_stream(self, stream: Stream,
                           api: str = "aclrtSynchronizeStreamWithTimeout") -> None:
        """Wait for ``stream``; raises the device's failure if one happened meanwhile."""
        p = self.p
        state = self.devices[stream.device]
        target = max(stream.tail_us, stream.floor_us, p.clock.now)
        if state.fault is not None:
            target = max(p.clock.now, state.fault.ts_us + p.rng.randrange(300, 2500))
        p.clock.advance_to(target)
        self.pump()
        if state.fault is not None and state.fault.ts_us <= p.clock.now:
            self._fail_sync(state.fault, api)
        p.clock.advance(p.rng.randrange(2, 20))

    def synchronize_device(self) -> None:
        state = self._state()
        for stream in sorted(state.streams.values(), key=lambda s: s.id):
            self.synchronize_stream(stream, api="aclrtSynchronizeDeviceWithTimeout")

    # --- memory -----------------------------------------------------------------------
    def get_mem_info(self) -> Tuple[int, int]:
        """``aclrtGetMemInfo(ACL_HBM_MEM)``: (free, total) of the current device."""
        state = self._state()
        return state.free, state.total

    def malloc(self, nbytes: int) -> int:
        """``aclrtMalloc`` straight from the driver; fails with 207001 when HBM is short."""
        state = self._state()
        p = self.p
        p.clock.advance(p.rng.randrange(5, 60))
        if nbytes > state.free:
            self._fail_malloc(state, nbytes)
        addr = state.next_addr
        state.next_addr += (nbytes + 0x1FFFFF) // 0x200000 * 0x200000 + 0x200000
        state.allocations[addr] = nbytes
        state.used_bytes += nbytes
        return addr

    def free(self, addr: int) -> None:
        state = self._state()
        nbytes = state.allocations.pop(addr)
        state.used_bytes -= nbytes

    # --- failure reporting --------------------------------------------------------
    def _values(self, values: Dict[str, object]) -> Dict[str, object]:
        out = {"pid": self.p.pid, "tid": self.p.tid_main, "dev": "", "drv_dev": "",
               "count": len(self.visible), "visible": self.p.env.get("ASCEND_RT_VISIBLE_DEVICES", ""),
               "size": 0}
        out.update(values)
        return out

    def _log_failure_lines(self, key: str, values: Dict[str, object],
                           only_first: bool = False, skip_first: bool = False) -> None:
        p = self.p
        vals = self._values(values)
        lines = device_failures()[key]["plog"]
        if only_first:
            lines = lines[:1]
        elif skip_first and device_failures()[key].get("at_init"):
            lines = lines[1:]
        for level, module, src, kind, func, msg in lines:
            text = msg.format(**vals)
            if text.startswith("!reason "):
                api, reason = text[len("!reason "):].split("|", 1)
                text = p.reason_text(api, reason)
                src = "error_message_manage.cc:%d" % (65 if p.modern else 53)
            p.clock.advance(p.rng.randrange(8, 90))
            if kind == "tdt":
                body = L.tdt(func, p.tid_main, text)
            elif kind == "drv":
                sub, dfunc = func.split("|")
                body = L.drv(p.pid, p.tid_main, sub, dfunc, text)
            else:
                body = L.tid_func(p.tid_main, func, text, space=(kind == "tid_func_space"))
            p.plog(level, module, src, body)

    def _record_failure_messages(self, key: str, values: Dict[str, object]) -> None:
        p = self.p
        vals = self._values(values)
        for code, text, where in device_failures()[key]["messages"]:
            text = text.format(**vals)
            if text.startswith("!reason "):
                api, reason = text[len("!reason "):].split("|", 1)
                p.record_reason(api, reason)
            elif text.startswith("!call "):
                p.record_call(text[len("!call "):])
            else:
                w = ""
                if where:
                    func, file, line_no = where.split("|")
                    w = L.inner_where(func, file, int(line_no))
                p.record(code, text, w)

    def _fail(self, key: str, values: Dict[str, object], skip_first_line: bool = False) -> None:
        """Log and record the failure ``key`` of device_failures.yaml, then raise."""
        self._log_failure_lines(key, values, skip_first=skip_first_line)
        self._record_failure_messages(key, values)
        spec = device_failures()[key]
        raise AclError(int(spec["code"]), spec["surface"]["call"], fault=key)

    def _fail_malloc(self, state: DeviceState, nbytes: int) -> None:
        p = self.p
        p.plog_func("ERROR", "RUNTIME", "npu_driver_mem.cc:345", "DevMemAlloc",
                    "[drv api] halMemAlloc failed: size=%d, deviceId=%d, drvRetCode=6!"
                    % (nbytes, state.spec.phy_id))
        p.plog_func("ERROR", "RUNTIME", "api_c_memory.cc:62", "rtMalloc",
                    "ErrCode=207001, desc=[driver error:out of memory], InnerCode=0x7020016")
        p.plog_func("ERROR", "ASCENDCL", "memory.cpp:129", "aclMallocMemInner",
                    " [INIT][DEFAULT]alloc device memory failed, runtime result = 207001")
        p.record("EL0004", "Failed to allocate memory.")
        p.record_reason("rtMalloc", "driver error:out of memory")
        p.record_call("alloc device memory failed, runtime result = 207001")
        raise AclError(207001, "aclrtMalloc", "size=%d" % nbytes, fault="device_oom")

    def _core_line(self, fault: Fault, spec: Dict[str, Any], state: DeviceState,
                   err_code: str, error_str: str) -> Tuple[str, Optional[str]]:
        """``The error from device(...)`` and the ``extend info`` line (None in 2024 builds)."""
        rng = self.p.rng
        shape = self.p.shape
        phrase = spec["core_phrase"]["v85" if shape in ("v85", "v92") else
                                     ("ts" if shape in ("legacy", "ts") else "pid")]
        core = rng.randrange(0, 24 if spec["core"] == "aicore" else 48)
        pc = 0x124000000000 + rng.randrange(0, 0x4000000) * 0x1000
        dump = ("pc start: 0x%x, current: 0x%x, vec error info: 0x%x, mte error info: 0x%x, "
                "ifu error info: 0x%x, ccu error info: 0x%x, cube error info: 0, biu error info: 0, "
                "aic error mask: 0x6500020bd00028c, para base: 0x%x" % (
                    pc, pc + rng.randrange(0x40, 0x1000) * 4, rng.randrange(0, 1 << 40),
                    rng.randrange(1 << 36, 1 << 40), rng.randrange(1 << 44, 1 << 50),
                    rng.randrange(1 << 50, 1 << 63), 0x12C100000000 + rng.randrange(0, 1 << 24) * 0x40))
        if shape in ("legacy", "ts"):
            head = ("The error from device(%d), serial number is %d, %s, core id is %d, error code = %s, "
                    "dump info: %s, errorStr: %s" % (state.spec.phy_id, state.serial, phrase, core,
                                                    err_code, dump, error_str))
            return head, None
        head = ("The error from device(chipId:%d, dieId:%d), serial number is %d, %s, core id is %d, "
                "error code = %s, dump info: %s." % (state.spec.chip_id, state.spec.die_id, state.serial,
                                                    phrase, core, err_code, dump))
        extend = ("The extend info: errcode:(%s, 0, 0) errorStr: %s fixp_error0 info: 0x%x, "
                  "fixp_error1 info: 0x%x, fsmId:%d, tslot:%d, thread:0, ctxid:0, blk:%d, sublk:0, "
                  "subErrType:4." % (err_code, error_str, rng.randrange(1 << 24, 1 << 28),
                                     rng.randrange(0x10, 0xff), rng.randrange(0, 2),
                                     rng.randrange(0, 8), rng.randrange(0, 40)))
        return head, extend

    def _report_device_fault(self, fault: Fault) -> None:
        """What the runtime's error thread writes when the device reports ``fault``."""
        p = self.p
        spec = kernel_faults()[fault.kind]
        state = self.devices[fault.device]
        state.serial += 1 + p.rng.randrange(0, 40)
        ts = fault.ts_us + p.rng.randrange(40, 400)
        tid = p.tid_report
        dev = state.spec.phy_id
        err_code = p.rng.choice(spec["error_codes"])
        error_str = p.rng.choice(spec["error_strs"])
        head, extend = self._core_line(fault, spec, state, err_code, error_str)

        def emit(src: str, func: str, msg: str) -> None:
            nonlocal ts
            p.plog_func("ERROR", "RUNTIME", src, func, msg, ts_us=ts, tid=tid)
            ts += p.rng.randrange(3, 60)

        emit("stars_engine.cc:1548", "ProcLogicCqReport",
             "Task run failed, device_id=%d, stream_id=%d, task_id=%d, sqe_type=0(ffts), "
             "errType=0x1(task exception), sqSwStatus=0" % (dev, fault.stream_id, fault.task_id))
        emit("device_error_core_proc.cc:1060", "PrintCoreInfo", head)
        p.record("EZ9999", head, L.inner_where("PrintCoreInfo", "device_error_core_proc.cc", 645), ts)
        if extend:
            emit("device_error_core_proc.cc:1073", "PrintCoreInfo", extend)
            p.record("EZ9999", extend, L.inner_where("PrintCoreInfo", "device_error_core_proc.cc", 658), ts)
        kernel_err = "Kernel task happen error, retCode=%s, [%s]." % (spec["ret_code"], spec["reason"])
        emit("davinci_kernel_task.cc:1729", "PreCheckTaskErr", kernel_err)
        p.record("EZ9999", kernel_err, L.inner_where("PreCheckTaskErr", "davinci_kernel_task.cc", 1729), ts)
        task_err = "%s, retCode=%s." % (spec["task_word"], spec["ret_code"])
        emit("stream.cc:1475", "GetError", task_err)
        p.record("EZ9999", task_err, L.inner_where("GetError", "stream.cc", 1475), ts)
        kernel_line = ("Aicore kernel execute failed, device_id=%d, stream_id=%d, report_stream_id=%d, "
                       "task_id=%d, flip_num=0, fault kernel_name=%s" % (
                           dev, fault.stream_id, fault.stream_id, fault.task_id, fault.kernel))
        emit("davinic_kernel_task.cc:1143", "PrintErrorInfoForDavinciTask", "[INIT][DEFAULT]" + kernel_line)
        p.record("EZ9999", kernel_line, L.inner_where("GetError", "stream.cc", 1475), ts)

    def _fail_sync(self, fault: Fault, api: str) -> None:
        p = self.p
        spec = kernel_faults()[fault.kind]
        rt_api = "rtStreamSynchronizeWithTimeout" if "Stream" in api else "rtDeviceSynchronizeWithTimeout"
        p.plog_func("ERROR", "RUNTIME", "api_c.cc:1798", rt_api,
                    "ErrCode=%d, desc=[%s], InnerCode=%s" % (fault.code, spec["reason"], spec["inner"]))
        p.plog_func("ERROR", "RUNTIME", "error_message_manage.cc:%d" % (65 if p.modern else 53),
                    "FuncErrorReason", p.reason_text(rt_api, spec["reason"]))
        what = "synchronize stream failed" if "Stream" in api else "wait for compute device to finish failed"
        p.plog_func("ERROR", "ASCENDCL", "stream.cpp:187" if "Stream" in api else "device.cpp:327",
                    api, " %s, runtime result = %d" % (what, fault.code))
        p.record_reason(rt_api, spec["reason"])
        p.record_call("%s, runtime result = %d" % (what, fault.code))
        raise AclError(fault.code, api, fault=fault.kind)
