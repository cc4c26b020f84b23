"""PYTORCH_NPU_ALLOC_CONF parser: real rules and real error texts per release.

Expected texts are copied from the TORCH_CHECK calls of the branch each profile was
read from (URLs below) and, where users pasted them, from public issues. The
banner line is NPUException.cpp ``formatErrorCode``; its time/pid/device/rank come
from the ErrorContext given here.
"""
from __future__ import annotations

import pytest

from runtime_sim.allocator import (AllocConfError, ErrorContext, UnknownProfileError,
                                   get_profile, parse_alloc_conf, profile_names)

MiB = 1024 ** 2
CTX = ErrorContext(timestamp="2025-06-24-11:20:49", pid=528886, device=-1, rank=-1)
B = "\n[ERROR] 2025-06-24-11:20:49 (PID:528886, Device:-1, RankID:-1) "

SRC_72 = "https://github.com/Ascend/pytorch/blob/v2.1.0-7.2.0/torch_npu/csrc/core/npu/NPUCachingAllocator.cpp"
SRC_73 = "https://github.com/Ascend/pytorch/blob/v2.6.0-7.3.0/torch_npu/csrc/core/npu/NPUCachingAllocator.cpp"
SRC_26 = "https://github.com/Ascend/pytorch/blob/v2.7.1-26.0.0/torch_npu/csrc/core/npu/NPUAllocatorConfig.cpp"
SRC_261 = "https://github.com/Ascend/pytorch/blob/v2.12.0-26.1.0/torch_npu/csrc/core/npu/NPUAllocatorConfig.cpp"

REJECTED = [
    # (profile, conf, expected text, source)
    ("7.2.0", "max_split_size_mb:20",
     "CachingAllocator option max_split_size_mb too small, must be > 20" + B + "ERR01003 OPS invalid value", SRC_72),
    ("7.3.0", "max_split_size_mb:20",
     "CachingAllocator option max_split_size_mb too small, must be > 20" + B + "ERR00003 PTA invalid value", SRC_73),
    ("26.0.0", "max_split_size_mb:16",
     "CachingAllocator option max_split_size_mb too small, must be > 20" + B + "ERR01003 OPS invalid value", SRC_26),
    ("26.1.0", "max_split_size_mb:19",
     "CachingAllocator option max_split_size_mb too small, must be >= 20" + B + "ERR00003 PTA invalid value", SRC_261),
    ("7.2.0", "max_split_size_mb:", "Error, expecting max_split_size_mb value" + B + "ERR01003 OPS invalid value", SRC_72),
    ("7.3.0", "max_split_size_mb:", "Error, expecting max_split_size_mb value" + B + "ERR00001 PTA invalid parameter", SRC_73),
    # before 7.3.0 there is no isDigit check: std::stoi throws invalid_argument("stoi")
    ("7.2.0", "max_split_size_mb:abc", "stoi", SRC_72),
    ("7.3.0", "max_split_size_mb:abc", "CachingAllocator option max_split_size_mb is invalid.", SRC_73),
    ("7.2.0", "garbage_collection_threshold:0", "garbage_collect_threshold too small, set it 0.0~1.0" + B + "ERR01003 OPS invalid value", SRC_72),
    ("7.2.0", "garbage_collection_threshold:1.0", "garbage_collect_threshold too big, set it 0.0~1.0" + B + "ERR01003 OPS invalid value", SRC_72),
    ("7.2.0", "garbage_collection_threshold:high", "stod", SRC_72),
    ("7.2.0", "expandable_segments:true",
     "Expected a single True/False argument for expandable_segments" + B + "ERR01001 OPS invalid parameter", SRC_72),
    ("7.3.0", "expandable_segments:1",
     "Expected a single True/False argument for expandable_segments" + B + "ERR00001 PTA invalid parameter", SRC_73),
    ("7.2.0", "expandable_segments:True,max_split_size_mb:256",
     "`max_split_size_mb` or `garbage_collection_threshold`, cannot be enabled with `expandable_segments`, "
     "please set `expandable_segments` to `False`." + B + "ERR01001 OPS invalid parameter", SRC_72),
    ("26.0.0", "garbage_collection_threshold:0.6,expandable_segments:True",
     "`max_split_size_mb` or `garbage_collection_threshold`, cannot be enabled with `expandable_segments`, "
     "please set `expandable_segments` to `False`." + B + "ERR01001 OPS invalid parameter", SRC_26),
    ("7.2.0", "max_split_size_mb,128",
     "Error parsing CachingAllocator settings, expected :" + B + "ERR00001 PTA invalid parameter", SRC_72),
    # no isDigit before 7.3.0: stoi reads "128;expandable_segments" as 128, then ":" is not ","
    ("7.2.0", "max_split_size_mb:128;expandable_segments:False",
     "Error parsing CachingAllocator settings, expected ," + B + "ERR00001 PTA invalid parameter", SRC_72),
    ("7.2.0", "max_split_size_mb:128:expandable_segments:False",
     "Error parsing CachingAllocator settings, expected ," + B + "ERR00001 PTA invalid parameter", SRC_72),
    ("7.2.0", "expandable_segments=True",
     "Unrecognized CachingAllocator option: expandable_segments=True" + B + "ERR01001 OPS invalid parameter", SRC_72),
    ("7.3.0", "release_lock_on_cudamalloc:True",
     "Unrecognized CachingAllocator option: release_lock_on_cudamalloc" + B + "ERR00001 PTA invalid parameter", SRC_73),
    ("26.1.0", "backend:native",
     "Unrecognized CachingAllocator option: backend" + B + "ERR00001 PTA invalid parameter", SRC_261),
    # keys that only a later release knows are unrecognized by an earlier one
    ("7.2.0", "roundup_power2_divisions:4",
     "Unrecognized CachingAllocator option: roundup_power2_divisions" + B + "ERR01001 OPS invalid parameter", SRC_72),
    ("7.2.0", "base_addr_aligned_kb:08",
     "CachingAllocator option base_addr_aligned_kb error, must be [0~16], dtype is int" + B + "ERR01003 OPS invalid value", SRC_72),
    ("7.2.0", "base_addr_aligned_kb:32",
     "CachingAllocator option base_addr_aligned_kb error, must be [0~16], dtype is int" + B + "ERR01003 OPS invalid value", SRC_72),
    ("7.3.0", "base_addr_aligned_kb:-1", "CachingAllocator option base_addr_aligned_kb is invalid.", SRC_73),
    ("7.2.0", "page_size:2m", "Unsupported page_size value: 2m" + B + "ERR01003 OPS invalid value", SRC_72),
    ("7.2.0", "page_size", "page_size requires format 'page_size:1g'" + B + "ERR01003 OPS invalid value", SRC_72),
    ("7.3.0", "segment_size_mb:1024",
     "CachingAllocator option segment_size_mb error, must be [20, 512], dtype is int" + B + "ERR01003 OPS invalid value", SRC_73),
    ("7.3.0", "roundup_power2_divisions:3",
     "For roundups, the divisions has to be power of 2 or 0 to disable roundup " + B + "ERR01003 OPS invalid value", SRC_73),
    ("7.3.0", "roundup_power2_divisions:[300:2]",
     "For roundups, the intervals have to be power of 2 " + B + "ERR01003 OPS invalid value", SRC_73),
    ("7.3.0", "roundup_power2_divisions:", "Error, expecting roundup_power2_divisions value" + B + "ERR01003 OPS invalid value", SRC_73),
    ("26.0.0", "multi_stream_lazy_reclaim:yes",
     "Expected a single True/False argument for multi_stream_lazy_reclaim" + B + "ERR00001 PTA invalid parameter", SRC_26),
    ("26.0.0", "pin_memory_expandable_segments:",
     "Error, expecting m_pin_memory_expandable_segments value" + B + "ERR01003 OPS invalid value", SRC_26),
    ("26.1.0", "per_process_memory_fraction:1.2",
     "per_process_memory_fraction is invalid, set it in [0.0, 1.0]" + B + "ERR00003 PTA invalid value", SRC_261),
    ("26.1.0", "large_segment_size_mb:8",
     "CachingAllocator option large_segment_size_mb must be > 10 MB" + B + "ERR01003 OPS invalid value", SRC_261),
    ("26.1.0", "pinned_reserve_segment_size_mb:",
     "Error, expecting host reserve_segment_size_mb value" + B + "ERR01003 OPS invalid value", SRC_261),
]


@pytest.mark.parametrize("profile,conf,expected,source", REJECTED,
                         ids=["%s|%s" % (p, c) for p, c, _, _ in REJECTED])
def test_rejected_configs_raise_the_real_text(profile, conf, expected, source):
    with pytest.raises(AllocConfError) as info:
        parse_alloc_conf(conf, profile, context=CTX)
    assert str(info.value) == expected, source
    assert info.value.console_line() == "RuntimeError: " + expected


def test_no_banner_before_6_0_matches_real_user_paste():
    # The pre-6.0 text has no torch_npu banner and reads exactly like PyTorch's own;
    # real paste: https://github.com/pytorch/pytorch/issues/123505
    with pytest.raises(AllocConfError) as info:
        parse_alloc_conf("expandable_segments:True", "5.0.rc3")
    assert info.value.console_line() == "RuntimeError: Unrecognized CachingAllocator option: expandable_segments"


def test_banner_follows_the_error_context():
    ctx = ErrorContext(timestamp="2025-04-29-18:46:11", pid=1066924, device=1, rank=3)
    with pytest.raises(AllocConfError) as info:
        parse_alloc_conf("max_split_size_mb:8", "7.2.0", context=ctx)
    assert str(info.value).endswith(
        "\n[ERROR] 2025-04-29-18:46:11 (PID:1066924, Device:1, RankID:3) ERR01003 OPS invalid value")


# --- lexer rules (lexArgs): separators are tokens, spaces vanish ----------
def test_spaces_are_dropped_inside_values():
    conf = parse_alloc_conf(" max_split_size_mb : 2 56 , garbage_collection_threshold:0.6", "7.2.0")
    assert conf.max_split_size == 256 * MiB
    assert conf.garbage_collection_threshold == 0.6


def test_space_instead_of_comma_glues_tokens():
    # "True max_split..." becomes the single token "Truemax_split_size_mb"
    with pytest.raises(AllocConfError) as info:
        parse_alloc_conf("expandable_segments:True max_split_size_mb:300", "26.0.0")
    assert str(info.value).startswith("Expected a single True/False argument for expandable_segments")


def test_stoi_reads_a_leading_number_like_cpp():
    assert parse_alloc_conf("max_split_size_mb:300MB", "7.2.0").max_split_size == 300 * MiB
    with pytest.raises(AllocConfError):
        parse_alloc_conf("max_split_size_mb:300MB", "7.3.0")  # isDigit from 7.3.0


def test_negative_value_wraps_through_size_t():
    # stoi(-5) cast to size_t passes "> 20" and is clamped to SIZE_MAX / 1 MiB
    conf = parse_alloc_conf("max_split_size_mb:-5", "7.2.0")
    assert conf.max_split_size == ((1 << 64) - 1) // MiB * MiB


def test_empty_and_trailing_comma():
    assert parse_alloc_conf("", "7.2.0").max_split_size is None
    conf = parse_alloc_conf("max_split_size_mb:512,", "7.2.0")
    assert conf.max_split_size == 512 * MiB


# --- accepted settings ----------------------------------------------------
def test_roundup_list_fills_intervals_like_the_source():
    conf = parse_alloc_conf("roundup_power2_divisions:[256:1,512:2,1024:4,>:8]", "7.3.0")
    assert conf.roundup_power2_divisions == [1] * 9 + [2, 4] + [8] * 5
    assert conf.divisions_for(700 * MiB) == 2
    assert conf.divisions_for(3 * MiB) == 1
    assert parse_alloc_conf("roundup_power2_divisions:4", "7.3.0").roundup_power2_divisions == [4] * 16


def test_roundup_unclosed_bracket_is_an_internal_assert():
    with pytest.raises(AllocConfError) as info:
        parse_alloc_conf("roundup_power2_divisions:[256:1,512:2", "7.3.0")
    assert "Expected closing bracket ']' while parsing roundup_power2_divisions" in str(info.value)


def test_expandable_with_max_split_allowed_before_6_0_rc3():
    conf = parse_alloc_conf("expandable_segments:True,max_split_size_mb:256", "6.0.rc1")
    assert conf.expandable_segments and conf.max_split_size == 256 * MiB


def test_expandable_probe_failure_warns_and_turns_it_off():
    conf = parse_alloc_conf("expandable_segments:True", "7.2.0", expandable_supported=False)
    assert conf.expandable_segments is False
    assert conf.warnings == ["expandable_segments setting failure, now change to `False`."]
    old = parse_alloc_conf("expandable_segments:True", "6.0.rc1", expandable_supported=False)
    assert old.warnings == ["expandable_segments setting failure, now change to expandable_segments = false."]


def test_26_1_segment_size_warnings():
    conf = parse_alloc_conf("segment_size_mb:40,large_segment_size_mb:64", "26.1.0")
    assert conf.large_segment_size == 64 * MiB and conf.segment_size == 40 * MiB
    assert conf.warnings == [
        "`segment_size_mb` is deprecated, please use `large_segment_size_mb` instead.",
        "Both `segment_size_mb` and `large_segment_size_mb` are set. `segment_size_mb` is deprecated. "
        "It is recommended to use only `large_segment_size_mb`.",
    ]
    # max_split_size_mb's minimum follows large_segment_size_mb, read in a first pass
    with pytest.raises(AllocConfError) as info:
        parse_alloc_conf("max_split_size_mb:40,large_segment_size_mb:64", "26.1.0")
    assert str(info.value).startswith("CachingAllocator option max_split_size_mb too small, must be >= 64")


def test_pinned_register_conflict_warning():
    conf = parse_alloc_conf("pinned_mem_register:True,pin_memory_expandable_segments:True", "26.0.0")
    assert conf.pinned_mem_register is False
    assert conf.warnings[0].startswith("pinned_mem_register setting failure, this feature is not supported")


def test_page_size_1g_without_cann_support_warns():
    conf = parse_alloc_conf("page_size:1g", "7.2.0", page_1g_supported=False)
    assert conf.page_size_1g is False and "1G large-page" in conf.warnings[0]
    assert parse_alloc_conf("page_size:1g", "7.2.0").page_size_1g is True


# --- profiles -------------------------------------------------------------
def test_profile_lookup_by_name_version_and_branch():
    assert get_profile("v2.1.0-7.2.0").name == "7.2.0"
    assert get_profile("6.0.rc2").name == "6.0.rc1"
    assert get_profile("6.0.0").name == "6.0.rc3"
    # hotfix releases (Ascend/pytorch tags v2.1.0-5.0.rc3.3, v2.x-26.0.1) map to the profile of their line
    assert get_profile("26.0.1").name == "26.0.0"
    assert get_profile("5.0.rc3.3").name == "5.0.rc3"
    assert get_profile("v2.1.0-7.2.0.1").name == "7.2.0"
    assert get_profile("cuda").flavor == "cuda"
    assert profile_names()[0] == "5.0.rc3"


@pytest.mark.parametrize("bad", ["3.0.0", "nonsense", "2.1"])
def test_unknown_profiles_are_rejected_with_a_clear_message(bad):
    with pytest.raises(UnknownProfileError) as info:
        get_profile(bad)
    assert bad in str(info.value)


def test_profiles_differ_where_the_releases_differ():
    legacy, new = get_profile("7.3.0"), get_profile("26.0.0")
    assert legacy.oom_exception == "RuntimeError" and new.oom_exception == "torch.OutOfMemoryError"
    assert "roundup_power2_divisions" not in get_profile("7.2.0").keys
    assert get_profile("7.0.0").requested_bytes is False and get_profile("7.1.0").requested_bytes
