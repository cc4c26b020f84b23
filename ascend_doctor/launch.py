"""The ``ascend-doctor`` entry point: a start-up fast path for the one-line questions.

``ascend-doctor triage PATH...`` and ``ascend-doctor explain CODE|TEXT`` in their plain forms
(paths or a query, ``--json``, ``--format F``, ``-v``) run here without importing the full
command-line parser (typer and click take a third of the start-up of such a question). Any
other form, any other verb, ``--help`` and anything unexpected go to ``ascend_doctor.cli``,
which owns the command line; ``run_verb`` is the one place where a verb's outcome becomes an
exit code and a one-line message, for both paths. tests/test_launch.py keeps the two paths
giving the same output and exit code.
"""
from __future__ import annotations

import os
import sys
from typing import Callable, List, Optional

_FAST = ("triage", "explain")


def run_verb(fn: Callable[..., int], *args, **kwargs) -> int:
    """Run a verb; bad input becomes one line + 2, a crash one line + 3 (traceback with
    ASCEND_DOCTOR_DEBUG=1), Ctrl-C 130. Nothing the doctor started outlives it."""
    from .errors import UsageError
    from .inputs import InputError

    try:
        return fn(*args, **kwargs)
    except (UsageError, InputError) as exc:
        sys.stderr.write(f"ascend-doctor: error: {exc}\n")
        return 2
    except KeyboardInterrupt:
        sys.stderr.write("ascend-doctor: interrupted\n")
        return 130
    except BrokenPipeError:  # `ascend-doctor ... | head`: the reader had enough; not an error of ours
        _quiet_stdout()
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
        from .children import kill_all

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


def _quiet_stdout() -> None:
    try:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    except (OSError, ValueError):
        pass


def _plain(argv: List[str]) -> Optional[tuple]:
    """(verb, operands, format, verbose) when argv is a plain triage/explain call, else None."""
    if not argv or argv[0] not in _FAST:
        return None
    verb, operands, fmt, json_out, verbose = argv[0], [], None, False, 0
    rest = argv[1:]
    i = 0
    while i < len(rest):
        arg = rest[i]
        if arg == "--json":
            json_out = True
        elif arg == "--format" and i + 1 < len(rest):
            fmt = rest[i + 1]
            i += 1
        elif arg.startswith("--format="):
            fmt = arg.split("=", 1)[1]
        elif verb == "triage" and arg in ("-v", "--verbose"):
            verbose += 1
        elif arg == "--":
            operands.extend(rest[i + 1:])
            break
        elif arg.startswith("-") and arg != "-":
            return None  # an option the full parser knows better (or rejects with its message)
        else:
            operands.append(arg)
        i += 1
    if not operands or format_conflict(json_out, fmt):
        return None  # the full parser gives the message
    return verb, operands, ("json" if json_out else fmt or "text"), verbose


def stream_setup() -> None:
    # a terminal or pipe that cannot encode ✓ or · must not end the run with a traceback
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.reconfigure(errors="replace")  # type: ignore[attr-defined]
        except (AttributeError, ValueError):
            pass


def main() -> None:
    plain = _plain(sys.argv[1:])
    if plain is None:
        from .cli import main as full

        full()
        return
    stream_setup()
    verb, operands, fmt, verbose = plain
    if verb == "triage":
        from .commands.triage import run_triage

        code = run_verb(run_triage, operands, fmt, verbose=verbose)
    else:
        from .commands.explain import run_explain

        code = run_verb(run_explain, " ".join(operands), fmt)
    try:
        sys.stdout.flush()
    except BrokenPipeError:  # `... | head`: the reader left; that is not an error of ours
        _quiet_stdout()
    sys.exit(code)
