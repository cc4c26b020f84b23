"""Fingerprints of the simulated allocator's behaviour: every address it hands out, every
OOM text, and the final memory_stats() and snapshot, for the three fragmentation traces and a
seeded multi-stream workload, under several settings and release profiles.

``python tests/runtime_sim/allocator_fingerprint.py > tests/runtime_sim/data/allocator_fingerprints.json``
records them; test_allocator_fingerprint.py checks that the allocator still gives exactly
these (so the replay can be made faster without changing a single decision).
"""
from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path
from typing import Dict, List

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from runtime_sim.allocator import CachingAllocator, NPUOutOfMemoryError, load_trace, replay  # noqa: E402
from runtime_sim.allocator.traces import Lcg  # noqa: E402

GiB, MiB = 1 << 30, 1 << 20

CASES = [
    ("", "7.2.0"), ("expandable_segments:True", "7.2.0"), ("max_split_size_mb:64", "7.2.0"),
    ("garbage_collection_threshold:0.8", "7.2.0"), ("roundup_power2_divisions:4", "7.3.0"),
    ("expandable_segments:True", "26.1.0"), ("", "cuda"), ("expandable_segments:True,max_split_size_mb:128", "cuda"),
    ("page_size:1g", "7.2.0"),
]


def _digest(parts: List[str]) -> str:
    h = hashlib.sha256()
    for p in parts:
        h.update(p.encode())
        h.update(b"\n")
    return h.hexdigest()


def _finish(alloc: CachingAllocator, parts: List[str]) -> str:
    parts.append(json.dumps(dict(alloc.memory_stats()), sort_keys=True))
    parts.append(json.dumps(alloc.snapshot()["segments"], sort_keys=True))
    parts.append(str(alloc.device_free()))
    return _digest(parts)


def trace_case(name: str, conf: str, profile: str) -> str:
    t = load_trace(name)
    alloc = t.allocator(conf, profile=profile)
    if "garbage_collection" in conf:
        alloc.set_per_process_memory_fraction(0.97)
    live: Dict[str, object] = {}
    parts: List[str] = []
    for op, key, nbytes, _label in t.events:
        if op == "alloc":
            try:
                b = alloc.malloc(nbytes)
                live[key] = b
                parts.append("%x %d" % (b.address, b.size))
            except NPUOutOfMemoryError as exc:
                parts.append(str(exc))
        elif op == "free":
            b = live.pop(key, None)
            if b is not None:
                alloc.free(b)
    return _finish(alloc, parts)


def replay_case(name: str, conf: str, profile: str, stop_on_oom: bool = False) -> str:
    """Through ``replay`` (the path ``oom simulate`` takes): its result, stats and segments."""
    t = load_trace(name)
    alloc = t.allocator(conf, profile=profile)
    if "garbage_collection" in conf:
        alloc.set_per_process_memory_fraction(0.97)
    result = replay(t, alloc, stop_on_oom=stop_on_oom)
    return _finish(alloc, [json.dumps(result.to_dict(), sort_keys=True)])


def random_case(conf: str, profile: str, seed: int = 7, n: int = 6000) -> str:
    rng = Lcg(seed)
    alloc = CachingAllocator(24 * GiB, conf, profile=profile, non_torch_bytes=GiB, record_history=True)
    if "garbage_collection" in conf:
        alloc.set_per_process_memory_fraction(0.9)
    live: List[object] = []
    parts: List[str] = []
    sizes = [300, 4096, 600 * 1024, MiB, 2 * MiB, 3 * MiB + 17, 12 * MiB, 40 * MiB, 130 * MiB, 700 * MiB]
    for i in range(n):
        r = rng.draw(0, 99)
        if r < 50 or not live:
            size = rng.choice(sizes) + rng.draw(0, 4096)
            stream = rng.draw(0, 2) if r < 10 else 0
            try:
                b = alloc.malloc(size, stream=stream)
                live.append(b)
                parts.append("%x %d %d" % (b.address, b.size, stream))
                if r < 5:
                    alloc.record_stream(b, 3 - stream)
            except NPUOutOfMemoryError as exc:
                parts.append(str(exc))
        elif r < 97:
            alloc.free(live.pop(rng.draw(0, len(live) - 1)))
        elif r < 98:
            alloc.empty_cache()
            parts.append("empty %d" % alloc.memory_reserved())
        else:
            alloc.set_non_torch_bytes(rng.draw(0, 4) * GiB)
    parts.append(json.dumps(alloc.snapshot()["device_traces"][0][-200:], sort_keys=True))
    return _finish(alloc, parts)


def fingerprints() -> Dict[str, str]:
    out: Dict[str, str] = {}
    for conf, profile in CASES:
        for name in ("training_varlen", "llm_serving_kv_concat", "video_diffusion"):
            try:
                out[f"{name}|{conf}|{profile}"] = trace_case(name, conf, profile)
            except ValueError as exc:  # a setting the profile refuses
                out[f"{name}|{conf}|{profile}"] = "refused: " + str(exc).splitlines()[0]
        for name in ("training_varlen", "llm_serving_kv_concat", "video_diffusion"):
            for stop in (False, True):
                try:
                    out[f"replay{int(stop)}|{name}|{conf}|{profile}"] = replay_case(name, conf, profile, stop)
                except ValueError as exc:
                    out[f"replay{int(stop)}|{name}|{conf}|{profile}"] = "refused: " + str(exc).splitlines()[0]
        try:
            out[f"random|{conf}|{profile}"] = random_case(conf, profile)
        except ValueError as exc:
            out[f"random|{conf}|{profile}"] = "refused: " + str(exc).splitlines()[0]
    return out


if __name__ == "__main__":
    json.dump(fingerprints(), sys.stdout, indent=1, sort_keys=True)
    sys.stdout.write("\n")
