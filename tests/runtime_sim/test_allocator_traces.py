"""The three fragmentation traces: OOM by default although memory looks sufficient,
complete with expandable_segments:True.

Reference numbers are those of the project's allocator spec,
produced by a separate prototype implementation; matching them is a cross-check
of both.
"""
from __future__ import annotations

import re

import pytest

from runtime_sim.allocator import (UnknownTraceError, list_traces, load_trace, replay)

GiB = 1024 ** 3
OOM_RE = re.compile(
    r"^NPU out of memory\. Tried to allocate (?P<req>[\d.]+ \w+) \(NPU 0; 64\.00 GiB total capacity; "
    r"(?P<alloc>[\d.]+ \w+) already allocated; (?P<active>[\d.]+ \w+) current active; "
    r"(?P<free>[\d.]+ \w+) free; (?P<reserved>[\d.]+ \w+) reserved in total by PyTorch\)"
    r"(?: |\.)If reserved memory is >> allocated memory try setting max_split_size_mb to avoid fragmentation\.$"
)

REFERENCE = {
    # trace: (events, ideal peak GiB, failing event, message numbers, retries)
    "training_varlen": (20008, "54.74", 1958,
                        ("5.87 GiB", "48.87 GiB", "48.87 GiB", "5.51 GiB", "55.49 GiB"), 5),
    "llm_serving_kv_concat": (14549, "51.95", 8914,
                              ("2.37 GiB", "47.53 GiB", "47.53 GiB", "122.00 MiB", "60.88 GiB"), 20),
    "video_diffusion": (6560, "57.95", 991,
                        ("8.52 GiB", "48.38 GiB", "48.38 GiB", "7.69 GiB", "53.31 GiB"), 2),
}


@pytest.fixture(scope="module")
def traces():
    return {name: load_trace(name) for name in list_traces()}


def test_three_traces_are_listed():
    assert list_traces() == ["training_varlen", "llm_serving_kv_concat", "video_diffusion"]


@pytest.mark.parametrize("name", list(REFERENCE))
def test_trace_shape_and_ideal_peak(traces, name):
    trace = traces[name]
    events, ideal, *_ = REFERENCE[name]
    assert len(trace) == events
    assert "%.2f" % (trace.ideal_peak() / GiB) == ideal
    # a fragmentation-free allocator would fit: usable = 64 GiB - 3 GiB non-torch
    assert trace.ideal_peak() < trace.device_capacity_bytes - trace.non_torch_bytes


@pytest.mark.parametrize("name", list(REFERENCE))
def test_default_allocator_ooms_with_gigabytes_stranded(traces, name):
    trace = traces[name]
    result = replay(trace, trace.allocator("", profile="7.2.0"))
    _, _, failed_at, numbers, retries = REFERENCE[name]
    assert not result.completed
    assert result.failed_event == failed_at
    m = OOM_RE.match(result.oom_message)
    assert m, result.oom_message
    assert (m["req"], m["alloc"], m["active"], m["free"], m["reserved"]) == numbers
    assert result.num_alloc_retries == retries
    request = result.error.fields["alloc_size"]
    # reserved - allocated of gigabytes, all of it non-releasable split blocks
    assert result.gap >= GiB
    assert result.inactive_split_bytes == result.gap
    # "free looks sufficient": cached gap plus device free would hold the request,
    # but no single cached block does
    assert result.gap + result.device_free >= request
    assert result.largest_free_block < request
    assert result.error.python_type == "RuntimeError"


@pytest.mark.parametrize("name", list(REFERENCE))
def test_expandable_segments_complete_every_trace(traces, name):
    trace = traces[name]
    result = replay(trace, trace.allocator("expandable_segments:True", profile="7.2.0"))
    assert result.completed, result.oom_message
    assert result.events_run == len(trace)
    assert result.error is None
    assert result.peak_reserved <= trace.device_capacity_bytes - trace.non_torch_bytes


def test_v26_profile_raises_torch_out_of_memory_error(traces):
    trace = traces["video_diffusion"]
    result = replay(trace, trace.allocator("", profile="26.0.0"))
    assert result.failed_event == 991
    assert result.error.python_type == "torch.OutOfMemoryError"
    assert "reserved in total by PyTorch).If reserved memory" in result.oom_message


@pytest.mark.parametrize("name,conf,completes,retries", [
    ("training_varlen", "max_split_size_mb:256", True, 12),
    ("training_varlen", "max_split_size_mb:4096", True, 21),
    ("llm_serving_kv_concat", "max_split_size_mb:1024", True, None),
    ("llm_serving_kv_concat", "max_split_size_mb:4096", False, None),   # above the KV sizes
    ("video_diffusion", "max_split_size_mb:256", True, 121),             # the flush cost
])
def test_max_split_size_mb_helps_at_a_cost(traces, name, conf, completes, retries):
    trace = traces[name]
    result = replay(trace, trace.allocator(conf, profile="7.2.0"))
    assert result.completed is completes
    if retries is not None:
        assert result.num_alloc_retries == retries


def test_replay_is_deterministic(traces):
    trace = traces["llm_serving_kv_concat"]
    first = replay(trace, trace.allocator("", profile="7.2.0"))
    second = replay(trace, trace.allocator("", profile="7.2.0"))
    assert first.oom_message == second.oom_message
    assert first.stats == second.stats
    assert load_trace("llm_serving_kv_concat").events == trace.events


def test_failed_event_is_described_like_the_workload(traces):
    result = replay(traces["video_diffusion"], traces["video_diffusion"].allocator("", profile="7.2.0"))
    assert result.failed_label == "request 12 (720x1280x121) step 0 MLP temporary"


def test_overrides_and_the_non_torch_difficulty_knob():
    easier = load_trace("video_diffusion", non_torch_bytes=0, requests=10)
    assert easier.non_torch_bytes == 0 and easier.params["requests"] == 10
    assert replay(easier, easier.allocator("", profile="7.2.0")).completed
    with pytest.raises(UnknownTraceError):
        load_trace("video_diffusion", resolution=3)
    with pytest.raises(UnknownTraceError):
        load_trace("no_such_trace")


def test_continue_after_oom_counts_every_failure():
    trace = load_trace("video_diffusion", requests=20)
    alloc = trace.allocator("", profile="7.2.0")
    result = replay(trace, alloc, stop_on_oom=False)
    assert result.failed_event == 991
    assert alloc.memory_stats()["num_ooms"] >= 1
    assert result.events_run < len(trace)
