"""The device rules of profile/analysis.py:device_findings, one function each, run in order."""
from __future__ import annotations

from types import SimpleNamespace

from ascend_doctor.profile import analysis
from ascend_doctor.profile.analysis import _DeviceView


def _view(**kw):
    acc = SimpleNamespace(labels={1: ("Add", ""), 2: ("Mul", "")}, rank=3, device=0, host={}, optimizers={}, patterns={},
                          small_runs=0, compute_count=0, small_count=0)
    doc = {"copy_pct": None, "dynamic_shape_ops": [], "slow_path_ops": [], "largest_gaps": [{"gap_us": 120.0}]}
    base = dict(acc=acc, doc=doc, where="rank 3",
                span=1000.0, busy=90.0, seqs=[(400.0, (1, 2), 50, 100.0)], alloc=None, compiles=None)
    base.update(kw)
    return _DeviceView(**base)


def test_rules_in_the_order_of_the_layers():
    names = [r.__name__ for r in analysis._DEVICE_RULES]
    assert names == ["_rule_dispatch_host_bound", "_rule_dispatch_allocation", "_rule_copy", "_rule_fusion_patterns",
                     "_rule_fusion_optimizer", "_rule_fusion_sequences", "_rule_dynamic_shapes", "_rule_slow_path"]


def test_sequence_text_names_the_kernels():
    v = _view()
    assert v.seq_text(v.seqs[0]) == "the kernel sequence Add > Mul repeats 50x and keeps the device busy only 25% of its wall time"


def test_host_bound_sequence_is_said_once():
    v = _view()
    alone = analysis._rule_fusion_sequences(v, [])
    assert [f["id"] for f in alone] == ["fusion.host_bound_sequence"] and alone[0]["device"] == "rank 3"
    # when the dispatch rule already fired, it names the sequence: the fusion rule stays silent
    assert analysis._rule_fusion_sequences(v, [{"id": "dispatch.host_bound"}]) == []


def test_allocation_rule_needs_enough_host_time():
    from ascend_doctor.profile import facts

    assert analysis._rule_dispatch_allocation(_view(alloc=[3, facts.ALLOC_TOTAL_US / 2]), []) == []
    found = analysis._rule_dispatch_allocation(_view(alloc=[40, facts.ALLOC_TOTAL_US * 2]), [])
    assert [f["id"] for f in found] == ["dispatch.allocation"] and "40 device memory allocations" in found[0]["summary"]
