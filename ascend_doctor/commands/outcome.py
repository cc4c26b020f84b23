"""How a verb's outcome becomes an exit code, the same for every verb and for both the
fast path (``ascend_doctor.launch``) and the full command line (``ascend_doctor.cli``):
bad input is one line and exit 2, a crash one line and exit 3 (the traceback only with
ASCEND_DOCTOR_DEBUG=1), Ctrl-C 130, a reader that closed the pipe 0; and nothing the doctor
started outlives it."""
from __future__ import annotations

import os
import sys
from typing import Callable, Optional

from ..children import kill_all
from ..errors import UsageError
from ..inputs import InputError


def stream_setup() -> None:
    # a terminal or pipe that cannot encode ✓ or · must not end the run with a traceback
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.reconfigure(errors="replace")  # type: ignore[attr-defined]
        except (AttributeError, ValueError):
            pass


def run_verb(fn: Callable[..., int], *args, **kwargs) -> int:
    """Run a verb; bad input becomes one line + 2, a crash one line + 3 (traceback with
    ASCEND_DOCTOR_DEBUG=1), Ctrl-C 130. Nothing the doctor started outlives it."""
    try:
        return fn(*args, **kwargs)
    except (UsageError, InputError) as exc:
        sys.stderr.write(f"ascend-doctor: error: {exc}\n")
        return 2
    except KeyboardInterrupt:
        sys.stderr.write("ascend-doctor: interrupted\n")
        return 130
    except BrokenPipeError:  # `ascend-doctor ... | head`: the reader had enough; not an error of ours
        quiet_stdout()
        return 0
    except SystemExit:
        raise
    except Exception as exc:  # the last line of defence: never a traceback by default
        if os.environ.get("ASCEND_DOCTOR_DEBUG"):
            import traceback

            traceback.print_exc(file=sys.stderr)
        first = str(exc).splitlines()[0] if str(exc) else ""
        hint = "" if os.environ.get("ASCEND_DOCTOR_DEBUG") else " (ASCEND_DOCTOR_DEBUG=1 shows the traceback)"
        sys.stderr.write(f"ascend-doctor: internal error: {type(exc).__name__}: {first}{hint}\n")
        return 3
    finally:
        # a prefetched npu-smi nobody waited for, a child interrupted by Ctrl-C, a grandchild
        # that left its process group
        kill_all()
        _flush(sys.stderr)  # a buffered stream (a test runner's, a pipe) gets the line before exit


def _flush(stream) -> None:
    try:
        stream.flush()
    except (OSError, ValueError):
        pass


def format_conflict(json_out: bool, fmt: Optional[str]) -> Optional[str]:
    """The one-line usage error of ``--json`` with a ``--format`` other than json (``fmt`` is
    the value typed, None when the option was not given); None when they agree."""
    if json_out and fmt is not None and fmt != "json":
        return f"--json and --format {fmt} ask for two outputs: give one (--json is --format json)"
    return None


def quiet_stdout() -> None:
    try:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    except (OSError, ValueError):
        pass
