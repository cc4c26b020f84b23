"""The simulated ACL runtime and torch_npu layer: device open failures, streams, events,
device faults, memory — and the console text each failure prints."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from runtime_sim.runtime import (AclError, AclRuntime, DeviceSpec, Machine, NpuError, SimClock,
                                 SimProcess, Stack, TorchNpu)
from runtime_sim.runtime.acl import device_failures

try:
    from plog_samples import parse
except ImportError:
    from tests.runtime_sim.plog_samples import parse

# torch_npu recognises its own errors with this regex (PT torch_npu/utils/_error_code.py)
BANNER = re.compile(r"\[ERROR\] [0-9\-\:]* \(PID:\d*, Device:\-?\d*, RankID:\-?\d*\) ERR\d{5}")
NEW = Stack(cann="8.3.RC1", torch_npu="2.1.0.post17")


def proc(tmp_path: Path, stack: Stack = NEW, env=None, seed: int = 1) -> SimProcess:
    return SimProcess(tmp_path, 528886, "python3", env or {}, stack, SimClock.at("2025-06-24 11:20:41"), seed)


def lines(p: SimProcess):
    p.close()
    out = []
    for path in p.log.paths:
        out.extend(path.read_text().splitlines())
    return out


def normalise(text: str) -> str:
    text = re.sub(r"PID:\s?\d+", "PID:N", text)
    text = re.sub(r"\d{4}-\d\d-\d\d-\d\d:\d\d:\d\d(\.\d{3}\.\d{3})?", "TS", text)
    text = re.sub(r"Device:-?\d+", "Device:D", text)
    return "\n".join(l.rstrip() for l in text.splitlines())


def test_invalid_device_prints_what_the_torch_npu_doc_shows(tmp_path):
    # Ascend/pytorch docs/zh/api/environment_variable/alarm_message_printing/
    # TORCH_NPU_COMPACT_ERROR_OUTPUT.md (torch_npu.npu.set_device(100) on 8 NPUs)
    real = """RuntimeError: Initialize:build/CMakeFiles/torch_npu.dir/compiler_depend.ts:147 NPU function error: c10_npu::SetDevice(device_id_), error code is 107001
[ERROR] 2025-08-06-16:15:27 (PID:2228607, Device:0, RankID:-1) ERR00100 PTA call acl api failed
[Error]: Invalid device ID.
        Check whether the device ID is valid.
EE1001: [PID: 2228607] 2025-08-06-16:15:27.377.593 The argument is invalid.Reason: Set device failed, invalid device, set drv device=100, valid device range is [0, 8)
        Solution: 1.Check the input parameter range of the function. 2.Check the function invocation relationship.
        TraceBack (most recent call last):
        rtSetDevice execute failed, reason=[device id error][FUNC:FuncErrorReason][FILE:error_message_manage.cc][LINE:53]
        open device 100 failed, runtime result = 107001.[FUNC:ReportCallError][FILE:log_inner.cpp][LINE:161]
        ctx is NULL![FUNC:GetDevErrMsg][FILE:api_impl.cc][LINE:6146]
        The argument is invalid.Reason: rtGetDevMsg execute failed, reason=[context pointer null]"""
    p = proc(tmp_path)
    t = TorchNpu(p, Machine.with_devices(8))
    with pytest.raises(NpuError) as info:
        t.set_device(100)
    assert normalise(info.value.console) == normalise(real)
    assert info.value.code == 107001 and info.value.category == "env_path"
    assert BANNER.search(info.value.console)
    # plog got the runtime's view of it
    log = "\n".join(lines(p))
    assert "rtSetDevice:ErrCode=107001, desc=[device id error], InnerCode=0x7010003" in log
    assert "aclrtSetDeviceImpl: open device 100 failed, runtime result = 107001." in log


def test_visible_devices_out_of_order_matches_gpustack_2527(tmp_path):
    # https://github.com/gpustack/gpustack/issues/2527 (vLLM logger prefix removed)
    p = proc(tmp_path, env={"ASCEND_RT_VISIBLE_DEVICES": "0,2,4,6,1,3,5,7"})
    t = TorchNpu(p, Machine.with_devices(8))
    with pytest.raises(NpuError) as info:
        t.set_device(0)
    text = info.value.console.splitlines()
    assert text[0] == ("RuntimeError: init:build/CMakeFiles/torch_npu.dir/compiler_depend.ts:292 NPU function "
                       "error: aclrtGetDeviceCount(&device_count), error code is 207004")
    assert text[2].rstrip() == "[Error]: The device is unavailable."
    assert text[3] == "        Check whether the device is running properly."
    assert re.match(r"EE1001: \[PID: \d+\] \S+ The argument is invalid.Reason: set ASCEND_RT_VISIBLE_DEVICES:"
                    r"0,2,4,6,1,3,5,7 error, it must be configured in ascending order$", text[4])


def test_visible_devices_out_of_range_logs_at_init(tmp_path):
    # https://github.com/gpustack/gpustack/issues/3352
    p = proc(tmp_path, env={"ASCEND_RT_VISIBLE_DEVICES": "4"})
    acl = AclRuntime(p, Machine.with_devices(2))
    acl.init()
    with pytest.raises(AclError) as info:
        acl.set_device(0)
    assert info.value.code == 207004
    log = lines(p)
    first_error = next(l for l in log if l.startswith("[ERROR]"))
    assert first_error.endswith("GetVisibleDevices:[INIT][DEFAULT]set ASCEND_RT_VISIBLE_DEVICES:[4] error, "
                                "input data rang[0-2)")
    assert sum("GetVisibleDevices" in l for l in log) == 1


@pytest.mark.parametrize("fault", ["driver_open_failed", "device_memory_taken", "tsd_open_failed",
                                   "opp_verify_failed", "driver_internal"])
@pytest.mark.parametrize("stack", [Stack(cann="8.0.RC2", torch_npu="2.1.0.post6"), NEW,
                                   Stack(cann="9.1.0", torch_npu="2.7.1.post8")])
def test_every_open_fault_fails_with_its_code_and_block(tmp_path, fault, stack):
    machine = Machine.with_devices(8)
    machine.device(0).open_fault = fault
    p = proc(tmp_path, stack)
    t = TorchNpu(p, machine)
    with pytest.raises(NpuError) as info:
        t.set_device(0)
    spec = device_failures()[fault]
    err = info.value
    assert err.code == spec["code"] and err.category == spec["category"]
    head = err.console.splitlines()[0]
    assert head.endswith("error code is %d" % spec["code"]) and "c10_npu::SetDevice(device_id_)" in head
    assert BANNER.search(err.console)
    # the block names the first external code, or an inner header
    codes = [m[0] for m in spec["messages"] if m[0]]
    assert codes[0] in err.console
    if stack.block_shape == "v85":
        assert "execution failed, reason=" in err.console and "[LINE:148]" in err.console
    else:
        assert "execute failed, reason=[" in err.console and "[LINE:161]" in err.console
    plog = [parse(l) for l in lines(p) if l.startswith("[ERROR]")]
    assert plog and all(m.group("pid") == "528886" for m in plog)
    assert plog[-1].group("module") == "ASCENDCL"


def test_streams_events_and_the_simulated_clock(tmp_path):
    p = proc(tmp_path)
    acl = AclRuntime(p, Machine.with_devices(2))
    acl.init()
    acl.set_device(1)
    s1, s2 = acl.default_stream(), acl.create_stream()
    acl.launch("A", s1, 5000)
    acl.launch("B", s1, 5000)
    ev = acl.create_event()
    acl.record_event(ev, s1)
    assert ev.ts_us == s1.tail_us
    before = p.clock.now
    acl.stream_wait_event(s2, ev)
    acl.launch("C", s2, 100)
    assert s2.tail_us >= ev.ts_us + 100  # C waits for A and B
    assert not acl.query_event(ev)  # the host has not caught up yet
    acl.synchronize_stream(s2)
    assert p.clock.now >= s2.tail_us > before
    assert acl.query_event(ev)
    # an event never recorded does not block
    s3 = acl.create_stream()
    acl.stream_wait_event(s3, acl.create_event())
    acl.launch("D", s3, 10)
    assert s3.tail_us < s2.tail_us + 1000


def test_device_fault_is_logged_when_it_happens_and_raised_at_sync(tmp_path):
    p = proc(tmp_path, Stack(cann="8.5.0", torch_npu="2.7.1.post2"))
    t = TorchNpu(p, Machine.with_devices(8))
    t.set_device(2)
    for _ in range(3):
        t.launch("Add", "Add_x_high_performance_1", 400)
    t.launch("MatMul", "MatMulV2_y_high_performance_2", 900, fault="vector_core_exception")
    t.launch("Add", "Add_x_high_performance_1", 400)  # queued after the fault: never runs
    launched_by = p.clock.now
    with pytest.raises(NpuError) as info:
        t.synchronize()
    console = info.value.console
    assert console.splitlines()[0].endswith(
        "c10_npu::acl::AclrtSynchronizeStreamWithTimeout(copy_stream), error code is 507035")
    assert "there is an exception of aivec error" in console and "retCode=0x31, [vector core exception]" in console
    assert console.splitlines()[4] == "EZ9999: Inner Error!"  # v85 inner block
    assert console.splitlines()[5].startswith("EZ9999[PID: 528886] ")
    log = lines(p)
    errors = [parse(l) for l in log if l.startswith("[ERROR]")]
    funcs = [m.group("body").split(":")[0].split()[-1] for m in errors]
    assert funcs[:2] == ["ProcLogicCqReport", "PrintCoreInfo"]
    assert "aclrtSynchronizeStreamWithTimeout" in funcs[-1]
    fault_ts = errors[0].group("ts")
    sync_ts = errors[-1].group("ts")
    assert fault_ts < sync_ts  # the device failed before the host noticed
    for path in p.log.paths:
        ts = [parse(l).group("ts") for l in path.read_text().splitlines()]
        assert ts == sorted(ts)
    assert launched_by < p.clock.now


def test_queue_error_prints_the_async_inner_error(tmp_path):
    p = proc(tmp_path)
    t = TorchNpu(p, Machine.with_devices(8))
    t.set_device(0)
    t.launch("ReduceAny", "ReduceAny_z_high_performance_3", 500, fault="aicore_exception")
    p.clock.advance(5000)
    err = t.queue_error("ReduceAny")
    first = err.console.splitlines()[0]
    assert first == ("RuntimeError: The Inner error is reported as above. The process exits for this inner "
                     "error, and the current working operator name is ReduceAny.")
    assert "ERR00100 PTA call acl api failed." in err.console
    app = [l for l in lines(p) if " APP(" in l]
    assert app and 'MakeSureQueueEmpty:343: "[PTA]:"' in app[0]
    old = proc(tmp_path / "old", Stack(cann="7.0.0", torch_npu="2.1.0"))
    t2 = TorchNpu(old, Machine.with_devices(8))
    t2.set_device(0)
    t2.launch("ReduceAny", "k", 100, fault="aicore_exception")
    old.clock.advance(5000)
    assert "pleace set the environment variable" in t2.queue_error("ReduceAny").console


def test_raw_malloc_runs_out_with_207001(tmp_path):
    p = proc(tmp_path)
    machine = Machine(devices=[DeviceSpec(0, hbm_bytes=8 * 2 ** 30, used_by_others=2 * 2 ** 30)])
    acl = AclRuntime(p, machine)
    acl.init()
    acl.set_device(0)
    free, total = acl.get_mem_info()
    assert total == 8 * 2 ** 30 and free < 6 * 2 ** 30
    a = acl.malloc(free // 2)
    acl.free(a)
    with pytest.raises(AclError) as info:
        acl.malloc(free + 1)
    assert info.value.code == 207001
    assert any("ErrCode=207001, desc=[driver error:out of memory]" in l for l in lines(p))
    assert p.peek_messages()[0].code == "EL0004"


def test_unknown_device_fault_is_rejected():
    with pytest.raises(ValueError, match="unknown open_fault"):
        DeviceSpec(0, open_fault="gremlins")


def test_contexts_select_the_device(tmp_path):
    p = proc(tmp_path)
    acl = AclRuntime(p, Machine.with_devices(4))
    acl.init()
    acl.set_device(0)
    ctx = acl.create_context(2)
    assert acl.current == 2 and 2 in acl.devices
    s = acl.create_stream()
    assert s.device == 2
    first = [c for c in acl.contexts.values() if c.device == 0][0]
    acl.set_context(first)
    assert acl.create_stream().device == 0
    acl.destroy_context(ctx)
    with pytest.raises(AclError) as info:
        acl.set_context(ctx)
    assert info.value.code == 107017
    with pytest.raises(AclError):
        acl.destroy_context(first)  # the default context belongs to the device
