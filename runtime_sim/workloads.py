"""Workloads: one entry point per failure kind, writing real-looking logs into a host tree.

    from runtime_sim import workloads
    result = workloads.run("hccl_timeout", {"root_rank": 3}, out_root, seed=7)
    result.console        # what the user's terminal showed (all ranks, rank-prefixed)
    result.consoles       # per process: {"rank3": "...", ...} or {"main": "..."}
    result.logs           # every log file written
    result.facts          # the truth behind it: category, codes, first failing rank, ...

``out_root`` plays ``$ASCEND_PROCESS_LOG_PATH`` (``~/ascend/log`` of the simulated
user); a multi-node job writes one sub-directory per node, named after its IP.
Everything is fixed by ``seed``; the simulated clock starts at ``params["start"]``.

Kinds and their parameters: ``describe()`` (also ``python -m runtime_sim`` users see
them through the scenario catalog). Unknown kinds or parameters raise ``WorkloadError``
naming the offending field.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Dict, List, Mapping, Optional, Tuple

from runtime_sim.plog.timefmt import MS, SECOND, parse_start
from runtime_sim.runtime.clock import SimClock
from runtime_sim.runtime.errors import NpuError
from runtime_sim.runtime.machine import GiB, DeviceSpec, Machine
from runtime_sim.runtime.process import SimProcess
from runtime_sim.runtime.profile import Stack
from runtime_sim.runtime.torch_npu import TorchNpu


class WorkloadError(ValueError):
    """Bad kind or parameter; the message is one line naming the field."""


@dataclass
class WorkloadResult:
    kind: str
    console: str
    consoles: Dict[str, str]
    logs: List[Path]
    log_roots: List[Path]
    exit_code: int
    facts: Dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> Dict[str, Any]:
        return {"kind": self.kind, "console": self.console, "consoles": dict(self.consoles),
                "logs": [str(p) for p in self.logs], "log_roots": [str(p) for p in self.log_roots],
                "exit_code": self.exit_code, "facts": dict(self.facts)}


# --- parameters -----------------------------------------------------------------------

_COMMON: Dict[str, Tuple[Any, str]] = {
    "cann": ("8.3.RC1", "CANN version of the host (picks every output shape)"),
    "torch_npu": ("2.1.0.post17", "torch_npu wheel version or release line"),
    "torch": ("", "PyTorch version (default: from the torch_npu wheel)"),
    "start": ("2025-10-24 11:16:52", "simulated wall-clock start"),
    "pid": (2111667, "pid of the (first) process"),
    "pname": ("python3", "process name in plog lines"),
    "env": ({}, "extra environment of the process(es)"),
    "log_level": (None, "ASCEND_GLOBAL_LOG_LEVEL (0 debug .. 3 error, the default)"),
    "devices": (8, "NPUs on the host"),
    "soc": ("Ascend910B2", "chip (SoC version)"),
    "hbm_gib": (64, "HBM per NPU in GiB"),
    "script": ("/home/ma-user/work/train.py", "the user's script in tracebacks"),
    "noise_gap_ms": (400, "mean gap between background log lines"),
}

_SPECIFIC: Dict[str, Dict[str, Tuple[Any, str]]] = {
    "healthy": {
        "steps": (50, "training steps"), "step_seconds": (1.0, "seconds per step"),
    },
    "set_device_fail": {
        "fault": ("invalid_device", "a key of runtime/data/device_failures.yaml"),
        "device": (0, "device index the script asks for"),
        "visible": (None, "ASCEND_RT_VISIBLE_DEVICES (chosen to fit the fault when omitted)"),
    },
    "aicore_exception": {
        "fault": ("aicore_exception", "aicore_exception | vector_core_exception | aicore_timeout"),
        "op": ("FlashAttentionScore", "op type of the failing kernel"),
        "steps_before": (30, "healthy steps before the failure"),
        "detect": ("sync", "sync (at .item()) | queue (task queue, 'Inner error')"),
        "device": (0, "device index"),
    },
    "unsupported_op": {
        "op": ("aten::_to_copy", "aten / npu op the script calls"),
        "dtype": ("bfloat16", "input dtype"),
    },
    "cpu_fallback": {
        "ops": (["aten::linalg_lstsq.out", "aten::_transformer_encoder_layer_fwd"], "ops the model calls"),
        "steps": (5, "how often the ops run"),
    },
    "oom_capacity": {
        "weights_gib": (24.0, "memory that stays allocated (weights, optimizer state)"),
        "activation_mib": (640, "activation memory per sample"),
        "batches": ([8, 16, 32, 64], "batch sizes tried, in order"),
        "alloc_conf": ("", "PYTORCH_NPU_ALLOC_CONF"),
    },
    "oom_fragmentation": {
        "trace": ("training_varlen", "training_varlen | llm_serving_kv_concat | video_diffusion"),
        "alloc_conf": ("", "PYTORCH_NPU_ALLOC_CONF (expandable_segments:True avoids the OOM)"),
    },
    "perf": {
        "profile": ("healthy", "runtime_sim.profiler scenario: healthy | dispatch_bound | copy_bound | unfused_small_ops | "
                               "dynamic_shapes | slow_path | comm_bound | jittery_allocation"),
        "layout": ("torch_npu", "torch_npu (*_ascend_pt) | msprof (PROF_*)"),
        "profile_dir": ("", "where the profiler output goes (the builder passes ~/work/profile on the host)"),
        "steps": (20, "profiled steps"),
        "upgrade_to": ("", "slow_path: also profile the run after upgrading torch_npu to this version"),
        "upgrade_cann": ("", "CANN of the upgraded run"),
        "slices": (1, "msprof: op_summary slices"),
    },
    "hccl_timeout": {
        "world_size": (8, "ranks"), "ranks_per_node": (8, "ranks per node"),
        "root_rank": (3, "the rank that fails first"),
        "root_fault": ("aicore_exception", "aicore_exception | process_exit | stuck"),
        "stage": ("exec", "exec (EI0002) | connect (EI0006)"),
        "fault_step": (20, "step at which the root fails"),
        "step_seconds": (1.2, "seconds per step"),
        "exec_timeout_s": (1836, "HCCL_EXEC_TIMEOUT"),
        "connect_timeout_s": (120, "HCCL_CONNECT_TIMEOUT"),
        "watchdog_timeout_s": (None, "torch.distributed timeout; below the HCCL timeout the watchdog fires first"),
        "entry_log": (False, "HCCL_ENTRY_LOG_ENABLE=1"),
    },
}


def kinds() -> List[str]:
    return sorted(_SPECIFIC)


def describe(kind: str) -> Dict[str, Tuple[Any, str]]:
    """Parameters of ``kind``: name -> (default, meaning)."""
    if kind not in _SPECIFIC:
        raise WorkloadError("unknown workload kind %r; known: %s" % (kind, ", ".join(kinds())))
    out = dict(_COMMON)
    out.update(_SPECIFIC[kind])
    return out


def _params(kind: str, given: Mapping[str, Any]) -> Dict[str, Any]:
    schema = describe(kind)
    unknown = sorted(set(given) - set(schema))
    if unknown:
        raise WorkloadError("workload %s: unknown parameter %r (known: %s)"
                            % (kind, unknown[0], ", ".join(sorted(schema))))
    out: Dict[str, Any] = {}
    for name, (default, _) in schema.items():
        value = given.get(name, default)
        if default is not None and value is not None and not _same_type(default, value):
            raise WorkloadError("workload %s: parameter %r must be %s, got %r"
                                % (kind, name, type(default).__name__, value))
        out[name] = value
    return out


def _same_type(default: Any, value: Any) -> bool:
    if isinstance(default, bool):
        return isinstance(value, bool)
    if isinstance(default, float):
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if isinstance(default, int):
        return isinstance(value, int) and not isinstance(value, bool)
    return isinstance(value, type(default))


# --- entry point ---------------------------------------------------------------------------

def run(kind: str, params: Optional[Mapping[str, Any]], out_root: Path,
        seed: int = 0) -> WorkloadResult:
    """Run workload ``kind`` and write its logs under ``out_root``."""
    p = _params(kind, dict(params or {}))
    try:
        stack = Stack(cann=str(p["cann"]), torch_npu=str(p["torch_npu"]), torch=str(p["torch"]))
        parse_start(p["start"])
    except ValueError as err:
        raise WorkloadError("workload %s: %s" % (kind, err)) from None
    out_root = Path(out_root)
    handler: Callable[..., WorkloadResult] = globals()["_run_" + kind]
    return handler(p, stack, out_root, seed)


# --- helpers -------------------------------------------------------------------------------

def _env(p: Dict[str, Any], extra: Optional[Dict[str, str]] = None) -> Dict[str, str]:
    env = {str(k): str(v) for k, v in dict(p["env"]).items()}
    if p["log_level"] is not None:
        env["ASCEND_GLOBAL_LOG_LEVEL"] = str(int(p["log_level"]))
    env.update(extra or {})
    return env


def _machine(p: Dict[str, Any]) -> Machine:
    return Machine(devices=[DeviceSpec(i, hbm_bytes=int(p["hbm_gib"] * GiB)) for i in range(int(p["devices"]))],
                   soc=str(p["soc"]))


def _process(p: Dict[str, Any], stack: Stack, out_root: Path, seed: int,
             env: Optional[Dict[str, str]] = None) -> SimProcess:
    return SimProcess(out_root, int(p["pid"]), str(p["pname"]), env if env is not None else _env(p),
                      stack, SimClock(parse_start(p["start"])), seed)


def traceback_head(script: str, frames: List[Tuple[int, str, str]]) -> str:
    """``Traceback (most recent call last):`` and the frames (line, function, code)."""
    out = ["Traceback (most recent call last):"]
    for line_no, func, code in frames:
        out.append('  File "%s", line %d, in %s' % (script if func == "<module>" else func.split("|")[0],
                                                    line_no, func.split("|")[-1]))
        out.append("    " + code)
    return "\n".join(out) + "\n"


_SITE = "/usr/local/python3.10/lib/python3.10/site-packages"


def _finish(kind: str, proc: SimProcess, out_root: Path, exit_code: int,
            facts: Dict[str, Any]) -> WorkloadResult:
    proc.noise(proc.noise_device).exit(proc.clock.now + 50 * MS)
    proc.close()
    text = "\n".join(proc.console)
    return WorkloadResult(kind, text, {"main": text}, proc.log.paths, [out_root], exit_code, facts)


def _steady(proc: SimProcess, p: Dict[str, Any], seconds: float) -> None:
    start = proc.clock.now
    end = start + int(seconds * SECOND)
    proc.noise(proc.noise_device).steady(start, end, int(p["noise_gap_ms"]) * MS)
    proc.clock.advance_to(end)


# --- kinds -----------------------------------------------------------------------------

def _run_healthy(p: Dict[str, Any], stack: Stack, out_root: Path, seed: int) -> WorkloadResult:
    proc = _process(p, stack, out_root, seed)
    torch = TorchNpu(proc, _machine(p))
    torch.set_device(0)
    for _ in range(int(p["steps"])):
        for _ in range(8):
            torch.launch("MatMul", "MatMulV2_%032x_high_performance_210000071" % proc.rng.getrandbits(128), 900)
        torch.synchronize()
        _steady(proc, p, float(p["step_seconds"]))
    return _finish("healthy", proc, out_root, 0, {"category": None, "failed": False})


def _run_set_device_fail(p: Dict[str, Any], stack: Stack, out_root: Path, seed: int) -> WorkloadResult:
    from runtime_sim.runtime.acl import device_failures

    fault = str(p["fault"])
    failures = device_failures()
    if fault not in failures:
        raise WorkloadError("workload set_device_fail: parameter 'fault' must be one of %s, got %r"
                            % (", ".join(sorted(failures)), fault))
    machine = _machine(p)
    index = int(p["device"])
    visible = p["visible"]
    if visible is None and fault == "visible_out_of_range":
        visible = str(len(machine.devices))
    if visible is None and fault == "visible_out_of_order":
        visible = ",".join(str(i) for i in reversed(range(min(2, len(machine.devices)))))
    extra = {"ASCEND_RT_VISIBLE_DEVICES": str(visible)} if visible is not None else {}
    if fault == "invalid_device" and p["device"] == 0:
        index = len(machine.devices) if visible is None else len(str(visible).split(","))
    if not failures[fault].get("at_init") and fault != "invalid_device":
        ids = [int(x) for x in str(visible).split(",")] if visible else [d.phy_id for d in machine.devices]
        if not 0 <= index < len(ids):
            raise WorkloadError("workload set_device_fail: parameter 'device' %d is not visible" % index)
        spec = machine.device(ids[index])
        if fault == "device_memory_taken":
            spec.used_by_others = spec.hbm_bytes - 512 * 1024 * 1024
        else:
            spec.open_fault = fault
    proc = _process(p, stack, out_root, seed, _env(p, extra))
    proc.noise_device = index
    torch = TorchNpu(proc, machine)
    try:
        torch.set_device(index)
    except NpuError as err:
        proc.say(traceback_head(p["script"], [
            (12, "<module>", "torch.npu.set_device(local_rank)"),
            (80, "%s/torch_npu/npu/utils.py|set_device" % _SITE, "torch_npu._C._npu_setDevice(device_id)"),
        ]) + err.console)
        return _finish("set_device_fail", proc, out_root, 1, {
            "category": err.category, "failed": True, "code": err.code, "fault": fault,
            "device": index, "visible": visible, "pid": proc.pid})
    raise AssertionError("set_device_fail did not fail")  # the fault above always fires


def _run_aicore_exception(p: Dict[str, Any], stack: Stack, out_root: Path, seed: int) -> WorkloadResult:
    from runtime_sim.runtime.acl import kernel_faults

    fault = str(p["fault"])
    if fault not in kernel_faults():
        raise WorkloadError("workload aicore_exception: parameter 'fault' must be one of %s, got %r"
                            % (", ".join(sorted(kernel_faults())), fault))
    if p["detect"] not in ("sync", "queue"):
        raise WorkloadError("workload aicore_exception: parameter 'detect' must be sync or queue")
    proc = _process(p, stack, out_root, seed)
    proc.noise_device = int(p["device"])
    torch = TorchNpu(proc, _machine(p))
    torch.set_device(int(p["device"]))
    rng = proc.rng
    for _ in range(int(p["steps_before"])):
        for _ in range(6):
            torch.launch("MatMul", "MatMulV2_%032x_high_performance_210000071" % rng.getrandbits(128), 1200)
        torch.synchronize()
        _steady(proc, p, 0.8)
    op = str(p["op"])
    kernel = "%s_%032x_high_performance_210000085" % (op, rng.getrandbits(128))
    torch.launch(op, kernel, 3000, fault=fault)
    if p["detect"] == "queue":
        proc.clock.advance(8 * MS)
        err = torch.queue_error(op)
        frames = [(207, "<module>", "out = model(batch)")]
    else:
        try:
            torch.synchronize()
        except NpuError as exc:
            err = exc
        frames = [(311, "<module>", "loss_value = loss.item()")]
    proc.say(traceback_head(p["script"], frames) + err.console)
    # At exit torch_npu synchronises the device once more and warns about the same fault
    # (NPU_CHECK_WARN in npuSynchronizeDevice; https://github.com/vllm-project/vllm-ascend/issues/2105).
    proc.clock.advance(rng.randrange(20 * MS, 200 * MS))
    from runtime_sim.runtime import console
    from runtime_sim.runtime.errors import AclError

    try:
        torch.acl.synchronize_device()
    except AclError as exit_err:
        proc.say(console.check_warn(stack, exit_err.code, proc.clock.now, "npuSynchronizeDevice", 526,
                                    proc.take_messages(), rng.randrange(0, 1000)))
    from runtime_sim.runtime.acl import kernel_faults as kf

    return _finish("aicore_exception", proc, out_root, 1, {
        "category": "aicore_exec", "failed": True, "code": int(kf()[fault]["code"]),
        "fault": fault, "kernel": kernel, "op": op, "device": int(p["device"]), "pid": proc.pid})


def _run_unsupported_op(p: Dict[str, Any], stack: Stack, out_root: Path, seed: int) -> WorkloadResult:
    from runtime_sim.ops import OpRunner

    proc = _process(p, stack, out_root, seed)
    torch = TorchNpu(proc, _machine(p))
    torch.set_device(0)
    runner = OpRunner(torch)
    _steady(proc, p, 2.0)
    try:
        outcome = runner.run(str(p["op"]), str(p["dtype"]))
    except NpuError as err:
        proc.say(traceback_head(p["script"], [(64, "<module>", "hidden = layer(hidden.to(dtype))")]) + err.console)
        return _finish("unsupported_op", proc, out_root, 1, dict(
            err.facts, category=err.category, failed=True, code=err.code,
            branch=runner.release.branch, pid=proc.pid))
    return _finish("unsupported_op", proc, out_root, 0, {
        "category": None, "failed": False, "op": outcome.op, "path": outcome.path,
        "branch": runner.release.branch})


def _run_cpu_fallback(p: Dict[str, Any], stack: Stack, out_root: Path, seed: int) -> WorkloadResult:
    from runtime_sim.ops import OpRunner

    proc = _process(p, stack, out_root, seed)
    torch = TorchNpu(proc, _machine(p))
    torch.set_device(0)
    runner = OpRunner(torch)
    paths: Dict[str, str] = {}
    for _ in range(int(p["steps"])):
        for op in list(p["ops"]):
            try:
                outcome = runner.run(str(op))
            except NpuError as err:
                proc.say(traceback_head(p["script"], [(88, "<module>", "out = model(x)")]) + err.console)
                return _finish("cpu_fallback", proc, out_root, 1, dict(
                    err.facts, category=err.category, failed=True, branch=runner.release.branch))
            paths[outcome.op] = outcome.path
        _steady(proc, p, 0.5)
    fallen = sorted(op for op, path in paths.items() if path == "cpu_fallback")
    return _finish("cpu_fallback", proc, out_root, 0, {
        "category": "unsupported_op" if fallen else None, "failed": False,
        "fallback_ops": fallen, "paths": paths, "branch": runner.release.branch})


def _allocator(stack: Stack, machine: Machine, conf: str) -> Any:
    """torch_npu's caching allocator for device 0 of ``machine`` (runtime_sim.allocator)."""
    from runtime_sim.allocator import CachingAllocator
    from runtime_sim.runtime.acl import RUNTIME_RESERVED

    spec = machine.devices[0]
    try:
        return CachingAllocator(spec.hbm_bytes, conf, device=0, profile=stack.line,
                                non_torch_bytes=RUNTIME_RESERVED + spec.used_by_others)
    except ValueError as err:
        raise WorkloadError("workload: parameter 'alloc_conf': %s" % str(err).splitlines()[0]) from None


def _run_oom_capacity(p: Dict[str, Any], stack: Stack, out_root: Path, seed: int) -> WorkloadResult:
    """A model whose activations outgrow the device as the batch grows: the OOM leaves
    little cache unused (reserved ~ allocated), i.e. plain capacity exhaustion."""
    conf = str(p["alloc_conf"])
    proc = _process(p, stack, out_root, seed, _env(p, {"PYTORCH_NPU_ALLOC_CONF": conf} if conf else None))
    machine = _machine(p)
    torch = TorchNpu(proc, machine, allocator=_allocator(stack, machine, conf))
    torch.set_device(0)
    weights = int(float(p["weights_gib"]) * GiB)
    params = [torch.empty(weights // 8) for _ in range(8)]
    batch = None
    try:
        for batch in list(p["batches"]):
            acts = [torch.empty(int(p["activation_mib"]) * batch * 1024 * 1024 // 4) for _ in range(4)]
            for _ in range(6):
                torch.launch("MatMul", "MatMulV2_%032x_high_performance_210000071" % proc.rng.getrandbits(128), 4000)
            torch.synchronize()
            for handle in acts:
                torch.release(handle)
            _steady(proc, p, 1.5)
    except NpuError as err:
        proc.say(traceback_head(p["script"], [(142, "<module>", "logits = model(input_ids)")]) + err.console)
        return _finish("oom_capacity", proc, out_root, 1, {
            "category": "oom_capacity", "failed": True, "exception": err.exc_type,
            "fields": err.facts.get("fields", {}), "batch": batch, "pid": proc.pid,
            "tensors_alive": len(params)})
    return _finish("oom_capacity", proc, out_root, 0, {"category": None, "failed": False})


def _run_oom_fragmentation(p: Dict[str, Any], stack: Stack, out_root: Path, seed: int) -> WorkloadResult:
    from runtime_sim.allocator import UnknownTraceError, load_trace, replay

    try:
        trace = load_trace(str(p["trace"]))
    except UnknownTraceError as err:
        raise WorkloadError("workload oom_fragmentation: parameter 'trace': %s" % err) from None
    proc = _process(p, stack, out_root, seed, _env(p, {"PYTORCH_NPU_ALLOC_CONF": str(p["alloc_conf"])}
                                                   if p["alloc_conf"] else None))
    machine = Machine(devices=[DeviceSpec(0, hbm_bytes=trace.device_capacity_bytes)], soc=str(p["soc"]))
    torch = TorchNpu(proc, machine)
    torch.set_device(0)
    tick = 2 * MS
    alloc = _allocator(stack, machine, str(p["alloc_conf"]))
    alloc.set_non_torch_bytes(trace.non_torch_bytes)
    torch.attach_allocator(alloc, tick_us=tick)
    t0 = proc.clock.now
    result = replay(trace, alloc)
    proc.clock.advance_to(t0 + result.events_run * tick)
    facts: Dict[str, Any] = {
        "trace": trace.name, "completed": result.completed, "failed_event": result.failed_event,
        "allocated": result.allocated, "reserved": result.reserved, "gap": result.gap,
        "device_free": result.device_free, "largest_free_block": result.largest_free_block,
        "num_alloc_retries": result.num_alloc_retries, "ideal_peak": trace.ideal_peak(),
        "alloc_conf": str(p["alloc_conf"]), "pid": proc.pid}
    if result.completed:
        facts.update(category=None, failed=False)
        return _finish("oom_fragmentation", proc, out_root, 0, facts)
    err = result.error
    proc.say(traceback_head(p["script"], [(97, "<module>", "out = step(batch)")]) + err.console_line())
    facts.update(category="oom_fragmentation", failed=True, exception=err.python_type,
                 fields=dict(err.fields))
    return _finish("oom_fragmentation", proc, out_root, 1, facts)


def _run_perf(p: Dict[str, Any], stack: Stack, out_root: Path, seed: int) -> WorkloadResult:
    """A job that runs to the end, slowly for a known reason; its profile shows why."""
    from runtime_sim import profiler

    out_root.mkdir(parents=True, exist_ok=True)
    dest = Path(p["profile_dir"]) if p["profile_dir"] else out_root.parent.parent / "work" / "profile"
    params: Dict[str, Any] = {"steps": int(p["steps"])}
    common = dict(layout=str(p["layout"]), seed=seed, torch_npu=str(p["torch_npu"]), cann=str(p["cann"]),
                  pid=int(p["pid"]), slices=int(p["slices"]), slice_rows=400 if int(p["slices"]) > 1 else 0)
    try:
        runs = profiler.write(str(p["profile"]), dest, params=params, **common)
        facts: Dict[str, Any] = {"category": None, "failed": False, "profile": str(p["profile"]),
                                 "profile_dir": str(dest), "profile_runs": [str(r) for r in runs]}
        if p["upgrade_to"]:
            after = dest.parent / (dest.name + "_after_upgrade")
            common.update(torch_npu=str(p["upgrade_to"]), cann=str(p["upgrade_cann"] or p["cann"]))
            common["seed"] = seed + 1
            profiler.write(str(p["profile"]), after, params=dict(params, fixed=True), **common)
            facts["profile_after_upgrade"] = str(after)
    except ValueError as err:
        raise WorkloadError("workload perf: %s" % err) from None
    lines = []
    step_ms = 0.0
    for step in range(1, int(p["steps"]) + 1):
        step_ms = 100.0 + (step * 37 % 11)
        if step % 5 == 0 or step == 1:
            lines.append("[rank0] step %d/%d | loss %.4f | %.1f ms/step" % (step, int(p["steps"]), 2.5 / (1 + 0.05 * step), step_ms))
    lines.append("[rank0] profiler: data written to %s" % dest)
    text = "\n".join(lines) + "\n"
    return WorkloadResult("perf", text, {"main": text}, [], [out_root], 0, facts)


def _run_hccl_timeout(p: Dict[str, Any], stack: Stack, out_root: Path, seed: int) -> WorkloadResult:
    from runtime_sim.hccl import HcclJob, run_job

    job = HcclJob(world_size=int(p["world_size"]), ranks_per_node=int(p["ranks_per_node"]),
                  root_rank=int(p["root_rank"]), root_fault=str(p["root_fault"]), stage=str(p["stage"]),
                  fault_step=int(p["fault_step"]), step_seconds=float(p["step_seconds"]),
                  exec_timeout_s=int(p["exec_timeout_s"]), connect_timeout_s=int(p["connect_timeout_s"]),
                  watchdog_timeout_s=None if p["watchdog_timeout_s"] is None else int(p["watchdog_timeout_s"]),
                  entry_log=bool(p["entry_log"]), pname=str(p["pname"]), base_pid=int(p["pid"]),
                  start=str(p["start"]), env=_env(p, {"HCCL_ENTRY_LOG_ENABLE": "1"} if p["entry_log"] else None),
                  noise_gap_ms=int(p["noise_gap_ms"]), script=str(p["script"]))
    try:
        job.validate()
    except ValueError as err:
        raise WorkloadError("workload hccl_timeout: %s" % err) from None
    roots = [out_root] if job.nodes == 1 else [out_root / job.ip_of(n * job.ranks_per_node)
                                               for n in range(job.nodes)]
    outcome = run_job(job, stack, roots, seed)
    consoles = {"rank%d" % r.rank: r.console for r in outcome.ranks}
    merged = "\n".join("\n".join("[rank%d]: %s" % (r.rank, line) for line in r.console.split("\n"))
                       for r in outcome.ranks if r.console)
    logs = sorted(path for r in outcome.ranks for path in r.logs)
    root = outcome.root
    category = "aicore_exec" if job.root_fault == "aicore_exception" else "hccl_comm"
    facts = {
        "category": category, "failed": True, "first_failing_rank": root.rank,
        "root_fault": job.root_fault, "stage": job.stage, "group": outcome.group,
        "root_pid": root.pid, "root_device": root.device, "root_node": root.node,
        "symptom_category": "hccl_comm",
        "victim_codes": ["EI0002" if job.stage == "exec" else "EI0006"],
        "ranks": {r.rank: {"pid": r.pid, "role": r.role, "first_error_us": r.first_error_us}
                  for r in outcome.ranks},
    }
    return WorkloadResult("hccl_timeout", merged, consoles, logs, roots, 1, facts)
