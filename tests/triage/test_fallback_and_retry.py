"""CPU-fallback warnings and torch_npu's allocator retry line: real text, right weight.

- a fallback warning is an ``unsupported_op`` incident per operator (counted over ranks),
  the finding when nothing failed, and behind every real failure of the same input;
- "Get a block from the existing pool failed ... can be ignored" is never an incident: it
  is counted on the out-of-memory incident of its process, or noted when nothing failed;
- one OOM seen on the console and in its process's plog is one incident.

Real lines are in data/ (sources in data/pastes.yaml) or beside the strings below; the
plog trees come from runtime_sim, whose lines are checked against real ones there.
"""
from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from ascend_doctor.commands.triage import run_triage
from ascend_doctor.parsers.prefixes import strip_prefixes
from ascend_doctor.parsers.torch_npu_error import parse_torch_npu_line
from ascend_doctor.triage.engine import triage_paths
from ascend_doctor.triage.knowledge import Knowledge
from ascend_doctor.triage.render import render_md, render_text
from runtime_sim.host import run as run_scenario

from .conftest import DATA, load_yaml

KNOWLEDGE = {"with-kb": Knowledge()}

# https://github.com/vllm-project/vllm-ascend/issues/19
OOM_19 = ("RuntimeError: NPU out of memory. Tried to allocate 22.00 MiB (NPU 6; 60.97 GiB total capacity; 10.24 GiB "
          "already allocated; 10.24 GiB current active; 19.79 MiB free; 10.65 GiB reserved in total by PyTorch) If reserved "
          "memory is >> allocated memory try setting max_split_size_mb to avoid fragmentation.")
# https://github.com/Ascend/pytorch/issues/66: a wrapper alone ("something below failed") is still a failure
BANNER_66 = "[ERROR] 2025-04-29-18:46:11 (PID:1066924, Device:1, RankID:-1) ERR00100 PTA call acl api failed"
MINERU_1695 = (DATA / "mineru_1695_cpu_fallback.log").read_text(encoding="utf-8").splitlines()
RANKS_4135 = (DATA / "llamafactory_4135_fallback_ranks.log").read_text(encoding="utf-8").splitlines()[1:]


def _triage(paths, mode="with-kb"):
    return triage_paths([str(p) for p in paths], knowledge=KNOWLEDGE[mode])


# ------------------------------------------------------------------ parsers
@pytest.mark.parametrize("line,op", [
    (MINERU_1695[0], "torchvision::nms"),
    (MINERU_1695[1], "aten::isin.Tensor_Tensor_out"),
    (RANKS_4135[0], "aten::isin.Tensor_Tensor_out"),
    ((DATA / "vllm_omni_755_fallback_then_error.log").read_text(encoding="utf-8").splitlines()[0],
     "aten::_scaled_dot_product_efficient_attention"),
    ((DATA / "mineru_1941_wrapped_fallback.log").read_text(encoding="utf-8").splitlines()[2],
     "aten::isin.Tensor_Tensor_out"),  # cut by the terminal at "NPU b"
])
def test_fallback_warning_is_parsed_with_its_operator(line, op):
    text, _ = strip_prefixes(line)
    rec = parse_torch_npu_line(text)
    assert rec is not None and rec.kind == "cpu_fallback" and rec.operator == op


def test_c10_prefixes_without_a_time_are_stripped():
    text, prefix = strip_prefixes(RANKS_4135[0])
    assert text.startswith("Warning: CAUTION:") and prefix.rank == 1
    assert strip_prefixes(MINERU_1695[0])[0].startswith("Warning: CAUTION:")


def test_no_kernel_and_cache_flush_records():
    error = (DATA / "vllm_omni_755_fallback_then_error.log").read_text(encoding="utf-8").splitlines()[1]
    rec = parse_torch_npu_line(error)
    assert rec is not None and rec.kind == "no_kernel"
    assert (rec.operator, rec.backend) == ("aten::_scaled_dot_product_efficient_attention", "CPU")
    flush = parse_torch_npu_line((DATA / "pytorch_108_block_retry.log").read_text(encoding="utf-8").strip())
    assert flush is not None and flush.kind == "cache_flush"
    # the continuation of a wrapped warning is no record of its own
    assert parse_torch_npu_line((DATA / "mineru_1941_wrapped_fallback.log").read_text(encoding="utf-8").splitlines()[1]) is None


# ------------------------------------------------------------------ CPU fallback
@pytest.mark.parametrize("mode", sorted(KNOWLEDGE))
def test_each_fallen_back_operator_is_one_advisory_incident(mode):
    report = _triage([DATA / "mineru_1695_cpu_fallback.log"], mode)
    titles = [i.display_title for i in report.incidents]
    assert titles == ["torchvision::nms runs on the CPU", "aten::isin.Tensor_Tensor_out runs on the CPU"]
    for inc in report.incidents:
        assert inc.role == "advisory" and inc.verdict.category == "unsupported_op"
        assert inc.verdict.fix_commands and "opcheck" in " ".join(inc.verdict.fix_commands)
    if mode == "with-kb":
        assert {i.verdict.kb_id for i in report.incidents} == {"op.cpu_fallback"}  # the KB supplies the fix


def test_one_operator_from_many_ranks_is_counted_once():
    report = _triage([DATA / "llamafactory_4135_fallback_ranks.log"])
    assert len(report.incidents) == 1
    inc = report.incidents[0]
    assert inc.count == 5 and inc.rank is None
    assert inc.all_notes() == ["reported by 5 ranks (0, 1, 2, 6, 7)"]
    assert report.job.first_rank is None and report.job.method is None


@pytest.mark.parametrize("mode", sorted(KNOWLEDGE))
@pytest.mark.parametrize("fallback_first", [True, False], ids=["warning-then-oom", "oom-then-warning"])
def test_a_real_failure_outranks_the_fallback(tmp_path, mode, fallback_first):
    lines = MINERU_1695 + [OOM_19] if fallback_first else [OOM_19] + MINERU_1695
    capture = tmp_path / "console.log"
    capture.write_text("\n".join(lines) + "\n", encoding="utf-8")
    report = _triage([capture], mode)
    assert [i.role for i in report.incidents] == ["root", "advisory", "advisory"]
    first = report.incidents[0]
    # vllm-ascend#19: 50 of 61 GiB held outside this process, so the device is busy, not too small
    assert first.verdict.category == "device_busy_permission" and "NPU out of memory" in first.headline.text
    assert all("CAUTION" not in ev.text for ev in first.events)  # adjacent lines were not merged into the OOM


def test_even_a_bare_wrapper_outranks_the_fallback(tmp_path):
    capture = tmp_path / "console.log"
    capture.write_text("\n".join(MINERU_1695 + [BANNER_66]) + "\n", encoding="utf-8")
    report = _triage([capture])
    assert [i.role for i in report.incidents] == ["wrapper", "advisory", "advisory"]
    assert report.incidents[0].pid == 1066924


def test_failure_of_the_fallback_itself_comes_first_and_is_linked():
    report = _triage([DATA / "vllm_omni_755_fallback_then_error.log"])
    fail, adv = report.incidents
    assert fail.role == "root" and fail.verdict.kb_id in ("op.not_implemented_backend", "class.op_no_kernel")
    assert adv.role == "advisory" and adv.display_title == "aten::_scaled_dot_product_efficient_attention runs on the CPU"
    assert any("as a fallback" in n for n in fail.all_notes())
    assert any("did not hold" in n for n in adv.all_notes())


def test_fallback_inside_a_console_capture_read_as_plog(tmp_path):
    # ASCEND_SLOG_PRINT_TO_STDOUT=1 puts plog lines on the console: the file is scanned like a plog
    plog = [ln["text"] for ln in load_yaml("plog_lines.yaml")["lines"] if ln["level"] in ("INFO", "EVENT")][:8]
    capture = tmp_path / "stdout.txt"
    capture.write_text("\n".join(plog[:4] + MINERU_1695[:1] + plog[4:]) + "\n", encoding="utf-8")
    report = _triage([capture])
    assert [i.display_title for i in report.incidents] == ["torchvision::nms runs on the CPU"]
    assert report.incidents[0].headline.line == 5


def test_fallback_does_not_move_the_first_failing_rank(tmp_path):
    result = run_scenario("hccl_timeout", tmp_path / "h")
    extra = tmp_path / "ranks.log"
    extra.write_text("\n".join(RANKS_4135) + "\n", encoding="utf-8")
    report = _triage([result.log_dir, result.console_file, extra])
    assert report.incidents[0].rank == 3 and report.incidents[0].verdict.category == "hccl_comm"
    assert report.job.first_rank == 3
    assert report.incidents[-1].role == "advisory" and report.incidents[-1].count == 5
    assert all(i.caused_by is None for i in report.incidents if i.role == "advisory")


def test_fallback_only_input_renders_as_a_warning():
    out = io.StringIO()
    rc = run_triage([str(DATA / "mineru_1695_cpu_fallback.log")], fmt="json", out=out, err=io.StringIO())
    data = json.loads(out.getvalue())
    assert rc == 1 and data["schema"] == 1
    assert [i["role"] for i in data["incidents"]] == ["advisory", "advisory"]
    assert data["incidents"][0]["title"] == "torchvision::nms runs on the CPU"
    report = _triage([DATA / "mineru_1695_cpu_fallback.log"])
    text = render_text(report)
    assert "1. [unsupported_op] torchvision::nms runs on the CPU" in text and "   warning: " in text
    assert "## 1. `unsupported_op` torchvision::nms runs on the CPU" in render_md(report)


# ------------------------------------------------------------------ allocator retry
@pytest.mark.parametrize("mode", sorted(KNOWLEDGE))
def test_retry_line_alone_is_no_incident(mode):
    out = io.StringIO()
    rc = run_triage([str(DATA / "pytorch_108_block_retry.log")], fmt="json", out=out, err=io.StringIO())
    data = json.loads(out.getvalue())
    assert rc == 0 and data["incidents"] == []
    assert len(data["job"]["notes"]) == 1 and "with no failure of that process" in data["job"]["notes"][0]


def _retry_lines(log_dir: Path) -> int:
    return sum(f.read_text(encoding="utf-8").count("Get a block from the existing pool failed")
               for f in log_dir.rglob("plog-*.log"))


@pytest.mark.parametrize("mode", sorted(KNOWLEDGE))
def test_oom_after_many_retries_is_one_incident_with_the_retries_counted(tmp_path, mode):
    result = run_scenario("oom_fragmentation_serving", tmp_path / "h")
    retries = _retry_lines(result.log_dir)
    assert retries > 10  # the simulator's serving trace flushes the cache many times before it fails
    report = _triage([result.log_dir, result.console_file], mode)
    assert len(report.incidents) == 1
    inc = report.incidents[0]
    assert inc.verdict.category == "oom_fragmentation" and inc.role == "root"
    assert "NPU out of memory" in inc.headline.text and inc.headline.kind == "plog" and inc.pid is not None
    assert [a.count for a in inc.attachments] == [retries]
    out = io.StringIO()
    run_triage([str(result.log_dir), str(result.console_file)], fmt="json", out=out, err=io.StringIO())
    attached = json.loads(out.getvalue())["incidents"][0]["attached"]
    assert attached == [{"signal": "class.allocator_retry", "count": retries, "first": inc.attachments[0].first, "last": inc.attachments[0].last}]
    files = {f for f, _, _ in inc.evidence()}
    assert str(result.console_file) in files and any("plog-" in f for f in files)
    assert any("also reported on the console" in n for n in inc.all_notes())
    assert any("Get a block" in t for _, _, t in inc.evidence())  # the first retry is shown


def test_console_oom_with_other_numbers_stays_apart_and_after_the_plog(tmp_path):
    result = run_scenario("oom_capacity", tmp_path / "h")
    other = tmp_path / "other_console.log"
    other.write_text(OOM_19 + "\n", encoding="utf-8")
    report = _triage([result.log_dir, result.console_file, other])
    cats = [(i.verdict.category, i.headline.kind, i.pid is not None) for i in report.incidents]
    assert cats == [("oom_capacity", "plog", True), ("device_busy_permission", "console", False)]
    assert report.incidents[1].headline.file == str(other)
