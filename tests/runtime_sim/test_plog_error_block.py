"""CANN error-message blocks: each shape reproduces a real paste byte for byte."""
from __future__ import annotations

import pytest

from runtime_sim.plog import CannMessage, compact_text, render_block, shape_for_cann
from runtime_sim.plog.timefmt import parse_start

W = "[FUNC:%s][FILE:%s][LINE:%d]"


def ts(text: str) -> int:
    """``2025-06-24-11:20:41.662.506`` -> epoch microseconds."""
    date, clock = text[:10], text[11:]
    hms, ms, us = clock.split(".")
    return parse_start("%s %s.%s%s" % (date, hms, ms, us))


def test_pid_shape_external_matches_ascend_pytorch_67():
    # https://github.com/Ascend/pytorch/issues/67
    real = """EL0003: [PID: 528886] 2025-06-24-11:20:41.662.506 The argument is invalid.
        Solution: Try again with a valid argument.
        TraceBack (most recent call last):
        Failed to open device, retCode=0x7020014, deviceId=0.[FUNC:InitRawDriver][FILE:raw_device.cc][LINE:126]
        Failed to init RawDriver, device_id=0, retCode=0x7020014[FUNC:Init][FILE:raw_device.cc][LINE:323]
        Check param failed, dev can not be NULL![FUNC:DeviceRetain][FILE:runtime.cc][LINE:3631]"""
    t = ts("2025-06-24-11:20:41.662.506")
    msgs = [CannMessage("EL0003", "The argument is invalid.", t, 528886),
            CannMessage("EE9999", "Failed to open device, retCode=0x7020014, deviceId=0.", t, 528886,
                        W % ("InitRawDriver", "raw_device.cc", 126)),
            CannMessage("EE9999", "Failed to init RawDriver, device_id=0, retCode=0x7020014", t, 528886,
                        W % ("Init", "raw_device.cc", 323)),
            CannMessage("EE9999", "Check param failed, dev can not be NULL!", t, 528886,
                        W % ("DeviceRetain", "runtime.cc", 3631))]
    assert render_block(msgs, "pid") == real


def test_legacy_shape_matches_ascend_pytorch_7():
    # https://github.com/Ascend/pytorch/issues/7 (2023, CANN 7.0.RC1)
    real = """EH9999: Inner Error!
EH9999  [Init][Env]init env failed![FUNC:ReportInnerError][FILE:log_inner.cpp][LINE:145]
        TraceBack (most recent call last):
        build op model failed, result = 500001[FUNC:ReportInnerError][FILE:log_inner.cpp][LINE:145]"""
    where = W % ("ReportInnerError", "log_inner.cpp", 145)
    msgs = [CannMessage("EH9999", "[Init][Env]init env failed!", 0, 1, where),
            CannMessage("EH9999", "build op model failed, result = 500001", 0, 1, where)]
    assert render_block(msgs, "legacy") == real


def test_ts_shape_inner_matches_llamafactory_4610():
    # https://github.com/hiyouga/LlamaFactory/issues/4610 (CANN 8.0.RC2)
    real = """EZ9999: Inner Error!
EZ9999: 2024-06-28-13:05:55.631.066  Parse dynamic kernel config fail.
        TraceBack (most recent call last):
        AclOpKernelInit failed opType"""
    t = ts("2024-06-28-13:05:55.631.066")
    msgs = [CannMessage("EZ9999", "Parse dynamic kernel config fail.", t, 9),
            CannMessage("EZ9999", "AclOpKernelInit failed opType", t, 9)]
    assert render_block(msgs, "ts") == real


def test_ts_shape_external_matches_llamafactory_3839():
    # https://github.com/hiyouga/LlamaFactory/issues/3839
    real = """EJ0001: 2024-05-21-11:57:54.167.645 Failed to initialize the HCCP process. Reason: Maybe the last training process is running.
        Solution: Wait for 10s after killing the last training process and try again.
        TraceBack (most recent call last):
        tsd client wait response fail, device response code[1]. unknown device error.[FUNC:WaitRsp][FILE:process_mode_manager.cpp][LINE:290]"""
    t = ts("2024-05-21-11:57:54.167.645")
    msgs = [CannMessage("EJ0001", "Failed to initialize the HCCP process. Reason: Maybe the last training "
                                  "process is running.", t, 927000),
            CannMessage("EE9999", "tsd client wait response fail, device response code[1]. unknown device error.",
                        t, 927000, W % ("WaitRsp", "process_mode_manager.cpp", 290))]
    assert render_block(msgs, "ts") == real


def test_pid_shape_inner_matches_vllm_ascend_692():
    # https://github.com/vllm-project/vllm-ascend/issues/692
    real = """EH9999: Inner Error!
EH9999: [PID: 1439] 2025-04-28-02:50:24.965.356 [Init][PlatformInfo]init runtime platform info failed, SocVersion = Ascend910B2[FUNC:ReportInnerError][FILE:log_inner.cpp][LINE:145]
        TraceBack (most recent call last):
       GELib::InnerInitialize failed.[FUNC:Initialize][FILE:gelib.cc][LINE:177]"""
    t = ts("2025-04-28-02:50:24.965.356")
    msgs = [CannMessage("EH9999", "[Init][PlatformInfo]init runtime platform info failed, SocVersion = Ascend910B2",
                        t, 1439, W % ("ReportInnerError", "log_inner.cpp", 145)),
            CannMessage("EH9999", "GELib::InnerInitialize failed.", t, 1439, W % ("Initialize", "gelib.cc", 177))]
    assert render_block(msgs, "pid") == real


def test_v85_inner_matches_vllm_ascend_7676():
    # https://github.com/vllm-project/vllm-ascend/issues/7676 (vLLM's logger prefix removed)
    real = """EE9999: Inner Error!
EE9999[PID: 17096] 2026-03-24-09:58:00.084.843 (EE9999):  rtMemcpy execution failed, reason=the current capture mode does not support this operation[FUNC:FuncErrorReason][FILE:error_message_manage.cc][LINE:61]
        TraceBack (most recent call last):
       synchronized memcpy failed, kind = 1, runtime result = 107030[FUNC:ReportCallError][FILE:log_inner.cpp][LINE:148]"""
    t = ts("2026-03-24-09:58:00.084.843")
    msgs = [CannMessage("EE9999", "rtMemcpy execution failed, reason=the current capture mode does not support "
                                  "this operation", t, 17096, W % ("FuncErrorReason", "error_message_manage.cc", 61)),
            CannMessage("EE9999", "synchronized memcpy failed, kind = 1, runtime result = 107030", t, 17096,
                        W % ("ReportCallError", "log_inner.cpp", 148))]
    assert render_block(msgs, "v85") == real
    assert render_block(msgs, "v92").splitlines()[0] == "EE9999: Internal error!"


def test_v85_external_matches_ptoas_341():
    # https://github.com/hw-native-sys/PTOAS/pull/341
    real = """[PID: 1613532] 2026-03-24-12:14:45.885.234 Memory_Allocation_Failure(EL0004): Failed to allocate memory.
        Possible Cause: Available memory is insufficient.
        Solution: Close applications not in use.
        TraceBack (most recent call last):
        allocate device memory failed.[FUNC:Init][FILE:memory_pool_manager.cc][LINE:50]"""
    t = ts("2026-03-24-12:14:45.885.234")
    msgs = [CannMessage("EL0004", "Failed to allocate memory.", t, 1613532),
            CannMessage("EE9999", "allocate device memory failed.", t, 1613532,
                        W % ("Init", "memory_pool_manager.cc", 50))]
    assert render_block(msgs, "v85") == real


def test_v85_inner_with_aclnn_title_matches_vllm_ascend_4859():
    # https://github.com/vllm-project/vllm-ascend/issues/4859
    t = ts("2025-12-10-10:52:09.632.838")
    msgs = [CannMessage("EZ9999", "Parse dynamic kernel config fail.", t, 3473945, title="AclNN_Inner_Error"),
            CannMessage("EZ9999", "Failed to ParseDynamicKernels.", t, 3473945)]
    lines = render_block(msgs, "v85").splitlines()
    assert lines[1] == ("EZ9999[PID: 3473945] 2025-12-10-10:52:09.632.838 AclNN_Inner_Error(EZ9999):  "
                        "Parse dynamic kernel config fail.")
    assert lines[3] == "       Failed to ParseDynamicKernels."


def test_first_external_heads_and_later_messages_follow_in_order():
    t = ts("2025-08-06-16:15:27.377.593")
    msgs = [CannMessage("EE9999", "inner first", t, 1), CannMessage("EE1001", "The argument is invalid.Reason: x", t, 1),
            CannMessage("EE9999", "inner last", t, 1)]
    lines = render_block(msgs, "pid").splitlines()
    assert lines[0].startswith("EE1001: [PID: 1]") and lines[1].startswith("        Solution: 1.Check")
    assert [l.strip() for l in lines[3:]] == ["inner first", "inner last"]


def test_compact_output_matches_the_torch_npu_doc():
    # Ascend/pytorch docs/zh/api/environment_variable/alarm_message_printing/TORCH_NPU_COMPACT_ERROR_OUTPUT.md
    real = ("CANN error: The argument is invalid.Reason: Set device failed, invalid device, set drv device=100, "
            "valid device range is [0, 8) Solution: 1.Check the input parameter range of the function. "
            "2.Check the function invocation relationship.")
    msgs = [CannMessage("EE1001", "The argument is invalid.Reason: Set device failed, invalid device, set drv "
                                  "device=100, valid device range is [0, 8)", 0, 1),
            CannMessage("EE9999", "open device 100 failed, runtime result = 107001.", 0, 1)]
    assert compact_text(msgs) == real
    assert compact_text([CannMessage("EZ9999", "x", 0, 1)]).startswith("CANN Inner Error.")


@pytest.mark.parametrize("version,shape", [
    ("7.0.RC1", "legacy"), ("7.0.0", "legacy"), ("8.0.RC1", "ts"), ("8.0.RC2", "ts"), ("8.0.RC3", "pid"),
    ("8.0.0", "pid"), ("8.3.RC1", "pid"), ("8.5.0", "v85"), ("9.1.0", "v85"), ("9.2.0-beta.2", "v92"),
    ("CANN 9.2.0", "v92"),
])
def test_shape_by_cann_release(version, shape):
    assert shape_for_cann(version) == shape


def test_bad_shape_and_version_are_clear_errors():
    with pytest.raises(ValueError, match="unknown error-block shape"):
        render_block([CannMessage("EZ9999", "x", 0, 1)], "v99")
    with pytest.raises(ValueError, match="not a CANN"):
        shape_for_cann("banana")
