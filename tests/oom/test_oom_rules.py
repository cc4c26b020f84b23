"""The decision rules of one out-of-memory event (memory/rules.py), on numbers."""
from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from ascend_doctor.core.oom import VERDICTS, Reading, judge
from ascend_doctor.core.units import GiB, MiB, Size, parse_size
from ascend_doctor.parsers.oom_text import classify, parse_oom, reading


def r(q, free, alloc, reserved, total=64 * GiB, allowed=None, others=None, err=0):
    s = lambda v: None if v is None else Size(int(v), err)  # noqa: E731
    return Reading(requested=s(q), free=s(free), allocated=s(alloc), reserved=s(reserved), total=s(total),
                   allowed=s(allowed), others=others)


def test_gap_covering_the_request_is_fragmentation():
    d = judge(r(2 * GiB, 100 * MiB, 40 * GiB, 55 * GiB))
    assert (d.verdict, d.rule) == ("oom_fragmentation", "gap_covers_request")


def test_gap_plus_free_needs_a_real_share_of_the_request():
    assert judge(r(8 * GiB, 6 * GiB, 40 * GiB, 45 * GiB)).rule == "gap_plus_free_covers_request"
    # 20 MiB of cache next to 90 MiB free is a full device, not fragmentation
    assert judge(r(100 * MiB, 90 * MiB, 55 * GiB, 55 * GiB + 20 * MiB)).rule == "no_room"


def test_free_covering_the_request_is_not_the_pool():
    d = judge(r(1 * GiB, 5 * GiB, 20 * GiB, 30 * GiB))
    assert (d.verdict, d.rule, d.fragmented_too) == ("oom_capacity", "free_covers_request", True)


def test_external_wins_over_a_fragmented_cache_and_says_so():
    d = judge(r(2 * GiB, 10 * MiB, 6 * GiB, 10 * GiB))  # 54 GiB of 64 held elsewhere
    assert (d.verdict, d.rule, d.fragmented_too) == ("external", "external", True)
    assert d.category == "device_busy_permission"  # someone else holds the device: its own answer


def test_other_processes_decide_only_when_they_outweigh_the_gap():
    assert judge(r(2 * GiB, 10 * MiB, 38 * GiB, 40 * GiB, others=20 * GiB)).rule == "external_processes"
    # a small neighbour next to a badly fragmented cache: fragmentation is the story
    assert judge(r(2 * GiB, 10 * MiB, 40 * GiB, 55 * GiB, others=3 * GiB)).verdict == "oom_fragmentation"


def test_fraction_limit():
    d = judge(r(4 * GiB, 20 * GiB, 28 * GiB, 28 * GiB, allowed=30 * GiB))
    assert (d.verdict, d.rule) == ("oom_capacity", "fraction_limit")


def test_rounding_of_the_printed_numbers_never_decides():
    # PCT_Pytorch#27: "2.98 GiB already allocated ... 3.00 GiB reserved": the gap prints as 0.02 GiB
    # (20.48 MiB) but may be anywhere from 10 to 31 MiB; against 16 MiB that proves nothing
    rec = parse_oom("CUDA out of memory. Tried to allocate 16.00 MiB (GPU 0; 3.94 GiB total capacity; 2.98 GiB "
                    "already allocated; 14.25 MiB free; 3.00 GiB reserved in total by PyTorch)")
    rd = reading(rec)
    assert rd.reserved.error == rd.allocated.error == parse_size("3.00 GiB").error
    assert judge(rd).verdict == "oom_capacity"
    # the same printed gap in a small pool (0.48 of 0.50 GiB, so a real share of it): with the margin
    # of two-decimal printing it proves nothing, without it it would read as fragmentation
    small = reading(parse_oom("CUDA out of memory. Tried to allocate 16.00 MiB (GPU 0; 0.52 GiB total capacity; 0.48 GiB "
                              "already allocated; 14.25 MiB free; 0.50 GiB reserved in total by PyTorch)"))
    assert judge(small).verdict == "oom_capacity"
    assert judge(Reading(small.requested, small.free, Size(small.allocated.value), Size(small.reserved.value),
                         small.total)).verdict == "oom_fragmentation"


def test_slack_in_a_full_pool_is_not_fragmentation():
    # vllm-omni#1199: 1.09 GiB unused in a 60.45 GiB pool (1.8 %) against 52 MiB; the thread's fix was a smaller model
    rec = parse_oom("RuntimeError: NPU out of memory. Tried to allocate 52.00 MiB (NPU 1; 60.96 GiB total capacity; "
                    "59.36 GiB already allocated; 59.36 GiB current active; 6.25 MiB free; 60.45 GiB reserved in total by PyTorch)")
    d = judge(reading(rec))
    assert (d.verdict, d.rule) == ("oom_capacity", "slack_only")


def test_framework_reservation_turns_fragmentation_into_capacity():
    frag = r(2 * GiB, 100 * MiB, 40 * GiB, 50 * GiB)
    assert judge(frag).verdict == "oom_fragmentation"
    from dataclasses import replace

    d = judge(replace(frag, framework_reserved=True))
    assert (d.verdict, d.rule, d.fragmented_too) == ("oom_capacity", "framework_reservation", True)


def test_missing_request():
    assert judge(Reading()).rule == "numbers_missing"


sizes = st.integers(min_value=0, max_value=80 * GiB)


@settings(max_examples=300, deadline=None)
@given(q=st.integers(min_value=512, max_value=20 * GiB), free=sizes, alloc=sizes, extra=sizes,
       total=st.integers(min_value=1 * GiB, max_value=128 * GiB))
def test_properties(q, free, alloc, extra, total):
    d = judge(r(q, free, alloc, alloc + extra, total=total))
    assert d.verdict in VERDICTS
    if free >= q:
        assert d.verdict == "oom_capacity"  # free memory covers it: never fragmentation, never others
    if d.verdict == "oom_fragmentation":
        assert extra + free >= q  # the cache and free memory together could have served it
    if d.verdict == "external":
        assert free < q and alloc + extra + free < total


@settings(max_examples=100, deadline=None)
@given(q=st.integers(min_value=1, max_value=2000), f=st.integers(min_value=0, max_value=2000),
       a=st.integers(min_value=0, max_value=60000), g=st.integers(min_value=0, max_value=20000))
def test_classify_agrees_with_judge(q, f, a, g):
    text = (f"NPU out of memory. Tried to allocate {q}.00 MiB (NPU 0; 64.00 GiB total capacity; {a}.00 MiB already "
            f"allocated; {a}.00 MiB current active; {f}.00 MiB free; {a + g}.00 MiB reserved in total by PyTorch)")
    rec = parse_oom(text)
    assert classify(rec) == judge(reading(rec)).category


def test_a_close_call_names_the_other_reading():
    # compressed-tensors PR 587's numbers (CUDA 2.x text): 1.83 GiB unused in a 77 GiB pool plus
    # 1.08 GiB free cover the 1.96 GiB request, but 2.4 % of the pool is slack, not a fragmented pool
    d = judge(r(1.96 * GiB, 1.08 * GiB, 75.31 * GiB, (75.31 + 1.83) * GiB, total=79.18 * GiB))
    assert (d.verdict, d.close_to) == ("oom_capacity", "oom_fragmentation")
    # the same pool with nothing to spare: capacity, and no doubt about it
    d = judge(r(1.96 * GiB, 0.01 * GiB, 75.31 * GiB, 75.40 * GiB, total=79.18 * GiB))
    assert (d.verdict, d.close_to) == ("oom_capacity", None)
    # fragmentation barely past the share threshold: capacity is the runner-up
    d = judge(r(1 * GiB, 0.5 * GiB, 48 * GiB, 50 * GiB))
    assert (d.verdict, d.close_to) == ("oom_fragmentation", "oom_capacity")
    # a clearly fragmented pool: no runner-up
    d = judge(r(1 * GiB, 0.5 * GiB, 30 * GiB, 50 * GiB))
    assert (d.verdict, d.close_to) == ("oom_fragmentation", None)
