"""The seams of memory/verdict.py:analyze: gather the numbers, decide, record, explain."""
from __future__ import annotations

import json

from ascend_doctor.memory.message import scan_text
from ascend_doctor.memory.model import Inputs
from ascend_doctor.memory.stats import load_stats
from ascend_doctor.memory.verdict import _allocator_conf, _device, analyze, decide, gather

from .conftest import GiB, load_yaml, trace_failure

# https://github.com/xingchensong/TouchNet/issues/100
TOUCHNET = next(m for m in load_yaml("messages.yaml")["messages"] if "TouchNet" in m["source"])


def _log():
    return scan_text(TOUCHNET["text"])


def _stats(tmp_path, values):
    path = tmp_path / "stats.json"
    path.write_text(json.dumps(values), encoding="utf-8")
    return load_stats(str(path))


def test_gather_takes_the_message_first_and_derives_the_gap():
    log = _log()
    g = gather(Inputs(log=log), log.first_oom)
    assert g.nums.sources["requested"] == "message" and g.nums.sources["reserved"] == "message"
    assert g.requested == g.nums.int("requested") and g.pool == "large"
    assert g.gap == g.reserved - g.allocated and g.gap > g.requested  # 8.08 GiB cached but unused against 5.03 GiB
    assert g.outside == max(g.total - g.reserved - g.free, 0)  # total came from the message


def test_gather_keeps_the_message_over_the_statistics(tmp_path):
    f = trace_failure("training_varlen")
    log, stats = scan_text(f.message), _stats(tmp_path, f.stats)
    g = gather(Inputs(log=log, stats=stats), log.first_oom)
    assert g.nums.sources["allocated"] == "message"
    assert g.nums.sources["inactive_split"] == "stats"  # only the statistics give it
    g2 = gather(Inputs(stats=stats), None)
    assert g2.nums.sources["allocated"] == "stats" and g2.requested is None and g2.pool == "large"


def test_device_preference():
    log = _log()  # the message names NPU 3
    rec = log.first_oom.record
    assert _device(Inputs(log=log, device=5), rec) == 5
    assert _device(Inputs(log=log), rec) == 3
    assert _device(Inputs(), None) is None


def test_decide_follows_the_message_or_declines(tmp_path):
    log = _log()
    g = gather(Inputs(log=log), log.first_oom)
    d = decide(Inputs(log=log), log.first_oom.record, g)
    assert (d.verdict, d.rule) == (TOUCHNET["verdict"], TOUCHNET["rule"])
    healthy = _stats(tmp_path, {"allocated_bytes.all.current": GiB, "reserved_bytes.all.current": GiB, "num_ooms": 0})
    assert decide(Inputs(stats=healthy), None, gather(Inputs(stats=healthy), None)) is None


def test_allocator_conf_given_beats_the_log():
    conf, on = _allocator_conf(Inputs(log=_log(), alloc_conf="expandable_segments:True"))
    assert conf.get("expandable_segments") == "True" and on is True
    conf, on = _allocator_conf(Inputs(log=_log()))
    assert on is False


def test_analyze_puts_the_pieces_together():
    log = _log()
    diag = analyze(Inputs(log=log))
    g = gather(Inputs(log=log), log.first_oom)
    assert diag.numbers["reserved_unallocated"] == g.gap and diag.sources["requested"] == "message"
    assert (diag.status, diag.verdict, diag.device) == ("oom", TOUCHNET["verdict"], 3)
    assert diag.plan is not None and diag.kb == "oom.npu_fragmentation"


def test_notes_on_other_out_of_memory_events():
    from ascend_doctor.memory.explanation import _other_ooms

    # https://github.com/vllm-project/vllm-omni/issues/1199 (a second, different event)
    other = next(m for m in load_yaml("messages.yaml")["messages"] if "vllm-omni/issues/1199" in m["source"])
    twice = scan_text(TOUCHNET["text"] + "\n" + TOUCHNET["text"])
    assert _other_ooms(twice, twice.first_oom) == [
        "the same out-of-memory message appears 2 times (console and plog copies, or ranks that failed alike)"]
    mixed = scan_text(TOUCHNET["text"] + "\n" + other["text"])
    (note,) = _other_ooms(mixed, mixed.first_oom)
    assert note.startswith("2 different out-of-memory events in the logs") and note.endswith(f"1 {other['verdict']}")
    assert _other_ooms(_log(), _log().first_oom) == []


def test_notes_from_the_statistics():
    from types import SimpleNamespace

    from ascend_doctor.memory.explanation import _stats_notes

    log = _log()
    frag = SimpleNamespace(verdict="oom_fragmentation")
    stats = SimpleNamespace(max_split_size=512 << 20, reserved=log.first_oom.record.reserved)
    assert _stats_notes(frag, stats, log.first_oom) == [
        "max_split_size_mb is already set (512 MB): lower it below the failing request, or switch to expandable segments"]
    later = SimpleNamespace(max_split_size=None, reserved=stats.reserved + 4 * GiB)
    (note,) = _stats_notes(frag, later, log.first_oom)
    assert "reserved differs by 4.00 GiB" in note
