"""evaluate(): the issue's examples, `unknown` with reasons, the JSON shape, bad input."""
from __future__ import annotations

import json

import pytest

from compat_matrix import evaluate
from compat_matrix.errors import ChipError, ComponentError, VersionError
from compat_matrix.report import COMPATIBLE, INCOMPATIBLE, NOT_RECOMMENDED, UNKNOWN, Pair, Report, worst


def test_issue_example_torch_2_1_with_torch_npu_2_4_post2():
    rep = evaluate({"torch": "2.1.0", "torch_npu": "2.4.0.post2"})
    assert rep.verdict == INCOMPATIBLE and rep.exit_code == 1
    pair = rep.pair("torch", "torch_npu")
    assert pair.verdict == INCOMPATIBLE
    assert "2.1.0" in pair.found and "2.4.0.post2" in pair.found
    assert pair.required == "torch 2.4.0"
    assert "github.com/Ascend/pytorch" in pair.source
    # and everything else that build needs
    assert any("needs torch 2.4.0; CANN 8.0.0" in n and "Python 3.8-3.11" in n for n in rep.notes)


def test_json_contract():
    rep = evaluate({"torch": "2.4.0", "torch_npu": "2.4.0.post2", "cann": "8.0.0", "python": "3.10"})
    data = json.loads(json.dumps(rep.to_json()))
    assert data["schema"] == 1
    assert data["stack"] == {"cann": "8.0.0", "python": "3.10", "torch": "2.4.0", "torch_npu": "2.4.0.post2"}
    assert data["verdict"] == COMPATIBLE
    for p in data["pairs"]:
        assert set(p) >= {"a", "b", "verdict", "found", "required", "source", "reason"}
        assert p["verdict"] in ("compatible", "not_recommended", "incompatible", "unknown")
    assert rep.exit_code == 0


@pytest.mark.parametrize("stack,pair,needle", [
    ({"torch_npu": "2.13.0", "cann": "9.2.0"}, ("cann", "torch_npu"), "9.2.0 is outside that range"),
    ({"torch_npu": "2.8.0", "cann": "8.3.RC2"}, ("cann", "torch_npu"), "appears in no torch_npu table"),
    ({"torch_npu": "2.7.1.dev20250724", "cann": "8.2.RC1"}, ("cann", "torch_npu"), "in no table"),
    ({"cann": "9.0.0", "driver": "27.0.0"}, ("cann", "driver"), "newer than every HDK"),
    ({"cann": "7.5.0", "driver": "24.1.0"}, ("cann", "driver"), "no source in the data"),
    ({"cann": "8.1.RC1", "driver": "23.0.3"}, ("cann", "driver"), "no release-note table"),
    ({"torch": "2.5.0", "python": "3.10"}, ("python", "torch"), "not in the PyTorch/Python table"),
    ({"driver": "25.2.0", "firmware": "7.7.0.1.231"}, ("driver", "firmware"), "compatible_version_fw is not known"),
    ({"driver": "26.1.0", "firmware": "7.8.0.6.201"}, ("driver", "firmware"), "version.info"),
    ({"torch_npu": "2.1.0.post4", "python": "3.9"}, ("python", "torch_npu"), "not published"),
])
def test_uncovered_stacks_are_unknown_with_a_reason(stack, pair, needle):
    rep = evaluate(stack)
    p = rep.pair(*pair)
    assert p.verdict == UNKNOWN, (p.verdict, p.reason)
    assert needle in p.reason
    assert rep.verdict == UNKNOWN


def test_downstream_pins_are_quoted_not_trusted():
    p = evaluate({"torch_npu": "2.9.0", "cann": "8.5.1"}).pair("cann", "torch_npu")
    assert p.verdict == UNKNOWN and "vllm-ascend" in p.reason and "not a vendor statement" in p.reason


def test_not_recommended_cases():
    # a pre-release build with the CANN alpha it was made for
    p = evaluate({"torch_npu": "2.4.0rc1", "cann": "8.0.RC3.alpha001"}).pair("cann", "torch_npu")
    assert p.verdict == NOT_RECOMMENDED and "pre-release" in p.reason
    # a driver between the lines the CANN 8.5.0 notes list, without being one of them
    p = evaluate({"cann": "8.5.0", "driver": "25.1.rc1"}).pair("cann", "driver")
    assert p.verdict == NOT_RECOMMENDED and "between" in p.reason
    # aarch64-only Python wheel
    p = evaluate({"torch_npu": "2.10.0.post6", "python": "3.12"}).pair("python", "torch_npu")
    assert p.verdict == NOT_RECOMMENDED and "aarch64" in p.reason


def test_worst_verdict_order():
    assert worst([COMPATIBLE, UNKNOWN]) == UNKNOWN
    assert worst([UNKNOWN, NOT_RECOMMENDED]) == NOT_RECOMMENDED
    assert worst([NOT_RECOMMENDED, INCOMPATIBLE, COMPATIBLE]) == INCOMPATIBLE
    assert worst([]) == UNKNOWN
    rep = evaluate({"torch": "2.1.0", "torch_npu": "2.4.0.post2", "cann": "8.3.RC2"})
    assert {p.verdict for p in rep.pairs} == {INCOMPATIBLE, UNKNOWN} and rep.verdict == INCOMPATIBLE


def test_community_cann_name_is_judged_as_commercial():
    rep = evaluate({"torch_npu": "2.4.0", "cann": "8.0.RC3.beta1"})
    assert rep.pair("cann", "torch_npu").verdict == COMPATIBLE
    assert any("community name" in n for n in rep.notes)


def test_contradiction_is_explained():
    rep = evaluate({"torch_npu": "2.1.0.post4", "cann": "8.0.RC1"})
    p = rep.pair("cann", "torch_npu")
    assert p.verdict == INCOMPATIBLE and "2.1.0.post3" in p.reason
    assert any("tool trusts" in n for n in rep.notes)
    assert any("not on PyPI" in n for n in rep.notes)


def test_torch_and_cann_without_torch_npu():
    p = evaluate({"torch": "2.4.0", "cann": "8.0.0"}).pair("cann", "torch")
    assert p.verdict == COMPATIBLE and p.required == "torch_npu 2.4.0.post2"


def test_chip_selects_hdk_rows():
    other = evaluate({"cann": "9.1.0", "driver": "25.7.rc1", "chip": "910B3"}).pair("cann", "driver")
    assert other.verdict != COMPATIBLE
    a350 = evaluate({"cann": "9.1.0", "driver": "25.7.rc1", "chip": "Atlas 350"}).pair("cann", "driver")
    assert a350.verdict == COMPATIBLE


def test_single_component_has_no_pair():
    rep = evaluate({"cann": "8.0.0"})
    assert rep.pairs == [] and rep.verdict == UNKNOWN and rep.exit_code == 1
    assert "no pair to judge" in rep.notes[0]


@pytest.mark.parametrize("stack,exc", [
    ({"cann": "banana"}, VersionError),
    ({"torch_npu": "2.x"}, VersionError),
    ({"chip": "banana"}, ChipError),
    ({"tensorflow": "2.6.5"}, ComponentError),
])
def test_bad_input_is_one_line_value_error(stack, exc):
    with pytest.raises(exc) as info:
        evaluate(stack)
    assert isinstance(info.value, ValueError)
    msg = str(info.value)
    assert "\n" not in msg and ("accepted" in msg or "known" in msg)


def test_cann_banana_message_lists_the_forms():
    with pytest.raises(VersionError) as info:
        evaluate({"cann": "banana"})
    assert "8.0.RC1" in str(info.value) and "9.0.0-beta.2" in str(info.value)


def test_component_names_and_empty_values():
    rep = evaluate({"torch-npu": "2.4.0.post2", "pytorch": "2.4.0", "cann": "", "python": None})
    assert rep.stack == {"torch": "2.4.0", "torch_npu": "2.4.0.post2"}


def test_pair_rejects_unknown_verdict():
    with pytest.raises(ValueError):
        Pair("a", "b", "maybe", "", None, None, "")
    assert Report(stack={}).verdict == UNKNOWN
