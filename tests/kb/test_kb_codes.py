"""Every way people and logs spell a code resolves to the right table row."""
from __future__ import annotations

import pytest

from ascend_doctor import kb
from ascend_doctor.kb.codes import canonical_keys, extract_codes

BASE = kb.load()


@pytest.mark.parametrize(
    "spelling,key,name",
    [
        ("507035", "507035", "ACL_ERROR_RT_VECTOR_CORE_EXCEPTION"),
        (" 507035 ", "507035", "ACL_ERROR_RT_VECTOR_CORE_EXCEPTION"),
        ("0x26", "ts:0x26", "TS_ERROR_AICORE_EXCEPTION"),
        ("0X2a", "ts:0x2A", "TS_ERROR_AICPU_EXCEPTION"),
        ("retCode=0x91", "ts:0x91", "TS_MODEL_STREAM_EXE_FAILED"),
        ("0x7020014", "0x07020014", "RT_ERROR_DRV_INVALID_HANDLE"),
        ("0x07020014", "0x07020014", "RT_ERROR_DRV_INVALID_HANDLE"),
        ("InnerCode=0x7150050", "0x07150050", "RT_ERROR_TSFW_MODEL_EXE_FAILED"),
        ("117571606", "0x07020016", "RT_ERROR_DRV_OUT_MEMORY"),
        ("EZ9999", "EZ9999", "AclNN_Inner_Error"),
        ("ez9999", "EZ9999", "AclNN_Inner_Error"),
        ("EL0004", "EL0004", "Memory_Allocation_Failure"),
        ("ERR00100", "ERR00100", "PTA call acl api failed"),
        ("-8005", "-8005", "DCMI_ERR_CODE_INNER_ERR"),
        ("dcmi:8020", "-8020", "DCMI_ERR_CODE_RESOURCE_OCCUPIED"),
        ("hccl:7", "hccl:7", "HCCL_E_UNAVAIL"),
        ("HCCL 9", "hccl:9", "HCCL_E_TIMEOUT"),
        ("HCCL_E_REMOTE", "hccl:21", "HCCL_E_REMOTE"),
        ("errNo[0x0000000005000007]", "hccl:7", "HCCL_E_UNAVAIL"),
        ("83951623", "hccl:7", "HCCL_E_UNAVAIL"),
        ("drv:6", "drv:6", "DRV_ERROR_OUT_OF_MEMORY"),
        ("drvRetCode=6", "drv:6", "DRV_ERROR_OUT_OF_MEMORY"),
        ("ACL_ERROR_RT_AICORE_EXCEPTION", "507015", "ACL_ERROR_RT_AICORE_EXCEPTION"),
        ("ACL_ERROR_RT_DEVIDE_OOM", "207018", "ACL_ERROR_RT_DEVICE_OOM"),
        ("561103", "561103", "ACLNN_ERR_INNER_NULLPTR"),
    ],
)
def test_lookup_any_spelling(spelling, key, name):
    info = BASE.lookup_code(spelling)
    assert info is not None, spelling
    assert (info.key, info.name) == (key, name)


def test_bare_small_number_is_ambiguous():
    assert BASE.lookup_code("7") is None
    assert {i.family for i in BASE.lookup_codes("7")} == {"hccl_result", "driver"}


@pytest.mark.parametrize("spelling", ["", "hello", "EX1234", "12345678901", "0x12345", "ERR1"])
def test_unknown_spellings(spelling):
    assert BASE.lookup_code(spelling) is None


@pytest.mark.parametrize(
    "line,keys",
    [
        ("RuntimeError: ... NPU function error: c10_npu::SetDevice(device_id_), error code is 507033", ["507033"]),
        ("[ERROR] RUNTIME(216,):2026 [x.cc:1]273 PreCheckTaskErr:Kernel task happen error, retCode=0x2a, [aicpu exception].", ["ts:0x2A"]),
        ("rtStreamSynchronize:ErrCode=507011, desc=[the model stream execute failed], InnerCode=0x7150050", ["507011", "0x07150050"]),
        ("halMemAlloc failed: device_id=6, size=32212254720, type=2, env_type=3, drvRetCode=6!", ["drv:6"]),
        ("[ERROR] HCCL(1,p):2022 [hccl_comm.cc:100][hccl-1-0-1-g][0][HcclComm][Init]errNo[0x0000000005000007] hccl initialize failed", ["hccl:7"]),
        ("[ERROR] HCCL(17528,python3):2026 [transport_manager.cc:1402] [18744][SetMachinePara]call trace: hcclRet -> 9", ["hccl:9"]),
        ("dcmi module initialize failed. ret is -8005", ["-8005"]),
        ("EZ9999[PID: 91583] 2026-04-15-11:09:31.973.508 (EZ9999):  The error", ["EZ9999"]),
        ("[ERROR] 2025-04-29-18:46:11 (PID:1066924, Device:1, RankID:-1) ERR00100 PTA call acl api failed", ["ERR00100"]),
        ("[PID: 1613532] 2026-03-24 Memory_Allocation_Failure(EL0004): Failed to allocate memory.", ["EL0004"]),
        ("OPS function error: HcclAllreduce, error code is 6", ["hccl:6"]),
        ("[ERROR] aclrtSynchronizeStream(stream) failed: 507015 (/tmp/x/main.cpp:108)", ["507015"]),
        ("Device status failure, ret=118554641,start exception CallBack.", ["0x07110011"]),
        # a glog timestamp ([E1206 ...]) and a plain count are not codes
        ("[rank0]:[E1206 18:44:12.715298746 ProcessGroupNCCL.cpp:607] [Rank 0] count 7 ret 3", []),
    ],
)
def test_extract_codes_from_real_lines(line, keys):
    assert extract_codes(line) == keys


def test_canonical_keys_reject_non_codes():
    assert canonical_keys("not a code") == []
    assert canonical_keys("7") == ["hccl:7", "drv:7"]
