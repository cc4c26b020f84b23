"""The table of HCCL line kinds (parsers/hccl.py LINE_KINDS): each row on a real line, the order of rows."""
from __future__ import annotations

import pytest

from ascend_doctor.parsers.hccl import LINE_KINDS, parse_hccl_line

GUIDE = "https://github.com/hicann/hccl/blob/09300b70df9a031339f08e5f2ca06d7bf294d009/docs/zh/user_guide/fault_diagnosis/"
# (row index in LINE_KINDS, source, real line)
REAL = [
    (0, GUIDE + "task_exec_stage.md",
     "[ERROR]HCCL(835695,all_reduce_test):2025-10-23-17:28:06.049.385[task_exception_handler.cc:610][835695][TaskExecStage][HeartbeatAbnormal]Cluster Exception Location[IP/ID]:[127.10.0.1/1], Arrival Time:[Thu Oct 23 17:25:58 2025], Discoverer:[127.10.0.1/2], ExceptionType:[Heartbeat Lost Occurred], Possible Reason:1. Process has exited, 2. Network Disconnected"),
    (1, GUIDE + "task_exec_stage.md",
     "[INFO] HCCL(686,python):2025-10-23-07:52:59.191.363 [heartbeat.cc:951] [8970][TaskExecStage][HeartbeatAbnormal]local rank [127.10.0.1/1]: crimer rank [127.10.0.2/2] status[LOST] by informer rank [127.10.0.3/3]"),
    (2, GUIDE + "debug_thinking.md",
     "[ERROR] HCCL(17528,python3):2026-03-18-10:34:43.141.966 [detect_connect_anomalies.cc:132] [18744]This node (server 192.168.200.100, device ID 1) detects that srcRank (server 192.168.200.100, device ID 1) fails to connect to dstRank (server 192.168.200.100, device ID 0). Continue to analyze the fault based on the logs of srcRank and dstRank."),
    (3, "https://github.com/vllm-project/vllm-ascend/issues/10591",
     "[ERROR] HCCL(80812,):2026-06-17-02:21:43.853.244 [detect_connect_anomalies.cc:140] [86231]No abnormal periods were discovered. please prioritize investigating the consistency of cluster script behaviors."),
    (4, GUIDE + "debug_thinking.md",
     "[ERROR] HCCL(17528,python3):2026-03-18-10:34:43.141.949 [detect_connect_anomalies.cc:127] [18744]-------------------CONNECT TIMEOUT DETECT RESULT-----------------------"),
    (5, GUIDE + "debug_thinking.md", "Failed to connect agent[1,3,5,7,]"),
    (6, GUIDE + "task_exec_stage.md",
     "[INFO] HCCL(858941,all_reduce_test):2025-12-10-19:53:28.131.357 [hccl_communicator_attrs.cc:330] [858941][LocalRank Key Info]userRank[6] hostIp[127.0.0.1] devicePhyId[6] server[127.0.0.1] deviceIp[0.0.0.0] superPodId[0] useSuperPodMode[0] isStandardCard[0]"),
    (7, GUIDE + "task_exec_stage.md",
     "[INFO] HCCL(2111667,all_reduce_test):2025-10-24-11:16:52.724.374 [op_base.cc:1292] [2111667]Entry-HcclCommInitRootInfoInner:ranks[4], rank[2], rootinfo: host ip[127.10.0.1] port[60000] nicDeploy[1] identifier[127.10.0.1%enp_60000_0_1761275812718970], deviceLogicId[2]"),
    (8, GUIDE + "debug_thinking.md",
     "[INFO] HCCL(1595259,alltoall_test):2026-01-06-15:38:29.881.877 [externalinput.cc:598] [1595259][HCCL_ENV] HCCL_CONNECT_TIMEOUT set by default to [120]s"),
    (9, GUIDE + "task_exec_stage.md",
     "[ERROR] HCCL(2111667,all_reduce_test):2025-10-24-11:18:29.597.083 [task_exception_handler.cc:704] [2111667][TaskExecStage][Timeout][Host]Task run failed, opData information is timeStamp:[2025-10-24-11:16:55.490.253], deviceId[2], index[21], count[256], reduceType[sum], src[0x12c0c0013000], dst[0x12c0c0014000], dataType[float32]."),
    (10, "https://github.com/vllm-project/vllm-ascend/issues/10591",
     "[ERROR] HCCL(80812,):2026-06-17-02:21:43.853.333 [transport_manager.cc:954] [86231][InitChannelStage][RunFailed]Transport init error! createLink para:rank[7]-localUserrank[7]-localIpAddr[80.5.5.39/7], remoteRank[15]-remoteUserrank[15]-remoteIpAddr[80.5.5.67/7], machineType[0], linkMode[1], isUsedRdma[1], tag[AllGather_group_name_119]"),
    (11, "https://github.com/hicann/hccl/blob/09300b70df9a031339f08e5f2ca06d7bf294d009/docs/zh/user_guide/fault_diagnosis/task_exec_stage.md",
     "EI0002: [PID: 2969] 2025-10-11-15:09:34.713.335 The wait execution of the Notify register times out. Reason: The Notify register has not received the Notify record from remote rank: [24]. base information: [streamID:[109], taskID[38], taskType[Notify Wait], tag[AllReduce_group_name_1654NHRAllReduceComm_device], AlgType(level 0-1-2):[ring-NHR-NHR].]. task information: [notify id:[0x0000000000000213], stage:[0], remote rank:[24]]. group information: [group:[group_name_1654], user define information[Unspecified], rankSize[32], rankId[25 24]]"),
]


def test_every_row_has_a_real_line():
    assert sorted(i for i, _, _ in REAL) == list(range(len(LINE_KINDS)))


@pytest.mark.parametrize("index,source,line", REAL, ids=[f"{i}-{LINE_KINDS[i].name}" for i, _, _ in REAL])
def test_row_builds_its_kind(index, source, line):
    kind = LINE_KINDS[index]
    assert kind.literal in line and kind.regex.search(line)
    # the row's builder alone, and the whole table, give the same record of the row's kind
    direct = kind.build(line.strip(), kind.regex.search(line))
    parsed = parse_hccl_line(line)
    assert parsed == direct
    expected = "detect_none" if kind.name == "detect_head" and "No abnormal" in line else kind.name
    assert parsed.kind == expected and parsed.text == line.strip()


def test_rows_extract_their_fields():
    by_index = {i: parse_hccl_line(line) for i, _, line in REAL}
    assert (by_index[0].device, by_index[0].status) == (1, "Heartbeat Lost Occurred")
    assert (by_index[1].rank, by_index[1].status) == (2, "LOST")
    assert by_index[2].info["dst"] == "192.168.200.100/0"
    assert by_index[5].ranks == [1, 3, 5, 7]
    assert (by_index[6].rank, by_index[6].device, by_index[6].info["device_kind"]) == (6, 6, "phy")
    assert (by_index[7].rank, by_index[7].rank_size, by_index[7].device) == (2, 4, 2)
    assert (by_index[8].seconds, by_index[8].info["name"]) == (120, "HCCL_CONNECT_TIMEOUT")
    assert (by_index[9].device, by_index[9].op_index, by_index[9].op_count) == (2, 21, 256)
    assert (by_index[10].rank, by_index[10].info["local"]) == (15, "7")
    assert (by_index[11].rank, by_index[11].rank_size, by_index[11].info["own_rank"]) == (24, 32, "25")


def test_a_literal_without_its_regex_falls_through_to_later_rows():
    remote = REAL[11][2]
    # "crimer rank" in prose, with no crimer record after it: the crimer row declines, the remote-rank row answers
    rec = parse_hccl_line("crimer rank unknown; " + remote)
    assert rec is not None and rec.kind == "remote_rank" and rec.rank == 24


def test_task_failed_needs_one_of_its_further_literals():
    assert parse_hccl_line("Task run failed") is None
    assert parse_hccl_line("Task run failed, opData information is deviceId[1]").kind == "task_failed"


def test_no_row_no_record():
    assert parse_hccl_line("[INFO] HCCL(1,python):2025-10-23-07:52:59.191.363 [x.cc:1] [1]nothing to see") is None
