"""`profile` on real torch_npu profiler output (tests/profile/data/README.md gives the source):
it must report what the profiler's own summary files say."""
from __future__ import annotations

import csv
import shutil
from pathlib import Path

import pytest

from ascend_doctor.profile import analyze

DATA = Path(__file__).parent / "data"
OUT = "ASCEND_PROFILER_OUTPUT"


def _summary_busy(path: Path):
    with open(path, newline="", encoding="utf-8") as fh:
        row = next(csv.DictReader(fh))
    comp, comm, free = (float(row[k]) for k in ("Computing", "Communication(Not Overlapped)", "Free"))
    e2e = comp + comm + free
    return 100 * (comp + comm) / e2e, 100 * comm / e2e


def _only(tmp_path: Path, rank_dir: Path, *names: str) -> Path:
    dest = tmp_path / rank_dir.name / OUT
    dest.mkdir(parents=True)
    for n in names:
        shutil.copy(rank_dir / OUT / n, dest / n)
    return tmp_path


@pytest.mark.parametrize("rank", [0, 1])
def test_top_ops_from_kernels_match_op_statistic(tmp_path, rank):
    rank_dir = DATA / "level1" / f"rank{rank}_ascend_pt"
    doc = analyze([str(_only(tmp_path, rank_dir, "kernel_details.csv"))])
    (dev,) = doc["devices"]
    ours = [o for o in dev["top_ops"] if o["core"] not in ("HCCL", "COMMUNICATION")]
    with open(rank_dir / OUT / "op_statistic.csv", newline="", encoding="utf-8") as fh:
        theirs = list(csv.DictReader(fh))
    assert [o["type"] for o in ours[:5]] == [r["OP Type"] for r in theirs[:5]]
    for o, r in zip(ours[:5], theirs[:5]):
        assert o["core"] == r["Core Type"]
        assert o["count"] == int(r["Count"])
        assert o["total_us"] == pytest.approx(float(r["Total Time(us)"]), rel=1e-3)


@pytest.mark.parametrize("rank", [0, 1])
def test_busy_share_from_kernels_matches_step_trace(tmp_path, rank):
    rank_dir = DATA / "level1" / f"rank{rank}_ascend_pt"
    doc = analyze([str(_only(tmp_path, rank_dir, "kernel_details.csv"))])
    (dev,) = doc["devices"]
    busy, comm = _summary_busy(rank_dir / OUT / "step_trace_time.csv")
    assert dev["busy_pct"] == pytest.approx(busy, abs=0.1)
    assert dev["comm_pct"] == pytest.approx(comm, abs=0.1)


@pytest.mark.parametrize("name", ["trace_view.json", "kernel_details.csv"])
def test_level0_timeline_and_typeless_kernel_table(tmp_path, name):
    """Level0: the kernel table has no Type/core columns and the timeline no type column; both
    give the step trace's busy share and the same op types."""
    rank_dir = DATA / "level0" / "rank0_ascend_pt"
    doc = analyze([str(_only(tmp_path, rank_dir, name))])
    (dev,) = doc["devices"]
    busy, comm = _summary_busy(rank_dir / OUT / "step_trace_time.csv")
    assert dev["busy_pct"] == pytest.approx(busy, abs=0.1)
    assert dev["comm_pct"] == pytest.approx(comm, abs=0.1)
    types = [o["type"] for o in dev["top_ops"] if o["type"] != "MEMCPY_ASYNC"]
    assert types[:4] == ["hcom_allReduce_", "ForeachAddList", "TransData", "MatMulV2"]


def test_two_ranks_with_their_summaries(tmp_path):
    doc = analyze([str(DATA / "level1")])
    assert [d["rank"] for d in doc["devices"]] == [0, 1]
    for d in doc["devices"]:
        busy, comm = _summary_busy(DATA / "level1" / f"rank{d['rank']}_ascend_pt" / OUT / "step_trace_time.csv")
        assert d["busy_pct"] == pytest.approx(busy, abs=0.01)
        assert d["comm_pct"] == pytest.approx(comm, abs=0.01)
    assert [(r["layout"], r.get("level"), r.get("rank")) for r in doc["runs"]] == [("torch_npu", "Level1", 0), ("torch_npu", "Level1", 1)]
    # rank 0 waits longer in the all-reduce (74.7% vs 73.1%): rank 1 is the one the other waits for
    assert doc["slowest_rank"] == 1
    assert doc["findings"][0]["layer"] == "communication"
