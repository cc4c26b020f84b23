"""OOM numbers decide fragmentation vs memory held elsewhere vs plain capacity (the KB's
conditions ask ascend_doctor.core.oom, the one decision triage and `oom` use too).

Cases are torch_npu OOM messages from public issues and docs (named next to each case),
each with its expected reading.
"""
from __future__ import annotations

import pytest

from ascend_doctor.kb.conditions import oom_capacity, oom_external, oom_fragmented


def n(req, alloc, free, reserved, total=None):
    out = {"req": req, "alloc": alloc, "free": free, "reserved": reserved}
    if total:
        out["total"] = total
    return out


@pytest.mark.parametrize(
    "groups,frag,ext,cap",
    [
        # vllm-project/vllm-omni#2128: gap 10.26 GiB >= request -> fragmentation
        (n("9.05 GiB", "42.32 GiB", "2.10 GiB", "52.58 GiB"), True, False, False),
        # xingchensong/TouchNet#100
        (n("5.03 GiB", "49.47 GiB", "1.32 GiB", "57.55 GiB"), True, False, False),
        # MindSpeed example: gap 2.73 GiB + free 1.59 GiB cover 3384 MiB, neither alone
        (n("3384.00 MiB", "53.87 GiB", "1.59 GiB", "56.60 GiB"), True, False, False),
        # vllm-project/vllm-ascend#1617: fragmentation-assisted
        (n("4.50 GiB", "52.87 GiB", "2.77 GiB", "56.89 GiB"), True, False, False),
        # sgl-project/sglang#29838
        (n("72.00 MiB", "56.05 GiB", "5.04 MiB", "58.39 GiB", "61.27 GiB"), True, False, False),
        # vllm-project/vllm-ascend#19: ~50 GiB of 60.97 held outside this allocator
        (n("22.00 MiB", "10.24 GiB", "19.52 MiB", "10.65 GiB", "60.97 GiB"), False, True, False),
        # a 0.02 GiB gap is within the rounding of two 2-decimal numbers: not evidence
        (n("16.00 MiB", "2.98 GiB", "14.25 MiB", "3.00 GiB", "3.94 GiB"), False, False, True),
        # free memory exceeds the request: a limit, not the pool
        (n("2.26 GiB", "781.59 MiB", "3.03 GiB", "1.24 GiB", "6.00 GiB"), False, False, True),
    ],
)
def test_oom_readings(groups, frag, ext, cap):
    assert (oom_fragmented(groups), oom_external(groups), oom_capacity(groups)) == (frag, ext, cap)


def test_missing_numbers_read_as_capacity():
    assert oom_capacity({"req": "52.00 MiB"}) is True
    assert oom_fragmented({"req": "52.00 MiB"}) is False
