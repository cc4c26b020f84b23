"""A host/device timing model that produces what the profiler records: device tasks, host API
events and step markers, in time order, for performance scenarios with a known cause.

The model: the host thread launches ops one after another (each launch costs host time); the
device runs a task when it has been launched and the previous task on its stream finished. So a
workload of tiny kernels launched slowly leaves the device idle between them (dispatch-bound),
a blocking copy stalls both, a compile or an allocation on the host opens a gap on the device,
and ranks that meet in a collective wait for the slowest one. Everything is fixed by the seed,
and nothing is kept in memory beyond one step: a capture can be made as long as needed.

Events (tuples, first item the kind):
  ("task", start_us, dur_us, name, type, core, stream, task_id, shapes, dtypes, state, step, extra)
  ("api", start_us, dur_us, api_name)            host AscendCL call (CANN track)
  ("step", start_us, dur_us, step_no)            ProfilerStep#N on the Python track
  ("cpu_op", start_us, dur_us, name)             other torch-level events (optimizer step)
  ("comm", start_us, dur_us, op_name, sdma_mb, transit_ms, wait_ms)  one collective on this rank
"""
from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Any, Dict, Iterator, List, Optional, Tuple

T0 = 1764580000000000.0  # µs since the epoch where captures start (2025-12-01)

AIC, AIV, MIX, AICPU, COMM, COPY = "AI_CORE", "AI_VECTOR_CORE", "MIX_AIC", "AI_CPU", "COMMUNICATION", "MEMCPY_ASYNC"

SCENARIOS = ("healthy", "dispatch_bound", "copy_bound", "unfused_small_ops", "dynamic_shapes", "slow_path",
             "comm_bound", "jittery_allocation")


@dataclass
class Op:
    type: str
    core: str
    dur: float
    shapes: str = ""
    dtypes: str = "DT_BF16"
    name: str = ""
    launch: float = 6.0      # host time to launch it (µs)
    pre_api: Optional[Tuple[str, float]] = None  # a host API call before the launch (compile, malloc)
    blocking: bool = False   # the host waits for it (a synchronous copy, .item())
    extra: Dict[str, Any] = field(default_factory=dict)


def _kernel_name(op: Op) -> str:
    if op.name:
        return op.name
    if op.core == AICPU:
        return f"aclnn{op.type}_{op.type}AiCpu_{op.type}"
    return f"aclnn{op.type}_{op.type}AiCore_{op.type}"


class Workload:
    """A scenario's step program; ``ops(step, rank, rng)`` returns one step's ops."""

    steps = 20
    world_size = 1
    launch = 6.0

    def __init__(self, params: Dict[str, Any]) -> None:
        self.params = params
        self.steps = int(params.get("steps", self.steps))
        self.world_size = int(params.get("world_size", self.world_size))

    def ops(self, step: int, rank: int, rng: random.Random) -> List[Op]:
        raise NotImplementedError

    def comm(self, step: int, rank: int) -> Optional[Tuple[str, float, float]]:
        """(op name, transfer µs, SDMA MB) of the collective closing the step, or None."""
        return None

    def cpu_ops(self) -> List[str]:
        return []


def _layer(seq: int, hidden: int, rng: random.Random, fused: bool = True) -> List[Op]:
    s = f"{seq},{hidden}"
    w = f"{hidden},{hidden}"
    mm = 60.0 + seq * hidden / 4096.0 * 0.9
    out = [
        Op("RmsNorm", AIV, 18.0 + rng.random() * 2, f"{s};{hidden}") if fused else None,
        Op("MatMulV2", AIC, mm * (1 + 0.03 * rng.random()), f"{s};{w}"),
        Op("FlashAttentionScore", MIX, mm * 1.4 * (1 + 0.03 * rng.random()), f"{seq},32,128;{seq},32,128;{seq},32,128"),
        Op("MatMulV2", AIC, mm * (1 + 0.03 * rng.random()), f"{s};{w}"),
        Op("Add", AIV, 12.0 + rng.random(), f"{s};{s}"),
        Op("RmsNorm", AIV, 18.0 + rng.random() * 2, f"{s};{hidden}") if fused else None,
        Op("MatMulV2", AIC, mm * 2.6 * (1 + 0.03 * rng.random()), f"{s};{hidden * 2},{hidden}"),
        Op("Swiglu", AIV, 20.0 + rng.random() * 2, f"{seq},{hidden * 2}"),
        Op("MatMulV2", AIC, mm * 1.3 * (1 + 0.03 * rng.random()), f"{seq},{hidden * 2 // 2};{w}"),
        Op("Add", AIV, 12.0 + rng.random(), f"{s};{s}"),
    ]
    return [o for o in out if o is not None]


def _rms_norm_unfused(seq: int, hidden: int, rng: random.Random) -> List[Op]:
    s = f"{seq},{hidden}"
    kinds = ("Cast", "Square", "ReduceMeanD", "Add", "Rsqrt", "Mul", "Cast", "Mul")
    return [Op(k, AIV, 3.0 + rng.random() * 3.0, s, launch=3.0) for k in kinds]


class Healthy(Workload):
    def ops(self, step, rank, rng):
        out: List[Op] = []
        for _ in range(4):
            out += _layer(1024, 4096, rng)
        return out


class DispatchBound(Workload):
    """Batch-1 decoding: hundreds of tiny kernels per token, launched from Python one by one."""

    def ops(self, step, rank, rng):
        out: List[Op] = []
        for _ in range(24):
            for t, d in (("RmsNorm", 3.2), ("MatMulV2", 7.5), ("Add", 2.1), ("Mul", 2.0), ("Transpose", 2.6),
                         ("MatMulV2", 7.8), ("Swiglu", 3.4), ("MatMulV2", 6.9), ("Add", 2.1)):
                out.append(Op(t, AIC if t == "MatMulV2" else AIV, d * (1 + 0.1 * rng.random()), "1,4096;4096,4096" if t == "MatMulV2" else "1,4096",
                              launch=26.0 + 6.0 * rng.random()))
        out[-1].blocking = True  # the sampled token is read back (.item()) every step
        return out


class CopyBound(Workload):
    """Every step uploads its batch from pageable host memory and reads the logits back, synchronously."""

    def ops(self, step, rank, rng):
        mb_in = 96.0
        out = [Op("MEMCPY_ASYNC", COPY, mb_in / 11.0 * 1000.0, blocking=True, pre_api=("aclrtMemcpy", 8.0),
                  extra={"operation": "host to device", "size": int(mb_in * 1024 * 1024)})]
        for _ in range(2):
            out += _layer(512, 4096, rng)
        out.append(Op("MEMCPY_ASYNC", COPY, 64.0 / 11.0 * 1000.0, blocking=True, pre_api=("aclrtMemcpy", 8.0),
                      extra={"operation": "device to host", "size": 64 * 1024 * 1024}))
        return out


class UnfusedSmallOps(Workload):
    """RMSNorm written as eight element-wise ops in Python: 8 tiny kernels where one fused kernel would do."""

    def ops(self, step, rank, rng):
        out: List[Op] = []
        for _ in range(8):
            layer = _layer(256, 4096, rng, fused=False)
            out += _rms_norm_unfused(256, 4096, rng) + layer[:4] + _rms_norm_unfused(256, 4096, rng) + layer[4:]
        return out


class DynamicShapes(Workload):
    """Variable-length requests without bucketing: every new length is a new shape for every op,
    compiled on first sight."""

    lengths = [97, 133, 211, 64, 388, 145, 512, 77, 301, 256, 190, 421, 58, 333, 120, 470, 89, 250, 166, 399]

    def __init__(self, params):
        super().__init__(params)
        self.seen: set = set()

    def ops(self, step, rank, rng):
        seq = self.lengths[step % len(self.lengths)] + 3 * (step // len(self.lengths))
        first = seq not in self.seen
        self.seen.add(seq)
        out: List[Op] = []
        for _ in range(4):
            out += _layer(seq, 4096, rng)
        for op in out:
            op.extra["state"] = "dynamic"
            if first and op.type in ("MatMulV2", "FlashAttentionScore"):
                op.pre_api = ("aclopCompileAndExecute", 60.0)
        return out


class SlowPath(Workload):
    """An embedding update through IndexPutV2: on the old release it runs on AI CPU; the newer release
    has the AI Core kernel (params['fixed'])."""

    def ops(self, step, rank, rng):
        out: List[Op] = []
        for _ in range(4):
            out += _layer(1024, 4096, rng)
        if self.params.get("fixed"):
            out.append(Op("IndexPutV2", AIV, 38.0 + 4 * rng.random(), "32000,4096;1024;1024,4096"))
        else:
            out.append(Op("IndexPutV2", AICPU, 2900.0 + 200 * rng.random(), "32000,4096;1024;1024,4096"))
        return out


class CommBound(Workload):
    """Data-parallel training on 8 cards: one rank computes slower (params['slow_rank']), and every
    rank waits for it in the gradient all-reduce that closes the step."""

    world_size = 8

    def _scale(self, rank: int) -> float:
        return 1.6 if rank == int(self.params.get("slow_rank", 5)) else 1.0

    def ops(self, step, rank, rng):
        out: List[Op] = []
        for _ in range(4):
            for op in _layer(2048, 4096, rng):
                op.dur *= self._scale(rank)
                out.append(op)
        return out

    def comm(self, step, rank):
        return ("hcom_allReduce_", 2600.0, 384.0)


class JitteryAllocation(Workload):
    """Shapes that drift every step and an empty_cache() in the loop: the caching allocator returns
    memory to the driver and asks again, so some steps stall in aclrtMalloc/aclrtFree."""

    def ops(self, step, rank, rng):
        out: List[Op] = []
        for _ in range(3):
            out += _layer(512 + 8 * (step % 7), 4096, rng)
        if step % 3 == 1:
            for i in range(0, len(out), 4):
                out[i].pre_api = ("aclrtMalloc", 900.0 + 1500.0 * rng.random())
            out[-1].pre_api = ("aclrtFree", 2500.0 + 1000.0 * rng.random())
        return out


WORKLOADS = {
    "healthy": Healthy, "dispatch_bound": DispatchBound, "copy_bound": CopyBound,
    "unfused_small_ops": UnfusedSmallOps, "dynamic_shapes": DynamicShapes, "slow_path": SlowPath,
    "comm_bound": CommBound, "jittery_allocation": JitteryAllocation,
}


def make(scenario: str, params: Dict[str, Any]) -> Workload:
    if scenario not in WORKLOADS:
        raise ValueError(f"unknown profile scenario {scenario!r}; known: {', '.join(SCENARIOS)}")
    return WORKLOADS[scenario](params)


def capture(work: Workload, rank: int, seed: int) -> Iterator[Tuple]:
    """The events of one rank's capture, in time order (host and device interleaved)."""
    rng = random.Random(seed * 1000 + rank)
    others = [random.Random(seed * 1000 + r) for r in range(work.world_size)]
    host = T0 + 2000.0 + rank * 3.0
    dev = host
    task_id = 0
    for step in range(work.steps):
        step_start = host
        # the other ranks' compute time decides when this step's collective ends
        ops = work.ops(step, rank, rng)
        for op in ops:
            if op.pre_api:
                api, cost = op.pre_api
                yield ("api", host, cost, api)
                host += cost
            host += op.launch
            start = max(host + 1.5, dev)
            task_id += 1
            stream = 7 if op.core == COPY else 2
            yield ("task", start, op.dur, _kernel_name(op) if op.core != COPY else "MEMCPY_ASYNC", op.type, op.core, stream,
                   task_id, op.shapes, op.dtypes if op.shapes else "", op.extra.get("state", "static"), step + 1, op.extra)
            dev = start + op.dur
            if op.blocking:
                host = max(host, dev) + 2.0
        comm = work.comm(step, rank)
        if comm is not None:
            name, transfer, mb = comm
            ready = [dev]
            for r in range(work.world_size):
                if r == rank:
                    continue
                orng = others[r]
                dur = sum(o.dur for o in work.ops(step, r, orng))
                ready.append(step_start + 10.0 + dur)
            start = max(host + 1.5, dev)
            end = max(max(ready), start) + transfer
            task_id += 1
            op_name = f"{name}_{13681369207305868800 + rank}_{step + 1}_1"
            yield ("task", start, end - start, op_name, name, COMM, 3, task_id, "", "", "N/A", step + 1, {})
            yield ("comm", start, end - start, op_name, mb, transfer / 1000.0, (end - start - transfer) / 1000.0)
            dev = end
        host = max(host, dev) + 20.0
        yield ("step", step_start, host - step_start, step + 1)
        for name in work.cpu_ops():
            yield ("cpu_op", host - 50.0, 40.0, name)
        host += 30.0 + 10.0 * rng.random()
        dev = max(dev, host)
