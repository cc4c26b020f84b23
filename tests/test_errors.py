"""One mapping from a failed OS call to a one-line reason (ascend_doctor.inputs.errors), used by every layer."""
from __future__ import annotations

import errno
import os
import re
from pathlib import Path

import pytest

from ascend_doctor.inputs import os_message, os_reason

PACKAGE = Path(__file__).resolve().parent.parent / "ascend_doctor"


def _raised(fn, *args) -> OSError:
    try:
        fn(*args)
    except OSError as exc:
        return exc
    raise AssertionError("no OSError")


def test_reasons_of_real_failures(tmp_path: Path) -> None:
    assert os_reason(_raised(os.stat, str(tmp_path / "absent"))) == "no such file or directory"
    assert os_reason(_raised(open, str(tmp_path))) == "is a directory"
    (tmp_path / "f").write_text("x")
    assert os_reason(_raised(os.stat, str(tmp_path / "f" / "below"))) == "a path component is not a directory"
    os.symlink("loop", str(tmp_path / "loop"))
    assert os_reason(_raised(os.stat, str(tmp_path / "loop"))) == "symlink loop"
    assert os_message("--stats /x", FileNotFoundError(errno.ENOENT, "No such file or directory")) == \
        "--stats /x: no such file or directory"


@pytest.mark.parametrize("exc, reason", [
    (PermissionError(errno.EACCES, "Permission denied"), "permission denied"),
    (OSError(errno.ENOEXEC, "Exec format error"), "not an executable this machine can run (exec format error)"),
    (OSError(errno.EIO, "Input/output error"), "input/output error"),
    (OSError("first line\nsecond line"), "first line"),
    (OSError(), "OSError"),
])
def test_reason_is_one_line(exc: OSError, reason: str) -> None:
    assert os_reason(exc) == reason


def test_no_other_module_words_os_errors_itself() -> None:
    """The mapping is written once: no module of the package reads ``strerror`` itself."""
    offenders = [str(p.relative_to(PACKAGE)) for p in PACKAGE.rglob("*.py")
                 if p.relative_to(PACKAGE) != Path("inputs", "errors.py") and re.search(r"\.strerror\b", p.read_text(encoding="utf-8"))]
    assert offenders == []
