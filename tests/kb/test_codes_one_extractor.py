"""Triage and the knowledge base read the same codes from the same text.

Both go through ``parsers.codes.find_codes``; the KB spells its results as table keys
(``kb.codes.extract_codes``), triage hands them to the KB through ``kb.codes.kb_key``.
Lines below are real (source beside each); before the two extractors were merged, the
KB or triage missed the codes of many of them.
"""
from __future__ import annotations

from pathlib import Path
from typing import List

import pytest
import yaml

from ascend_doctor import kb
from ascend_doctor.kb.codes import canonical_keys, extract_codes, kb_key
from ascend_doctor.parsers.codes import find_codes

BASE = kb.load()
TESTS = Path(__file__).resolve().parents[1]

MS_CASES = "https://github.com/mindspore-ai/docs/blob/0e400746c266fdc7f7eb1121cbd26603b0214075/tutorials/source_en/debug/error_analysis/cann_error_cases.md"
HCCL_LINK = "https://github.com/hicann/hccl/blob/f97e5675a3e602b797fa834b82d9f93625d784cd/docs/zh/user_guide/fault_diagnosis/link_timeout_EI0006.md"

# (line, source, codes as (family, value), names of the KB table rows they decode to)
LINES = [
    ("[ERROR] HCCL(17528,python3):2026-03-18-10:33:52.113.454 [hccl_socket_manager.cc:861] [18744][Wait][LinksEstablishCompleted] is failed. ret[9].",
     HCCL_LINK, [("hccl", "9")], ["HCCL_E_TIMEOUT"]),
    ("[ERROR] HCCL(17528,python3):2026-03-18-10:34:43.142.156 [hcom.cc:515] [18111][AllReduce][Result]errNo[0x0000000005010009] hcclComm AllReduce error, tag[HcomAllReduce_6629421139219749105_0], input_ptr[0x12e083e00200], output_ptr[0x12e086600400], count[10485888], data_type[float32], op[sum]",
     HCCL_LINK, [("hccl", "9")], ["HCCL_E_TIMEOUT"]),
    ("[ERROR] HCCL(17381,python):2022-12-01-03:02:29.001.129 [hcom.cc:94][hccl-17381-0-1669834948-hccl_world_group][0][Init][Result]hcom init failed, rankNum[8], rank[0], server[10.*.*.*], device[0], return[83951623]",
     MS_CASES, [("hccl", "7")], ["HCCL_E_UNAVAIL"]),
    ("RuntimeError: InnerRunOpApi:torch_npu/csrc/framework/OpParamMaker.cpp:281 OPS function error: HcclAllreduce, error code is 6",
     "https://github.com/vllm-project/vllm-ascend/issues/486", [("hccl", "6")], ["HCCL_E_NOT_FOUND"]),
    ("[ERROR] RUNTIME(150840,python):2021-09-14-09:26:01.014.355 [engine.cc:914]150900 ReportExceptProc:Task exception! device_id=0, stream_id=117, task_id=23, type=13, retCode=0x91.",
     MS_CASES, [("ts", "0x91")], ["TS_MODEL_STREAM_EXE_FAILED"]),
    ("[ERROR] RUNTIME(150840,python):2021-09-14-09:26:01.014.622 [api_c.cc:581]150900 rtStreamSynchronize:ErrCode=507011, desc=[the model stream execute failed], InnerCode=0x7150050",
     MS_CASES, [("acl", "507011"), ("runtime_inner", "0x7150050")], ["ACL_ERROR_RT_MODEL_EXECUTE", "RT_ERROR_TSFW_MODEL_EXE_FAILED"]),
    ("[ERROR] RUNTIME(216,):2026-07-24-02:51:31.965.004 [davinci_task.cc:209]273 SetStarsResultForDavinciTask:AICPU Kernel task happen error, retCode=0x2a.",
     "https://github.com/vllm-project/vllm-ascend/issues/12776", [("ts", "0x2a")], ["TS_ERROR_AICPU_EXCEPTION"]),
    ("[ERROR] RUNTIME(17381,python):2022-12-01-03:02:29.091.105 [engine.cc:1044]17901 ReportStatusFailProc:Device status failure, ret=118554641,start exception CallBack.",
     MS_CASES, [("runtime_inner", "0x7110011")], ["RT_ERROR_SOCKET_CLOSE"]),
    ("        Failed to open device, retCode=0x7020014, deviceId=0.[FUNC:InitRawDriver][FILE:raw_device.cc][LINE:126]",
     "https://github.com/Ascend/pytorch/issues/67", [("runtime_inner", "0x7020014")], ["RT_ERROR_DRV_INVALID_HANDLE"]),
    ("[ERROR] aclrtSynchronizeStream(stream) failed: 507015 (/tmp/ptoas-board-monitor-a5/runs/20260415_110506_manual_pr426/npu_validation/Qwen3Tilelet/qwen3_decode_layer_incore_17/main.cpp:108)",
     "https://github.com/hw-native-sys/PTOAS/pull/426", [("acl", "507015")], ["ACL_ERROR_RT_AICORE_EXCEPTION"]),
    ("[ERROR]  acl set device 0 failed, errorCode = 507033",
     "https://github.com/Ascend/samples/issues/16", [("acl", "507033")], ["ACL_ERROR_RT_DEV_SETUP_ERROR"]),
    ("[W compiler_depend.ts:487] Warning: NPU warning, error code is 507048[Error]: ",
     "https://github.com/Ascend/pytorch/blob/af7cebeb892bfed77d9cdf1f227470f1046f8646/docs/zh/user_guide/troubleshooting/troubleshooting_cases/HCCL_timeout.md",
     [("acl", "507048")], ["ACL_ERROR_RT_FFTS_PLUS_TIMEOUT"]),
    ("dcmi model initialized failed, because the device is used. ret is -8020",
     "https://github.com/Ascend/cann-container-image/issues/46", [("npu_smi", "-8020")], ["DCMI_ERR_CODE_RESOURCE_OCCUPIED"]),
    ("dcmi module initialize failed. ret is -8005",
     "https://github.com/Project-HAMi/ascend-device-plugin/issues/23", [("npu_smi", "-8005")], ["DCMI_ERR_CODE_INNER_ERR"]),
    ("[ERROR] 2025-02-16-12:18:25 (PID:775, Device:0, RankID:-1) ERR01100 OPS call acl api failed",
     "https://github.com/Ascend/pytorch/blob/04937a13212ac75868424b6e9dae31ff4d9d9866/docs/zh/user_guide/troubleshooting/troubleshooting_cases/operator_called_error.md",
     [("torch_npu", "ERR01100")], ["OPS call acl api failed"]),
    ("EE9999: Inner Error!\n"
     "        [driver interface] halMemAlloc failed: device_id=6, size=32212254720, type=2, env_type=3, drvRetCode=6![FUNC:ReportError][FILE:npu_driver.cc][LINE:568]\n"
     "        DevMemAlloc huge page failed: deviceId=6, type=2, size=32212254720, retCode=117571606![FUNC:ReportError][FILE:npu_driver.cc][LINE:566]\n"
     "        rtMalloc execute failed, reason=[driver error:out of memory][FUNC:ReportError][FILE:error_message_manage.cc][LINE:566]",
     MS_CASES, [("cann", "EE9999"), ("drv", "6"), ("runtime_inner", "0x7020016")],
     ["Inner_Error", "DRV_ERROR_OUT_OF_MEMORY", "RT_ERROR_DRV_OUT_MEMORY"]),
    # "error code N" with neither "is" nor ":" (a sample's own check macro, torch_npu's copy path)
    ("[ERROR] Operation failed: aclrtGetGroupCount(&groupCount) returned error code 207000",
     "https://github.com/hicann/runtime/commit/52966d2ee17f1cd0c0c7ea6b011ffe7b7f7828f2", [("acl", "207000")],
     ["ACL_ERROR_RT_FEATURE_NOT_SUPPORT"]),
    ("RuntimeError: aclrtMemcpy error code 100000", "https://gitcode.com/Ascend/pytorch/pull/33381", [("acl", "100000")],
     ["ACL_ERROR_INVALID_PARAM"]),
    # GE status words have no KB table: triage keeps them, the KB has nothing to look up
    ("[ERROR] GE(946748,main):2025-05-19-15:59:07.739.753 [host_cpu_engine.cc:288]947062 LoadLib: ErrorNo: 1343225860(Internal errors) [INIT][DEFAULT][Invoke][DlOpen] failed.",
     "https://github.com/Ascend/samples/issues/21", [("ge_status", "1343225860")], []),
    # an aclError after "err=" (a kernel library's own wrapper message)
    ("RuntimeError: 950 backend (v4): aclrtSynchronizeStream failed after launch_fwd, err=507015",
     "https://github.com/MinghuasLab/flash-attention-npu/issues/249", [("acl", "507015")], ["ACL_ERROR_RT_AICORE_EXCEPTION"]),
    # numbers that are not codes: AICPU's own errcode, a tdt result, a bare ret=4 on a line
    # that is neither HCCL's nor the driver's, a glog prefix
    ("[ERROR] RUNTIME(216,):2026-07-24-02:51:31.964.908 [device_error_proc.cc:1644]273 ProcessStarsAicpuErrorInfo:The error from device(chipId:0, dieId:0), serial number is 6, an exception occurred during AICPU execution, stream_id:5, task_id:40187, errcode:1, msg:execute kernel param invalid.",
     "https://github.com/vllm-project/vllm-ascend/issues/12776", [], []),
    ("[ERROR] ASCENDCL(83434,python):2022-11-30-23:31:08.729.325 [tensor_data_transfer.cpp:899]89062 acltdtSendTensor: [Push][Data]failed to send, tdt result = -1, device is 1, name is 62576f78-70c2-11ed-b633-000132214e48",
     MS_CASES, [], []),
    ("DrvMngGetConsoleLogLevel failed. (ret=4)", "https://github.com/Project-HAMi/ascend-device-plugin/issues/66", [], []),
    ("[rank1]:[E324 13:00:25.428029551 compiler_depend.ts:574] [Rank 1] Watchdog caught collective operation timeout: WorkHCCL(SeqNum=196, OpType=ALLREDUCE, Timeout(ms)=3600000) ran for 3600185 milliseconds before timing out.",
     "https://github.com/vllm-project/vllm-ascend/issues/382", [], []),
]


def triage_keys(text: str) -> List[str]:
    """The keys triage hands to the KB for ``text``, as the KB's matcher reads them."""
    out: List[str] = []
    for code in find_codes(text):
        key = kb_key(code)
        for canon in canonical_keys(key) if key else []:
            if canon not in out:
                out.append(canon)
    return out


@pytest.mark.parametrize("line,source,codes,names", LINES, ids=[f"{i}" for i in range(len(LINES))])
def test_triage_and_kb_read_the_same_codes(line, source, codes, names):
    assert [(c.family, c.value) for c in find_codes(line)] == codes, source
    assert triage_keys(line) == extract_codes(line), source
    assert [info.name for info in BASE.codes_in(line)] == names, source


def _real_texts() -> List[str]:
    texts = [ex.text for e in BASE.entries for ex in e.examples + e.counter_examples]
    for name in ("triage/data/plog_lines.yaml", "triage/data/pastes.yaml", "kb/data/pastes.yaml"):
        doc = yaml.safe_load((TESTS / name).read_text(encoding="utf-8"))
        items = doc.get("lines", doc.get("pastes", [])) if isinstance(doc, dict) else doc
        texts.extend(item["text"] for item in items if isinstance(item, dict) and "text" in item)
    for path in sorted((TESTS / "triage" / "data").glob("*.log")):
        content = path.read_text(encoding="utf-8", errors="replace")
        texts.append(content)  # whole pastes too: a small number is read by its own line
        texts.extend(content.splitlines())
    return texts


def test_every_real_text_gives_triage_and_kb_the_same_keys():
    texts = _real_texts()
    assert len(texts) > 250
    with_codes = 0
    for text in texts:
        keys = extract_codes(text)
        assert triage_keys(text) == keys, text[:200]
        for key in keys:
            assert canonical_keys(key) == [key], key  # a key read back is itself
        with_codes += bool(keys)
    assert with_codes > 90


@pytest.mark.parametrize(
    "text,codes",
    [
        # a number glued to letters or a prose placeholder is not a code
        ("InnerCode=0x7xxxxxx", []),
        ("ErrCode=507011ms", []),
        # the phrase at the end of a longer word is another word (drvRetCode has its own rule)
        ("halMemAlloc failed: drvRetCode=87", [("drv", "87")]),
        # errNo words of other modules carry no HcclResult
        ("errNo[0x0000000006000007]", []),
        # a task-scheduler code wider than 0x3FF counts only with its bracketed reason
        ("retCode=0x1234", []),
        ("retCode=0x1234, [some reason]", [("ts", "0x1234")]),
    ],
)
def test_shapes_that_are_not_codes(text, codes):
    assert [(c.family, c.value) for c in find_codes(text)] == codes


def test_reason_from_a_later_mention_is_kept():
    # the first mention has no reason, the second one names it (vllm-ascend#12776, plog of pid 216)
    text = ("SetStarsResultForDavinciTask:AICPU Kernel task happen error, retCode=0x2a.\n"
            "PreCheckTaskErr:Kernel task happen error, retCode=0x2a, [aicpu exception].")
    assert [(c.family, c.value, c.reason) for c in find_codes(text)] == [("ts", "0x2a", "aicpu exception")]
