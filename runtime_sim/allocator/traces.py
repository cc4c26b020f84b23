"""Fragmentation traces (deterministic generators) and a trace replayer.

A trace is a list of events ``(op, key, nbytes, label)``:

* ``("alloc", key, nbytes, label)``  -- malloc on stream 0, remembered as ``key``
* ``("free", key, 0, label)``        -- free the block remembered as ``key``
* ``("record_stream", key, stream, label)`` -- the block is used on ``stream``
* ``("empty_cache", "", 0, label)``
* ``("non_torch", "", nbytes, label)`` -- device memory held outside the allocator

``label`` says where the event is in the workload (iteration, request, tensor),
so an OOM can be reported the way a user would describe it.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Callable, Dict, Iterator, List, Optional, Tuple, Union

from . import fastreplay
from .caching import CachingAllocator
from .config import AllocatorConfig
from .constants import GiB
from .errors import NPUOutOfMemoryError

Event = Tuple[str, str, int, str]
_DATA = Path(__file__).with_name("data") / "traces.yaml"


class UnknownTraceError(ValueError):
    """No trace of that name."""


class Lcg:
    """The portable LCG of the spec: x' = (1103515245 x + 12345) mod 2^31."""

    def __init__(self, seed: int):
        self.x = seed

    def draw(self, lo: int, hi: int) -> int:
        self.x = (1103515245 * self.x + 12345) % (1 << 31)
        return lo + ((self.x >> 8) % (hi - lo + 1))

    def choice(self, items: List[object]) -> object:
        return items[self.draw(0, len(items) - 1)]


# ---------------------------------------------------------------- generators
def _training_varlen(p: Dict[str, object]) -> Iterator[Event]:
    n = int(p["persistent_tensors"])
    each = int(float(p["persistent_gib"]) * GiB) // n
    for k in range(n):
        yield ("alloc", "param%d" % k, each, "persistent %d/%d" % (k + 1, n))
    layers, hidden, vocab = int(p["layers"]), int(p["hidden"]), int(p["vocab"])
    dt, saved_mult, tmp_mult = int(p["dtype_bytes"]), int(p["saved_mult"]), int(p["tmp_mult"])
    unit, cycle, stride = int(p["seq_unit"]), int(p["seq_cycle"]), int(p["seq_stride"])
    for it in range(int(p["iterations"])):
        s = unit * (1 + (stride * it) % cycle)
        where = "iteration %d (seq %d)" % (it, s)
        tmp = tmp_mult * s * hidden * dt
        saved = saved_mult * s * hidden * dt
        logits = s * vocab * 4
        for layer in range(layers):
            yield ("alloc", "tmp", tmp, "%s forward layer %d temporary" % (where, layer))
            yield ("alloc", "saved%d" % layer, saved, "%s forward layer %d activation" % (where, layer))
            yield ("free", "tmp", 0, where)
        yield ("alloc", "logits", logits, "%s fp32 logits" % where)
        yield ("alloc", "dlogits", logits, "%s logits gradient" % where)
        yield ("free", "logits", 0, where)
        for layer in reversed(range(layers)):
            yield ("alloc", "gtmp", tmp, "%s backward layer %d temporary" % (where, layer))
            yield ("free", "saved%d" % layer, 0, where)
            yield ("free", "gtmp", 0, where)
        yield ("free", "dlogits", 0, where)


def _llm_serving_kv_concat(p: Dict[str, object]) -> Iterator[Event]:
    rng = Lcg(int(p["seed"]))
    per_token = int(p["kv_bytes_per_token"])
    step = int(p["growth_tokens"])
    yield ("alloc", "weights", int(float(p["weights_gib"]) * GiB), "model weights")
    pending = int(p["requests"])
    next_id = 0
    active: List[List[int]] = []  # [request id, prompt, output, kv tokens, generation]
    while pending or active:
        while pending and len(active) < int(p["max_concurrency"]):
            prompt = rng.draw(int(p["prompt_min"]), int(p["prompt_max"]))
            out = rng.draw(int(p["output_min"]), int(p["output_max"]))
            rid = next_id
            next_id += 1
            pending -= 1
            tokens = -(-prompt // step) * step
            where = "request %d (prompt %d, output %d)" % (rid, prompt, out)
            logits = prompt * int(p["vocab"]) * int(p["logits_dtype_bytes"])
            yield ("alloc", "logits%d" % rid, logits, "%s prefill logits" % where)
            yield ("alloc", "kv%d.0" % rid, tokens * per_token, "%s KV cache %d tokens" % (where, tokens))
            yield ("free", "logits%d" % rid, 0, where)
            active.append([rid, prompt, out, tokens, 0])
        still: List[List[int]] = []
        for req in active:
            rid, prompt, out, tokens, gen = req
            where = "request %d (prompt %d, output %d)" % (rid, prompt, out)
            if tokens >= prompt + out:
                yield ("free", "kv%d.%d" % (rid, gen), 0, "%s retired" % where)
                continue
            # torch.cat-style growth: the new cache exists before the old one is freed
            yield ("alloc", "kv%d.%d" % (rid, gen + 1), (tokens + step) * per_token,
                   "%s KV cache regrow to %d tokens" % (where, tokens + step))
            yield ("free", "kv%d.%d" % (rid, gen), 0, where)
            req[3] = tokens + step
            req[4] = gen + 1
            still.append(req)
        active = still


def _video_diffusion(p: Dict[str, object]) -> Iterator[Event]:
    rng = Lcg(int(p["seed"]))
    dt = int(p["dtype_bytes"])
    hidden, steps, batch = int(p["hidden"]), int(p["steps"]), int(p["cfg_batch"])
    resolutions = [tuple(r) for r in p["resolutions"]]  # type: ignore[union-attr]
    yield ("alloc", "weights", int(float(p["weights_gib"]) * GiB), "model weights")
    cond = batch * int(p["cond_tokens"]) * int(p["cond_dim"]) * dt
    for rid in range(int(p["requests"])):
        h, w, frames = rng.choice(resolutions)  # type: ignore[misc]
        tokens = (h // 16) * (w // 16) * ((frames - 1) // 4 + 1)
        where = "request %d (%dx%dx%d)" % (rid, h, w, frames)
        x = batch * tokens * hidden * dt
        yield ("alloc", "cond", cond, "%s text conditioning" % where)
        yield ("alloc", "latent", tokens * int(p["latent_channels"]) * 4, "%s latent" % where)
        for s in range(steps):
            yield ("alloc", "x", x, "%s step %d hidden states" % (where, s))
            if s == 0:
                yield ("alloc", "cache", x, "%s step cache" % where)
            yield ("alloc", "qkv", 3 * x, "%s step %d attention qkv" % (where, s))
            yield ("free", "qkv", 0, where)
            yield ("alloc", "mlp", 4 * x, "%s step %d MLP temporary" % (where, s))
            yield ("free", "mlp", 0, where)
            yield ("free", "x", 0, where)
        yield ("free", "cache", 0, where)
        yield ("alloc", "vae", h * w * frames * int(p["vae_channels"]) * dt, "%s VAE decode features" % where)
        yield ("alloc", "video%d" % rid, h * w * frames * 3, "%s output video" % where)
        yield ("free", "vae", 0, where)
        yield ("free", "latent", 0, where)
        yield ("free", "cond", 0, where)
        if rid > 0:
            yield ("free", "video%d" % (rid - 1), 0, where)


_GENERATORS: Dict[str, Callable[[Dict[str, object]], Iterator[Event]]] = {
    "training_varlen": _training_varlen,
    "llm_serving_kv_concat": _llm_serving_kv_concat,
    "video_diffusion": _video_diffusion,
}


# ---------------------------------------------------------------- traces
@dataclass
class Trace:
    """A named event list plus the device it is meant to run on."""

    name: str
    title: str
    device_capacity_bytes: int
    non_torch_bytes: int
    events: List[Event]
    params: Dict[str, object] = field(default_factory=dict)
    reference: Dict[str, object] = field(default_factory=dict)

    def __len__(self) -> int:
        return len(self.events)

    def ideal_peak(self) -> int:
        """Peak of live bytes: what a fragmentation-free allocator would need."""
        live: Dict[str, int] = {}
        cur = peak = 0
        for op, key, nbytes, label in self.events:
            if op == "alloc":
                live[key] = nbytes
                cur += nbytes
                peak = max(peak, cur)
            elif op == "free":
                cur -= live.pop(key)
        return peak

    def allocator(self, conf: Union[str, AllocatorConfig] = "", **kwargs: object) -> CachingAllocator:
        """A fresh allocator for this trace's device (kwargs go to CachingAllocator)."""
        kwargs.setdefault("non_torch_bytes", self.non_torch_bytes)
        return CachingAllocator(self.device_capacity_bytes, conf, **kwargs)  # type: ignore[arg-type]


@lru_cache(maxsize=1)
def _load() -> dict:
    import yaml  # lazy

    with open(_DATA, "r", encoding="utf-8") as fh:
        return yaml.safe_load(fh)


def list_traces() -> List[str]:
    return list(_load()["traces"])


def load_trace(name: str, **overrides: object) -> Trace:
    """Build a trace by name; ``overrides`` replace generator parameters, and
    ``capacity_bytes`` / ``non_torch_bytes`` replace the device."""
    data = _load()
    if name not in data["traces"]:
        raise UnknownTraceError("unknown trace %r (known: %s)" % (name, ", ".join(data["traces"])))
    entry = data["traces"][name]
    params = dict(entry["params"])
    capacity = int(float(data["device"]["capacity_gib"]) * GiB)
    non_torch = int(float(data["device"]["non_torch_gib"]) * GiB)
    for key, value in overrides.items():
        if key == "capacity_bytes":
            capacity = int(value)  # type: ignore[arg-type]
        elif key == "non_torch_bytes":
            non_torch = int(value)  # type: ignore[arg-type]
        elif key in params:
            params[key] = value
        else:
            raise UnknownTraceError("trace %r has no parameter %r" % (name, key))
    events = list(_GENERATORS[entry["generator"]](params))
    return Trace(name=name, title=entry["title"], device_capacity_bytes=capacity,
                 non_torch_bytes=non_torch, events=events, params=params,
                 reference=dict(entry.get("reference") or {}))


# ---------------------------------------------------------------- replay
@dataclass
class ReplayResult:
    """What happened when a trace ran. Byte counts are taken at the OOM (or the end)."""

    trace: str
    completed: bool
    events_total: int
    events_run: int
    failed_event: Optional[int] = None  # 1-based index of the failing event
    failed_label: str = ""
    error: Optional[NPUOutOfMemoryError] = None
    allocated: int = 0
    reserved: int = 0
    active: int = 0
    device_free: int = 0
    inactive_split_bytes: int = 0
    largest_free_block: int = 0
    num_alloc_retries: int = 0
    peak_reserved: int = 0
    peak_allocated: int = 0
    stats: Dict[str, int] = field(default_factory=dict)

    @property
    def oom_message(self) -> str:
        return str(self.error) if self.error is not None else ""

    @property
    def gap(self) -> int:
        """reserved - allocated: the cache the OOM message shows as unused."""
        return self.reserved - self.allocated

    def to_dict(self) -> Dict[str, object]:
        """Plain data (JSON-ready); ``stats`` is the flattened memory_stats()."""
        return {
            "trace": self.trace, "completed": self.completed,
            "events_total": self.events_total, "events_run": self.events_run,
            "failed_event": self.failed_event, "failed_label": self.failed_label,
            "exception": self.error.python_type if self.error is not None else None,
            "oom_message": self.oom_message, "allocated": self.allocated,
            "reserved": self.reserved, "active": self.active, "gap": self.gap,
            "device_free": self.device_free, "inactive_split_bytes": self.inactive_split_bytes,
            "largest_free_block": self.largest_free_block,
            "num_alloc_retries": self.num_alloc_retries, "peak_reserved": self.peak_reserved,
            "peak_allocated": self.peak_allocated, "stats": dict(self.stats),
        }


def replay(trace: Trace, allocator: CachingAllocator, stop_on_oom: bool = True) -> ReplayResult:
    """Run a trace's events through an allocator.

    On an out-of-memory error the run stops (``stop_on_oom``) and the result holds
    the error, the failing event and the allocator's numbers at that moment;
    otherwise the failing allocation is skipped (its later free is ignored).
    """
    result = ReplayResult(trace=trace.name, completed=True, events_total=len(trace), events_run=0)
    if fastreplay.eligible(trace.events, allocator):
        run = fastreplay.replay_events(trace.events, allocator, stop_on_oom,
                                       lambda exc, index, label: _oom(result, allocator, exc, index, label))
    else:
        run = _replay_general(trace, allocator, stop_on_oom, result)
    result.events_run = run
    if result.error is None:
        _capture(result, allocator)
    result.peak_reserved = allocator.max_memory_reserved()
    result.peak_allocated = allocator.max_memory_allocated()
    return result


def _oom(result: ReplayResult, allocator: CachingAllocator, exc: NPUOutOfMemoryError, index: int, label: str) -> None:
    if result.error is None:
        result.completed = False
        result.failed_event = index
        result.failed_label = label
        result.error = exc
        _capture(result, allocator)


def _replay_general(trace: Trace, allocator: CachingAllocator, stop_on_oom: bool, result: ReplayResult) -> int:
    """Every event through the allocator's public methods."""
    live: Dict[str, object] = {}
    run = 0
    index = 0
    for op, key, nbytes, label in trace.events:
        index += 1
        if op == "alloc":
            try:
                live[key] = allocator.malloc(nbytes)
            except NPUOutOfMemoryError as exc:
                _oom(result, allocator, exc, index, label)
                if stop_on_oom:
                    break
                continue
        elif op == "free":
            block = live.pop(key, None)
            if block is not None:
                allocator.free(block)  # type: ignore[arg-type]
        elif op == "record_stream":
            if key in live:
                allocator.record_stream(live[key], nbytes)  # type: ignore[arg-type]
        elif op == "empty_cache":
            allocator.empty_cache()
        elif op == "non_torch":
            allocator.set_non_torch_bytes(nbytes)
        else:
            raise ValueError("unknown trace event %r" % (op,))
        run += 1
    return run


def _capture(result: ReplayResult, allocator: CachingAllocator) -> None:
    stats = allocator.memory_stats()
    result.stats = dict(stats)
    result.allocated = stats["allocated_bytes.all.current"]
    result.reserved = stats["reserved_bytes.all.current"]
    result.active = stats["active_bytes.all.current"]
    result.inactive_split_bytes = stats["inactive_split_bytes.all.current"]
    result.num_alloc_retries = stats["num_alloc_retries"]
    result.device_free = allocator.device_free()
    result.largest_free_block = allocator.largest_free_block("large")


__all__ = ["Event", "Lcg", "ReplayResult", "Trace", "UnknownTraceError", "list_traces",
           "load_trace", "replay"]
