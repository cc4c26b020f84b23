"""Multi-rank HCCL: one rank fails or stalls first, the others time out later."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from runtime_sim.hccl import HcclJob, run_job
from runtime_sim.runtime import Stack

try:
    from plog_samples import LINE, body_style_ok, parse
except ImportError:
    from tests.runtime_sim.plog_samples import LINE, body_style_ok, parse

S83 = Stack(cann="8.3.RC1", torch_npu="2.1.0.post17")
S91 = Stack(cann="9.1.0", torch_npu="2.7.1.post8")


def grep(outcome, pattern: str, rank=None):
    rx = re.compile(pattern)
    hits = []
    for r in outcome.ranks:
        if rank is not None and r.rank != rank:
            continue
        for path in r.logs:
            for line in path.read_text().splitlines():
                if rx.search(line):
                    hits.append((r.rank, path, line))
    return hits


@pytest.fixture(scope="module")
def exec_job(tmp_path_factory):
    root = tmp_path_factory.mktemp("hccl")
    return run_job(HcclJob(world_size=8, root_rank=3, entry_log=True, fault_step=6), S83, [root], seed=11)


def test_every_rank_writes_its_own_plog_tree(exec_job):
    pids = set()
    for r in exec_job.ranks:
        names = [p.name for p in r.logs]
        assert any(n.startswith("plog-%d_" % r.pid) for n in names)
        assert any(str(p).endswith(".log") and "/run/device-%d/" % r.device in str(p) for p in r.logs)
        pids.add(r.pid)
        for path in r.logs:
            stamps = []
            for line in path.read_text().splitlines():
                m = parse(line)
                assert body_style_ok(m.group("module"), m.group("body")), line
                stamps.append(m.group("ts"))
            assert stamps == sorted(stamps), path
    assert len(pids) == 8


def test_root_fails_first_and_victims_half_an_hour_later(exec_job):
    root = exec_job.root
    assert root.rank == 3 and "error code is 507015" in root.console
    victims = [r for r in exec_job.ranks if r.role == "victim"]
    assert all(v.first_error_us > root.first_error_us + 1800 * 10 ** 6 for v in victims)
    for v in victims:
        assert "error code is 507048" in v.console and "EI0002: [PID: %d]" % v.pid in v.console
        assert "there are(is) 1 abnormal device(s):" in v.console  # verdict inside EI0002 (pid shape)


def test_hccl_names_the_root_in_its_own_words(exec_job):
    crimer = grep(exec_job, r"\[HeartbeatAbnormal\]local rank .* crimer rank \[127\.10\.0\.1/3\] status\[LOST\]")
    assert sorted({r for r, _, _ in crimer}) == [0, 1, 2, 4, 5, 6, 7]
    assert all("/run/plog/" in str(p) for _, p, _ in crimer)
    location = grep(exec_job, r"Cluster Exception Location\[IP/ID\]:\[127\.10\.0\.1/3\], Arrival Time:\[\w{3} \w{3} "
                              r"[ \d]\d \d\d:\d\d:\d\d \d{4}\], Discoverer:\[127\.10\.0\.1/4\], "
                              r"ExceptionType:\[Heartbeat Lost Occurred\]")
    assert len(location) == 7 and all("/debug/plog/" in str(p) for _, p, _ in location)
    failed = grep(exec_job, r"Task run failed, groupRank information is group:\[%s\].*rankSize\[8\], rankId\[(\d)\]"
                  % re.escape(exec_job.group))
    assert sorted(int(re.search(r"rankId\[(\d)\]", l).group(1)) for _, _, l in failed) == [0, 1, 2, 4, 5, 6, 7]
    assert not grep(exec_job, r"HCCL\(.*Task run failed", rank=3)
    entries = grep(exec_job, r"Entry-HcclCommInitRootInfoInner:ranks\[8\], rank\[(\d)\]")
    assert len(entries) == 8  # pid -> rank map (hicann/hccl debug_thinking.md)
    assert grep(exec_job, r"\[HCCL_ENV\] HCCL_EXEC_TIMEOUT set by default to \[1836\]s")
    # 6 healthy steps on 8 ranks, then the 7 victims enter the step the root never reaches
    assert len(grep(exec_job, r"Entry-HcclAllReduce: tag\[AllReduce_")) == 8 * 6 + 7


def test_multi_node_ring_points_at_predecessors(tmp_path):
    roots = [tmp_path / "n0", tmp_path / "n1"]
    out = run_job(HcclJob(world_size=16, ranks_per_node=8, root_rank=11, fault_step=2,
                          root_fault="process_exit"), S91, roots, seed=5)
    assert (tmp_path / "n0" / "debug" / "plog").is_dir() and (tmp_path / "n1" / "debug" / "plog").is_dir()
    remotes = {}
    for r in out.ranks:
        m = re.search(r"remote rank: \[(\d+)\]", r.console)
        if r.role == "victim":
            assert m, r.rank
            remotes[r.rank] = int(m.group(1))
            assert "Communication_Error_Timeout(EI0002)" in r.console  # 9.1 shape
    assert remotes[12] == 11 and remotes[5] == 4
    assert "DataLoader worker" in out.root.console and "NPU" not in out.root.console
    assert out.root.node == 1 and out.root.device == 3


def test_stuck_root_is_reported_as_stuck(tmp_path):
    out = run_job(HcclJob(world_size=4, ranks_per_node=4, root_rank=0, root_fault="stuck", fault_step=2), S83,
                  [tmp_path], seed=2)
    assert out.root.console == "" and out.root.first_error_us is None
    hits = grep(out, r"ExceptionType:\[Stuck Occurred\], Possible Reason:1\.Host process is stuck")
    assert {r for r, _, _ in hits} == {1, 2, 3}
    assert grep(out, r"crimer rank \[127\.10\.0\.1/0\] status\[STUCK\]")


def test_connect_stage_times_out_in_link_setup(tmp_path):
    out = run_job(HcclJob(world_size=4, ranks_per_node=4, root_rank=2, stage="connect",
                          root_fault="aicore_exception"), S91, [tmp_path], seed=4)
    for r in out.ranks:
        if r.role == "root":
            assert "error code is 507015" in r.console
            continue
        assert "Communication_Error_Get_Socket(EI0006): Getting socket times out." in r.console
        assert r.console.splitlines()[3] == ("RuntimeError: InnerRunOpApi:torch_npu/csrc/framework/OpParamMaker.cpp"
                                             ":281 OPS function error: HcclAllreduce, error code is 9")
        assert r.first_error_us - out.root.first_error_us >= 140 * 10 ** 6
    detect = grep(out, r"detects that srcRank \(server 127\.10\.0\.1, device ID \d\) fails to connect to dstRank "
                       r"\(server 127\.10\.0\.1, device ID 2\)")
    assert {r for r, _, _ in detect} == {0, 1, 3}
    assert grep(out, r"CONNECT TIMEOUT DETECT RESULT")
    assert grep(out, r"wait socket establish timeout, role\[1\] rank\[\d\] timeout\[120 s\]")


def test_watchdog_fires_first_when_shorter(tmp_path):
    out = run_job(HcclJob(world_size=4, ranks_per_node=4, root_rank=1, fault_step=2, watchdog_timeout_s=1800),
                  S83, [tmp_path], seed=3)
    victim = out.ranks[0]
    assert re.search(r"^\[rank0\]:\[E\d{3,4} \d\d:\d\d:\d\d\.\d{9} compiler_depend\.ts:574\] \[Rank 0\] Watchdog caught "
                     r"collective operation timeout: WorkHCCL\(SeqNum=\d+, OpType=ALLREDUCE, Timeout\(ms\)=1800000\) "
                     r"ran for \d+ milliseconds before timing out\.$", victim.console, re.M)
    assert not grep(out, r"HCCL\(.*Task run failed")
    assert grep(out, r"crimer rank \[127\.10\.0\.1/1\]")  # the heartbeat still names the root


def test_old_cann_has_no_heartbeat_lines(tmp_path):
    out = run_job(HcclJob(world_size=4, ranks_per_node=4, root_rank=1, fault_step=2),
                  Stack(cann="8.0.RC2", torch_npu="2.1.0.post6"), [tmp_path], seed=3)
    assert not grep(out, r"HeartbeatAbnormal")
    assert "EI0002: " in out.ranks[0].console and "remote rank: [1]" in out.ranks[0].console


def test_deterministic(tmp_path):
    def run(d: Path) -> bytes:
        out = run_job(HcclJob(world_size=4, ranks_per_node=4, fault_step=2), S83, [d], seed=9)
        return b"".join(p.read_bytes() for r in out.ranks for p in r.logs)

    assert run(tmp_path / "a") == run(tmp_path / "b")


@pytest.mark.parametrize("bad,msg", [
    (dict(world_size=1), "world_size"), (dict(world_size=12, ranks_per_node=8), "multiple"),
    (dict(root_rank=9), "root_rank"), (dict(root_fault="meteor"), "root_fault"), (dict(stage="x"), "stage"),
    (dict(connect_timeout_s=60), "connect_timeout_s"),
])
def test_bad_jobs_are_rejected(tmp_path, bad, msg):
    with pytest.raises(ValueError, match=msg):
        run_job(HcclJob(**bad), S83, [tmp_path], seed=1)
