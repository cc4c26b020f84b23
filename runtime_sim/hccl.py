"""A multi-rank HCCL job in which one rank fails or stalls first and the others time out.

Each rank is its own simulated process with its own plog files (debug, run, device
logs; several ranks of one node share the node's log root, as on a real server).
The job trains for some steps, each ending in an AllReduce; then the *root* rank
fails at step ``fault_step``:

- ``aicore_exception`` – a kernel fails on its device; the rank prints the runtime error
  and exits;
- ``process_exit``     – the process dies without any NPU error (a data-loader crash);
- ``stuck``            – the process hangs and never reaches the collective.

The other ranks wait in the AllReduce (or, with ``stage: connect``, in its link setup)
and fail only when HCCL's timeout expires, half an hour later by default. What each
rank writes follows the HCCL fault-diagnosis guide (hicann/hccl
docs/zh/user_guide/fault_diagnosis/*.md, https://github.com/hicann/hccl/blob/09300b70df9a031339f08e5f2ca06d7bf294d009/docs/zh/user_guide/fault_diagnosis/debug_thinking.md): heartbeat verdicts
(``crimer rank``, ``Cluster Exception Location``) where the CANN release has them, the
three ``Task run failed`` lines, ``EI0002`` naming the peer waited for (``remote rank``),
or for link setup ``wait socket establish timeout``, ``LINK_ERROR_INFO``,
``CONNECT TIMEOUT DETECT RESULT`` and ``EI0006``.
"""
from __future__ import annotations

import random
from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, List, Optional

from runtime_sim.plog import line as L
from runtime_sim.plog.files import LogSettings
from runtime_sim.plog.timefmt import MS, SECOND, ctime_ts, parse_start, plog_ts
from runtime_sim.runtime import console
from runtime_sim.runtime.clock import SimClock
from runtime_sim.runtime.errors import NpuError
from runtime_sim.runtime.machine import Machine
from runtime_sim.runtime.process import SimProcess
from runtime_sim.runtime.profile import Stack
from runtime_sim.runtime.torch_npu import TorchNpu

ROOT_FAULTS = ("aicore_exception", "process_exit", "stuck")
STAGES = ("exec", "connect")


@dataclass
class HcclJob:
    """What the job is and how it goes wrong. Times are seconds of simulated time."""

    world_size: int = 8
    ranks_per_node: int = 8
    root_rank: int = 3
    root_fault: str = "aicore_exception"
    stage: str = "exec"
    fault_step: int = 20
    step_seconds: float = 1.2
    exec_timeout_s: int = 1836
    connect_timeout_s: int = 120
    watchdog_timeout_s: Optional[int] = None
    entry_log: bool = False
    count: int = 10485888
    dtype: str = "float32"
    pname: str = "python3"
    base_pid: int = 2111665
    node_ip_base: str = "127.10.0."
    start: str = "2025-10-24 11:16:52"
    env: Dict[str, str] = field(default_factory=dict)
    noise_gap_ms: int = 400
    script: str = "/home/ma-user/work/train.py"

    def validate(self) -> None:
        if self.world_size < 2:
            raise ValueError("world_size must be at least 2")
        if self.ranks_per_node < 1 or self.world_size % self.ranks_per_node:
            raise ValueError("world_size must be a multiple of ranks_per_node")
        if not 0 <= self.root_rank < self.world_size:
            raise ValueError(f"root_rank {self.root_rank} is not in [0, {self.world_size})")
        if self.root_fault not in ROOT_FAULTS:
            raise ValueError(f"root_fault must be one of {', '.join(ROOT_FAULTS)}")
        if self.stage not in STAGES:
            raise ValueError(f"stage must be one of {', '.join(STAGES)}")
        if self.stage == "exec" and self.fault_step < 1:
            raise ValueError("fault_step must be >= 1 for stage exec (the first step sets up links)")
        if not 120 <= self.connect_timeout_s <= 7200:
            raise ValueError("connect_timeout_s must be in [120, 7200] (HCCL_CONNECT_TIMEOUT)")

    @property
    def nodes(self) -> int:
        return self.world_size // self.ranks_per_node

    def node_of(self, rank: int) -> int:
        return rank // self.ranks_per_node

    def device_of(self, rank: int) -> int:
        return rank % self.ranks_per_node

    def ip_of(self, rank: int) -> str:
        return "%s%d" % (self.node_ip_base, self.node_of(rank) + 1)


@dataclass
class RankOutcome:
    """What one rank did: its pid, role, console text, log files and first error time."""

    rank: int
    pid: int
    node: int
    device: int
    role: str
    console: str
    logs: List[Path]
    first_error_us: Optional[int]
    exit_us: Optional[int]


@dataclass
class HcclOutcome:
    job: HcclJob
    group: str
    ranks: List[RankOutcome]

    @property
    def root(self) -> RankOutcome:
        return next(r for r in self.ranks if r.role == "root")


class _Rank:
    def __init__(self, job: HcclJob, rank: int, root: Path, stack: Stack, seed: int,
                 machine: Machine) -> None:
        self.rank = rank
        self.job = job
        env = dict(job.env)
        env.update({"RANK": str(rank), "LOCAL_RANK": str(job.device_of(rank)),
                    "WORLD_SIZE": str(job.world_size)})
        self.pid = job.base_pid + rank * 1 + job.node_of(rank) * 7919
        self.proc = SimProcess(root, self.pid, job.pname, env, stack, SimClock(0), seed,
                               LogSettings.from_env(env))
        self.proc.noise_device = job.device_of(rank)
        self.torch = TorchNpu(self.proc, machine)
        self.noise = self.proc.noise(job.device_of(rank))
        self.tid_hccl = self.pid + 300 + rank
        self.stream_id = 0
        self.first_error: Optional[int] = None
        self.exit_us: Optional[int] = None

    @property
    def p(self) -> SimProcess:
        return self.proc

    def at(self, ts_us: int) -> None:
        """Move this rank to ``ts_us`` with steady noise in between."""
        if ts_us > self.p.clock.now:
            self.noise.steady(self.p.clock.now, ts_us, self.job.noise_gap_ms * MS)
            self.p.clock.advance_to(ts_us)

    def hccl(self, level: str, src: str, msg: str, run: bool = False,
             ts: Optional[int] = None, tight: bool = False) -> None:
        ts = self.p.clock.now if ts is None else ts
        body = (L.hccl_tight if tight else L.hccl)(self.tid_hccl, msg)
        if run:
            self.p.log.run(level, "HCCL", src, body, ts, tight=tight)
        else:
            self.p.log.debug(level, "HCCL", src, body, ts, tight=tight)

    def mark_error(self) -> None:
        if self.first_error is None:
            self.first_error = self.p.clock.now


def run_job(job: HcclJob, stack: Stack, log_roots: List[Path], seed: int = 0) -> HcclOutcome:
    """Simulate the job; ``log_roots[n]`` is node ``n``'s log directory."""
    job.validate()
    if len(log_roots) != job.nodes:
        raise ValueError(f"need {job.nodes} log roots (one per node), got {len(log_roots)}")
    rng = random.Random(seed)
    t0 = parse_start(job.start)
    group = "%s%%enp_60000_0_%d" % (job.ip_of(0), t0 + 1234567 + rng.randrange(0, 999999))
    machine = Machine.with_devices(job.ranks_per_node)
    ranks = [_Rank(job, r, log_roots[job.node_of(r)], stack, rng.randrange(1 << 30), machine)
             for r in range(job.world_size)]
    for r in ranks:
        r.p.clock.advance_to(t0 + r.rank * rng.randrange(3 * MS, 40 * MS))
    modern_keys = stack.block_shape in ("pid", "v85", "v92")  # HCCL heartbeat & stage keywords

    # --- start-up and communicator init -------------------------------------------
    init_at = t0 + 3 * SECOND
    for r in ranks:
        r.at(init_at + rng.randrange(0, 400 * MS))
        r.torch.set_device(job.device_of(r.rank))
        _hccl_env_lines(r, job)
        r.p.clock.advance(rng.randrange(2 * MS, 30 * MS))
        r.hccl("INFO", "op_base.cc:1292",
               "Entry-HcclCommInitRootInfoInner:ranks[%d], rank[%d], rootinfo: host ip[%s] port[60000] "
               "nicDeploy[1] identifier[%s], deviceLogicId[%d]" % (
                   job.world_size, r.rank, job.ip_of(0), group, job.device_of(r.rank)), run=True)
        r.p.clock.advance(rng.randrange(5 * MS, 90 * MS))
        r.hccl("INFO", "hccl_communicator_attrs.cc:330",
               "[LocalRank Key Info]userRank[%d] hostIp[%s] devicePhyId[%d] server[%s] deviceIp[0.0.0.0] "
               "superPodId[0] useSuperPodMode[0] isStandardCard[0]" % (
                   r.rank, job.ip_of(r.rank), job.device_of(r.rank), job.ip_of(r.rank)), run=True)
        dev_pid = 2900 + rng.randrange(0, 30000)
        r.p.log.device("run", job.device_of(r.rank), "INFO", "HCCP", dev_pid, "hccp_service.bin",
                       "rs_ssl.c:1529", L.hccp(dev_pid, "rs_ssl_init", 1529, "TLS SWITCH (1)"),
                       r.p.clock.now + rng.randrange(1 * MS, 9 * MS))

    # --- training steps --------------------------------------------------------------
    train_at = max(r.p.clock.now for r in ranks) + 2 * SECOND
    step_us = int(job.step_seconds * SECOND)
    tag = "AllReduce_%s" % group
    last_step = job.fault_step if job.stage == "exec" else 0
    for k in range(last_step):
        step_start = train_at + k * step_us
        arrivals = {r.rank: step_start + int(step_us * 0.7) + rng.randrange(0, 60 * MS) for r in ranks}
        for r in ranks:
            r.at(arrivals[r.rank])
            if job.entry_log:
                _entry_line(r, job, tag, rng)

    # --- the root's failure ------------------------------------------------------------
    fault_start = train_at + last_step * step_us
    root = ranks[job.root_rank]
    t_fault = fault_start + int(step_us * 0.4) + rng.randrange(0, 100 * MS)
    root.at(t_fault - 5 * MS)
    death: Optional[int] = None
    if job.root_fault == "aicore_exception":
        death = _root_aicore(root, rng)
    elif job.root_fault == "process_exit":
        death = _root_exit(root, t_fault)

    arrivals = {r.rank: fault_start + int(step_us * 0.7) + rng.randrange(0, 60 * MS)
                for r in ranks if r is not root}
    first_arrival = min(arrivals.values())
    verdict = None
    if modern_keys and job.stage == "exec":
        if death is not None:
            verdict = ("LOST", death + 30 * SECOND + rng.randrange(0, 900 * MS))
        elif job.root_fault == "stuck":
            verdict = ("STUCK", first_arrival + job.exec_timeout_s * SECOND // 3
                       + rng.randrange(0, 2 * SECOND))
    discoverer = ranks[(job.root_rank + 1) % job.world_size]

    # --- the others wait, then time out --------------------------------------------
    for r in ranks:
        if r is root:
            continue
        r.at(arrivals[r.rank])
        if job.entry_log:
            _entry_line(r, job, tag, rng)
        if verdict is not None:
            heard = verdict[1] + (0 if r is discoverer else rng.randrange(2 * MS, 300 * MS))
            if heard < arrivals[r.rank] + job.exec_timeout_s * SECOND:
                r.at(heard)
                r.hccl("INFO", "heartbeat.cc:951",
                       "[TaskExecStage][HeartbeatAbnormal]local rank [%s/%d]: crimer rank [%s/%d] "
                       "status[%s] by informer rank [%s/%d]" % (
                           job.ip_of(r.rank), job.device_of(r.rank), job.ip_of(root.rank),
                           job.device_of(root.rank), verdict[0], job.ip_of(discoverer.rank),
                           job.device_of(discoverer.rank)), run=True)
        if job.watchdog_timeout_s is not None and (
                job.stage == "connect" and job.watchdog_timeout_s < job.connect_timeout_s + 20
                or job.stage == "exec" and job.watchdog_timeout_s < job.exec_timeout_s):
            _victim_watchdog(r, job, arrivals[r.rank], rng)
        elif job.stage == "exec":
            _victim_exec_timeout(r, job, root, arrivals[r.rank], tag, group, verdict, discoverer, rng)
        else:
            _victim_connect_timeout(r, job, root, arrivals[r.rank], tag, rng)
        r.exit_us = r.p.clock.now + rng.randrange(200 * MS, 2 * SECOND)
        r.at(r.exit_us)
        r.noise.exit(r.p.clock.now)

    if job.root_fault == "stuck":
        # the launcher kills what is left once the others have exited
        end = max(r.exit_us or 0 for r in ranks) + 5 * SECOND
        root.at(end)
        root.exit_us = end
    outcomes = []
    for r in ranks:
        r.p.close()
        outcomes.append(RankOutcome(
            rank=r.rank, pid=r.pid, node=job.node_of(r.rank), device=job.device_of(r.rank),
            role="root" if r is root else "victim", console="\n".join(r.p.console),
            logs=r.p.log.paths, first_error_us=r.first_error, exit_us=r.exit_us))
    return HcclOutcome(job, group, outcomes)


def _hccl_env_lines(r: _Rank, job: HcclJob) -> None:
    """``[HCCL_ENV]`` lines HCCL prints to run/plog when a communicator is created
    (hicann/hccl docs/zh/user_guide/fault_diagnosis/debug_thinking.md)."""
    env = r.p.env
    rows = [
        ("externalinput.cc:598", "HCCL_CONNECT_TIMEOUT", job.connect_timeout_s, "[%d]s"),
        ("externalinput.cc:558", "HCCL_EXEC_TIMEOUT", job.exec_timeout_s, "[%d]s"),
    ]
    for src, name, value, unit in rows:
        how = "by environment" if name in env else "by default"
        r.hccl("INFO", src, "[HCCL_ENV] %s set %s to %s" % (name, how, unit % value), run=True)
        r.p.clock.advance(r.p.rng.randrange(3, 9))
    r.hccl("INFO", "externalinput.cc:663", "[HCCL_ENV] HCCL_INTRA_PCIE_ENABLE set by default to [1], "
           "HCCL_INTRA_ROCE_ENABLE set by default to [0]", run=True)
    r.p.clock.advance(r.p.rng.randrange(3, 9))
    r.hccl("INFO", "externalinput.cc:865", "[HCCL_ENV] HCCL_IF_BASE_PORT set by default to [60000]", run=True)
    r.p.clock.advance(r.p.rng.randrange(3, 9))
    r.hccl("INFO", "externalinput.cc:1484", "[HCCL_ENV] HCCL_ENTRY_LOG_ENABLE set %s to [%d]" % (
        "by environment" if "HCCL_ENTRY_LOG_ENABLE" in env else "by default", 1 if job.entry_log else 0),
        run=True)


def _entry_line(r: _Rank, job: HcclJob, tag: str, rng: random.Random) -> None:
    """``Entry-HcclAllReduce`` (HCCL_ENTRY_LOG_ENABLE=1; hicann/hccl task_exec_stage.md)."""
    r.hccl("INFO", "hccl_opbase_atrace_info.cc:56",
           "Entry-HcclAllReduce: tag[%s], sendBuf[0x%x], recvBuf[0x%x], count[%d], dataType[%s], op[sum], "
           "localRank[%d], streamId[2],comm[0xfffe%08x], deviceLogicId[%d]" % (
               tag, 0x1241D3DCDC00 + rng.randrange(0, 1 << 20) * 0x200,
               0x124702F40200 + rng.randrange(0, 1 << 20) * 0x200, job.count, job.dtype,
               job.device_of(r.rank), 0x380078D0, job.device_of(r.rank)), run=True)


def _root_aicore(root: _Rank, rng: random.Random) -> int:
    """The root's kernel fails on its device; Python reports it and the process exits."""
    t = root.torch
    for _ in range(rng.randrange(4, 12)):
        t.launch("MatMul", "MatMulV2_%032x_high_performance_210000071" % rng.getrandbits(128), 800)
    t.launch("FlashAttentionScore",
             "FlashAttentionScore_%032x_high_performance_210000085" % rng.getrandbits(128), 2500,
             fault="aicore_exception")
    try:
        t.synchronize()
    except NpuError as err:
        root.p.say(_traceback(root.job.script, "loss.item()", 311) + err.console)
        root.first_error = root.p.clock.now
    root.p.clock.advance(rng.randrange(100 * MS, 600 * MS))
    root.noise.exit(root.p.clock.now)
    root.exit_us = root.p.clock.now
    return root.exit_us


def _root_exit(root: _Rank, t_fault: int) -> int:
    """The root dies of a non-NPU error (a data-loader worker was killed)."""
    root.p.clock.advance_to(t_fault)
    root.p.say(_traceback(root.job.script, "batch = next(data_iter)", 298) +
               "RuntimeError: DataLoader worker (pid(s) %d) exited unexpectedly" % (root.pid + 41))
    root.first_error = root.p.clock.now
    root.exit_us = root.p.clock.now
    return root.exit_us


def _traceback(script: str, statement: str, line_no: int) -> str:
    return ('Traceback (most recent call last):\n  File "%s", line %d, in <module>\n'
            '    %s\n' % (script, line_no, statement))


def _victim_watchdog(r: _Rank, job: HcclJob, arrival: int, rng: random.Random) -> None:
    """torch's HCCL watchdog gives up before HCCL does (vllm-project/vllm-ascend#382)."""
    ms = job.watchdog_timeout_s * 1000
    r.at(arrival + ms * MS + rng.randrange(0, 900 * MS))
    ran = ms + rng.randrange(5, 990)
    seq = job.fault_step * 3 + 1
    stamp = "[rank%d]:[E%s " % (r.rank, _glog(r))
    work = "WorkHCCL(SeqNum=%d, OpType=ALLREDUCE, Timeout(ms)=%d)" % (seq, ms)
    r.p.say("%scompiler_depend.ts:574] [Rank %d] Watchdog caught collective operation timeout: %s ran for "
            "%d milliseconds before timing out." % (stamp, r.rank, work, ran))
    r.p.say("%scompiler_depend.ts:628] Some HCCL operations have failed or timed out. Due to the asynchronous "
            "nature of ASCEND kernels, subsequent NPU operations might run on corrupted/incomplete data." % stamp)
    r.p.say("%scompiler_depend.ts:634] To avoid data inconsistency, we are taking the entire process down." % stamp)
    r.p.say("terminate called after throwing an instance of 'std::runtime_error'")
    r.p.say("  what():  [Rank %d] HCCL watchdog thread terminated with exception: [Rank %d] Watchdog caught "
            "collective operation timeout: %s ran for %d milliseconds before timing out." % (
                r.rank, r.rank, work, ran))
    r.mark_error()


def _glog(r: _Rank) -> str:
    from runtime_sim.plog.timefmt import glog_ts

    return glog_ts(r.p.clock.now, r.p.rng.randrange(0, 1000))


def _victim_exec_timeout(r: _Rank, job: HcclJob, root: _Rank, arrival: int, tag: str, group: str,
                         verdict: Optional[tuple], discoverer: _Rank, rng: random.Random) -> None:
    p = r.p
    timeout_at = arrival + job.exec_timeout_s * SECOND + rng.randrange(0, 40 * MS)
    r.at(timeout_at)
    r.mark_error()
    remote = root.rank if job.nodes == 1 else (r.rank - 1) % job.world_size
    alg = "fullmesh-ring-NHR" if job.nodes == 1 else "ring-NHR-NHR"
    stream, task = 2 + rng.randrange(0, 40), 20 + rng.randrange(0, 60)
    dev = job.device_of(r.rank)
    serial = rng.randrange(2, 60)
    # the device reports the stuck notify first (runtime error thread)
    fftsplus = ("The error from device(chipId:%d, dieId:0), serial number is %d, hccl fftsplus task timeout "
                "occurred during task execution, stream_id:%d, sq_id:%d, task_id:%d, stuck notify num:1, "
                "timeout:%d." % (dev, serial, stream, stream, task * 37, job.exec_timeout_s))
    p.plog_func("ERROR", "RUNTIME", "device_error_proc.cc:1657", "ProcessStarsHcclFftsPlusTimeoutErrorInfo",
                fftsplus, tid=p.tid_report)
    p.record("EI9999", fftsplus, L.inner_where("ProcessStarsHcclFftsPlusTimeoutErrorInfo",
                                               "device_error_proc.cc", 1657))
    notify = rng.randrange(10, 600)
    ctx_line = "The 0 stuck notify wait context info:(context_id=%d, notify_id=%d)." % (rng.randrange(1, 20), notify)
    p.clock.advance(rng.randrange(5, 60))
    p.plog_func("ERROR", "RUNTIME", "device_error_proc.cc:1664", "ProcessStarsHcclFftsPlusTimeoutErrorInfo",
                ctx_line, tid=p.tid_report)
    p.record("EI9999", ctx_line, L.inner_where("ProcessStarsHcclFftsPlusTimeoutErrorInfo",
                                               "device_error_proc.cc", 1664))
    # HCCL's task-exception callback
    op_ts = plog_ts(arrival)
    p.clock.advance(rng.randrange(200, 900))
    r.hccl("ERROR", "task_exception_handler.cc:908",
           "[TaskExecStage][Timeout][Host]Task run failed, base information is streamID:[%d], taskID[%d], "
           "tag[%s], AlgType(level 0-1-2):[%s]." % (stream, task, tag, alg))
    p.clock.advance(rng.randrange(5, 20))
    r.hccl("ERROR", "task_exception_handler.cc:771",
           "[TaskExecStage][Timeout][Host]Task run failed, groupRank information is group:[%s], user define "
           "information[], rankSize[%d], rankId[%d]." % (group, job.world_size, r.rank))
    p.clock.advance(rng.randrange(5, 40))
    r.hccl("ERROR", "task_exception_handler.cc:704",
           "[TaskExecStage][Timeout][Host]Task run failed, opData information is timeStamp:[%s], deviceId[%d], "
           "index[%d], count[%d], reduceType[sum], src[0x12c0c0013000], dst[0x12c0c0014000], dataType[%s]."
           % (op_ts, dev, job.fault_step * 3 + 1, job.count, job.dtype))
    location = None
    if verdict is not None:
        kind = verdict[0]
        location = ("Cluster Exception Location[IP/ID]:[%s/%d], Arrival Time:[%s], %sExceptionType:[%s], "
                    "Possible Reason:%s" % (
                        job.ip_of(root.rank), job.device_of(root.rank), ctime_ts(verdict[1]),
                        "Discoverer:[%s/%d], " % (job.ip_of(discoverer.rank), job.device_of(discoverer.rank))
                        if kind == "LOST" else "",
                        "Heartbeat Lost Occurred" if kind == "LOST" else "Stuck Occurred",
                        "1. Process has exited, 2. Network Disconnected" if kind == "LOST"
                        else "1.Host process is stuck, 2.Device task is stuck"))
        p.clock.advance(rng.randrange(5, 40))
        r.hccl("ERROR", "task_exception_handler.cc:610", "[TaskExecStage][HeartbeatAbnormal]" + location)
    base = ("base information: [streamID:[%d], taskID[%d], taskType[Notify Wait], tag[%s], "
            "AlgType(level 0-1-2):[%s].]" % (stream, task, tag, alg))
    if location is not None and p.shape == "pid":
        # 2024 form with the heartbeat verdict inside (Ascend/pytorch HCCL_timeout.md)
        text = ("The wait execution of the Notify register times out. Reason: The Notify register has not "
                "received the Notify record from remote rank [unknown].base information: [streamID:[%d], "
                "taskID[%d], tag[%s], AlgType(level 0-1-2):[%s].] task information: [\nthere are(is) 1 "
                "abnormal device(s):\n    %s\n]" % (stream, task, tag, alg, location))
    else:
        # https://github.com/vllm-project/vllm-ascend/issues/3413
        text = ("The wait execution of the Notify register times out. Reason: The Notify register has not "
                "received the Notify record from remote rank: [%d]. %s. task information: [notify id:"
                "[0x%016x], stage:[0], remote rank:[%d]]. group information: [group:[%s], user define "
                "information[Unspecified], rankSize[%d], rankId[%d]]" % (
                    remote, base, notify, remote, group, job.world_size, r.rank))
    p.record("EI0002", text)
    # the host learns at its next synchronisation
    p.clock.advance(rng.randrange(300, 3000))
    p.plog_func("ERROR", "RUNTIME", "api_c.cc:1798", "rtStreamSynchronizeWithTimeout",
                "ErrCode=507048, desc=[fftsplus timeout], InnerCode=0x715006b")
    p.plog_func("ERROR", "RUNTIME", "error_message_manage.cc:%d" % (65 if p.modern else 53), "FuncErrorReason",
                p.reason_text("rtStreamSynchronizeWithTimeout", "fftsplus timeout"))
    p.plog_func("ERROR", "ASCENDCL", "stream.cpp:187", "aclrtSynchronizeStreamWithTimeout",
                " synchronize stream failed, runtime result = 507048")
    p.record_reason("rtStreamSynchronizeWithTimeout", "fftsplus timeout")
    p.record_call("synchronize stream failed, runtime result = 507048")
    text = console.check_error(p.stack, "operator()", 47,
                               "c10_npu::acl::AclrtSynchronizeStreamWithTimeout(copy_stream)", 507048,
                               p.clock.now, r.torch.where(), p.take_messages(), compact=r.torch.compact)
    p.say(_traceback(job.script, "loss.item()", 311) + text)


def _victim_connect_timeout(r: _Rank, job: HcclJob, root: _Rank, arrival: int, tag: str,
                            rng: random.Random) -> None:
    """Link setup with the root never completes (hicann/hccl param_link_stage.md)."""
    p = r.p
    dev, rdev = job.device_of(r.rank), job.device_of(root.rank)
    ip, rip = job.ip_of(r.rank), job.ip_of(root.rank)
    htag = "HcomAllReduce_%d_0" % (6629421139219749105 + rng.randrange(0, 10 ** 6))
    r.at(arrival + (job.connect_timeout_s + 20) * SECOND + rng.randrange(0, 30 * MS))
    r.mark_error()
    lines = [
        ("hccl_socket_manager.cc:797", "[Wait][LinkEstablish]wait socket establish timeout, role[1] rank[%d] "
         "timeout[%d s]" % (r.rank, job.connect_timeout_s)),
        ("hccl_socket_manager.cc:861", "[Wait][LinksEstablishCompleted] is failed. ret[9]."),
        ("hccl_socket_manager.cc:623", "   _________________________LINK_ERROR_INFO___________________________"),
        ("hccl_socket_manager.cc:624", "   |  comm error, device[%d]" % dev),
        ("hccl_socket_manager.cc:626", "   |  dest_ip(user_rank)  |   dest_port   |  src_ip(user_rank)   |   "
         "src_port   |   MyRole   |   Status   |    TlsStatus   |"),
        ("hccl_socket_manager.cc:628", "   |----------------------|---------------|----------------------|"
         "--------------|------------|------------|----------------|"),
        ("hccl_socket_manager.cc:583", "   |  192.0.2.%d(%d)   |  16666  |   192.0.2.%d(%d)   |  %d  |  client  | "
         "time out |   DISABLE  | LinkInfo" % (100 + rdev, root.rank, 100 + dev, r.rank,
                                             3234403008 + rng.randrange(0, 99999))),
        ("transport_manager.cc:1252", "[CreateLink][InitChannelStage][Timeout]SetMachinePara error."),
    ]
    for src, msg in lines:
        r.hccl("ERROR", src, msg)
        p.clock.advance(rng.randrange(2, 60))
    p.clock.advance(rng.randrange(20 * SECOND, 40 * SECOND))  # fault-detection links (20 s default)
    detect = [
        ("detect_connect_anomalies.cc:127", "-------------------CONNECT TIMEOUT DETECT RESULT-----------------------"),
        ("detect_connect_anomalies.cc:132", "This node (server %s, device ID %d) detects that srcRank (server %s, "
         "device ID %d) fails to connect to dstRank (server %s, device ID %d). Continue to analyze the fault "
         "based on the logs of srcRank and dstRank." % (ip, dev, ip, dev, rip, rdev)),
        ("detect_connect_anomalies.cc:143", "----------------------------------------------------------------------"),
        ("transport_manager.cc:1325", "[InitChannelStage][Timeout]Transport init error! createLink para:rank[%d]-"
         "localUserrank[%d]-localIpAddr[%s/%d], remoteRank[%d]-remoteUserrank[%d]-remoteIpAddr[%s/%d], "
         "machineType[1], linkMode[1], isUsedRdma[0], tag[%s]" % (r.rank, r.rank, ip, dev, root.rank,
                                                                 root.rank, rip, rdev, htag)),
        ("hccl_communicator_host.cc:6370", "[AllocAlgResource]Alloc transports failed, tag[%s_device]" % htag),
        ("hcom.cc:515", "[AllReduce][Result]errNo[0x0000000005010009] hcclComm AllReduce error, tag[%s], "
         "input_ptr[0x12e083e00200], output_ptr[0x12e086600400], count[%d], data_type[%s], op[sum]"
         % (htag, job.count, job.dtype)),
    ]
    for src, msg in detect:
        r.hccl("ERROR", src, msg)
        p.clock.advance(rng.randrange(3, 40))
    p.record("EI0006", "Getting socket times out. Reason: Remote Rank did not send the data in time. "
                       "Please check the reason for the rank being stuck")
    lines = ["RuntimeError: InnerRunOpApi:torch_npu/csrc/framework/OpParamMaker.cpp:281 OPS function error: "
             "HcclAllreduce, error code is 9"]
    if p.stack.rules["banner"]:
        lines.append(console.banner("OPS:ACL", p.clock.now, r.torch.where(), period=True))
    from runtime_sim.plog.error_block import render_block

    lines.append(render_block(p.take_messages(), p.shape))
    p.say(_traceback(job.script, "dist.all_reduce(grad, group=dp_group)", 187) + "\n".join(lines))
