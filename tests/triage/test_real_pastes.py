"""Real pasted logs (data/pastes.yaml gives each file's source) come out right, as a new user pastes them."""
from __future__ import annotations

import io
import json

import pytest

from ascend_doctor.commands.triage import run_triage

from .conftest import DATA, load_yaml

PASTES = load_yaml("pastes.yaml")["pastes"]


@pytest.mark.parametrize("case", PASTES, ids=[p["file"] for p in PASTES])
def test_paste(case):
    out = io.StringIO()
    rc = run_triage([str(DATA / case["file"])], fmt="json", out=out, err=io.StringIO())
    data = json.loads(out.getvalue())
    assert rc == 1, case["source"]
    first = data["incidents"][0]
    assert first["category"] == case["category"], (case["source"], first)
    if "role" in case:
        assert first["role"] == case["role"]
    fix = first["fix"]
    assert fix["text"] and fix["commands"], case["source"]
    blob = fix["text"] + " " + " ".join(fix["commands"])
    assert any(word.lower() in blob.lower() for word in case["fix_mentions"]), (case["source"], blob)
    assert first["evidence"] and all(e["line"] >= 1 for e in first["evidence"])


def test_paste_from_stdin():
    raw = (DATA / "vllm_ascend_12776_plog216.log").read_bytes()
    out = io.StringIO()
    rc = run_triage(["-"], fmt="json", out=out, err=io.StringIO(), stdin=io.BytesIO(raw))
    data = json.loads(out.getvalue())
    assert rc == 1 and data["incidents"][0]["evidence"][0]["file"] == "<stdin>"


def _first(text: str) -> dict:
    out = io.StringIO()
    run_triage(["-"], fmt="json", out=out, err=io.StringIO(), stdin=io.BytesIO(text.encode("utf-8")))
    return json.loads(out.getvalue())["incidents"][0]


# sglang#29838 as a narrow terminal shows it: the message breaks inside "reserved in / total by PyTorch"
SGLANG_29838 = ("torch.OutOfMemoryError: NPU out of memory. Tried to allocate 72.00 MiB (NPU 0; 61.27 GiB total capacity;\n"
                "  56.05 GiB already allocated; 56.05 GiB current active; 5.04 MiB free; 58.39 GiB reserved in\n"
                "total by PyTorch).If reserved memory is >> allocated memory try setting max_split_size_mb to avoid fragmentation.\n")
# MindSpeed's memory-fragmentation feature page, retyped by hand and wrapped ("Tried to allocated",
# "current activate"): https://github.com/Ascend/MindSpeed/blob/ac8e0a7158d4fe37a20fa54c5b37a56b5f392b4c/docs/features/memory-fragmentation.md
MINDSPEED_DOC = ("Tried to allocated 3384.00 MiB (NPU 2; 61.22 GiB total capacity; 53.87 GiB already allocated; 53.87 GiB current\n"
                 "activate; 1.59 GiB free;\n"
                 "56.60 GiB reserved in total by PyTorch)\n")


@pytest.mark.parametrize("text", [SGLANG_29838, MINDSPEED_DOC], ids=["sglang-29838", "mindspeed-doc"])
def test_allocator_message_wrapped_over_lines_is_read_whole(text):
    first = _first(text)
    assert first["category"] == "oom_fragmentation", first
    assert first["evidence"][0]["line"] == 1


def test_wrapped_message_cut_for_good_stays_one_incident():
    # the numbers never finish: no joined reading, the head still says out of memory
    first = _first("torch.OutOfMemoryError: NPU out of memory. Tried to allocate 72.00 MiB (NPU 0; 61.27 GiB total capacity;\n"
                   "Traceback (most recent call last):\n  File \"x.py\", line 1, in <module>\n")
    assert first["category"] == "oom_capacity", first


def test_close_out_of_memory_call_says_so_and_names_the_runner_up():
    # https://github.com/vllm-project/compressed-tensors/pull/587 (CUDA text of the same allocator)
    first = _first("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.96 GiB. GPU 0 has a total capacity of "
                   "79.18 GiB of which 1.08 GiB is free. Including non-PyTorch memory, this process has 78.09 GiB memory in use. "
                   "Of the allocated memory 75.31 GiB is allocated by PyTorch, and 1.83 GiB is reserved by PyTorch but unallocated.\n")
    assert first["category"] == "oom_capacity" and first["confidence"] == "medium"
    assert first["runner_up"]["category"] == "oom_fragmentation"


def test_a_wrapper_gives_way_to_the_cause_its_block_names():
    # https://github.com/vllm-project/vllm-ascend/issues/6573: torch_npu's "call aclnn... failed" wrapper,
    # and the CANN block under it says the mask shape is unsupported (read by a broad class only)
    first = _first(
        "[rank0]:[E205 11:47:24.695215771 compiler_depend.ts:444] operator():build/CMakeFiles/torch_npu.dir/compiler_depend.ts:1130 "
        "NPU function error: call aclnnFlashAttentionScore failed, error code is 561103\n"
        "[ERROR] 2026-02-05-11:47:24 (PID:413, Device:0, RankID:-1) ERR00100 PTA call acl api failed.\n"
        "EZ9999: Inner Error!\n"
        "EZ9999[PID: 413] 2026-02-05-11:47:24.075.926 (EZ9999):  get unsupported atten_mask shape, the shape is [16, 1, 1, 1500]. "
        "B=[16], N=[20], Sq=[1500], Skv=[1500], supported atten_mask shape can be [B, N, Sq, Skv], [B, 1, Sq, Skv], [1, 1, Sq, Skv] and [S\n")
    assert first["category"] == "unsupported_op", first
    assert first["evidence"][0]["line"] == 1  # the incident still opens at the call that failed


def test_a_line_the_kb_names_as_the_cause_of_the_headline_takes_its_place():
    # hicann/docs troubleshooting "moe_dispatch_combine_network_err.md" (commit b0042ff): a MoE combine kernel's
    # memory fault reads like any AI Core exception; the kernel named two lines later is a communication
    # kernel, whose entry (hccl.moe_comm_kernel_fault) the KB says causes aicore.exception
    block = (
        "[ERROR] RUNTIME(1254,ker_DP25_EP25):2025-12-19-15:50:05.598.690 [device_error_core_proc.cc:333]1254 "
        "ProcessStarsCoreErrorInfo:The error from device(chipId:4, dieId:1), serial number is 1, there is an exception of "
        "fftsplus aivector error, core id is 18, error code = 0x800000, dump info: pc start: 0x12c0c6ce5000\n"
        "[ERROR] RUNTIME(1254,ker_DP25_EP25):2025-12-19-15:50:05.598.725 [device_error_core_proc.cc:353]1254 "
        "ProcessStarsCoreErrorInfo:The extend info: errcode:(0x800000, 0, 0) errorStr: The DDR address of the MTE "
        "instruction is out of range. fixp_error0 info: 0x700006b, fixp_error1 info: 0x96, fsmId:1, tslot:7\n")
    kernel = ("[ERROR] GE(1254,ker_DP25_EP25):2025-12-19-15:50:06.805.807 [error_tracking.cc:113]1254 ErrorTrackingCallback: "
              "ErrorNo: 4294967295(failed) Error happened, origin_op_name [MoeDistributeCombineV2_48], "
              "op_name [MoeDistributeCombineV2_48], task_id 804, stream_id 1634.\n")
    assert _first(block)["kb"] == "aicore.exception"
    first = _first(block + kernel)
    assert (first["kb"], first["category"]) == ("hccl.moe_comm_kernel_fault", "hccl_comm"), first
    assert "MoeDistributeCombineV2" in first["title"]


def test_a_paste_that_went_through_a_log_pipeline_reads_as_the_plain_one():
    # an import failure as Docker's json-file driver stores it, as a colour terminal relayed it with
    # the escape character lost (gpustack#4194's shape), quoted in a reply, and HTML-escaped: the
    # same incident, the same evidence
    # (https://github.com/Ascend/MindSpeed-MM/blob/master/docs/zh/troubleshooting.md)
    plain = "ModuleNotFoundError: No module named 'acl'\n"
    want = _first(plain)
    assert want["kb"] == "env.pyacl_missing", want
    docker = "".join(json.dumps({"log": line + "\n", "stream": "stderr", "time": "2026-09-15T13:02:43.000000001Z"}) + "\n"
                     for line in plain.splitlines())
    colour = "".join("36m(EngineCore_DP0 pid=820)0m " + line + "\n" for line in plain.splitlines())
    quoted = "".join("> " + line + "\n" for line in plain.splitlines())
    escaped = plain.replace("'", "&#39;").replace('"', "&quot;")
    for text in (docker, colour, quoted, escaped):
        got = _first(text)
        assert (got["kb"], got["title"]) == (want["kb"], want["title"]), text
        assert [e["text"] for e in got["evidence"]] == [e["text"] for e in want["evidence"]], text


def test_a_clean_log_whose_lines_share_words_with_the_knowledge_base_has_no_incident(tmp_path):
    # routine lines of real runs: vllm-project/vllm-omni#1199 (Gloo), #512 (vLLM registry, shm_broadcast),
    # vllm-ascend PR #175 (collect_env); each holds words some KB entry uses ("rank", " is ", "version", " by ")
    log = tmp_path / "console.log"
    log.write_text(
        "> [Gloo] Rank 3 is connected to 3 peer ranks. Expected number of connected peer ranks is : 3\n"
        "WARNING 12-28 22:41:44 [registry.py:582] Model architecture Qwen2_5OmniModel is already registered, and will be "
        "overwritten by the new model class vllm_ascend.models.qwen2_5_omni_thinker:AscendQwen2_5OmniThinkerForConditionalGeneration.\n"
        "INFO 12-28 22:41:44 [shm_broadcast.py:289] vLLM message queue communication handle: Handle(local_reader_ranks=[0], "
        "buffer_handle=(1, 10485760, 10, 'psm_9e9def1b'), local_subscribe_addr='ipc:///tmp/a619120c-6118-4d18-9764-9af842ed91f2', "
        "remote_subscribe_addr=None, remote_addr_ipv6=False)\n"
        "PyTorch version: 2.5.1\n"
        "Python version: 3.10.16 (main, Dec 11 2024, 16:18:56) [GCC 11.2.0] (64-bit runtime)\n", encoding="utf-8")
    out = io.StringIO()
    rc = run_triage([str(log)], fmt="json", out=out, err=io.StringIO())
    assert (rc, json.loads(out.getvalue())["incidents"]) == (0, [])


# Lines that carry a catalogued CANN E-code and that no entry explains: the code's name and meaning
# answer, under its prefix's category (or the code's own), with low confidence.
CATALOGUED = [
    # https://e.gitee.com/mind_spore/dashboard?issue=ICWM5W (MindSpore CI failure log)
    ("E       EZ1001: [PID: 2942910] 2025-09-05-01:37:17.462.248 Dim 2 appears multiple times in the list of dims.[THREAD:2942910]",
     "code.EZ1001", "other"),  # a parameter check (the caller's inputs), not a missing operator
    # https://github.com/vllm-project/vllm-ascend/pull/10125
    ("[PID: 23942] 2026-06-05-08:18:18.244.598 Invalid_Argument(EE1001): The argument is invalid.Reason: Failed to set visible "
     "device. The invalid device is 1 and the", "code.EE1001", "other"),
]


CATALOGUED.append(
    # hicann/docs docs/troubleshooting/zh/error-codes/E39007-Inner_Error_Device_Subprocess_Startup_Timeout.md (c94cf50):
    # no error shape, so only the short-paste fallback reads it, with the code it carries
    ("E39007 Inner_Error_Device_Subprocess_Startup_Timeout", "code.E39007", "driver_init"))


@pytest.mark.parametrize("line,signal,category", CATALOGUED, ids=["EZ1001", "EE1001", "E39007"])
def test_a_catalogued_code_names_itself_when_no_entry_explains_the_line(line, signal, category):
    first = _first(line + "\n")
    assert (first["signal"], first["category"], first["confidence"], first["kb"]) == (signal, category, "low", None), first
    code = signal.split(".")[1]
    assert first["title"].startswith(code + " ") and first["fix"]["commands"][0] == "ascend-doctor explain " + code


def test_a_line_that_writes_a_catalogued_code_is_an_error_line_before_a_prose_line():
    # the same page gives the code line and its sentence: the sentence has an error's shape ("timed out"),
    # the code line none, yet the code line is the one that says what failed
    paste = "E39007 Inner_Error_Device_Subprocess_Startup_Timeout\nStarting a subprocess on the device timed out.\n"
    first = _first(paste)
    assert (first["signal"], first["category"]) == ("code.E39007", "driver_init"), first
    assert [e["line"] for e in first["evidence"]] == [1, 2]
    # an E-code the catalogue does not hold makes no event on its own
    assert _first("E99999 something\nStarting a subprocess on the device timed out.\n")["title"] == "Unrecognised error"


def test_a_code_may_name_another_category_than_its_prefix():
    import ascend_doctor.kb as kb

    base = kb.load()
    assert base.ecode_category(base.lookup_code("EL0001")) == "driver_init"  # the prefix's
    assert base.ecode_category(base.lookup_code("EL0004")) == "oom_capacity"  # Memory_Allocation_Failure
    assert base.ecode_category(base.lookup_code("EL0015")) == "device_busy_permission"  # Invalid_Device_Access
    assert base.ecode_category(base.lookup_code("E60003")) == "unsupported_op"  # Not_Supported_Data_Type: the prefix's
    assert base.ecode_category(base.lookup_code("E60007")) == "other"  # Invalid_Argument_Shape_Mismatch


def test_an_untimed_cause_in_a_paste_explains_a_timed_failure_after_it():
    # Ascend/pytorch#74 (a development case of the corpus): the compiler's "'cstdint' file not found" has no
    # time; the operator compile failure it causes is logged with one. The KB edge makes the header the answer.
    from .corpus.measure import load_cases

    paste = next(c["paste"] for c in load_cases() if c["id"] == "ascend-pytorch-74-ascendc-cstdint-include-path")
    out = io.StringIO()
    run_triage(["-"], fmt="json", out=out, err=io.StringIO(), stdin=io.BytesIO(paste.encode("utf-8")))
    incidents = json.loads(out.getvalue())["incidents"]
    assert [i["kb"] for i in incidents][:2] == ["env.cxx_std_headers_missing", "op.compile_failed"]
    assert incidents[1]["caused_by"] is not None


# vllm-ascend PR 1803 (https://github.com/vllm-project/vllm-ascend/pull/1803): an INFO line that says
# "not supported" about a mode it then replaces, before the traceback that ended the run
VLLM_ASCEND_1803 = (
    "INFO 07-15 04:38:53 [platform.py:174] PIECEWISE compilation enabled on NPU. use_inductor not supported - using only ACL Graph mode\n"
    "Traceback (most recent call last):\n"
    '  File "/vllm-workspace/vllm-ascend/vllm_ascend/utils.py", line 307, in update_aclgraph_sizes\n'
    "    num_hidden_layers = vllm_config.model_config.hf_config.num_hidden_layers\n"
    "AttributeError: 'Qwen2AudioConfig' object has no attribute 'num_hidden_layers'\n")


def test_a_line_its_logger_calls_info_is_no_failure_for_a_broad_word(tmp_path):
    first = _first(VLLM_ASCEND_1803)
    assert first["evidence"][-1]["text"].startswith("AttributeError: 'Qwen2AudioConfig'"), first
    log = tmp_path / "serve.log"  # a log file, not a paste: a clean log may say "no incidents"
    log.write_text(VLLM_ASCEND_1803.splitlines(True)[0], encoding="utf-8")
    alone = io.StringIO()
    run_triage([str(log)], fmt="json", out=alone, err=io.StringIO())
    assert json.loads(alone.getvalue())["incidents"] == []
    # the same words without the logger's INFO are an error line
    bare = VLLM_ASCEND_1803.splitlines()[0].split("] ", 1)[1]
    assert _first(bare + "\n")["category"] == "unsupported_op"


def test_a_line_its_logger_calls_info_still_counts_when_an_entry_explains_it():
    # vllm-ascend#5690: the Triton compiler's error relayed through vLLM's logger at ERROR, and the
    # same text at INFO (a log that lowers the level) is still the cause a specific entry names
    line = ("[multiproc_executor.py:824] bishengir-compile: for the --target option: Cannot find option named 'Ascend910B4-1'!\n")
    for level in ("ERROR", "INFO"):
        first = _first(f"(Worker_TP1 pid=265) {level} 01-09 02:43:59 " + line)
        assert first["kb"] == "version.compiler_target_unknown", (level, first)



def test_an_allocator_message_without_numbers_names_fragmentation_as_runner_up():
    # https://support.huaweicloud.com/bestpractice-modelarts/modelarts_llm_train_91046.html: the paste is one sentence
    bare = _first("在训练过程中遇到NPU out of memory\n")
    assert bare["category"] == "oom_capacity" and bare["runner_up"]["category"] == "oom_fragmentation"
