"""Reading memory_stats() and memory snapshots in the shapes people save them."""
from __future__ import annotations

import json
import pickle
import pprint
from collections import OrderedDict

import pytest

from ascend_doctor.memory import MemoryInputError
from ascend_doctor.memory.snapshot import load_snapshot, snapshot_facts
from ascend_doctor.memory.stats import load_stats, parse_stats_text
from ascend_doctor.core.units import MiB, parse_size
from ascend_doctor.memory.verdict import Inputs, analyze

from .conftest import DATA, trace_failure


def test_sizes_keep_their_printing_error():
    assert parse_size("22.00 MiB").value == 22 * MiB and parse_size("22.00 MiB").error == MiB // 200
    s = parse_size("1062 MB", floor_divided=True)  # memory_summary: 1062..1063 MiB
    assert s.low == 1062 * MiB and s.high == 1063 * MiB
    assert parse_size("512 bytes").value == 512 and parse_size("twelve MiB") is None


def test_flat_nested_wrapped_and_printed_stats_read_alike():
    f = trace_failure("llm_serving_kv_concat")
    flat = f.stats
    nested = {}
    for key, value in flat.items():
        node = nested
        parts = key.split(".")
        for p in parts[:-1]:
            node = node.setdefault(p, {})
        node[parts[-1]] = value
    # ROCm/pytorch#703 shows how the dict prints: pprint of an OrderedDict, one pair per line
    printed = pprint.pformat(OrderedDict(flat))
    assert printed.startswith("OrderedDict([(")
    forms = [json.dumps(flat), json.dumps(nested), json.dumps({"schema": 1, "stats": flat}), printed, repr(dict(flat))]
    readings = [parse_stats_text(t) for t in forms]
    assert all(r.values == readings[0].values for r in readings)
    st = readings[0]
    assert st.inactive_split == f.result.inactive_split_bytes and st.num_ooms == 1
    assert st.num_alloc_retries == f.result.num_alloc_retries and st.max_split_size is None


def test_stats_with_wrong_keys_or_values_are_refused(tmp_path):
    with pytest.raises(MemoryInputError, match="not torch.npu.memory_stats"):
        parse_stats_text(json.dumps({"loss": 1.5, "step": 3}))
    with pytest.raises(MemoryInputError, match="expected a number"):
        parse_stats_text(json.dumps({"allocated_bytes.all.current": "big"}))
    with pytest.raises(MemoryInputError, match="neither JSON"):
        parse_stats_text("allocated: lots")
    with pytest.raises(MemoryInputError, match="empty"):
        parse_stats_text("  \n")
    bad = tmp_path / "s.pickle"
    bad.write_bytes(pickle.dumps({"a": 1}))
    with pytest.raises(MemoryInputError, match="binary"):
        load_stats(str(bad))
    with pytest.raises(MemoryInputError, match="no such file"):
        load_stats(str(tmp_path / "nope.json"))


def test_memory_summary_after_an_oom_pytorch_35901():
    st = load_stats(str(DATA / "summary_pytorch_35901.txt"))
    assert (st.origin, st.device, st.flavor, st.num_ooms, st.num_alloc_retries) == ("memory_summary", 0, "cuda", 1, 1)
    assert st.allocated // MiB == 1062 and st.reserved // MiB == 12420
    assert st.get("allocated_bytes.large_pool.current") // MiB == 1048
    d = analyze(Inputs(stats=st))
    # no inactive_split row in the excerpt: after the OOM flush, reserved - allocated is what is stranded
    assert (d.verdict, d.rule, d.status) == ("oom_fragmentation", "stats_stranded", "oom")


def test_memory_summary_abbreviated_with_a_cache_flush_pytorch_37250():
    st = load_stats(str(DATA / "summary_pytorch_37250.txt"))
    assert st.num_ooms == 0 and st.num_alloc_retries == 1 and st.reserved is None
    assert st.allocated == 183578 * 1024 + 512  # floor-divided: the middle of 183578..183579 KiB
    d = analyze(Inputs(stats=st))
    assert (d.status, d.rule) == ("at_risk", "pressure")


def test_memory_summary_with_kib_units_rocm_gfx803_2():
    st = load_stats(str(DATA / "summary_rocm_gfx803_2.txt"))
    assert st.num_ooms == 2 and st.requested // 1024 == 382704
    d = analyze(Inputs(stats=st))
    assert (d.verdict, d.rule) == ("oom_capacity", "numbers_missing")  # no reserved row: nothing to compare


def test_summary_rows_without_their_header_vissl_514():
    st = load_stats(str(DATA / "summary_vissl_514_rows.txt"))
    assert st.reserved // MiB == 8184 and st.inactive_split // 1024 == 202300 and st.get("allocation.all.current") == 545
    assert analyze(Inputs(stats=st)).status == "healthy"  # 2 % of the cache stranded, no OOM recorded


def test_npu_summary_labels():
    # torch_npu/npu/memory.py memory_summary(): "NPU reserved memory", "NPU OOMs ... npuMalloc retries"
    text = "\n".join([
        "|" + "=" * 75 + "|",
        "|                  PyTorch NPU memory summary, device ID 3                  |",
        "|            NPU OOMs: 1            |        npuMalloc retries: 5          |",
        "| Allocated memory      |   50042 MB |   52011 MB |  900000 MB |  849958 MB |",
        "| NPU reserved memory   |   56822 MB |   56822 MB |   60000 MB |    3178 MB |",
        "| Non-releasable memory |    6776 MB |    7001 MB |  400000 MB |  393224 MB |",
    ])
    st = parse_stats_text(text)
    assert (st.flavor, st.device, st.num_alloc_retries) == ("npu", 3, 5) and st.inactive_split // MiB == 6776


def test_snapshot_pickle_and_json_agree(tmp_path):
    f = trace_failure("training_varlen")
    pk, js = tmp_path / "s.pickle", tmp_path / "s.json"
    pk.write_bytes(pickle.dumps(f.snapshot))
    js.write_text(json.dumps(f.snapshot))
    a, b = load_snapshot(str(pk)), load_snapshot(str(js))
    assert (a.reserved, a.allocated, a.largest_free()) == (b.reserved, b.allocated, b.largest_free())
    assert a.reserved == f.result.reserved and a.allocated == f.result.allocated
    assert a.largest_free() == f.result.largest_free_block and a.nonreleasable == f.result.inactive_split_bytes
    assert a.oom_events and a.oom_events[-1].device_free == f.result.device_free
    seg_list = snapshot_facts(f.snapshot["segments"])  # memory_snapshot(): the list alone
    assert seg_list.layout == "segments" and seg_list.reserved == a.reserved and not seg_list.oom_events


def test_old_torch_npu_snapshot_layout():
    # THNPModule_memorySnapshot of old torch_npu: no stream, no block address, no requested_size
    segs = [{"device": 0, "address": 1 << 40, "total_size": 20 << 20, "allocated_size": 8 << 20, "active_size": 8 << 20,
             "segment_type": "large", "blocks": [{"size": 8 << 20, "state": "active_allocated"},
                                                 {"size": 12 << 20, "state": "inactive"}]},
            {"device": 0, "address": 2 << 40, "total_size": 2 << 20, "allocated_size": 0, "active_size": 0,
             "segment_type": "small", "blocks": [{"size": 2 << 20, "state": "inactive"}]}]
    s = snapshot_facts(segs)
    assert (s.nonreleasable, s.releasable, s.largest_free("large"), s.requested) == (12 << 20, 2 << 20, 12 << 20, None)


def test_a_hostile_pickle_is_refused_without_running_it(tmp_path):
    class Boom:
        def __reduce__(self):
            return (print, ("this must never run",))

    p = tmp_path / "evil.pickle"
    p.write_bytes(pickle.dumps({"segments": [Boom()]}))
    with pytest.raises(MemoryInputError, match="refusing builtins.print"):
        load_snapshot(str(p))


@pytest.mark.parametrize("payload,message", [
    (b'{"loss": 1}', "no 'segments' key"),
    (b'{"segments": [{"total_size": 1}]}', "no total_size/blocks"),
    (b'{"segments": [{"total_size": 1, "blocks": [{"size": 1, "state": "mystery"}]}]}', "unknown block state"),
    (b'"text"', "not a memory snapshot"),
    (b"\x80\x04\x95", "not a readable pickle"),
    (b"GIF89a", "not a memory snapshot"),
])
def test_not_a_snapshot(tmp_path, payload, message):
    p = tmp_path / "x"
    p.write_bytes(payload)
    with pytest.raises(MemoryInputError, match=message):
        load_snapshot(str(p))


def test_device_selection_in_a_multi_device_snapshot():
    f = trace_failure("video_diffusion")
    other = json.loads(json.dumps(f.snapshot["segments"][:1]))
    other[0]["device"] = 1
    data = {"segments": f.snapshot["segments"] + other, "device_traces": f.snapshot["device_traces"] + [[]]}
    assert snapshot_facts(data, device=1).reserved == other[0]["total_size"]
    assert snapshot_facts(data).device == 0  # the device with the oom trace entry
    with pytest.raises(MemoryInputError, match="no segments of device 5"):
        snapshot_facts(data, device=5)
