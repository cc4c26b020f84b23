"""Real pastes whose root cause is one of the broad families of kb/data/rules/generic.yaml.

Each paste is copied from the public thread named beside it (unrelated lines of a long paste
left out, the kept lines unedited). The knowledge-base example tests check single lines; these
check that the family still names the incident when the line sits among the others of a paste.
"""
from __future__ import annotations

import io
import json

import pytest

from ascend_doctor.commands.triage import run_triage

# https://github.com/vllm-project/vllm-ascend/issues/248 (one NPU mounted into two containers):
# driver error 87 must name the incident, not the 507899 / "internal error" lines it causes.
VLLM_ASCEND_248 = """\
[ERROR] ATRACE(618,python3):2025-03-06-01:09:06.981.451 [trace_driver_api.c:56](tid:618) get platform info failed, drvErr=87.
[INFO] RUNTIME(618,python3):2025-03-06-01:09:06.985.224 [task_fail_callback_manager.cc:52] 618 TaskFailCallBackManager: Constructor.
[ERROR] RUNTIME(618,python3):2025-03-06-01:09:07.260.779 [runtime.cc:1879]618 CheckHaveDevice:Call halGetDeviceInfo failed: drvRet=87, module type=0, info type=1.
[ERROR] RUNTIME(618,python3):2025-03-06-01:09:07.262.154 [driver.cc:65]618 GetDeviceCount:Call drvGetDevNum, drvRetCode=87.
[ERROR] RUNTIME(618,python3):2025-03-06-01:09:07.262.277 [api_c_device.cc:23]618 rtGetDeviceCount:ErrCode=507899, desc=[driver error:internal error], InnerCode=0x7020010
[ERROR] RUNTIME(618,python3):2025-03-06-01:09:07.262.373 [error_message_manage.cc:53]618 FuncErrorReason:report error module_type=3, module_name=EE8888
[ERROR] RUNTIME(618,python3):2025-03-06-01:09:07.262.459 [error_message_manage.cc:53]618 FuncErrorReason:rtGetDeviceCount execute failed, reason=[driver error:internal error]
[ERROR] ASCENDCL(618,python3):2025-03-06-01:09:07.262.594 [device.cpp:342]618 aclrtGetDeviceCount: get device count failed, runtime result = 507899.
[ERROR] APP(618,python3):2025-03-06-01:09:07.262.746 [log_inner.cpp:76]618 build/CMakeFiles/torch_npu.dir/compiler_depend.ts:device_count:25: "[PTA]:"get device count of NPU failed""
"""

# https://github.com/QwenLM/Qwen3/issues/295
QWEN_295 = """\
 raise ValueError(
ValueError: The model's max seq len (32768) is larger than the maximum number of tokens that can be stored in KV cache (7344). Try increasing `gpu_memory_utilization` or decreasing `max_model_len` when initializing the engine.
"""

# https://github.com/msr-fiddle/pipedream/issues/28
PIPEDREAM_28 = """\
ERROR: Unexpected bus error encountered in worker. This might be caused by insufficient shared memory (shm).
ERROR: Unexpected bus error encountered in worker. This might be caused by insufficient shared memory (shm).
ERROR: Unexpected bus error encountered in worker. This might be caused by insufficient shared memory (shm).
Traceback (most recent call last):
  File "/opt/conda/lib/python3.6/site-packages/torch/utils/data/dataloader.py", line 480, in _try_get_batch
    data = self.data_queue.get(timeout=timeout)
  File "/opt/conda/lib/python3.6/queue.py", line 173, in get
    self.not_empty.wait(remaining)
  File "/opt/conda/lib/python3.6/threading.py", line 299, in wait
    gotit = waiter.acquire(True, timeout)
  File "/opt/conda/lib/python3.6/site-packages/torch/utils/data/_utils/signal_handling.py", line 63, in handler
    _error_if_any_worker_fails()
RuntimeError: DataLoader worker (pid 325) is killed by signal: Bus error.
"""

# https://github.com/dusty-nv/jetson-containers/issues/699
JETSON_699 = """\
>>> import torch_tensorrt
Traceback (most recent call last):
  File "/usr/local/lib/python3.8/dist-packages/torch_tensorrt/__init__.py", line 39, in <module>
    import tensorrt
  File "/usr/lib/python3.8/dist-packages/tensorrt/__init__.py", line 68, in <module>
    from .tensorrt import *
ImportError: /lib/aarch64-linux-gnu/libstdc++.so.6: version `GLIBCXX_3.4.29' not found (required by /usr/lib/aarch64-linux-gnu/nvidia/libnvdla_compiler.so)
"""

# https://github.com/vllm-project/vllm/pull/8054 (a comment's paste; the traceback frames before it left out)
VLLM_8054 = """\
  File "/data1/icnocywpt/vllm/vllm/config.py", line 1226, in __init__
    raise RuntimeError("Failed to infer device type")
RuntimeError: Failed to infer device type
"""

CASES = [
    ("vllm-ascend-248", VLLM_ASCEND_248, "device_busy_permission", "busy.driver_resource_occupied", "container"),
    ("qwen-295", QWEN_295, "oom_capacity", "vllm.max_seq_len_over_kv_cache", "max-model-len"),
    ("pipedream-28", PIPEDREAM_28, "other", "other.dataloader_shm_bus_error", "shm"),
    ("jetson-699", JETSON_699, "env_path", "env.libstdcxx_too_old", "LD_LIBRARY_PATH"),
    ("vllm-8054", VLLM_8054, "env_path", "vllm.platform_not_detected", "torch_npu"),
]


@pytest.mark.parametrize("name,text,category,kb_id,fix_word", CASES, ids=[c[0] for c in CASES])
def test_family_names_the_incident(name, text, category, kb_id, fix_word):
    out = io.StringIO()
    rc = run_triage(["-"], fmt="json", out=out, err=io.StringIO(), stdin=io.BytesIO(text.encode("utf-8")))
    data = json.loads(out.getvalue())
    assert rc == 1
    first = data["incidents"][0]
    assert (first["category"], first["kb"]) == (category, kb_id), first
    blob = first["fix"]["text"] + " " + " ".join(first["fix"]["commands"])
    assert fix_word.lower() in blob.lower(), blob
