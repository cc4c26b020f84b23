"""The simulator's failures through the doctor: the three fragmentation traces must read as
oom_fragmentation from each input alone and from all together; a workload that outgrows the
device as oom_capacity; another process holding the device as external. The advice is then
replayed: the settings the doctor recommends must let the same trace finish."""
from __future__ import annotations

import pytest

from ascend_doctor.memory.advice import max_split_mb
from ascend_doctor.memory.device_usage import npu_smi_facts
from ascend_doctor.memory.message import scan_text
from ascend_doctor.memory.snapshot import snapshot_facts
from ascend_doctor.memory.stats import stats_from_mapping
from ascend_doctor.memory.verdict import Inputs, analyze

from .conftest import NPU_SMI, TRACES, GiB, capacity_failure, external_failure, trace_failure


def _inputs(f, use=("message", "stats", "snapshot"), **kw):
    return Inputs(log=scan_text(f.message) if "message" in use else None,
                  stats=stats_from_mapping(f.stats) if "stats" in use else None,
                  snapshot=snapshot_facts(f.snapshot) if "snapshot" in use else None, **kw)


@pytest.mark.parametrize("name", TRACES)
@pytest.mark.parametrize("use", [("message",), ("stats",), ("snapshot",), ("message", "stats", "snapshot")])
def test_fragmentation_traces(name, use):
    f = trace_failure(name)
    assert not f.result.completed
    d = analyze(_inputs(f, use))
    assert (d.status, d.verdict) == ("oom", "oom_fragmentation"), (name, use, d.title)
    assert d.kb == "oom.npu_fragmentation"


@pytest.mark.parametrize("name", TRACES)
def test_fragmentation_numbers_match_the_allocator(name):
    f = trace_failure(name)
    d = analyze(_inputs(f))
    n = d.numbers
    fields = f.result.error.fields
    assert abs(n["requested"] - fields["alloc_size"]) <= GiB // 200 and n["total"] == fields["total"]
    assert abs(n["reserved"] - fields["reserved"]) <= GiB // 200  # printed with two decimals
    assert n["inactive_split"] == f.result.inactive_split_bytes and n["largest_free_block"] == f.result.largest_free_block
    assert d.sources["requested"] == "message" and d.sources["inactive_split"] == "stats"
    assert n["largest_free_block"] < n["requested"]  # "free looks sufficient", yet no block fits
    assert any(e.source == "snapshot" and e.text.startswith("segment at 0x") for e in d.evidence)


def test_capacity():
    f = capacity_failure()
    for use in (("message",), ("stats",), ("message", "stats", "snapshot")):
        d = analyze(_inputs(f, use))
        assert (d.status, d.verdict) == ("oom", "oom_capacity"), (use, d.title)
    d = analyze(_inputs(f))
    assert d.rule == "no_room" and "shard" in d.plan.fix_text
    assert not any(a.status == "recommended" for a in d.plan.advice)


def test_external_from_the_message_alone():
    f = external_failure()
    d = analyze(_inputs(f, ("message",)))
    assert (d.verdict, d.rule) == ("external", "external") and d.numbers["outside_pytorch"] == 40 * GiB
    assert d.kb == "oom.npu_external"


def test_external_with_npu_smi_showing_another_process():
    from runtime_sim.host.npu_smi import SmiChip, SmiProcess, render_info

    f = external_failure(other_gib=20.0)  # 20 GiB elsewhere: below half the device, so npu-smi must tell
    chips = [SmiChip(npu_id=i, chip=0, logic_id=i, name="910B3", health="OK", power="98.3", temp=43, hugepages=(0, 0),
                     bus_id="0000:C1:00.0", aicore=0, memory=(0, 0), hbm=(63900 if i == 0 else 3353, 65536))
             for i in range(2)]
    procs = [SmiProcess(0, 0, 49943, "", 20480), SmiProcess(0, 0, 2111667, "python3", 40000)]
    smi = render_info("a2", "23.0.7", "23.0.7", chips, procs)
    without = analyze(_inputs(f, ("message",)))
    assert without.verdict == "oom_capacity"
    usage = npu_smi_facts(smi, 0, pid=2111667)
    d = analyze(_inputs(f, ("message",), usage=usage))
    assert (d.verdict, d.rule) == ("external", "external_processes")
    assert d.others == [{"pid": 49943, "name": "", "bytes": 20480 << 20}]
    assert "ps -o pid,user,etime,args -p 49943" in d.plan.commands


def test_external_with_the_real_busy_npu_smi_table():
    # vllm-ascend#1895: NPUs 0-3 held by processes of 56681 MB each; our job fails on NPU 2
    smi = (NPU_SMI / "a2_910b3_driver23.0.7_busy.txt").read_text()
    line = ("RuntimeError: NPU out of memory. Tried to allocate 2.00 GiB (NPU 2; 64.00 GiB total capacity; 1.00 GiB "
            "already allocated; 1.00 GiB current active; 1.43 GiB free; 1.02 GiB reserved in total by PyTorch)")
    usage = npu_smi_facts(smi, 2, pid=12345)
    assert usage.ours is None and usage.others_bytes == 56681 << 20 and usage.total == 65536 << 20
    d = analyze(Inputs(log=scan_text(line), usage=usage))
    assert d.verdict == "external" and any("no longer in the npu-smi table" in n for n in d.notes)


@pytest.mark.parametrize("name", TRACES)
def test_recommended_settings_let_the_trace_finish(name):
    from runtime_sim.allocator import load_trace, replay

    f = trace_failure(name)
    d = analyze(_inputs(f, ("message",)))
    recommended = [a for a in d.plan.advice if a.status == "recommended"]
    assert [a.option for a in recommended] == ["expandable_segments"]
    trace = load_trace(name)
    for setting in (recommended[0].setting, f"max_split_size_mb:{max_split_mb(d.numbers['requested'])}"):
        result = replay(trace, trace.allocator(setting))
        assert result.completed, (name, setting, result.oom_message)
    assert d.plan.commands[0] == "export PYTORCH_NPU_ALLOC_CONF=expandable_segments:True"


def test_after_the_fix_the_stats_read_healthy_or_warn():
    f = trace_failure("training_varlen", conf="expandable_segments:True")
    assert f.result.completed
    d = analyze(_inputs(f, ("stats", "snapshot")))
    assert (d.status, d.verdict) == ("healthy", "none") and not d.is_finding
    g = trace_failure("video_diffusion", conf="expandable_segments:True")
    d = analyze(_inputs(g, ("stats",)))
    assert (d.status, d.rule) == ("at_risk", "pressure")  # it finished, but flushed the cache twice
    assert d.counts["num_alloc_retries"] == g.result.num_alloc_retries == 2


def test_with_expandable_segments_a_too_small_device_reads_as_capacity():
    # 8 GiB held elsewhere leaves 56 GiB, below the trace's ideal peak (57.95 GiB): no allocator
    # setting can help, and the doctor must not recommend one
    f = trace_failure("video_diffusion", conf="expandable_segments:True", non_torch_bytes=8 * GiB)
    assert not f.result.completed
    d = analyze(_inputs(f, ("message", "snapshot"), alloc_conf="expandable_segments:True"))
    assert (d.verdict, d.rule) == ("oom_capacity", "no_room")
    assert not any("ALLOC_CONF" in c for c in d.plan.commands)


def test_fragmentation_with_expandable_already_on_gets_workload_advice():
    f = trace_failure("llm_serving_kv_concat")
    d = analyze(_inputs(f, ("message",), alloc_conf="expandable_segments:True,roundup_power2_divisions:4"))
    exp = next(a for a in d.plan.advice if a.option == "expandable_segments")
    assert d.verdict == "oom_fragmentation" and exp.status == "already_set"
    assert "pre-allocate" in d.plan.fix_text and not any("expandable_segments" in c for c in d.plan.commands)
