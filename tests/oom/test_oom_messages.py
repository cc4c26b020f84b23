"""Real out-of-memory lines (data/messages.yaml, each with its URL) and log scanning."""
from __future__ import annotations

import gzip
import io
import tarfile

import pytest

from ascend_doctor.memory import MemoryInputError
from ascend_doctor.memory.message import scan_paths, scan_text
from ascend_doctor.memory.verdict import Inputs, analyze
from ascend_doctor.parsers.oom_text import parse_oom

from .conftest import DATA, load_yaml

MESSAGES = load_yaml("messages.yaml")


@pytest.mark.parametrize("case", MESSAGES["messages"], ids=lambda c: c["source"].rsplit("/", 3)[-3] + "#" + c["source"].rsplit("/", 1)[-1])
def test_real_message(case):
    d = analyze(Inputs(log=scan_text(case["text"])))
    assert (d.verdict, d.rule) == (case["verdict"], case["rule"]), case["source"]
    assert d.status == "oom" and d.evidence[0].source == "message"
    rec = parse_oom(case["text"])
    if "template" in case:
        assert rec.template == case["template"]
    if "exception" in case:
        assert rec.exception == case["exception"]
    if "device" in case:
        assert d.device == case["device"]


@pytest.mark.parametrize("case", MESSAGES["driver"], ids=lambda c: c["kind"])
def test_driver_level_failures(case):
    facts = scan_text(case["text"])
    assert [h.kind for h in facts.driver_ooms] == [case["kind"]], case["source"]
    d = analyze(Inputs(log=facts))
    assert (d.verdict, d.rule, d.status) == ("oom_capacity", "driver_alloc", "oom")
    assert d.kb in ("oom.driver_alloc", "oom.hccl_buffer")


def test_hccl_buffer_points_at_its_kb_entry():
    d = analyze(Inputs(log=scan_text("Failed to allocate resource[DeviceMemory] with info [size:2147483648]")))
    assert d.kb == "oom.hccl_buffer" and d.plan.advice[0].option == "per_process_memory_fraction"


def test_worker_log_with_two_ranks(tmp_path):
    # vllm-ascend#19: the worker's line (NPU 6, pid 20493 in its prefix) and the engine's copy (NPU 0)
    facts = scan_paths([str(DATA / "vllm_ascend_19_worker.log")])
    assert len(facts.ooms) == 2 and facts.first_oom.pid == 20493 and facts.first_oom.record.device == 6
    d = analyze(Inputs(log=facts))
    assert (d.verdict, d.device) == ("external", 6)
    assert any("2 different out-of-memory events" in n for n in d.notes)


def test_alloc_conf_from_the_log_and_capacity_with_expandable_on():
    # vllm-ascend#1987: expandable segments were already on; the job simply does not fit
    facts = scan_paths([str(DATA / "vllm_ascend_1987_env_and_oom.log")])
    assert facts.alloc_conf[:2] == ("PYTORCH_NPU_ALLOC_CONF", "expandable_segments:True")
    d = analyze(Inputs(log=facts))
    assert (d.verdict, d.rule) == ("oom_capacity", "no_room")
    assert d.numbers["requested"] == int(3.47 * (1 << 30))
    assert not any("expandable" in c for c in d.plan.commands)


def test_the_hint_inside_cuda_messages_is_not_a_setting():
    case = next(c for c in MESSAGES["messages"] if "kaito" in c["source"])
    facts = scan_text(case["text"])
    assert facts.alloc_conf is None and len(facts.ooms) == 1


def test_message_wrapped_over_lines_is_joined():
    text = ("torch.OutOfMemoryError: NPU out of memory. Tried to allocate 72.00 MiB (NPU 0; 61.27 GiB total capacity;\n"
            "  56.05 GiB already allocated; 56.05 GiB current active; 5.04 MiB free; 58.39 GiB reserved in\n"
            "total by PyTorch).If reserved memory is >> allocated memory try setting max_split_size_mb to avoid fragmentation.")
    facts = scan_text(text)  # sglang#29838 as a narrow terminal shows it
    assert facts.first_oom.record.requested == 72 << 20 and facts.first_oom.record.template == "npu_26"
    assert analyze(Inputs(log=facts)).verdict == "oom_fragmentation"


def test_wrapped_message_in_a_file_is_joined_like_a_paste(tmp_path):
    # sglang#29838 as a narrow terminal shows it, saved to a file between other log lines: the
    # file is read by candidate lines only, so the lines after a cut message are handed out too
    log = tmp_path / "serve.log"
    log.write_text("INFO starting\n" * 5
                   + "[2025-06-01 10:00:00 TP0] torch.OutOfMemoryError: NPU out of memory. Tried to allocate 72.00 MiB (NPU 0; 61.27 GiB total capacity;\n"
                   "  56.05 GiB already allocated; 56.05 GiB current active; 5.04 MiB free; 58.39 GiB reserved in\n"
                   "total by PyTorch).If reserved memory is >> allocated memory try setting max_split_size_mb to avoid fragmentation.\n"
                   + "INFO shutting down\n", encoding="utf-8")
    facts = scan_paths([str(log)])
    assert len(facts.ooms) == 1 and facts.ooms[0].where.line == 6
    assert facts.ooms[0].record.reserved is not None and facts.lines == 9
    assert analyze(Inputs(log=facts)).verdict == "oom_fragmentation"


def test_settings_dropped_or_rejected_are_evidence():
    text = ("[W compiler_depend.ts:623] Warning: expandable_segments setting failure, now change to `False`.\n"
            "RuntimeError: NPU out of memory. Tried to allocate 5.03 GiB (NPU 3; 60.96 GiB total capacity; 49.47 GiB "
            "already allocated; 49.47 GiB current active; 1.32 GiB free; 57.55 GiB reserved in total by PyTorch)")
    facts = scan_text(text)
    assert facts.expandable_failed is not None
    d = analyze(Inputs(log=facts, alloc_conf="expandable_segments:True"))
    exp = next(a for a in d.plan.advice if a.option == "expandable_segments")
    assert exp.status == "unsupported" and "refused" in exp.why
    assert any(c.startswith("export PYTORCH_NPU_ALLOC_CONF=max_split_size_mb:") for c in d.plan.commands)


def test_scan_paths_reads_gz_tar_and_directories(tmp_path):
    line = (DATA / "vllm_ascend_19_worker.log").read_bytes()
    (tmp_path / "logs").mkdir()
    (tmp_path / "logs" / "a.log.gz").write_bytes(gzip.compress(line))
    (tmp_path / "logs" / "blob.bin").write_bytes(b"\x00\x01" * 5000)
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tf:
        info = tarfile.TarInfo("run/console.log")
        info.size = len(line)
        tf.addfile(info, io.BytesIO(line))
    (tmp_path / "bundle.tar.gz").write_bytes(buf.getvalue())
    facts = scan_paths([str(tmp_path / "logs"), str(tmp_path / "bundle.tar.gz")])
    assert len(facts.ooms) == 4
    assert any("blob.bin" in p and "binary" in r for p, r in facts.skipped)
    with pytest.raises(MemoryInputError, match="no such file"):
        scan_paths([str(tmp_path / "missing.log")])


def test_retry_lines_are_counted(tmp_path):
    # the plog line torch_npu writes before each cache flush
    plog = ('[ERROR] APP(2111667,python3):2025-10-24-11:16:56.590.208 [log_inner.cpp:77]2111667 build/CMakeFiles/'
            'torch_npu.dir/compiler_depend.ts:malloc:1147: "[PTA]:"Get a block from the existing pool failed. Try to '
            'free cached blocks and reallocate. This error log can be ignored."\n')
    (tmp_path / "plog-1_1.log").write_text(plog * 7 + "[INFO] RUNTIME(1,python3):2025-10-24-11:16:57.000.000 x\n")
    facts = scan_paths([str(tmp_path)])
    assert facts.retries == 7 and facts.first_retry.line == 1
    d = analyze(Inputs(log=facts))
    assert (d.status, d.verdict, d.rule) == ("at_risk", "oom_capacity", "pressure")
    assert d.plan.fix_text.startswith("No failure yet") and d.kb is None and d.is_finding


def test_a_log_without_memory_trouble_is_healthy(tmp_path):
    (tmp_path / "train.log").write_text("step 1 loss 2.3\nstep 2 loss 2.1\n")
    d = analyze(Inputs(log=scan_paths([str(tmp_path / "train.log")])))
    assert (d.status, d.verdict) == ("healthy", "none") and not d.is_finding


def test_triage_classification_unchanged_for_real_lines():
    from ascend_doctor.parsers.oom_text import classify

    for case in MESSAGES["messages"]:
        rec = parse_oom(case["text"])
        want = {"oom_fragmentation": "oom_fragmentation", "external": "device_busy_permission"}.get(case["verdict"], "oom_capacity")
        assert classify(rec) == want, case["source"]


def test_a_close_call_is_a_note_in_oom_as_in_triage(tmp_path):
    # https://github.com/vllm-project/compressed-tensors/pull/587: see tests/triage/test_real_pastes.py
    log = tmp_path / "oom.log"
    log.write_text("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.96 GiB. GPU 0 has a total capacity of "
                   "79.18 GiB of which 1.08 GiB is free. Including non-PyTorch memory, this process has 78.09 GiB memory in "
                   "use. Of the allocated memory 75.31 GiB is allocated by PyTorch, and 1.83 GiB is reserved by PyTorch but "
                   "unallocated.\n", encoding="utf-8")
    diag = analyze(Inputs(log=scan_paths([str(log)])))
    assert diag.verdict == "oom_capacity"
    assert any(n.startswith("a close call") and "fragmentation" in n for n in diag.notes)
