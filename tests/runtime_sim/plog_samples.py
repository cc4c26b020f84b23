"""Real plog lines and the regexes both they and the simulator's lines must satisfy.

Every sample is copied verbatim from the public source next to it (line format:
https://github.com/hicann/runtime/blob/681ef7610df13c8128982901142a2c869ddbb53e/docs/zh/log_ref/log_overview.md). The line regex is a tolerant
one; the body regexes are the per-module conventions seen in these samples.
"""
from __future__ import annotations

import re

LINE = re.compile(
    r"^\[(?P<level>DEBUG|INFO|WARNING|ERROR|EVENT|TRACE|NULL|\d+)\]\s?(?P<module>[A-Z0-9_]+)"
    r"\((?P<pid>\d+),(?P<pname>[^)]*)\):(?P<ts>\d{4}-\d{2}-\d{2}-\d{2}:\d{2}:\d{2}\.\d{3}\.\d{3})"
    r"\s?(?:\[(?P<file>[^\]:]+):\s?(?P<line>\d+)\])?(?P<body>.*)$")

# Body conventions per module (as seen in the samples below).
BODY = {
    # GE may put "[status:INIT]" first (vllm-project/vllm-ascend#5361)
    "tid_func": re.compile(r"^(?:\[status:\w+\])?\s?(?P<tid>\d+)\s(?P<func>[~\w:]+):"),
    "hccl": re.compile(r"^\s?\[(?P<tid>\d+)\]"),
    "tdt": re.compile(r"^\[(?P<func>\w+)\]\[tid:(?P<tid>\d+)\] "),
    "profiling": re.compile(r"^(?: >>> | )\(tid:(?P<tid>\d+)\) "),
    "drv": re.compile(r"^\[ascend\]\[curpid:\s?(?P<pid>\d+),\s?(?P<tid>\d+)\]\[drv\]\[(?P<sub>[\w-]+)\]\[(?P<func>\w+)\]"),
    "hccp": re.compile(r"^tid:(?P<tid>\d+),(?P<func>\w+)\((?P<line>\d+)\) : "),
    "atrace": re.compile(r"^\(tid:(?P<tid>\d+)\) "),
    "app": re.compile(r'^(?P<tid>\d+) (?P<where>\S+:\w+:\d+): "\[PTA\]:"'),
}

MODULE_STYLE = {
    "RUNTIME": "tid_func", "GE": "tid_func", "ASCENDCL": "tid_func", "FE": "tid_func",
    "HCCL": "hccl", "TDT": "tdt", "PROFILING": "profiling", "DRV": "drv", "HCCP": "hccp",
    "ATRACE": "atrace", "APP": "app",
}

# (source, line)
REAL_LINES = [
    ("https://github.com/Ascend/samples/issues/21",
     "[ERROR] GE(946748,main):2025-05-19-15:59:07.739.753 [host_cpu_engine.cc:288]947062 LoadLib: ErrorNo: 1343225860(Internal errors) [INIT][DEFAULT][Invoke][DlOpen] failed. path = x, error = y"),
    ("https://github.com/Ascend/samples/issues/21",
     "[EVENT] PROFILING(946748,main):2025-05-19-15:59:07.740.922 [msprof_callback_impl.cpp:79] >>> (tid:947062) MsprofCtrlCallback called, type: 255"),
    ("https://github.com/Ascend/samples/issues/21",
     "[EVENT] TDT(946748,main):2025-05-19-15:59:07.741.638 [process_mode_manager.cpp:103][OpenProcess][tid:947062] [ProcessModeManager] enter into open process deviceId[0] rankSize[0]"),
    ("https://github.com/vllm-project/vllm-ascend/issues/13482",
     "[ERROR] RUNTIME(2817,):2026-08-04-06:53:21.437.447 [stars_engine.cc:1548]3154 ProcLogicCqReport:Task run failed, device_id=7, stream_id=91, task_id=2763, sqe_type=1(aicpu), errType=0x1(task exception), sqSwStatus=0x1"),
    ("https://github.com/vllm-project/vllm-ascend/issues/12776",
     "[ERROR] RUNTIME(216,):2026-07-24-02:51:31.969.607 [davinci_kernel_task.cc:1729]273 PreCheckTaskErr:Kernel task happen error, retCode=0x2a, [aicpu exception]."),
    ("https://github.com/vllm-project/vllm-ascend/issues/10591",
     "[ERROR] HCCL(80812,):2026-06-17-02:21:43.853.333 [transport_manager.cc:954] [86231][InitChannelStage][RunFailed]Transport init error! createLink para:rank[7]-localUserrank[7]-localIpAddr[80.5.5.39/7], remoteRank[15]-remoteUserrank[15]-remoteIpAddr[80.5.5.67/7], machineType[0], linkMode[1], isUsedRdma[1], tag[AllGather_group_name_119]"),
    ("https://github.com/gpustack/gpustack/issues/3352",
     "[INFO] PROFILING(42,mindie_llm_backend_connector):2025-11-18-09:33:12.519.079 [prof_atls_plugin.cpp:222] (tid:58) Module[45] register callback of ctrl handle."),
    ("https://github.com/gpustack/gpustack/issues/3352",
     "[INFO] RUNTIME(42,mindie_llm_backend_connector):2025-11-18-09:33:13.666.211 [runtime_keeper.cc:172] 58 CreateRuntimeImpl: Open libruntime_v100.so success"),
    ("https://github.com/gpustack/gpustack/issues/3352",
     "[ERROR] RUNTIME(42,mindie_llm_backend_connector):2025-11-18-09:33:13.666.323 [runtime.cc:5632]58 GetVisibleDevices:[INIT][DEFAULT]set ASCEND_RT_VISIBLE_DEVICES:[4] error, input data rang[0-2)"),
    ("https://github.com/gpustack/gpustack/issues/3352",
     "[ERROR] ASCENDCL(42,mindie_llm_backend_connector):2025-11-18-09:33:13.673.913 [device.cpp:54]58 aclrtSetDeviceImpl: open device 0 failed, runtime result = 107001."),
    ("https://github.com/gpustack/gpustack/issues/2849",
     "[INFO] DRV(378937,mindie_llm_backend_connector):2025-09-29-10:40:49.463.974 [devmm_svm.c:127][ascend][curpid:378937,378953][drv][devmm][devmm_setup_device]DrvMemDeviceOpen. (devid=0)"),
    ("https://github.com/PaddlePaddle/PaddleX/issues/2311",
     "[WARNING] TDT(88,python):2024-10-23-20:50:03.868.399 [thread_mode_manager.cpp:114][StartCallAICPU][tid:88] [ThreadModeManager] Can not open libaicpu_scheduler.so, deviceId[0], reason[/usr/lib64/libaicpu_scheduler.so: cannot open shared object file: No such file or directory]"),
    ("hicann/hccl docs/zh/user_guide/fault_diagnosis/param_link_stage.md",
     "[INFO] HCCP(2988,hccp_service.bin):2025-10-24-15:39:26.133.826 [rs_ssl.c:1529]tid:2988,rs_ssl_init(1529) : TLS SWITCH (1)"),
    ("hicann/hccl docs/zh/user_guide/fault_diagnosis/task_exec_stage.md",
     "[ERROR] HCCL(2111667,all_reduce_test):2025-10-24-11:18:29.597.044 [task_exception_handler.cc:908] [2111667][TaskExecStage][Timeout][Host]Task run failed, base information is streamID:[2], taskID[21], tag[AllReduce_127.10.0.1%enp_60000_0_1761275812718970], AlgType(level 0-1-2):[fullmesh-ring-NHR]."),
    ("hicann/hccl docs/zh/user_guide/fault_diagnosis/task_exec_stage.md (crimer rank)",
     "[INFO] HCCL(686,python):2025-10-23-07:52:59.191.363 [heartbeat.cc:951] [8970][TaskExecStage][HeartbeatAbnormal]local rank [127.10.0.1/1]: crimer rank [127.10.0.2/2] status[LOST] by informer rank [127.10.0.3/3]"),
    ("hicann/hccl docs/zh/user_guide/fault_diagnosis/task_exec_stage.md",
     "[ERROR]HCCL(835695,all_reduce_test):2025-10-23-17:28:06.049.385[task_exception_handler.cc:610][835695][TaskExecStage][HeartbeatAbnormal]Cluster Exception Location[IP/ID]:[127.10.0.1/1], Arrival Time:[Thu Oct 23 17:25:58 2025], Discoverer:[127.10.0.1/2], ExceptionType:[Heartbeat Lost Occurred], Possible Reason:1. Process has exited, 2. Network Disconnected"),
    ("hicann/hccl docs/zh/user_guide/fault_diagnosis/param_link_stage.md",
     "[ERROR] HCCL(17528,python3):2026-03-18-10:34:43.141.966 [detect_connect_anomalies.cc:132] [18744]This node (server 192.168.200.100, device ID 1) detects that srcRank (server 192.168.200.100, device ID 1) fails to connect to dstRank (server 192.168.200.100, device ID 0). Continue to analyze the fault based on the logs of srcRank and dstRank."),
    ("hicann/runtime docs/zh/FAQ/如何通过plog日志定位Device侧异常.md",
     "[ERROR] RUNTIME(2082291,python3):2024-07-04-14:14:25.050.941 [davinic_kernel_task.cc:1143]2082291 PrintErrorInfoForDavinciTask:[INIT][DEFAULT]Aicore kernel execute failed, device_id=0, stream_id=2, report_stream_id=2, task_id=1, flip_num=0, fault kernel_name=Add_ee98c6628030785f610b924ab1557b31_high_performance_210000000"),
    ("https://github.com/vllm-project/vllm-ascend/issues/16654",
     "[ERROR] RUNTIME(1322,):2026-09-02-05:45:15.396.921 [device_error_core_proc.cc:1060]1543 PrintCoreInfo:The error from device(chipId:0, dieId:0), serial number is 7, there is an exception of fftsplus aicore error, core id is 7, error code = 0, dump info: pc start: 0x12c0c136b000"),
    ("https://github.com/vllm-project/vllm-ascend/issues/5361",
     '[ERROR] APP(173913,):2025-12-25-17:14:03.382.026 [log_inner.cpp:77]173913 build/CMakeFiles/torch_npu.dir/compiler_depend.ts:MakeSureQueueEmpty:343: "[PTA]:"Inner error happened with CAN_EXIT status, detail: the current working operator name is Identity""'),
    ("https://github.com/vllm-project/vllm-ascend/issues/5361",
     "[INFO] GE(173913,):2025-12-25-17:14:03.584.514 [ge_api.cc:387][status:INIT]173913 GEFinalize:GEFinalize start"),
    ("https://github.com/vllm-project/vllm-ascend/issues/5361",
     "[INFO] ATRACE(173913,):2025-12-25-17:14:03.769.084 [tracer_mgr_operate.c:248](tid:173913) destroy object FE_Global_Trace, exitSave(false)."),
    ("hicann/hccl docs/zh/user_guide/fault_diagnosis/debug_thinking.md",
     "[INFO] HCCL(1595259,alltoall_test):2026-01-06-15:38:29.881.877 [externalinput.cc:598] [1595259][HCCL_ENV] HCCL_CONNECT_TIMEOUT set by default to [120]s"),
    ("hicann/hccl docs/zh/user_guide/fault_diagnosis/task_exec_stage.md",
     "[INFO] HCCL(2111667,all_reduce_test):2025-10-24-11:16:52.724.374 [op_base.cc:1292] [2111667]Entry-HcclCommInitRootInfoInner:ranks[4], rank[2], rootinfo: host ip[127.10.0.1] port[60000] nicDeploy[1] identifier[127.10.0.1%enp_60000_0_1761275812718970], deviceLogicId[2]"),
]


def parse(line: str):
    m = LINE.match(line.rstrip("\n"))
    assert m, "not a plog line: %r" % line
    return m


def body_style_ok(module: str, body: str) -> bool:
    style = MODULE_STYLE.get(module)
    if style is None:
        return True
    return bool(BODY[style].match(body))
