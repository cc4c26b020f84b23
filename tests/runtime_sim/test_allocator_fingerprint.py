"""The allocator's decisions are pinned: every address, OOM text, final memory_stats() and
snapshot of the fragmentation traces and a seeded multi-stream workload, under nine
settings/profiles, hash to the values recorded before the replay was made faster
(allocator_fingerprint.py records them)."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

try:
    from allocator_fingerprint import CASES, random_case, replay_case, trace_case
except ImportError:  # run as a package module
    from tests.runtime_sim.allocator_fingerprint import CASES, random_case, replay_case, trace_case

RECORDED = json.loads((Path(__file__).with_name("data") / "allocator_fingerprints.json").read_text())


@pytest.mark.parametrize("conf, profile", CASES)
def test_same_decisions_as_recorded(conf, profile):
    for name in ("training_varlen", "llm_serving_kv_concat", "video_diffusion"):
        assert trace_case(name, conf, profile) == RECORDED[f"{name}|{conf}|{profile}"], (name, conf, profile)
    assert random_case(conf, profile) == RECORDED[f"random|{conf}|{profile}"], ("random", conf, profile)
    for name in ("training_varlen", "llm_serving_kv_concat", "video_diffusion"):
        for stop in (False, True):
            assert replay_case(name, conf, profile, stop) == RECORDED[f"replay{int(stop)}|{name}|{conf}|{profile}"], \
                ("replay", name, conf, profile, stop)
