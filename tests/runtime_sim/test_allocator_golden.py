"""Golden tests of the simulated caching allocator.

Each number below comes from the cited public source; the simulator must give it
exactly. The two real OOM lines are rebuilt from allocator state and must match
the pasted text byte for byte.
"""
from __future__ import annotations

import re

import pytest

from runtime_sim.allocator import (CachingAllocator, NPUOutOfMemoryError, format_size,
                                   get_profile, parse_alloc_conf)

KiB, MiB, GiB = 1024, 1024 ** 2, 1024 ** 3

# Regex for the NPU OOM text (https://github.com/Ascend/pytorch/blob/9e73e708ab9350d203475609f36f8a43f6a0c2ab/torch_npu/csrc/core/npu/NPUCachingAllocator.cpp).
OOM_RE = re.compile(
    r"NPU out of memory\. Tried to allocate (?P<req>[\d.]+ (?:bytes|KiB|MiB|GiB)) \(NPU (?P<dev>\d+); "
    r"(?P<total>[\d.]+ \w+) total capacity; (?P<alloc>[\d.]+ \w+) already allocated; "
    r"(?P<active>[\d.]+ \w+) current active; (?P<free>[\d.]+ \w+) free; "
    r"(?:(?P<allowed>[\d.]+ \w+) allowed; )?(?P<reserved>[\d.]+ \w+) reserved in total by PyTorch\)"
    r"(?P<sep>\.| )If reserved memory is >> allocated memory try setting max_split_size_mb to avoid fragmentation\.$"
)


def cycle(conf: str, first, second, profile: str = "cuda") -> int:
    alloc = CachingAllocator(80 * GiB, conf, profile=profile)
    for b in [alloc.malloc(s) for s in first]:
        alloc.free(b)
    for s in second:
        alloc.malloc(s)
    return alloc.memory_reserved()


# --- ezyang devlog "When does fragmentation occur in the CUDA caching allocator?"
# https://raw.githubusercontent.com/pytorch/devlogs/main/content/eager/2026-06-01-cuda-caching-allocator.md
def test_small_then_large_reserves_256_mib():
    assert cycle("", [16 * MiB] * 8, [32 * MiB] * 4) == 256 * MiB


def test_large_then_small_reserves_128_mib():
    assert cycle("", [32 * MiB] * 4, [16 * MiB] * 8) == 128 * MiB


def test_expandable_maps_seven_20mib_pages_and_reuses_them():
    alloc = CachingAllocator(80 * GiB, "expandable_segments:True", profile="cuda")
    blocks = [alloc.malloc(16 * MiB) for _ in range(8)]
    assert alloc.memory_reserved() == 140 * MiB
    for b in blocks:
        alloc.free(b)
    for _ in range(4):
        alloc.malloc(32 * MiB)
    assert alloc.memory_reserved() == 140 * MiB


def test_one_mib_loophole_two_pools_with_expandable():
    alloc = CachingAllocator(80 * GiB, "expandable_segments:True", profile="cuda")
    alloc.free(alloc.malloc(2 * MiB))
    alloc.malloc(MiB // 2)
    assert alloc.memory_reserved() == 22 * MiB
    stats = alloc.memory_stats()
    assert stats["reserved_bytes.large_pool.current"] == 20 * MiB
    assert stats["reserved_bytes.small_pool.current"] == 2 * MiB


# --- flashlight: 12 GB card, 10 GiB freed, 5 GiB + 6 GiB fails with 7 GiB "available"
# https://github.com/flashlight/flashlight/issues/180
@pytest.mark.parametrize("profile", ["cuda", "7.2.0"])
def test_flashlight_oom_numbers(profile):
    alloc = CachingAllocator(12 * GiB, "", profile=profile)
    alloc.free(alloc.malloc(10 * GiB))
    alloc.malloc(5 * GiB)
    with pytest.raises(NPUOutOfMemoryError) as info:
        alloc.malloc(6 * GiB)
    text = str(info.value)
    if profile == "cuda":
        assert "Tried to allocate 6.00 GiB. GPU 0 has a total capacity of 12.00 GiB of which 2.00 GiB is free." in text
        assert "Of the allocated memory 5.00 GiB is allocated by PyTorch, and 5.00 GiB is reserved by PyTorch but unallocated." in text
    else:
        assert "5.00 GiB already allocated; 5.00 GiB current active; 2.00 GiB free; 10.00 GiB reserved" in text
    assert alloc.memory_stats()["num_ooms"] == 1
    assert alloc.memory_stats()["num_alloc_retries"] == 1


# --- torch_npu's +32 B pad (NPUCachingAllocator.cpp round_size)
def test_npu_pad_32mib_tensor_needs_34mib_and_leaves_a_sliver():
    alloc = CachingAllocator(34 * MiB, "", profile="7.2.0")
    alloc.malloc(32 * MiB)
    stats = alloc.memory_stats()
    assert stats["reserved_bytes.all.current"] == 34 * MiB
    assert stats["inactive_split.all.current"] == 1
    assert stats["inactive_split_bytes.all.current"] == 2 * MiB - 512 == 2096640
    with pytest.raises(NPUOutOfMemoryError) as info:
        alloc.malloc(32 * MiB)
    assert str(info.value).startswith("NPU out of memory. Tried to allocate 34.00 MiB (NPU 0;")


def test_npu_pad_puts_a_1mib_tensor_in_the_large_pool():
    npu = CachingAllocator(64 * GiB, "", profile="7.2.0")
    npu.malloc(MiB)
    assert npu.memory_stats()["reserved_bytes.large_pool.current"] == 20 * MiB
    assert npu.memory_stats()["reserved_bytes.small_pool.current"] == 0
    cuda = CachingAllocator(64 * GiB, "", profile="cuda")
    cuda.malloc(MiB)
    assert cuda.memory_stats()["reserved_bytes.small_pool.current"] == 2 * MiB


def test_pad_can_be_switched_off_for_ascend950():
    alloc = CachingAllocator(64 * GiB, "", profile="26.1.0", pad_bytes=0)
    alloc.malloc(32 * MiB)
    assert alloc.memory_reserved() == 32 * MiB


# --- format_size as in NPUCachingAllocator.cpp: inclusive bounds, two decimals
@pytest.mark.parametrize("size,text", [
    (0, "0 bytes"), (1024, "1024 bytes"), (1025, "1.00 KiB"), (MiB, "1024.00 KiB"),
    (MiB + 1, "1.00 MiB"), (GiB, "1024.00 MiB"), (GiB + 1, "1.00 GiB"),
    (22 * MiB, "22.00 MiB"), (int(5.87 * GiB), "5.87 GiB"),
])
def test_format_size(size, text):
    assert format_size(size) == text


# --- real OOM lines rebuilt from allocator state --------------------------
def _gib(text: str) -> int:
    return int(round(float(text) * GiB))


def rebuild(profile: str, device: int, total: int, allocated: int, reserved: int,
            free: int, tensor: int) -> NPUOutOfMemoryError:
    """Drive an allocator into the state of a pasted OOM line and trigger it.

    The cached gap is built on another stream (a free block can only be reused by
    its own stream), one of the ways a gap larger than the request still OOMs.
    """
    pad = get_profile(profile).pad_bytes
    segment = -(-(reserved) // (2 * MiB)) * (2 * MiB)
    alloc = CachingAllocator(total, "", device=device, profile=profile)
    big = alloc.malloc(segment - pad, stream=1)   # one segment of exactly `reserved`
    alloc.free(big)
    alloc.malloc(allocated - pad, stream=1)       # carve the allocation out of it
    alloc.set_non_torch_bytes(total - segment - free)
    with pytest.raises(NPUOutOfMemoryError) as info:
        alloc.malloc(tensor)
    return info.value


def test_legacy_template_matches_real_vllm_ascend_line():
    # https://github.com/vllm-project/vllm-ascend/issues/19 (logger prefix removed)
    real = ("RuntimeError: NPU out of memory. Tried to allocate 22.00 MiB (NPU 6; 60.97 GiB total "
            "capacity; 10.24 GiB already allocated; 10.24 GiB current active; 19.79 MiB free; "
            "10.65 GiB reserved in total by PyTorch) If reserved memory is >> allocated memory try "
            "setting max_split_size_mb to avoid fragmentation.")
    err = rebuild("7.2.0", device=6, total=_gib("60.97"), allocated=_gib("10.24"),
                  reserved=_gib("10.65"), free=int(19.79 * MiB), tensor=20 * MiB)
    assert err.console_line() == real
    assert err.python_type == "RuntimeError"


def test_v26_template_matches_real_sglang_line():
    # https://github.com/sgl-project/sglang/issues/29838
    real = ("torch.OutOfMemoryError: NPU out of memory. Tried to allocate 72.00 MiB (NPU 0; 61.27 GiB "
            "total capacity; 56.05 GiB already allocated; 56.05 GiB current active; 5.04 MiB free; "
            "58.39 GiB reserved in total by PyTorch).If reserved memory is >> allocated memory try "
            "setting max_split_size_mb to avoid fragmentation.")
    err = rebuild("26.0.0", device=0, total=_gib("61.27"), allocated=_gib("56.05"),
                  reserved=_gib("58.39"), free=int(5.04 * MiB), tensor=70 * MiB)
    assert err.console_line() == real


@pytest.mark.parametrize("profile,sep", [("5.0.rc3", " "), ("7.3.0", " "), ("26.0.0", "."), ("26.1.0", ".")])
def test_both_templates_parse_with_the_reference_regex(profile, sep):
    alloc = CachingAllocator(8 * GiB, "", profile=profile)
    alloc.malloc(6 * GiB)
    with pytest.raises(NPUOutOfMemoryError) as info:
        alloc.malloc(4 * GiB)
    m = OOM_RE.match(str(info.value))
    assert m, str(info.value)
    assert m.group("sep") == sep
    assert m.group("allowed") is None


def test_allowed_appears_only_with_a_memory_fraction():
    alloc = CachingAllocator(8 * GiB, "", profile="7.2.0")
    alloc.set_per_process_memory_fraction(0.5)
    alloc.malloc(3 * GiB)
    with pytest.raises(NPUOutOfMemoryError) as info:
        alloc.malloc(2 * GiB)
    m = OOM_RE.match(str(info.value))
    assert m and m.group("allowed") == "4.00 GiB"
    # the device still had room: the fraction, not the device, refused it
    assert info.value.fields["free"] > 2 * GiB


def test_26_1_config_fraction_limits_like_the_api():
    conf = parse_alloc_conf("per_process_memory_fraction:0.5", "26.1.0")
    alloc = CachingAllocator(8 * GiB, conf)
    alloc.malloc(3 * GiB)
    with pytest.raises(NPUOutOfMemoryError) as info:
        alloc.malloc(2 * GiB)
    assert "4.00 GiB allowed; " in str(info.value)


def test_one_exabyte_request_text():
    alloc = CachingAllocator(8 * GiB, "", profile="7.2.0")
    with pytest.raises(NPUOutOfMemoryError) as info:
        alloc.malloc(1 << 60)
    assert str(info.value) == "NPU out of memory. Tried to allocate more than 1EB memory."
    assert alloc.memory_stats()["num_ooms"] == 0
