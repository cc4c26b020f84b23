"""The what-if replay (runtime_sim/allocator/whatif_replay.py) against the reference: every
figure it gives (outcome, OOM count, first failing event and its label, the segment size it
tried, allocated / reserved / stranded / retries / free at the first OOM or the end, the
largest free block, peak reserved and allocated, events run) equals what ``replay`` through
``CachingAllocator`` gives, on the fragmentation traces and on random traces, under every
allocator setting the simulator models."""
from __future__ import annotations

from dataclasses import asdict

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from runtime_sim.allocator import CachingAllocator, load_trace, parse_alloc_conf
from runtime_sim.allocator.traces import Lcg
from runtime_sim.allocator.whatif_replay import (compile_trace, reference_outcome, replay_outcome,
                                                 replay_settings)

KiB, MiB, GiB = 1 << 10, 1 << 20, 1 << 30

# (PYTORCH_NPU_ALLOC_CONF, torch_npu release line, memory fraction set before the replay)
SETTINGS = [
    ("", "7.2.0", None),
    ("", "cuda", None),  # no +32 B pad
    ("", "5.0.rc3", None),
    ("expandable_segments:True", "7.2.0", None),
    ("expandable_segments:True", "6.0.rc1", None),  # no base_addr_aligned_kb: no aligned sliver
    ("expandable_segments:True,base_addr_aligned_kb:4", "7.2.0", None),
    ("expandable_segments:True,base_addr_aligned_kb:0", "7.2.0", None),
    ("expandable_segments:True,segment_size_mb:64", "7.2.0", None),
    ("expandable_segments:True,large_segment_size_mb:32", "26.1.0", None),
    ("expandable_segments:True,page_size:1g", "7.2.0", None),
    ("expandable_segments:True,max_split_size_mb:40", "cuda", None),
    ("expandable_segments:True,per_process_memory_fraction:0.6", "26.1.0", None),
    ("expandable_segments:True,garbage_collection_threshold:0.5", "cuda", 0.8),
    ("max_split_size_mb:40", "7.2.0", None),
    ("max_split_size_mb:21", "cuda", None),
    ("max_split_size_mb:200,garbage_collection_threshold:0.6", "7.2.0", 0.9),
    ("garbage_collection_threshold:0.6", "7.2.0", 0.9),
    ("garbage_collection_threshold:0.8", "7.3.0", 1.0),
    ("garbage_collection_threshold:0.7,multi_stream_lazy_reclaim:True", "26.0.0", 0.95),
    ("roundup_power2_divisions:4", "7.3.0", None),
    ("roundup_power2_divisions:[2:4,8:2,>:8]", "cuda", None),
    ("page_size:1g", "7.2.0", None),
    ("segment_size_mb:64", "7.2.0", None),
    ("large_segment_size_mb:32", "26.1.0", None),
    ("per_process_memory_fraction:0.7", "26.1.0", None),
    ("", "7.2.0", 0.5),
]


def _allocator(capacity, non_torch, conf, profile, fraction):
    a = CachingAllocator(capacity, parse_alloc_conf(conf, profile), non_torch_bytes=non_torch)
    if fraction is not None:
        a.set_per_process_memory_fraction(fraction)
    return a


def _check(events, capacity, non_torch, stops=(False, True)):
    compiled = compile_trace(events)
    assert compiled is not None
    for conf, profile, fraction in SETTINGS:
        for stop in stops:
            want = reference_outcome(events, _allocator(capacity, non_torch, conf, profile, fraction), stop)
            got = replay_outcome(compiled, _allocator(capacity, non_torch, conf, profile, fraction), stop)
            assert asdict(got) == asdict(want), (conf, profile, fraction, stop)


def test_every_setting_parses():
    for conf, profile, _ in SETTINGS:
        parse_alloc_conf(conf, profile)  # raises AllocConfError if the release refuses it


@pytest.mark.parametrize("name", ["training_varlen", "llm_serving_kv_concat", "video_diffusion"])
def test_fragmentation_traces_give_the_reference_figures(name):
    t = load_trace(name)
    _check(t.events, t.device_capacity_bytes, t.non_torch_bytes, stops=(False,))


def test_the_fragmentation_traces_are_the_interesting_cases():
    """The traces above reach the OOM under the default and finish with expandable segments,
    so the comparison covers the flush, the retry and the OOM path, not only hits."""
    t = load_trace("training_varlen")
    default, expandable = replay_settings(t.events, [t.allocator(""), t.allocator("expandable_segments:True")])
    assert not default.completed and default.num_ooms > 1 and default.inactive_split_bytes > 0
    assert default.failed_event == 1958 and default.alloc_size is not None
    assert expandable.completed and expandable.num_ooms == 0 and expandable.peak_reserved < default.peak_reserved


SIZES = st.one_of(
    st.integers(1, 4 * KiB),
    st.integers(4 * KiB, 1 * MiB + 4 * KiB),  # across the small/large pool boundary
    st.integers(1 * MiB, 12 * MiB),  # large requests that share 20 MiB segments
    st.integers(10 * MiB, 400 * MiB),
    st.sampled_from([0, 512, 1 * MiB - 32, 2 * MiB, 20 * MiB, 64 * MiB, 1 * GiB, 1 << 60]),
)
KEYS = st.sampled_from(["k%d" % i for i in range(14)])
EVENT = st.one_of(
    st.tuples(st.just("alloc"), KEYS, SIZES, st.just("")),
    st.tuples(st.just("alloc"), KEYS, SIZES, st.just("")),
    st.tuples(st.just("free"), KEYS, st.just(0), st.just("")),
    st.tuples(st.just("free"), KEYS, st.just(0), st.just("")),
    st.tuples(st.just("empty_cache"), st.just(""), st.just(0), st.just("")),
    st.tuples(st.just("non_torch"), st.just(""), st.integers(0, 2 * GiB), st.just("")),
)


@settings(max_examples=60, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(events=st.lists(EVENT, max_size=80), capacity_mib=st.integers(300, 3000))
def test_random_traces_give_the_reference_figures(events, capacity_mib):
    events = [(op, key, nbytes, "event %d" % i) for i, (op, key, nbytes, _) in enumerate(events)]
    _check(events, capacity_mib * MiB, 64 * MiB)


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_long_random_traces_give_the_reference_figures(seed):
    """Thousands of events: deep free lists, many segments, repeated OOMs and flushes."""
    rng = Lcg(seed)
    sizes = [300, 4096, 600 * KiB, MiB, 2 * MiB, 3 * MiB + 17, 12 * MiB, 40 * MiB, 130 * MiB, 700 * MiB]
    events = []
    live = []
    for i in range(2500):
        r = rng.draw(0, 99)
        if r < 52 or not live:
            key = "t%d" % rng.draw(0, 60)
            events.append(("alloc", key, rng.choice(sizes) + rng.draw(0, 8192), "alloc %d" % i))
            live.append(key)
        elif r < 98:
            events.append(("free", live.pop(rng.draw(0, len(live) - 1)), 0, "free %d" % i))
        elif r < 99:
            events.append(("empty_cache", "", 0, ""))
        else:
            events.append(("non_torch", "", rng.draw(0, 3) * GiB, ""))
    _check(events, 12 * GiB, GiB, stops=(False,))


def test_traces_it_does_not_model_go_through_the_reference():
    events = [("alloc", "a", 4 * MiB, ""), ("record_stream", "a", 1, ""), ("free", "a", 0, "")]
    assert compile_trace(events) is None
    a = CachingAllocator(8 * GiB, "")
    (result,) = replay_settings(events, [a])
    assert result == reference_outcome(events, CachingAllocator(8 * GiB, ""))
    assert result.completed and result.events_run == 3 and result.peak_allocated > 0


def test_it_refuses_an_allocator_already_in_use():
    a = CachingAllocator(8 * GiB, "")
    a.malloc(MiB)
    with pytest.raises(ValueError):
        replay_outcome(compile_trace([("alloc", "a", 1, "")]), a)
