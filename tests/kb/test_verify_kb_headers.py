"""The maintainer tool that checks the KB's numeric tables against the headers in a torch-npu
wheel (tools/verify_kb_headers.py, not part of the installed package)."""
from __future__ import annotations

import zipfile
from pathlib import Path

from tools import verify_kb_headers

# Lines of rt_error_codes.h as published in
# https://github.com/hicann/runtime/blob/15c6c8dba7eb6bceeea8a32de42e7241bf35e6e0/include/external/acl/error_codes/rt_error_codes.h
# (torch-npu wheels ship the same header).
RT_LINES = (
    "#define  ACL_RT_SUCCESS    0                               // success\n"
    "#define  ACL_ERROR_RT_PARAM_INVALID              107000 // param invalid\n"
    "#define  ACL_ERROR_RT_MEMORY_ALLOCATION          207001 // memory allocation error, only used by out of memory\n"
    "#define  ACL_ERROR_RT_AICORE_EXCEPTION           507015 // aicore exception\n"
)


def _wheel(tmp_path: Path, header: str) -> str:
    path = tmp_path / "torch_npu-2.14.0-cp311-cp311-manylinux_2_28_aarch64.whl"
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("torch_npu/include/third_party/acl/inc/acl/error_codes/rt_error_codes.h", header)
    return str(path)


def test_header_values_the_kb_has_are_confirmed(tmp_path, capsys):
    assert verify_kb_headers.main([_wheel(tmp_path, RT_LINES)]) == 0
    out = capsys.readouterr().out
    assert "4 confirmed, 0 conflicting, 0 unknown to the KB" in out and "CONFLICT" not in out


def test_a_value_that_contradicts_the_kb_fails(tmp_path, capsys):
    # the real line with its number changed: the tool must report the contradiction
    changed = RT_LINES.replace("107000 // param invalid", "107099 // param invalid")
    assert verify_kb_headers.main([_wheel(tmp_path, changed)]) == 1
    assert "CONFLICT ACL_ERROR_RT_PARAM_INVALID: header 107099" in capsys.readouterr().out


def test_unreadable_wheel_exit_2(tmp_path, capsys):
    bad = tmp_path / "x.whl"
    bad.write_bytes(b"not a zip")
    assert verify_kb_headers.main([str(bad)]) == 2
    assert "cannot read the wheel" in capsys.readouterr().err
