"""Matcher behaviour: ranking, module restriction, vetoes, captures, laziness."""
from __future__ import annotations

import subprocess
import sys

from ascend_doctor import kb

BASE = kb.load()

AICORE = "       Kernel task happen error, retCode=0x26, [aicore exception].[FUNC:PreCheckTaskErr][FILE:davinci_kernel_task.cc][LINE:1729]"
WRAPPED = "RuntimeError: operator():build/CMakeFiles/torch_npu.dir/compiler_depend.ts:25 NPU function error: c10_npu::acl::AclrtSynchronizeStreamWithTimeout(copy_stream), error code is 507035"


def ids(matches):
    return [m.entry.id for m in matches]


def test_cause_beats_the_wrapper_on_the_same_line():
    got = ids(BASE.match(WRAPPED))
    assert got[0] == "aicore.vector_exception"
    assert "torch_npu.acl_call_failed" in got[1:]


def test_codes_given_by_the_caller_count():
    assert ids(BASE.match("stream sync failed", codes=["0x26"]))[0] == "aicore.exception"
    assert ids(BASE.match("something failed", codes=["hccl:21"]))[0] == "hccl.error_cqe"


def test_module_restriction():
    line = "[ERROR] HCCL(2111667,t):2025-10-24-11:18:29.597.054 [task_exception_handler.cc:771] [2111667][TaskExecStage][Timeout][Host]Task run failed, groupRank information is group:[g], user define information[], rankSize[4], rankId[2]."
    assert ids(BASE.match(line, module="HCCL"))[0] == "hccl.task_exec_failed"
    assert "hccl.task_exec_failed" not in ids(BASE.match(line, module="RUNTIME"))


def test_unless_vetoes_an_entry():
    line = "ImportError: /x/torch_npu/lib/libtorch_npu.so: undefined symbol: _ZN3atb15CreateOperationINS_5infer14GroupTopkParamEEEiRKT_PPNS_9OperationE"
    got = ids(BASE.match(line))
    assert got[0] == "version.nnal_atb_mismatch"
    assert "version.torch_torch_npu_abi" not in got


def test_oom_message_goes_to_one_reading():
    frag = "NPU out of memory. Tried to allocate 9.05 GiB (NPU 0; 60.96 GiB total capacity; 42.32 GiB already allocated; 42.32 GiB current active; 2.10 GiB free; 52.58 GiB reserved in total by PyTorch)"
    got = ids(BASE.match(frag))
    assert got[0] == "oom.npu_fragmentation"
    assert "oom.npu_capacity" not in got and "oom.npu_external" not in got


def test_limit_and_order_are_stable():
    a = BASE.match(WRAPPED)
    b = BASE.match(WRAPPED, limit=1)
    assert ids(b) == ids(a)[:1]
    assert [m.score for m in a] == sorted((m.score for m in a), reverse=True)


def test_plain_noise_matches_nothing():
    for line in (
        "[INFO] RUNTIME(42,x):2025-11-18-09:33:13.666.211 [runtime_keeper.cc:172] 58 CreateRuntimeImpl: Open libruntime_v100.so success",
        "[EVENT] PROFILING(946748,main):2025-05-19-15:59:07.740.922 [msprof_callback_impl.cpp:79] >>> (tid:947062) MsprofCtrlCallback called, type: 255",
        "",
        "\x00\x01\xff binary",
    ):
        assert BASE.match(line) == [], line


def test_known_harmless_lines_are_marked_noise():
    m = BASE.match("torch_npu.memory: [ERROR] [269128] Get a block from the existing pool failed. Try to free cached blocks and reallocate. This error log can be ignored.")
    assert m[0].entry.role == "noise"


def test_match_parts_say_what_matched():
    m = BASE.match(AICORE)[0]
    kinds = {p.kind for p in m.parts}
    assert "pattern" in kinds and "code" in kinds
    assert m.to_json()["matched"]


def test_import_is_lazy():
    """Importing the KB package parses nothing and does not import the YAML library: the data
    is read on the first load(), from its compiled form."""
    code = "import sys, ascend_doctor.kb as k; print('yaml' in sys.modules, len(k._CACHE))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.stdout.split() == ["False", "0"]


def test_load_is_cached():
    assert kb.load() is BASE


def test_the_unindexed_triggers_scan_finds_what_the_loop_finds(monkeypatch):
    """After ``_SCAN_AFTER`` lines the matcher asks one trie-shaped regex whether any trigger without
    a whole word of its own occurs; on every real example line it must say what the loop of ``in``
    tests said (triggers that are prefixes of others, overlaps, non-ASCII)."""
    from ascend_doctor.kb import matcher as matcher_module
    from ascend_doctor.kb.matcher import Matcher

    base = kb.load()
    lines = [ex.text.lower() for e in base.entries for ex in e.examples]
    lines += ["", "no trigger here at all", "ranks 0-7 connected"]
    loop = Matcher(base.entries)
    monkeypatch.setattr(matcher_module, "_SCAN_AFTER", 0)
    scan = Matcher(base.entries)
    assert scan._unindexed and len(lines) > 400
    for low in lines:
        want = any(trigger in low for trigger, _ in loop._unindexed)
        assert scan._has_unindexed(low) == want, low
        assert scan.candidates(low, []) == loop.candidates(low, [])
    assert scan._any_unindexed is not None  # the regex path was the one taken
    # a trigger that is the prefix of a longer one still counts alone
    assert matcher_module._trie_pattern(["ab", "abc"]) == "ab"
