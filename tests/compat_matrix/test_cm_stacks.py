"""suggest() and upgrade_path()."""
from __future__ import annotations

import pytest

from compat_matrix import evaluate, suggest, upgrade_path
from compat_matrix.report import COMPATIBLE
from compat_matrix.versions import parse_version


def test_suggest_torch_2_4_lists_full_stacks_newest_first():
    stacks = suggest({"torch": "2.4.0"})
    assert [s.components["torch_npu"] for s in stacks] == ["2.4.0.post4", "2.4.0.post2", "2.4.0"]
    assert [s.components["cann"] for s in stacks] == ["8.1.RC1", "8.0.0", "8.0.RC3"]
    for s in stacks:
        assert {"cann", "torch", "torch_npu", "driver"} <= set(s.components)
        assert s.python == ["3.8", "3.9", "3.10", "3.11"]
        assert s.branch.startswith("v2.4.0-") and s.sources
        check = dict(s.components, python=s.python[0])
        assert evaluate(check).verdict == COMPATIBLE


def test_suggest_cann_and_chip():
    stacks = suggest({"cann": "8.0.0", "chip": "910B"})
    built = [s.components["torch_npu"] for s in stacks if s.pairing == "built_for"]
    assert built == ["2.4.0.post2", "2.3.1.post4", "2.1.0.post10"]
    assert stacks[0].pairing == "built_for"  # the builds made for the pinned CANN come first
    supported = [s for s in stacks if s.pairing == "supported"]
    assert supported and all(s.notes for s in supported)
    for s in stacks:
        assert s.components["cann"] == "8.0.0" and s.components["chip"] == "910b"
        assert s.components["driver"] == "24.1.RC2" and s.components["firmware"] == "7.3.0.1.231"


def test_suggest_python_pin_and_impossible_pins():
    for s in suggest({"python": "3.13"}):
        assert s.python == ["3.13"]
    assert suggest({"torch": "2.1.0", "cann": "9.1.0"}) == []
    assert suggest({"torch_npu": "2.4.0.post2", "python": "3.12"}) == []


def test_suggest_with_pinned_incompatible_driver_finds_nothing():
    assert suggest({"cann": "9.1.0", "driver": "25.0.rc1"}) == []


def test_suggest_includes_prerelease_only_on_request():
    # GA: in the official table, or a final release on the index whose CANN its wheel / line states
    assert all(s.status in ("active", "eol", "published") for s in suggest({}))
    pre = suggest({"torch": "2.9.0"}, include_prerelease=True)
    assert any(s.status == "prerelease" for s in pre)


def _order(plan):
    return [s.component for s in plan.steps]


def test_upgrade_moves_in_install_order():
    cur = {"driver": "24.1.rc2", "firmware": "7.3.0.1.231", "cann": "8.0.0", "torch": "2.1.0",
           "torch_npu": "2.1.0.post10", "python": "3.9", "chip": "910B3"}
    plan = upgrade_path(cur, {"cann": "8.5.0"})
    assert _order(plan) == ["firmware", "driver", "cann", "torch", "torch_npu"]
    assert plan.target["cann"] == "8.5.0" and plan.target["python"] == "3.9"  # Python kept
    assert plan.after.verdict == COMPATIBLE
    assert any("reboot" in n for n in plan.notes)
    cann_step = plan.steps[2]
    assert any("Ascend-cann-910b-ops_8.5.0" in c for c in cann_step.commands)


def test_upgrade_keeps_the_driver_when_it_can():
    cur = {"driver": "26.0.rc1", "cann": "9.0.0", "torch": "2.7.1", "torch_npu": "2.7.1.post4", "python": "3.11"}
    plan = upgrade_path(cur, {"torch_npu": "2.9.0.post2"})
    assert _order(plan) == ["torch", "torch_npu"]
    assert plan.target["driver"] == "26.0.RC1"


def test_first_install_puts_driver_before_firmware():
    plan = upgrade_path({}, {"torch": "2.6.0", "chip": "310P3"})
    order = _order(plan)
    assert order.index("driver") < order.index("firmware") < order.index("cann") < order.index("torch_npu")


def test_upgrade_to_nothing_supported_raises():
    with pytest.raises(ValueError):
        upgrade_path({"torch": "2.1.0"}, {"torch": "2.1.0", "cann": "9.1.0"})


def test_json_shapes():
    s = suggest({"torch": "2.4.0"})[0].to_json()
    assert set(s) >= {"components", "python", "drivers", "release", "branch", "status", "pairing", "sources"}
    plan = upgrade_path({"torch": "2.1.0", "torch_npu": "2.1.0.post10", "cann": "8.0.0"},
                        {"torch_npu": "2.1.0.post17"}).to_json()
    assert plan["schema"] == 1 and plan["steps"][-1]["to"] == "2.1.0.post17"
    assert all(parse_version(s["to"], s["component"]) for s in plan["steps"] if not s["to"].startswith("firmware of"))
