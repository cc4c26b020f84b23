"""Behaviour of the simulated allocator against the rules of NPUCachingAllocator.cpp.

Rules and constants read from
https://github.com/Ascend/pytorch/blob/9e73e708ab9350d203475609f36f8a43f6a0c2ab/torch_npu/csrc/core/npu/NPUCachingAllocator.cpp and
https://github.com/pytorch/pytorch/blob/001074d25084fdb87a799823e395a50f5ec044d3/c10/cuda/CUDACachingAllocator.cpp; stats keys and snapshot fields:
torch_npu/csrc/npu/Module.cpp (THNPModule_memoryStats, THNPModule_memorySnapshot).
"""
from __future__ import annotations

from hypothesis import given, settings, strategies as st

import pytest

from runtime_sim.allocator import (CachingAllocator, NPUOutOfMemoryError, TickClock,
                                   parse_alloc_conf)

KiB, MiB, GiB = 1024, 1024 ** 2, 1024 ** 3
RETRY = ("Get a block from the existing pool failed. Try to free cached blocks and reallocate. "
         "This error log can be ignored.")


def blocks_of(alloc):
    return [(b["state"], b["size"]) for s in alloc.snapshot()["segments"] for b in s["blocks"]]


# --- pools, rounding, segment sizes ------------------------------------------
def test_requests_share_a_20mib_large_buffer():
    alloc = CachingAllocator(GiB, "", profile="7.2.0")
    alloc.malloc(3 * MiB)
    alloc.malloc(3 * MiB)
    seg = alloc.snapshot()["segments"]
    assert len(seg) == 1 and seg[0]["total_size"] == 20 * MiB
    assert [b["state"] for b in seg[0]["blocks"]] == ["active_allocated", "active_allocated", "inactive"]


def test_small_requests_pack_into_2mib_segments():
    alloc = CachingAllocator(GiB, "", profile="7.2.0")
    for _ in range(4):
        alloc.malloc(100 * KiB)
    seg = alloc.snapshot()["segments"]
    assert [(s["segment_type"], s["total_size"]) for s in seg] == [("small", 2 * MiB)]
    assert seg[0]["blocks"][0]["size"] == 100 * KiB + 512  # 102400 + 32 rounded to 512


def test_large_remainder_of_one_mib_or_less_is_not_split():
    alloc = CachingAllocator(GiB, "", profile="cuda")
    alloc.malloc(12 * MiB + 256 * KiB)          # 14 MiB segment, 1.75 MiB left -> split
    alloc.malloc(13 * MiB + 512 * KiB)          # 14 MiB segment, 0.5 MiB left -> whole block
    sizes = blocks_of(alloc)
    assert sizes == [("active_allocated", 12 * MiB + 256 * KiB), ("inactive", MiB + 768 * KiB),
                     ("active_allocated", 14 * MiB)]


def test_roundup_power2_divisions_rounds_to_the_division():
    alloc = CachingAllocator(GiB, "roundup_power2_divisions:4", profile="7.3.0")
    block = alloc.malloc(1200 * KiB - 32)      # 1200 KiB after the pad -> 1280 KiB (d=4)
    assert block.size == 1280 * KiB


def test_best_fit_prefers_the_smallest_block_then_lowest_address():
    alloc = CachingAllocator(GiB, "", profile="cuda")
    a, b, c = (alloc.malloc(s) for s in (40 * MiB, 30 * MiB, 30 * MiB))
    b_address = b.address                      # a freed handle may be reused as a remainder
    for blk in (a, b, c):
        alloc.free(blk)
    again = alloc.malloc(25 * MiB)
    assert again.address == b_address


# --- max_split_size_mb ---------------------------------------------------------
def test_oversize_blocks_are_reused_only_within_the_rounding_slack():
    alloc = CachingAllocator(4 * GiB, "max_split_size_mb:256", profile="7.2.0")
    big = alloc.malloc(300 * MiB)
    alloc.free(big)
    small = alloc.malloc(100 * MiB)            # may not take the oversize block
    assert small.address != big.address
    near = alloc.malloc(290 * MiB)             # 302 MiB block < 290 MiB + 20 MiB slack
    assert near.address == big.address and near.size == 302 * MiB  # never split
    stats = alloc.memory_stats()
    assert stats["max_split_size"] == 256 * MiB
    assert stats["oversize_allocations.current"] == 1
    assert stats["oversize_segments.current"] == 1


def test_oversize_cached_block_is_freed_without_a_full_flush():
    alloc = CachingAllocator(GiB, "max_split_size_mb:256", profile="7.2.0")
    alloc.free(alloc.malloc(600 * MiB))
    alloc.malloc(500 * MiB)                    # 602 MiB block is too big to reuse; freed instead
    stats = alloc.memory_stats()
    assert stats["num_alloc_retries"] == 0
    assert stats["reserved_bytes.all.current"] == 502 * MiB


def test_default_max_split_size_is_exported_as_minus_one():
    assert CachingAllocator(GiB, "", profile="7.2.0").memory_stats()["max_split_size"] == -1


# --- OOM path -------------------------------------------------------------------
def test_retry_frees_whole_segments_and_logs_once():
    events = []
    alloc = CachingAllocator(100 * MiB, "", profile="7.2.0")
    alloc.add_listener(events.append)
    alloc.free(alloc.malloc(60 * MiB))        # cached whole segment
    alloc.malloc(70 * MiB)                    # needs the flush, then fits
    assert [e.text for e in events if e.kind == "retry"] == [RETRY]
    stats = alloc.memory_stats()
    assert stats["num_alloc_retries"] == 1 and stats["num_ooms"] == 0
    assert stats["segment.all.current"] == 1 and stats["segment.all.freed"] == 1


def test_split_blocks_survive_the_flush_and_cause_the_oom():
    alloc = CachingAllocator(GiB, "", profile="7.2.0")
    seg = alloc.malloc(800 * MiB)
    alloc.free(seg)
    alloc.malloc(500 * MiB)                    # pins the segment; ~300 MiB stranded
    with pytest.raises(NPUOutOfMemoryError) as info:
        alloc.malloc(400 * MiB)
    f = info.value.fields
    assert f["reserved"] - f["allocated"] >= 300 * MiB
    assert f["free"] + f["reserved"] - f["allocated"] >= 400 * MiB   # "free looks sufficient"
    assert alloc.memory_stats()["inactive_split_bytes.all.current"] == f["reserved"] - f["allocated"]


def test_workspace_cache_is_dropped_before_the_retry():
    alloc = CachingAllocator(GiB, "", profile="7.2.0")
    alloc.set_workspace_bytes(600 * MiB)
    alloc.malloc(700 * MiB)
    assert alloc.workspace_bytes == 0 and alloc.memory_stats()["num_alloc_retries"] == 1


def test_oom_observer_and_event():
    seen, events = [], []
    alloc = CachingAllocator(GiB, "", device=3, profile="26.0.0")
    alloc.attach_out_of_memory_observer(lambda *args: seen.append(args))
    alloc.add_listener(events.append)
    with pytest.raises(NPUOutOfMemoryError) as info:
        alloc.malloc(2 * GiB)
    assert seen == [(3, 2 * GiB + 2 * MiB, GiB, GiB)]
    assert events[-1].kind == "oom" and events[-1].text == str(info.value)
    assert "(NPU 3;" in str(info.value)


# --- cross-stream frees -----------------------------------------------------------
def test_record_stream_delays_reuse_until_the_event_completes():
    alloc = CachingAllocator(GiB, "", profile="7.2.0", clock=TickClock(latency=3))
    a = alloc.malloc(30 * MiB)
    alloc.record_stream(a, 1)
    alloc.free(a)
    stats = alloc.memory_stats()
    assert stats["allocated_bytes.all.current"] == 0 and stats["active_bytes.all.current"] == a.size
    assert alloc.memory_snapshot()[0]["blocks"][0]["state"] == "active_pending_free"
    b = alloc.malloc(30 * MiB)                 # tick +1: event not done -> new segment
    assert b.address != a.address
    alloc.free(b)
    alloc.malloc(MiB * 4)                      # tick +3: event done -> a is back in the pool
    assert alloc.memory_stats()["active_bytes.all.current"] == 4 * MiB + 512


def test_flush_does_not_search_the_pool_again_pytorch_189504():
    # https://github.com/pytorch/pytorch/issues/189504: a block freed only by the
    # retry's event synchronisation is not used; an immediate second try works.
    alloc = CachingAllocator(20 * MiB, "", profile="7.2.0", clock=TickClock(latency=1000))
    a = alloc.malloc(6 * MiB)
    alloc.malloc(6 * MiB)
    alloc.malloc(6 * MiB)
    alloc.malloc(MiB + MiB // 2)               # the segment is now fully used
    alloc.record_stream(a, 1)
    alloc.free(a)
    with pytest.raises(NPUOutOfMemoryError):
        alloc.malloc(6 * MiB)
    again = alloc.malloc(6 * MiB)
    assert again.address == a.address


# --- garbage_collection_threshold --------------------------------------------------
def test_garbage_collection_frees_old_cached_segments_without_a_retry():
    conf = parse_alloc_conf("garbage_collection_threshold:0.3", "7.2.0")
    alloc = CachingAllocator(GiB, conf)
    alloc.set_per_process_memory_fraction(1.0)  # GC only runs with a fraction set
    for _ in range(3):
        alloc.free(alloc.malloc(200 * MiB))    # the same cached 202 MiB block is reused
    alloc.free(alloc.malloc(300 * MiB))        # 302 MiB: reserved 504 MiB
    alloc.malloc(400 * MiB)                    # reserved 504 MiB > 0.3 GiB: GC frees the older block
    stats = alloc.memory_stats()
    assert stats["num_alloc_retries"] == 0
    assert stats["segment.all.freed"] == 1
    assert stats["reserved_bytes.all.current"] == 302 * MiB + 402 * MiB


# --- expandable segments ----------------------------------------------------------
def test_expandable_base_address_alignment_leaves_a_sliver():
    alloc = CachingAllocator(GiB, "expandable_segments:True", profile="7.2.0")
    alloc.malloc(MiB + MiB // 2)               # 1.5 MiB + 512 B: next address unaligned
    alloc.malloc(4 * MiB)
    blocks = alloc.memory_snapshot()[0]["blocks"]
    assert [b["state"] for b in blocks[:3]] == ["active_allocated", "inactive", "active_allocated"]
    assert blocks[2]["address"] % (16 * KiB) == 0
    assert blocks[1]["size"] == 16 * KiB - 512
    assert alloc.memory_stats()["inactive_split_bytes.all.current"] == 0  # excluded for expandable


def test_expandable_unmaps_free_pages_on_empty_cache():
    alloc = CachingAllocator(GiB, "expandable_segments:True", profile="26.0.0")
    a = alloc.malloc(100 * MiB)
    alloc.malloc(10 * MiB)
    alloc.free(a)
    before = alloc.memory_reserved()
    alloc.empty_cache()
    assert alloc.memory_reserved() < before
    assert alloc.memory_reserved() % (20 * MiB) == 0
    assert any(s["is_expandable"] for s in alloc.memory_snapshot())


def test_expandable_pages_follow_segment_size_mb():
    alloc = CachingAllocator(GiB, "expandable_segments:True,segment_size_mb:64", profile="7.2.0")
    alloc.malloc(10 * MiB)
    assert alloc.memory_reserved() == 64 * MiB


def test_page_size_1g_rounds_large_segments_to_gib():
    alloc = CachingAllocator(8 * GiB, "page_size:1g", profile="7.2.0")
    alloc.malloc(100 * MiB)
    alloc.malloc(100 * KiB)
    stats = alloc.memory_stats()
    assert stats["reserved_bytes.large_pool.current"] == GiB
    assert stats["reserved_bytes.small_pool.current"] == 2 * MiB


# --- memory_stats / snapshot structure ------------------------------------------------
@pytest.mark.parametrize("profile,count,scalars", [
    ("7.0.0", 107, ["max_split_size", "num_alloc_retries", "num_ooms"]),
    ("7.2.0", 119, ["max_split_size", "num_alloc_retries", "num_ooms"]),
    ("26.1.0", 119, ["max_split_size", "num_alloc_retries", "num_ooms"]),
    ("cuda", 122, ["max_split_size", "num_alloc_retries", "num_device_alloc", "num_device_free",
                   "num_ooms", "num_sync_all_streams"]),
])
def test_memory_stats_keys_per_release(profile, count, scalars):
    stats = CachingAllocator(GiB, "", profile=profile).memory_stats()
    assert len(stats) == count
    assert list(stats) == sorted(stats)
    assert [k for k in stats if "." not in k] == scalars
    assert "allocation.all.current" in stats and "allocated.all.current" not in stats
    assert ("requested_bytes.all.peak" in stats) == (profile != "7.0.0")


def test_stat_semantics_current_peak_allocated_freed():
    alloc = CachingAllocator(GiB, "", profile="7.2.0")
    a = alloc.malloc(30 * MiB)
    alloc.free(a)
    alloc.malloc(10 * MiB)
    s = alloc.memory_stats()
    assert (s["allocated_bytes.all.current"], s["allocated_bytes.all.peak"],
            s["allocated_bytes.all.allocated"], s["allocated_bytes.all.freed"]) == (
        10 * MiB + 512, 30 * MiB + 512, 40 * MiB + 1024, 30 * MiB + 512)
    assert s["requested_bytes.all.current"] == 10 * MiB
    alloc.reset_peak_memory_stats()
    assert alloc.memory_stats()["allocated_bytes.all.peak"] == 10 * MiB + 512


def test_snapshot_has_the_real_fields():
    alloc = CachingAllocator(GiB, "", profile="7.2.0", record_history=True)
    b = alloc.malloc(5 * MiB)
    alloc.free(b)
    snap = alloc.snapshot()
    seg = snap["segments"][0]
    assert set(seg) == {"device", "address", "total_size", "allocated_size", "active_size",
                        "requested_size", "stream", "segment_type", "segment_pool_id",
                        "is_expandable", "frames", "blocks"}
    assert set(seg["blocks"][0]) == {"address", "size", "requested_size", "state", "frames"}
    actions = [e["action"] for e in snap["device_traces"][0]]
    assert actions == ["segment_alloc", "alloc", "free_requested", "free_completed", "snapshot"]


def test_same_inputs_same_addresses_and_numbers():
    def run():
        alloc = CachingAllocator(GiB, "", profile="7.2.0")
        live = [alloc.malloc(s * 97 * KiB) for s in range(1, 60)]
        for b in live[::3]:
            alloc.free(b)
        return alloc.snapshot(), dict(alloc.memory_stats())
    assert run() == run()


def test_free_of_a_block_twice_is_refused():
    alloc = CachingAllocator(GiB, "", profile="7.2.0")
    b = alloc.malloc(MiB)
    alloc.free(b)
    with pytest.raises(ValueError):
        alloc.free(b)


# --- invariants under random workloads ------------------------------------------------
OPS = st.lists(st.tuples(st.booleans(), st.integers(1, 96 * MiB), st.integers(0, 1)),
               min_size=1, max_size=60)


@settings(max_examples=60, deadline=None)
@given(OPS, st.sampled_from(["", "expandable_segments:True", "max_split_size_mb:32"]))
def test_stats_agree_with_the_snapshot(ops, conf):
    alloc = CachingAllocator(512 * MiB, conf, profile="7.2.0" if "max" not in conf else "6.0.rc1")
    live = []
    for do_alloc, size, pick in ops:
        if do_alloc or not live:
            try:
                live.append(alloc.malloc(size, stream=pick))
            except NPUOutOfMemoryError:
                pass
        else:
            alloc.free(live.pop(pick % len(live)))
    stats = alloc.memory_stats()
    segs = alloc.memory_snapshot()
    blocks = [b for s in segs for b in s["blocks"]]
    assert stats["reserved_bytes.all.current"] == sum(s["total_size"] for s in segs)
    assert stats["allocated_bytes.all.current"] == sum(b["size"] for b in blocks
                                                       if b["state"] == "active_allocated")
    assert stats["allocation.all.current"] == len(live)
    stranded = sum(b["size"] for s in segs if not s["is_expandable"] and len(s["blocks"]) > 1
                   for b in s["blocks"] if b["state"] == "inactive")
    assert stats["inactive_split_bytes.all.current"] == stranded
    for s in segs:                              # blocks tile their segment
        addr = s["address"]
        for b in s["blocks"]:
            assert b["address"] == addr
            addr += b["size"]
    assert alloc.device_free() == 512 * MiB - stats["reserved_bytes.all.current"]
