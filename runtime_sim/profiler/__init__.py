"""Simulated profiler output: performance scenarios written in the real torch_npu and msprof layouts.

    from runtime_sim import profiler
    paths = profiler.write("dispatch_bound", "/tmp/prof", layout="torch_npu", seed=7)

Scenarios (the cause each one is built around): ``healthy``; ``dispatch_bound`` (tiny kernels
launched slower than they run: low busy share, many gaps); ``copy_bound`` (synchronous
host<->device copies every step); ``unfused_small_ops`` (RMSNorm as eight element-wise kernels);
``dynamic_shapes`` (a new sequence length every step, compiled on first sight); ``slow_path``
(an op on AI CPU; ``fixed=True`` is the release that runs it on AI Core); ``comm_bound`` (8 ranks,
one computes slower, all wait in the all-reduce); ``jittery_allocation`` (allocator calls to
the driver inside some steps).
"""
from __future__ import annotations

from pathlib import Path
from typing import Any, Dict, List, Optional

from .engine import SCENARIOS, capture, make

LAYOUTS = ("torch_npu", "msprof")


def write(scenario: str, dest: Any, *, layout: str = "torch_npu", seed: int = 0, params: Optional[Dict[str, Any]] = None,
          torch_npu: str = "2.1.0.post13", cann: str = "8.2.RC1", pid: int = 2111667, hostname: str = "localhost",
          slices: int = 1, slice_rows: int = 0) -> List[Path]:
    """Write one run per rank of ``scenario`` under ``dest``; returns the run directories."""
    if layout not in LAYOUTS:
        raise ValueError(f"unknown profile layout {layout!r}; known: {', '.join(LAYOUTS)}")
    params = dict(params or {})
    work = make(scenario, params)
    dest = Path(dest)
    dest.mkdir(parents=True, exist_ok=True)
    out: List[Path] = []
    ranks = list(range(work.world_size))
    for rank in ranks:
        def events(rank: int = rank):  # a fresh, identical capture each call
            return capture(make(scenario, params), rank, seed)
        device = rank % 8
        rank_id = rank if work.world_size > 1 else None
        if layout == "torch_npu":
            from .writers import write_torch_npu

            out.append(write_torch_npu(events, dest, pid=pid + rank, rank=rank_id, device=device, torch_npu=torch_npu,
                                       cann=cann, hostname=hostname))
        else:
            from .writers import write_msprof

            sub = dest / f"rank{rank}" if work.world_size > 1 else dest
            out.append(write_msprof(events, sub, pid=pid + rank, device=device, slices=slices, slice_rows=slice_rows))
    return out


__all__ = ["write", "SCENARIOS", "LAYOUTS"]
