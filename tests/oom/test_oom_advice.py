"""Allocator advice: the data file, the release lines, and what gets recommended when."""
from __future__ import annotations

import pytest

from ascend_doctor.memory.advice import (ReleaseInfo, load_options, max_split_mb, parse_conf, plan_capacity,
                                         plan_external, plan_fragmentation, release_from_template, release_from_text)
from ascend_doctor.core.units import GiB, MiB
from ascend_doctor.memory.verdict import _KB


def test_data_file_is_complete_and_sourced():
    from compat_matrix import parse_version

    data = load_options()
    assert data["schema"] == 1 and data["env"]["npu"] == "PYTORCH_NPU_ALLOC_CONF"
    for name, opt in data["options"].items():
        parse_version(opt["since"], "torch_npu_release")
        assert opt["source"] and all(u.startswith("https://") for u in opt["source"]), name
        assert opt["setting"].startswith(name) and opt["what"] and opt["caveats"], name


def test_kb_entries_named_by_the_verb_exist():
    from ascend_doctor import kb

    base = kb.load()
    for entry_id in set(_KB.values()) | {"oom.driver_alloc", "oom.hccl_buffer"}:
        assert base.entry(entry_id).category in ("oom_capacity", "oom_fragmentation"), entry_id


@pytest.mark.parametrize("requested,mb", [(None, None), (22 * MiB, None), (72 * MiB, 32), (300 * MiB, 64),
                                          (int(2.37 * GiB), 512), (int(5.87 * GiB), 1024), (80 * GiB, 1024)])
def test_max_split_value_stays_below_the_request(requested, mb):
    assert max_split_mb(requested) == mb
    if mb:
        assert 20 < mb and mb * MiB * 2 <= requested


def test_parse_conf_keeps_bracketed_lists():
    assert parse_conf("expandable_segments:True,roundup_power2_divisions:[256:1,512:2,>:8],max_split_size_mb:128") == {
        "expandable_segments": "True", "roundup_power2_divisions": "[256:1,512:2,>:8]", "max_split_size_mb": "128"}
    assert parse_conf(None) == {} and parse_conf("") == {}


def test_release_lines():
    old = release_from_text("1.11.0.post1")  # release line 5.0.rc2: before expandable segments
    assert old.has("5.0.0") is False and old.has("5.0.rc2") is True
    new = release_from_text("2.7.1.post8")
    assert new.has("26.1.0") is True and new.has("7.3.0") is True
    assert release_from_template("npu_26").has("7.3.0") is True and release_from_template("npu_26").has("26.1.0") is None
    assert release_from_template("npu_pre26").has("26.1.0") is False and release_from_template("npu_pre26").has("5.0.0") is None
    assert release_from_template("cuda_2x") is None
    with pytest.raises(ValueError):
        release_from_text("not-a-version")


def test_old_torch_npu_gets_max_split_instead_of_expandable():
    plan = plan_fragmentation(int(2.37 * GiB), "npu", release_from_text("1.11.0.post1"), {}, False, False)
    status = {a.option: a.status for a in plan.advice}
    assert status == {"expandable_segments": "unsupported", "max_split_size_mb": "recommended",
                      "roundup_power2_divisions": "unsupported"}
    assert plan.commands == ["export PYTORCH_NPU_ALLOC_CONF=max_split_size_mb:512"]
    # 5.0.rc3 is the oldest line read: an older one is "unknown" for max_split_size_mb, not "missing"
    assert next(a for a in plan.advice if a.option == "max_split_size_mb").supported is None


def test_enabling_expandable_drops_conflicting_keys_but_keeps_the_rest():
    plan = plan_fragmentation(4 * GiB, "npu", None, parse_conf("max_split_size_mb:256,base_addr_aligned_kb:16"),
                              False, False)
    assert plan.commands == ["export PYTORCH_NPU_ALLOC_CONF=expandable_segments:True,base_addr_aligned_kb:16"]


def test_cuda_messages_get_the_cuda_variable():
    plan = plan_fragmentation(4 * GiB, "cuda", None, {}, False, False)
    assert plan.commands == ["export PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True"]
    assert all(a.supported is None for a in plan.advice)


def test_external_and_capacity_plans():
    mine = plan_external("npu", release_from_text("2.7.1.post8"), 3, [], same_process=True)
    assert "export PYTORCH_NPU_ALLOC_CONF=per_process_memory_fraction:0.9" in mine.commands
    older = plan_external("npu", release_from_text("2.1.0"), 3, [], same_process=True)
    assert older.code == ["torch_npu.npu.set_per_process_memory_fraction(0.9, 3)  # at start-up, before the model loads"]
    theirs = plan_external("npu", None, 0, [4242, 4343], same_process=False)
    assert "ps -o pid,user,etime,args -p 4343" in theirs.commands and not theirs.code
    assert [a.option for a in theirs.advice] == ["per_process_memory_fraction"]
    cap = plan_capacity("no_room", "npu", None, 0, 3 * GiB // 2)
    assert "at least 1.50 GiB more" in cap.fix_text and cap.commands[0].startswith("export OOM_SNAPSHOT_ENABLE=1")
    assert isinstance(ReleaseInfo("x").has("5.0.0"), type(None))
