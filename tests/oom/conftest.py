"""Inputs for the oom tests: real text (data/, with sources) and the simulated allocator's
state at a failure (runtime_sim.allocator replays; the doctor itself never imports it)."""
from __future__ import annotations

import json
import pickle
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Dict, List, Optional

import pytest
import yaml

DATA = Path(__file__).with_name("data")
NPU_SMI = Path(__file__).parents[1] / "check" / "data" / "npu_smi"
GiB = 1 << 30
TRACES = ("training_varlen", "llm_serving_kv_concat", "video_diffusion")


def load_yaml(name: str) -> Any:
    return yaml.safe_load((DATA / name).read_text(encoding="utf-8"))


@dataclass
class Failure:
    """What a user has after a simulated OOM: the pasted line, memory_stats(), the snapshot."""

    name: str
    message: str  # "RuntimeError: NPU out of memory. ..." as the traceback ends
    stats: Dict[str, int]
    snapshot: Dict[str, Any]
    result: Any  # runtime_sim ReplayResult


_CACHE: Dict[str, Failure] = {}


def trace_failure(name: str, conf: str = "", **overrides: Any) -> Failure:
    """Replay a fragmentation trace until it fails (cached per arguments)."""
    key = json.dumps([name, conf, sorted(overrides.items())])
    if key not in _CACHE:
        from runtime_sim.allocator import load_trace, replay

        trace = load_trace(name, **overrides)
        alloc = trace.allocator(conf, record_history=True)
        result = replay(trace, alloc)
        message = result.error.console_line() if result.error is not None else ""
        _CACHE[key] = Failure(name, message, dict(alloc.memory_stats()), alloc.snapshot(), result)
    return _CACHE[key]


def capacity_failure() -> Failure:
    """A model whose activations outgrow the device: weights, then ever larger batches."""
    key = "capacity"
    if key not in _CACHE:
        from runtime_sim.allocator import CachingAllocator, NPUOutOfMemoryError

        alloc = CachingAllocator(64 * GiB, "", non_torch_bytes=3 * GiB, record_history=True)
        keep = [alloc.malloc(3 * GiB) for _ in range(8)]  # 24 GiB of weights and optimizer state
        error: Optional[NPUOutOfMemoryError] = None
        try:
            for batch in (8, 16, 32, 64):
                acts = [alloc.malloc(160 * (1 << 20) * batch) for _ in range(4)]
                for a in acts:
                    alloc.free(a)
        except NPUOutOfMemoryError as exc:
            error = exc
        assert error is not None and keep
        _CACHE[key] = Failure(key, error.console_line(), dict(alloc.memory_stats()), alloc.snapshot(), None)
    return _CACHE[key]


def external_failure(other_gib: float = 37.0) -> Failure:
    """Another process holds most of the device; this one fails with a small cache."""
    key = f"external{other_gib}"
    if key not in _CACHE:
        from runtime_sim.allocator import CachingAllocator, NPUOutOfMemoryError

        alloc = CachingAllocator(64 * GiB, "", non_torch_bytes=int((3 + other_gib) * GiB), record_history=True)
        held: List[Any] = []
        error = None
        try:
            for _ in range(64):
                held.append(alloc.malloc(2 * GiB))
        except NPUOutOfMemoryError as exc:
            error = exc
        assert error is not None
        _CACHE[key] = Failure(key, error.console_line(), dict(alloc.memory_stats()), alloc.snapshot(), None)
    return _CACHE[key]


def write_inputs(tmp: Path, f: Failure) -> Dict[str, Path]:
    paths = {"message": tmp / f"{f.name}.log", "stats": tmp / f"{f.name}.stats.json",
             "snapshot": tmp / f"{f.name}.snapshot.pickle"}
    paths["message"].write_text(f.message + "\n", encoding="utf-8")
    paths["stats"].write_text(json.dumps(f.stats), encoding="utf-8")
    with open(paths["snapshot"], "wb") as fh:
        pickle.dump(f.snapshot, fh)
    return paths


def doctor(*args: str, stdin: Optional[str] = None, timeout: float = 60) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "ascend_doctor", "oom", *args], input=stdin,
                          capture_output=True, text=True, timeout=timeout)


@pytest.fixture(scope="session")
def messages() -> Dict[str, Any]:
    return load_yaml("messages.yaml")
