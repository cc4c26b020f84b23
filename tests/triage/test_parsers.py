"""Parsers against real lines (sources in data/plog_lines.yaml and next to each string)."""
from __future__ import annotations

import pytest

from ascend_doctor.parsers.cann_error import CannBlockParser
from ascend_doctor.parsers.codes import find_codes
from ascend_doctor.parsers.hccl import parse_hccl_line
from ascend_doctor.parsers.oom_text import classify, parse_oom, size_to_bytes
from ascend_doctor.parsers.plog import parse_plog_file_name, parse_plog_line, ts_to_epoch
from ascend_doctor.parsers.prefixes import strip_prefixes, unwrap
from ascend_doctor.parsers.torch_npu_error import parse_torch_npu_line
from ascend_doctor.parsers.traceback import TracebackParser

from .conftest import load_yaml

PLOG_LINES = load_yaml("plog_lines.yaml")["lines"]


def _feed_all(parser, text):
    """Every record a streaming parser gives for a whole paste, as triage feeds it line by line."""
    out = []
    for i, line in enumerate(text.splitlines(), 1):
        out.extend(parser.feed(i, line))
    return out + parser.close()


def parse_cann_blocks(text):
    return _feed_all(CannBlockParser(), text)


def parse_tracebacks(text):
    return _feed_all(TracebackParser(), text)


@pytest.mark.parametrize("case", PLOG_LINES, ids=[f"{c['module']}-{i}" for i, c in enumerate(PLOG_LINES)])
def test_real_plog_lines(case):
    rec = parse_plog_line(case["text"])
    assert rec is not None, case["source"]
    for key in ("level", "module", "pid", "pname", "ts", "file", "tid", "func"):
        assert getattr(rec, key) == case[key], (key, case["source"])
    assert rec.message  # something is left after the module's decoration


def test_plog_line_behind_relay_prefixes():
    # vLLM worker prefix and grep -r file prefix in front of a real line (vllm-ascend#13482 line)
    line = "[ERROR] RUNTIME(2817,):2026-08-04-06:53:21.437.447 [stars_engine.cc:1548]3154 ProcLogicCqReport:Task run failed, device_id=7, stream_id=91, task_id=2763, sqe_type=1(aicpu), errType=0x1(task exception), sqSwStatus=0x1"
    for wrapped in ("(Worker_TP1 pid=961) " + line, "run/plog/plog-2817_20260804065300000.log:" + line):
        rec = parse_plog_line(wrapped)
        assert rec is not None and rec.pid == 2817 and rec.pname == "" and rec.func == "ProcLogicCqReport"
        text, prefix = strip_prefixes(wrapped)
        assert text == line and prefix


def test_old_hccl_body_carries_rank():
    rec = parse_plog_line(next(c["text"] for c in PLOG_LINES if "hccl_comm.cc" in c["text"]))
    assert rec.hccl_rank == 0 and "hccl initialize failed" in rec.message
    assert [(c.family, c.value) for c in find_codes(rec.body)] == [("hccl", "7")]


def test_not_plog():
    # MindSpore's own format has three fields in the parentheses (MS doc) and is not a plog line
    assert parse_plog_line("[WARNING] CORE(51545,ffff8ba74480,python):2019-07-25-19:17:35.411.770 [mindspore/core/ir/anf_extends.cc:66] fullname_with_scope] x") is None
    assert parse_plog_line("plain text") is None


def test_file_names_and_time():
    f = parse_plog_file_name("plog-16027_20220618001623878.log")
    assert f and f.kind == "plog" and f.pid == 16027
    d = parse_plog_file_name("device-2849330_20251024153927364.log")
    assert d and d.kind == "device" and d.pid == 2849330
    assert ts_to_epoch("2024-07-04-14:14:25.036.721") - ts_to_epoch("2024-07-04-14:14:24.036.721") == pytest.approx(1.0)


# --- CANN blocks: the four shapes plus 9.2's header (sources beside each)
BLOCKS = [
    ("EH9999: Inner Error!\nEH9999  [Init][Env]init env failed![FUNC:ReportInnerError][FILE:log_inner.cpp][LINE:145]\n"
     "        TraceBack (most recent call last):\n        build op model failed, result = 500001[FUNC:ReportInnerError][FILE:log_inner.cpp][LINE:145]\n",
     "https://github.com/Ascend/pytorch/issues/7", "EH9999", "legacy", "[Init][Env]init env failed!", None),
    ("RuntimeError: call aclnnCast failed, detail:EZ9999: Inner Error!\nEZ9999: 2024-06-28-13:05:55.631.066  Parse dynamic kernel config fail.\n"
     "        TraceBack (most recent call last):\n        AclOpKernelInit failed opType\n",
     "https://github.com/hiyouga/LlamaFactory/issues/4610", "EZ9999", "ts", "Parse dynamic kernel config fail.", None),
    ("EL0003: [PID: 528886] 2025-06-24-11:20:41.662.506 The argument is invalid.\n        Solution: Try again with a valid argument.\n"
     "        TraceBack (most recent call last):\n        Failed to open device, retCode=0x7020014, deviceId=0.[FUNC:InitRawDriver][FILE:raw_device.cc][LINE:126]\n",
     "https://github.com/Ascend/pytorch/issues/67", "EL0003", "pid", "The argument is invalid.", 528886),
    ("EE9999: Inner Error!\nEE9999[PID: 17096] 2026-03-24-09:58:00.084.843 (EE9999):  rtMemcpy execution failed, reason=the current capture mode does not support this operation[FUNC:FuncErrorReason][FILE:error_message_manage.cc][LINE:61]\n"
     "        TraceBack (most recent call last):\n       synchronized memcpy failed, kind = 1, runtime result = 107030[FUNC:ReportCallError][FILE:log_inner.cpp][LINE:148]\n",
     "https://github.com/vllm-project/vllm-ascend/issues/7676", "EE9999", "pid_inner",
     "rtMemcpy execution failed, reason=the current capture mode does not support this operation", 17096),
    ("[PID: 1613532] 2026-03-24-12:14:45.885.234 Memory_Allocation_Failure(EL0004): Failed to allocate memory.\n        Possible Cause: Available memory is insufficient.\n"
     "        Solution: Close applications not in use.\n        TraceBack (most recent call last):\n        allocate device memory failed.[FUNC:Init][FILE:memory_pool_manager.cc][LINE:50]\n",
     "https://github.com/hw-native-sys/PTOAS/pull/341", "EL0004", "external_title", "Failed to allocate memory.", 1613532),
    ("EZ9999[PID: 3473945] 2025-12-10-10:52:09.632.838 AclNN_Inner_Error(EZ9999):  Parse dynamic kernel config fail.\n        TraceBack (most recent call last):\n       Failed to ParseDynamicKernels.\n",
     "https://github.com/vllm-project/vllm-ascend/issues/4859", "EZ9999", "pid_inner", "Parse dynamic kernel config fail.", 3473945),
]


@pytest.mark.parametrize("text,source,code,shape,first,pid", BLOCKS, ids=[b[3] + "-" + b[2] for b in BLOCKS])
def test_cann_block_shapes(text, source, code, shape, first, pid):
    blocks = parse_cann_blocks(text)
    assert len(blocks) == 1, source
    b = blocks[0]
    assert (b.code, b.shape, b.first_error, b.pid) == (code, shape, first, pid)
    assert b.traceback, "TraceBack lines are kept"


def test_external_block_fields():
    b = parse_cann_blocks(BLOCKS[4][0])[0]
    assert b.title == "Memory_Allocation_Failure" and b.possible_cause.startswith("Available memory")
    assert b.solution == "Close applications not in use." and not b.is_inner
    assert b.traceback == ["allocate device memory failed.[FUNC:Init][FILE:memory_pool_manager.cc][LINE:50]"]


def test_internal_error_header_of_92():
    # CANN >= 9.2 prints "Internal error!" (hicann/runtime error_manager.cc)
    text = BLOCKS[3][0].replace("Inner Error!", "Internal error!")
    b = parse_cann_blocks(text)[0]
    assert b.header is None or b.header == "Internal error!"
    assert b.code == "EE9999" and b.first_error.startswith("rtMemcpy execution failed")


def test_detail_line_before_message_and_prefixed_continuations():
    # vllm-ascend#4972: an indented detail line sits between the header and the PID line
    text = ("EH9999: Inner Error!\n        rtEventQueryStatus execute failed, reason=[aicore timeout][FUNC:FuncErrorReason][FILE:error_message_manage.cc][LINE:53]\n"
            "EH9999[PID: 285] 2025-12-12-12:10:10.639.672 (EH9999):  [Query][Status]query event recorded status failed, runtime result = 507014[FUNC:ReportCallError][FILE:log_inner.cpp][LINE:162]\n"
            "        TraceBack (most recent call last):\n")
    b = parse_cann_blocks(text)[0]
    assert b.pid == 285 and "aicore timeout" in b.text and b.line_count == 4


def test_two_blocks_in_a_row():
    text = BLOCKS[0][0] + BLOCKS[2][0]
    assert [b.code for b in parse_cann_blocks(text)] == ["EH9999", "EL0003"]


# --- torch_npu
def test_torch_npu_banner_and_call():
    # https://github.com/Ascend/pytorch/issues/66
    b = parse_torch_npu_line("[ERROR] 2025-04-29-18:46:11 (PID:1066924, Device:1, RankID:-1) ERR00100 PTA call acl api failed")
    assert (b.kind, b.pid, b.device, b.rank, b.err_code, b.submodule) == ("banner", 1066924, 1, None, "ERR00100", "PTA")
    c = parse_torch_npu_line("RuntimeError: operator():build/CMakeFiles/torch_npu.dir/compiler_depend.ts:25 NPU function error: c10_npu::acl::AclrtSynchronizeStreamWithTimeout(copy_stream), error code is 507035")
    assert (c.kind, c.code, c.call_kind) == ("call", "507035", "NPU")


def test_torch_npu_other_records():
    # https://github.com/vllm-project/vllm-ascend/issues/486 (HcclResult 6 through the op queue)
    c = parse_torch_npu_line("RuntimeError: InnerRunOpApi:torch_npu/csrc/framework/OpParamMaker.cpp:281 OPS function error: HcclAllreduce, error code is 6")
    assert (c.call_kind, c.code, c.call) == ("OPS", "6", "HcclAllreduce")
    assert [(x.family, x.value) for x in find_codes(c.text)] == [("hccl", "6")]
    # https://github.com/vllm-project/vllm-ascend/issues/382
    w = parse_torch_npu_line("[rank1]:[E324 13:00:25.428029551 compiler_depend.ts:574] [Rank 1] Watchdog caught collective operation timeout: WorkHCCL(SeqNum=196, OpType=ALLREDUCE, Timeout(ms)=3600000) ran for 3600185 milliseconds before timing out.")
    assert (w.kind, w.rank, w.op_type, w.timeout_ms) == ("watchdog", 1, "ALLREDUCE", 3600000)
    # https://github.com/Ascend/pytorch/issues/90
    a = parse_torch_npu_line("RuntimeError: copy_d2d_baseformat_opapi:build/CMakeFiles/torch_npu.dir/compiler_depend.ts:88 NPU function error: call aclnnInplaceCopy failed, error code is 561103")
    assert a.operator == "aclnnInplaceCopy" and a.code == "561103"
    # https://github.com/vllm-project/vllm-ascend/issues/2105
    old = parse_torch_npu_line("[W730 06:16:22.869118032 compiler_depend.ts:526] Warning: NPU warning, error code is 507018[Error]: ")
    assert (old.call_kind, old.code) == ("warning", "507018")


# --- codes in free text
CODES = [
    ("[ERROR] RUNTIME(216,):2026-07-24-02:51:31.969.607 [davinci_kernel_task.cc:1729]273 PreCheckTaskErr:Kernel task happen error, retCode=0x2a, [aicpu exception].",
     [("ts", "0x2a", "aicpu exception")]),  # vllm-ascend#12776
    ("[ERROR] RUNTIME(227839,rtstest_host):2026-07-13-11:39:20.982.674 [api_c.cc:1713]227839 rtModelExecute:ErrCode=207005, desc=[driver error:resource alloc fail], InnerCode=0x7020023",
     [("acl", "207005", "driver error:resource alloc fail"), ("runtime_inner", "0x7020023", "driver error:resource alloc fail")]),  # RT FAQ EE1023
    ("[ERROR] GE(946748,main):2025-05-19-15:59:07.739.753 [host_cpu_engine.cc:288]947062 LoadLib: ErrorNo: 1343225860(Internal errors) [INIT][DEFAULT][Invoke][DlOpen] failed.",
     [("ge_status", "1343225860", "Internal errors")]),  # Ascend/samples#21
    ("dcmi module initialize failed. ret is -8005", [("npu_smi", "-8005", None)]),  # Project-HAMi/ascend-device-plugin#23
    ("EI0002: [PID: 2969] 2025-10-11-15:09:34.713.335 The wait execution of the Notify register times out.", [("cann", "EI0002", None)]),  # vllm-ascend#3413
    ("[rank1]:[E324 13:00:25.428029551 compiler_depend.ts:574] [Rank 1] Watchdog caught", []),  # glog prefix is not an E-code
    ("wait for compute device to finish failed, runtime result = 507046.[FUNC:ReportCallError][FILE:log_inner.cpp][LINE:161]", [("acl", "507046", None)]),  # Ascend/pytorch#48
    ("[drv api] halDeviceEnableP2P failed: drv devId=6, phyIdSrc=0, drvRetCode=17![FUNC:EnableP2P][FILE:npu_driver.cc][LINE:4088]", [("drv", "17", None)]),  # modelscope/ms-swift#9135
]


@pytest.mark.parametrize("text,want", CODES)
def test_codes(text, want):
    got = [(c.family, c.value, c.reason) for c in find_codes(text)]
    assert got == want


# --- OOM
def test_oom_npu_templates():
    old = parse_oom("RuntimeError: NPU out of memory. Tried to allocate 22.00 MiB (NPU 6; 60.97 GiB total capacity; 10.24 GiB already allocated; 10.24 GiB current active; 19.79 MiB free; 10.65 GiB reserved in total by PyTorch) If reserved memory is >> allocated memory try setting max_split_size_mb to avoid fragmentation.")
    assert old.template == "npu_pre26" and old.device == 6 and old.requested == size_to_bytes("22.00 MiB")
    assert classify(old) == "device_busy_permission"  # vllm-ascend#19: memory held outside the allocator
    new = parse_oom("torch.OutOfMemoryError: NPU out of memory. Tried to allocate 72.00 MiB (NPU 0; 61.27 GiB total capacity; 56.05 GiB already allocated; 56.05 GiB current active; 5.04 MiB free; 58.39 GiB reserved in total by PyTorch).If reserved memory is >> allocated memory try setting max_split_size_mb to avoid fragmentation.")
    assert new.template == "npu_26" and classify(new) == "oom_fragmentation"  # sglang#29838: 2.34 GiB cached gap > 72 MiB


def test_oom_cuda_templates():
    # pytorch/pytorch#16417 (1.x "cached") and rapidsai/crossfit#18 (2.1 form, "capacty" typo)
    a = parse_oom("CUDA out of memory. Tried to allocate 12.50 MiB (GPU 0; 10.92 GiB total capacity; 8.57 MiB already allocated; 9.28 GiB free; 4.68 MiB cached)")
    assert a.template == "cuda_cached" and classify(a) == "oom_capacity"
    # 1.0-1.3 printed cached - allocated as "cached" (a figure below "already allocated" in a real
    # message is only possible that way): reserved is their sum, never the cached figure alone
    assert abs(a.reserved - (a.allocated + 4.68 * 2**20)) < 2**14
    old = parse_oom("RuntimeError: CUDA out of memory. Tried to allocate 294.00 MiB (GPU 0; 7.79 GiB total capacity; "
                    "6.27 GiB already allocated; 61.62 MiB free; 617.88 MiB cached)")  # https://github.com/BaberMuyu/2020CCF-NER/issues/6
    assert old.reserved > old.allocated and classify(old) != "device_busy_permission"
    b = parse_oom("CUDA out of memory. Tried to allocate 12.00 GiB. GPU 0 has a total capacty of 47.54 GiB of which 11.00 GiB is free. Process 445260 has 36.53 GiB memory in use. Of the allocated memory 23.57 GiB is allocated by PyTorch, and 12.12 GiB is reserved by PyTorch but unallocated.")
    assert b.template == "cuda_2x" and classify(b) == "oom_fragmentation"
    # pytorch/pytorch#35901: classic fragmentation in the "reserved in total" form
    c = parse_oom("CUDA out of memory. Tried to allocate 10.84 GiB (GPU 0; 23.65 GiB total capacity; 1.06 GiB already allocated; 10.26 GiB free; 12.53 GiB reserved in total by PyTorch)")
    assert c.template == "cuda_reserved" and classify(c) == "oom_fragmentation"


# --- HCCL
def test_hccl_records():
    src = "https://github.com/hicann/hccl/blob/09300b70df9a031339f08e5f2ca06d7bf294d009/docs/zh/user_guide/fault_diagnosis/task_exec_stage.md"
    crimer = parse_hccl_line("[INFO] HCCL(686,python):2025-10-23-07:52:59.191.363 [heartbeat.cc:951] [8970][TaskExecStage][HeartbeatAbnormal]local rank [127.10.0.1/1]: crimer rank [127.10.0.2/2] status[LOST] by informer rank [127.10.0.3/3]")
    assert (crimer.kind, crimer.rank, crimer.status) == ("crimer", 2, "LOST"), src
    loc = parse_hccl_line("[ERROR]HCCL(835695,all_reduce_test):2025-10-23-17:28:06.049.385[task_exception_handler.cc:610][835695][TaskExecStage][HeartbeatAbnormal]Cluster Exception Location[IP/ID]:[127.10.0.1/1], Arrival Time:[Thu Oct 23 17:25:58 2025], Discoverer:[127.10.0.1/2], ExceptionType:[Heartbeat Lost Occurred], Possible Reason:1. Process has exited, 2. Network Disconnected")
    assert (loc.kind, loc.device, loc.status, loc.peer) == ("cluster_exception", 1, "Heartbeat Lost Occurred", "127.10.0.1/1")
    pair = parse_hccl_line("[ERROR] HCCL(17528,python3):2026-03-18-10:34:43.141.966 [detect_connect_anomalies.cc:132] [18744]This node (server 192.168.200.100, device ID 1) detects that srcRank (server 192.168.200.100, device ID 1) fails to connect to dstRank (server 192.168.200.100, device ID 0). Continue to analyze the fault based on the logs of srcRank and dstRank.")
    assert pair.kind == "detect_pair" and pair.device == 0  # HC param_link_stage.md
    # vllm-ascend#3413
    remote = parse_hccl_line("EI0002: [PID: 2969] 2025-10-11-15:09:34.713.335 The wait execution of the Notify register times out. Reason: The Notify register has not received the Notify record from remote rank: [24]. base information: [streamID:[109], taskID[38], taskType[Notify Wait], tag[AllReduce_group_name_1654NHRAllReduceComm_device], AlgType(level 0-1-2):[ring-NHR-NHR].]. task information: [notify id:[0x0000000000000213], stage:[0], remote rank:[24]]. group information: [group:[group_name_1654], user define information[Unspecified], rankSize[32], rankId[25 24]]")
    assert (remote.kind, remote.rank, remote.rank_size, remote.info["own_rank"]) == ("remote_rank", 24, 32, "25")
    ranks = parse_hccl_line("[INFO] HCCL(858941,all_reduce_test):2025-12-10-19:53:28.131.357 [hccl_communicator_attrs.cc:330] [858941][LocalRank Key Info]userRank[6] hostIp[127.0.0.1] devicePhyId[6] server[127.0.0.1] deviceIp[0.0.0.0] superPodId[0] useSuperPodMode[0] isStandardCard[0]")
    assert (ranks.kind, ranks.rank, ranks.device) == ("rank_map", 6, 6)  # HC debug_thinking.md
    task = parse_hccl_line("[ERROR] HCCL(2111667,all_reduce_test):2025-10-24-11:18:29.597.083 [task_exception_handler.cc:704] [2111667][TaskExecStage][Timeout][Host]Task run failed, opData information is timeStamp:[2025-10-24-11:16:55.490.253], deviceId[2], index[21], count[256], reduceType[sum], src[0x12c0c0013000], dst[0x12c0c0014000], dataType[float32].")
    assert (task.kind, task.device, task.op_index, task.op_count) == ("task_failed", 2, 21, 256)
    link = parse_hccl_line("[ERROR] HCCL(80812,):2026-06-17-02:21:43.853.333 [transport_manager.cc:954] [86231][InitChannelStage][RunFailed]Transport init error! createLink para:rank[7]-localUserrank[7]-localIpAddr[80.5.5.39/7], remoteRank[15]-remoteUserrank[15]-remoteIpAddr[80.5.5.67/7], machineType[0], linkMode[1], isUsedRdma[1], tag[AllGather_group_name_119]")
    assert (link.kind, link.rank, link.tag) == ("transport", 15, "AllGather_group_name_119")  # vllm-ascend#10591


# --- what a paste went through on its way to us (each line from the page named beside it)
PASTE_SHAPES = [
    # colour codes whose escape character was lost (gpustack/gpustack#4194)
    ("36m(EngineCore_DP0 pid=820)0m ERROR 01-08 09:17:07 [core.py:708] EngineCore failed to start.",
     "EngineCore failed to start.", "https://github.com/gpustack/gpustack/issues/4194"),
    # vLLM-Omni's stage prefix (vllm-project/vllm-omni#2898)
    ("[Stage-1] ERROR 04-18 15:43:35 [multiproc_executor.py:800] WorkerProc failed to start.",
     "WorkerProc failed to start.", "https://github.com/vllm-project/vllm-omni/issues/2898"),
    # quoted in a reply (vllm-project/vllm-omni#1199)
    ("> [Stage-0] INFO 02-05 01:26:06 [npu_worker.py:57] Worker 0: Initialized device and distributed environment.",
     "Worker 0: Initialized device and distributed environment.", "https://github.com/vllm-project/vllm-omni/issues/1199"),
    # cat -n (wangshuai09/vllm#9)
    ("   322\t+ ray status", "+ ray status", "https://github.com/wangshuai09/vllm/issues/9"),
    # the CRI log format (kubernetes pkg/kubelet/kuberuntime/logs/logs.go; the design proposal's example)
    ("2016-10-06T00:17:09.669794202Z stdout P log content 1", "log content 1",
     "https://github.com/kubernetes/design-proposals-archive/blob/main/node/kubelet-cri-logging.md"),
    # kubectl logs --timestamps (gitlab-com/support/toolbox/kubesos!50)
    ('2025-11-05T00:40:00.149897031+07:00 {"component": "gitlab"}', '{"component": "gitlab"}',
     "https://gitlab.com/gitlab-com/support/toolbox/kubesos/-/merge_requests/50"),
]


@pytest.mark.parametrize("raw,inner,source", PASTE_SHAPES, ids=[s[2].rsplit("/", 2)[-2] for s in PASTE_SHAPES])
def test_what_a_paste_went_through_is_peeled(raw, inner, source):
    assert strip_prefixes(raw)[0] == inner, source


def test_a_quote_keeps_the_indentation_of_a_block_and_python_prompts_stay():
    assert strip_prefixes(">         TraceBack (most recent call last):")[0] == "        TraceBack (most recent call last):"
    assert strip_prefixes("> > ERROR: x")[0] == "ERROR: x"
    assert strip_prefixes(">>> import torch_npu")[0] == ">>> import torch_npu"
    assert strip_prefixes("36m(EngineCore_DP0 pid=820)0m x")[1].pid == 820


def test_encoded_lines_are_unwrapped():
    # Docker's json-file driver (https://docs.docker.com/engine/logging/drivers/json-file/)
    assert unwrap('{"log":"Log line is here\\n","stream":"stdout","time":"2019-01-01T11:11:11.111111111Z"}') == "Log line is here"
    assert unwrap("ModuleNotFoundError: No module named &#39;acl&#39; &amp; &#x27;x&#x27; &quot;y&quot; &lt;z&gt;") == \
        "ModuleNotFoundError: No module named 'acl' & 'x' \"y\" <z>"
    assert unwrap("\x1b[1;31mERROR\x1b[0m 05-06 10:00:01 [core.py:1] boom") == "ERROR 05-06 10:00:01 [core.py:1] boom"
    for hostile in ('{"log": 5}', '{"log":"unterminated', "&#0; &#99999999; &#xD800;", "&bogus;"):
        assert unwrap(hostile) == hostile


# --- prefixes and tracebacks
def test_prefixes():
    # vllm-ascend#13482-style worker prefix, vLLM logger prefix (vllm-ascend#1047), torch_npu logger (vllm-ascend#4972)
    t, p = strip_prefixes("(Worker_DP0_TP5_EP5 pid=17096) ERROR 03-25 06:14:02 [multiproc_executor.py:880] EE9999: Inner Error!")
    assert t == "EE9999: Inner Error!" and p.pid == 17096 and p.worker == "Worker_DP0_TP5_EP5"
    t, p = strip_prefixes("ERROR 06-03 14:54:23 engine.py:400] [ERROR] 2025-06-03-14:54:23 (PID:8648, Device:0, RankID:-1) ERR00100 PTA call acl api failed. ")
    assert t.startswith("[ERROR] 2025-06-03") and p.level == "ERROR"
    t, p = strip_prefixes("[rank1]:         Solution: Check other NPUs that are not reporting errors")
    assert t.startswith("        Solution:") and p.rank == 1  # indentation survives: it marks block continuations
    t, p = strip_prefixes("[285] [2025-12-12 12:10:10:644] torch.distributed: [ERROR] [479] Find exception when finishedNPUExecutionInternal")
    assert t.startswith("Find exception") and p.pid == 285


def test_traceback():
    # Ascend/pytorch#54 (lmdeploy)
    text = """Traceback (most recent call last):
  File "/opt/lmdeploy/lmdeploy/pytorch/engine/model_agent.py", line 486, in _start_tp_process
    func(rank, *args, **kwargs)
  File "/usr/local/python3.10.5/lib/python3.10/site-packages/torch/distributed/distributed_c10d.py", line 2615, in broadcast_object_list
    torch.sum(object_sizes_tensor).item(),  # type: ignore[arg-type]
RuntimeError: ACL stream synchronize failed.
"""
    (tb,) = parse_tracebacks(text)
    assert tb.exc_type == "RuntimeError" and tb.exc_message == "ACL stream synchronize failed." and tb.frame_count == 2
    assert tb.last_frame.func == "broadcast_object_list"


def test_deep_traceback_keeps_bounded_frames():
    frames = "".join(f'  File "/x/mod{i}.py", line {i}, in f{i}\n    call()\n' for i in range(5000))
    (tb,) = parse_tracebacks("Traceback (most recent call last):\n" + frames + "RecursionError: maximum recursion depth exceeded\n")
    assert tb.frame_count == 5000 and len(tb.frames) <= 15 and tb.last_frame.func == "f4999"


def test_allocator_message_retyped_by_hand_is_read_field_by_field():
    # MindSpeed's feature page quotes the message retyped ("allocated", "activate"), see test_real_pastes
    from ascend_doctor.parsers.oom_text import WrappedOom, parse_oom

    rec = parse_oom("Tried to allocated 3384.00 MiB (NPU 2; 61.22 GiB total capacity; 53.87 GiB already allocated; "
                    "53.87 GiB current activate; 1.59 GiB free; 56.60 GiB reserved in total by PyTorch)")
    assert rec is not None and rec.template == "loose" and rec.device == 2
    assert rec.requested == 3384 << 20 and rec.free is not None and rec.reserved is not None
    joiner = WrappedOom()
    joiner.begin(7, "NPU out of memory. Tried to allocate 72.00 MiB (NPU 0; 61.27 GiB total capacity;")
    assert joiner.feed("56.05 GiB already allocated; 56.05 GiB current active; 5.04 MiB free; 58.39 GiB reserved in") is None
    whole = joiner.feed("total by PyTorch).")
    assert joiner.start == 7 and whole is not None and whole.reserved is not None and whole.template == "npu_26"
    assert joiner.feed("more text") is None  # done: later lines are not joined
    joiner.begin(9, "Tried to allocate 8.00 GiB (GPU 0; 7.00 GiB total capacity; 1.00 GiB already allocated; 0 bytes free; 2.00 GiB cached)")
    assert joiner.feed("the next line") is None and joiner.left == 0  # a whole message starts nothing
    assert parse_oom("Tried to allocate 2 things (NPU 0; free)") is None


def test_the_cheap_word_test_never_drops_a_line_the_error_shapes_take():
    # every line of every real paste in the corpus and every KB example: where a shape matches,
    # the word test must have let the line through (it only saves the regex on routine lines)
    from ascend_doctor import kb as kb_module
    from ascend_doctor.parsers.error_shapes import _SHAPE, may_be_error

    from .corpus.measure import load_cases

    lines = [ln for case in load_cases() for ln in case["paste"].splitlines()]
    lines += [ln for e in kb_module.load().entries for ex in e.examples for ln in ex.text.splitlines()]
    assert len(lines) > 2000
    shaped = [ln for ln in lines if _SHAPE.search(ln)]
    assert len(shaped) > 800
    assert [ln for ln in shaped if not may_be_error(ln)] == []
    assert not may_be_error("INFO 12-28 22:41:44 [shm_broadcast.py:289] vLLM message queue communication handle")


def test_lines_that_differ_in_their_numbers_get_one_answer_but_zero_stays_zero():
    from ascend_doctor.parsers.error_shapes import looks_like_error

    assert looks_like_error("1 failed, 2 passed") and looks_like_error("7 failed, 3 passed")
    assert not looks_like_error("0 failed, 3 passed")
    assert looks_like_error("E0624 10:46:50.123 x.cc:1] boom") and looks_like_error("E1231 23:59:59.999 y.cc:9] boom")
