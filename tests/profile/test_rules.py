"""Rules on purpose-built captures (written by runtime_sim's profiler writer, so in the real
columns), and the interval union the busy share rests on."""
from __future__ import annotations

import random

from ascend_doctor.profile import analyze
from ascend_doctor.profile.device import Union
from runtime_sim.profiler.engine import AIV, AIC, Op, Workload, capture
from runtime_sim.profiler.writers import write_torch_npu


class _LayerNormCollapse(Workload):
    """LayerNormV3 on four shapes; on one of them it is 30x slower per element (a generic path)."""

    steps = 6

    def ops(self, step, rank, rng):
        out = []
        for seq in (512, 1024, 2048, 777):
            per_elem = 0.00002 * (30 if seq == 777 else 1)
            out.append(Op("LayerNormV3", AIV, seq * 4096 * per_elem, f"{seq},4096;4096;4096"))
            out.append(Op("MatMulV2", AIC, 300.0, f"{seq},4096;4096,4096"))
        return out


def test_an_op_far_slower_than_its_other_shapes_is_a_slow_path(tmp_path):
    work = _LayerNormCollapse({})
    write_torch_npu(lambda: capture(work, 0, 1), tmp_path, pid=1, rank=None, device=0, torch_npu="2.1.0.post13", cann="8.2.RC1")
    doc = analyze([str(tmp_path)])
    (slow,) = [o for o in doc["devices"][0]["slow_path_ops"] if o["type"] == "LayerNormV3"]
    assert slow["core"] == "AI_CORE" and "777,4096" in slow["reason"]
    assert any(f["id"] == "slow_path.outlier" for f in doc["findings"])


def test_no_outlier_when_time_follows_the_shape(tmp_path):
    class Even(_LayerNormCollapse):
        def ops(self, step, rank, rng):
            return [Op("LayerNormV3", AIV, seq * 4096 * 0.00002, f"{seq},4096;4096;4096") for seq in (512, 1024, 2048, 777)]

    write_torch_npu(lambda: capture(Even({}), 0, 1), tmp_path, pid=1, rank=None, device=0, torch_npu="2.1.0.post13", cann="8.2.RC1")
    assert analyze([str(tmp_path)])["devices"][0]["slow_path_ops"] == []


def _exact(intervals):
    total, cur_s, cur_e = 0.0, None, None
    for s, e in sorted(intervals):
        if cur_e is None or s > cur_e:
            if cur_e is not None:
                total += cur_e - cur_s
            cur_s, cur_e = s, e
        else:
            cur_e = max(cur_e, e)
    return total + (cur_e - cur_s if cur_e is not None else 0.0)


def test_union_of_intervals_from_interleaved_streams():
    rng = random.Random(7)
    streams = []
    for k in range(4):  # four streams, each in order, interleaved out of order overall
        t, ivs = 1.7e15 + k * 3.0, []
        for _ in range(3000):
            t += rng.uniform(0, 40)
            d = rng.uniform(0.5, 30)
            ivs.append((t, t + d))
            t += d
        streams.append(ivs)
    merged = []
    for i in range(3000):
        for ivs in streams:
            merged.append(ivs[i])
    u = Union()
    for s, e in merged:
        u.push(s, e)
    u.finish()
    assert abs(u.total - _exact(merged)) < 1e-3 * _exact(merged)
    gaps = sorted(u.gaps, reverse=True)
    assert gaps and gaps[0][0] > 0
