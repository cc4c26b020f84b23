"""Versions named in a paste (parsers/stack_text.py) and their judgement (triage/stack.py).

Every line below is copied from the public page beside it.
"""
from __future__ import annotations

import io
import json

import pytest

from ascend_doctor.commands.triage import run_triage
from ascend_doctor.parsers.stack_text import StackLine

LINES = [
    # PyTorch's collect_env as vllm-ascend's copy prints it (vllm-ascend PR #175)
    ("PyTorch version: 2.5.1", [("torch", "2.5.1")], "https://github.com/vllm-project/vllm-ascend/pull/175"),
    ("Python version: 3.10.16 (main, Dec 11 2024, 16:18:56) [GCC 11.2.0] (64-bit runtime)", [("python", "3.10.16")],
     "https://github.com/vllm-project/vllm-ascend/pull/175"),
    # vLLM's newer column form (vllm-project/vllm#22518)
    ("PyTorch version              : 2.5.1", [("torch", "2.5.1")], "https://github.com/vllm-project/vllm/issues/22518"),
    # pip list (vllm-ascend#3793)
    ("torch                             2.7.1", [("torch", "2.7.1")], "https://github.com/vllm-project/vllm-ascend/issues/3793"),
    ("torch_npu                         2.7.1rc1", [("torch_npu", "2.7.1rc1")], "https://github.com/vllm-project/vllm-ascend/issues/3793"),
    ("torchvision                       0.23.0", [], "https://github.com/vllm-project/vllm-ascend/issues/3793"),
    # a pip install log (vllm-ascend#2210) and pip's resolver (vllm-ascend#4081)
    ("Successfully installed numpy-2.0.2 torch-npu-2.7.1.dev20250724", [("numpy", "2.0.2"), ("torch_npu", "2.7.1.dev20250724")],
     "https://github.com/vllm-project/vllm-ascend/issues/2210"),
    ("  torch-npu 2.7.1.dev20250724 requires torch==2.7.1, but you have torch 2.8.0+cpu which is incompatible.",
     [("torch_npu", "2.7.1.dev20250724"), ("torch", "2.8.0+cpu")], "https://github.com/vllm-project/vllm-ascend/issues/4081"),
    ("  torchvision 0.22.1 requires torch==2.7.1, but you have torch 2.8.0+cpu which is incompatible.",
     [("torch", "2.8.0+cpu")], "https://github.com/vllm-project/vllm-ascend/issues/4081"),
    # npu-smi info: the driver in the header, the chip in a device row (vllm-ascend#1363)
    ("| npu-smi 23.0.3                   Version: 23.0.3                                               |", [("driver", "23.0.3")],
     "https://github.com/vllm-project/vllm-ascend/issues/1363"),
    ("| 2     910B2               | OK            | 97.3        47                0    / 0             |", [("chip", "910B2")],
     "https://github.com/vllm-project/vllm-ascend/issues/1363"),
    # a toolkit path in a traceback (the install info's path= line, xfusionkunlun README in tests/compat_matrix/data)
    ("path=/usr/local/Ascend/ascend-toolkit/8.2.RC1/aarch64-linux", [("cann", "8.2.RC1")],
     "https://github.com/stephenfuyuxin/xfusionkunlun/blob/400107d5dca509e891c8969830536e26ee9ceda6/aispacewings/README.md"),
    # prose that names a package and a number is no version line
    ("I installed torch 2.1 yesterday and it fails", [], ""),
]


@pytest.mark.parametrize("line,facts,source", LINES, ids=[f"{i}" for i in range(len(LINES))])
def test_a_line_names_what_it_names(line, facts, source):
    assert [(f.component, f.version) for f in StackLine().read(7, line)] == facts, source


def test_the_toolkit_version_counts_only_under_its_package_name():
    # ascend_toolkit_install.info as collect_env prints it (xfusionkunlun README, see above)
    reader = StackLine()
    got = [f for i, line in enumerate(["package_name=Ascend-cann-toolkit", "version=8.2.RC1",
                                       "innerversion=V100R001C22SPC001B231"], 1) for f in reader.read(i, line)]
    assert [(f.component, f.version, f.line) for f in got] == [("cann", "8.2.RC1", 2)]
    assert StackLine().read(1, "version=8.2.RC1") == []  # a version= line of some other file says nothing


def _triage(text: str) -> dict:
    out = io.StringIO()
    run_triage(["-"], fmt="json", out=out, err=io.StringIO(), stdin=io.BytesIO(text.encode("utf-8")))
    return json.loads(out.getvalue())


# vllm-ascend#4081: installing vLLM pulled torch 2.8.0 under a torch-npu built for 2.7.1
PIP_4081 = ("  ERROR: pip's dependency resolver does not currently take into account all the packages that are installed. "
            "This behaviour is the source of the following dependency conflicts.\n"
            "  torch-npu 2.7.1.dev20250724 requires torch==2.7.1, but you have torch 2.8.0+cpu which is incompatible.\n"
            "  Successfully installed MarkupSafe-3.0.3 mpmath-1.3.0 torch-2.8.0+cpu\n")


def test_versions_that_do_not_go_together_are_the_answer_with_the_lines_that_name_them():
    first = _triage(PIP_4081)["incidents"][0]
    assert first["category"] == "version_mismatch" and first["signal"] == "stack.incompatible"
    assert "torch_npu 2.7.1.dev20250724 with torch 2.8.0+cpu" in first["title"]
    assert [e["line"] for e in first["evidence"]] == [2, 3]
    assert first["fix"]["commands"][0] == "ascend-doctor compat --torch-npu 2.7.1.dev20250724 --torch 2.8.0+cpu"
    assert first["runner_up"]["category"] == "version_mismatch"  # pip's own complaint, read by the KB


def test_a_failure_versions_do_not_explain_stays_first():
    # an out-of-memory error (sglang#29838) pasted with the same pip output: the memory comes first
    oom = ("torch.OutOfMemoryError: NPU out of memory. Tried to allocate 72.00 MiB (NPU 0; 61.27 GiB total capacity; "
           "56.05 GiB already allocated; 56.05 GiB current active; 5.04 MiB free; 58.39 GiB reserved in total by PyTorch)\n")
    got = [(i["category"], i["signal"]) for i in _triage(PIP_4081 + oom)["incidents"]]
    assert got[0][0].startswith("oom_") and ("version_mismatch", "stack.incompatible") in got[1:]


def test_versions_that_go_together_or_stand_alone_say_nothing(monkeypatch):
    # vllm-ascend#3793's pip list: torch 2.7.1 with torch_npu 2.7.1rc1 is a supported pair
    rows = "torch                             2.7.1\ntorch_npu                         2.7.1rc1\nEZ9999: Inner Error!\n"
    assert all(i["signal"] != "stack.incompatible" for i in _triage(rows)["incidents"])
    import compat_matrix

    def no_tables(*a, **k):
        raise AssertionError("one named version needs no tables")

    monkeypatch.setattr(compat_matrix, "evaluate", no_tables)
    assert _triage("PyTorch version: 2.5.1\nEZ9999: Inner Error!\n")["incidents"][0]["signal"] != "stack.incompatible"


# vllm-ascend#2210: NumPy 2 installed beside CANN 8.2.1, then the first device call fails in ACL
SETDEVICE_2210 = (
    "Successfully installed numpy-2.0.2 torch-npu-2.7.1.dev20250724\n"
    "RuntimeError: SetPrecisionMode:build/CMakeFiles/torch_npu.dir/compiler_depend.ts:155 NPU function error: "
    "at_npu::native::AclSetCompileopt(aclCompileOpt::ACL_PRECISION_MODE, precision_mode), error code is 500001\n"
    "[ERROR] 2025-08-05-08:05:26 (PID:504068, Device:0, RankID:-1) ERR00100 PTA call acl api failed\n")


def test_numpy_2_under_a_cann_that_needs_numpy_1_explains_a_wrapped_acl_failure():
    first = _triage(SETDEVICE_2210)["incidents"][0]
    assert (first["category"], first["kb"]) == ("version_mismatch", "version.numpy2_under_cann")
    assert first["confidence"] == "low"  # the paste names no CANN: NumPy 2 is the likely, not the certain, cause
    assert first["runner_up"]["kb"] == "env.acl_init_failed"
    assert [e["line"] for e in first["evidence"]] == [1]
    named = _triage("package_name=Ascend-cann-toolkit\nversion=8.2.RC1\n" + SETDEVICE_2210)["incidents"][0]
    assert (named["kb"], named["confidence"]) == ("version.numpy2_under_cann", "medium")
    assert [e["line"] for e in named["evidence"]] == [2, 3]


@pytest.mark.parametrize("before", [
    "Successfully installed numpy-1.26.4 torch-npu-2.7.1.dev20250724\n",  # NumPy 1
    "package_name=Ascend-cann-toolkit\nversion=9.0.0\nSuccessfully installed numpy-2.0.2\n",  # a CANN counted as ready
])
def test_numpy_1_or_a_cann_ready_for_numpy_2_say_nothing(before):
    text = before + SETDEVICE_2210.split("\n", 1)[1]
    assert all(i["kb"] != "version.numpy2_under_cann" for i in _triage(text)["incidents"])


def test_numpy_2_beside_a_failure_it_does_not_explain_comes_after_it():
    oom = ("torch.OutOfMemoryError: NPU out of memory. Tried to allocate 72.00 MiB (NPU 0; 61.27 GiB total capacity; "
           "56.05 GiB already allocated; 56.05 GiB current active; 5.04 MiB free; 58.39 GiB reserved in total by PyTorch)\n")
    got = [i["kb"] for i in _triage("Successfully installed numpy-2.0.2\n" + oom)["incidents"]]
    assert got[0].startswith("oom.") and "version.numpy2_under_cann" in got[1:]
