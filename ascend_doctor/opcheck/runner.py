"""Run a user's Python program under the op recorder (the child of ``opcheck record``).

    python -m ascend_doctor.opcheck.runner --output OPS.json [--mode eager|fake|meta]
        [--no-composite] [--no-explicit] -- (SCRIPT.py | -m MODULE | -c CODE) [ARGS...]

The program runs as ``__main__`` with its own ``sys.argv``, exactly as ``python SCRIPT.py
ARGS`` would run it. The manifest is written even when the program fails (marked
incomplete). Exit status: 0 recorded, 1 the program failed, 2 usage error, 3 torch missing.
"""
from __future__ import annotations

import argparse
import contextlib
import io
import os
import runpy
import sys
import traceback
import warnings
from types import TracebackType
from typing import List, Optional, Sequence

from ascend_doctor.opcheck.choices import Mode, values

EXIT_OK, EXIT_PROGRAM, EXIT_USAGE, EXIT_NO_TORCH = 0, 1, 2, 3

FAKE_TO_HINT = (
    "with --mode fake, parameters made by the program are fake tensors and nn.Module.to(dtype) cannot convert "
    "them: build the model in its final dtype (torch.set_default_dtype(...) or dtype=...), or use --mode meta"
)


def _parse(argv: Sequence[str]) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python -m ascend_doctor.opcheck.runner")
    p.add_argument("--output", required=True)
    p.add_argument("--mode", default=Mode.EAGER.value, choices=values(Mode))
    p.add_argument("--no-composite", action="store_true")
    p.add_argument("--no-explicit", action="store_true")
    p.add_argument("--no-sdpa-math", action="store_true")
    p.add_argument("--display", default=None, help="command line to store in the manifest (JSON list)")
    p.add_argument("program", nargs=argparse.REMAINDER)
    args = p.parse_args(list(argv))
    prog = list(args.program)
    if prog and prog[0] == "--":
        prog = prog[1:]
    if not prog:
        p.error("no program: give SCRIPT.py, -m MODULE or -c CODE after --")
    args.program = prog
    return args


# What torch prints on import when NumPy is missing or was built for another ABI: it concerns
# the recording interpreter only (the recorder never touches NumPy), not the program's ops.
NUMPY_NOISE = ("Failed to initialize NumPy", "compiled using NumPy 1.x")


def import_torch_quietly() -> bool:
    """Import torch without its NumPy complaints; False when torch is not installed.

    Whatever else torch writes to stderr while importing is passed on unchanged."""
    err = io.StringIO()
    try:
        with warnings.catch_warnings(), contextlib.redirect_stderr(err):
            warnings.filterwarnings("ignore", message=".*Failed to initialize NumPy")
            import torch  # noqa: F401
    except ImportError:
        sys.stderr.write(err.getvalue())
        return False
    text = err.getvalue()
    if text and not any(n in text for n in NUMPY_NOISE):
        sys.stderr.write(text)
    return True


def print_program_traceback(exc: BaseException) -> None:
    """The program's traceback from its own first frame: the frames of this runner and of
    runpy above it say nothing about the program."""
    tb: Optional[TracebackType] = exc.__traceback__
    ours = (os.path.abspath(__file__), os.path.abspath(runpy.__file__), os.path.abspath(contextlib.__file__))
    while tb is not None and (tb.tb_frame.f_code.co_filename.startswith("<frozen runpy")
                              or os.path.abspath(tb.tb_frame.f_code.co_filename) in ours):
        tb = tb.tb_next
    traceback.print_exception(type(exc), exc, tb)


def _write(rec, path: str) -> None:
    tmp = f"{path}.tmp{os.getpid()}"
    rec.save(tmp)
    os.replace(tmp, path)


def main(argv: Optional[Sequence[str]] = None) -> int:
    args = _parse(sys.argv[1:] if argv is None else argv)
    if not import_torch_quietly():
        sys.stderr.write("opcheck record: torch is not installed for this Python (pip install 'ascend-doctor[torch]')\n")
        return EXIT_NO_TORCH
    from ascend_doctor.opcheck.recorder import record_ops

    prog: List[str] = args.program
    display = prog
    if args.display:
        import json

        display = json.loads(args.display)
    if prog[0] == "-m":
        if len(prog) < 2:
            sys.stderr.write("opcheck record: -m needs a module name\n")
            return EXIT_USAGE
        kind, target, rest = "module", prog[1], prog[2:]
        sys.argv = [prog[1]] + rest
    elif prog[0] == "-c":
        if len(prog) < 2:
            sys.stderr.write("opcheck record: -c needs code\n")
            return EXIT_USAGE
        kind, target, rest = "code", prog[1], prog[2:]
        sys.argv = ["-c"] + rest
    else:
        kind, target, rest = "script", prog[0], prog[1:]
        if not os.path.isfile(target):
            sys.stderr.write(f"opcheck record: {target}: no such file\n")
            return EXIT_USAGE
        sys.argv = [target] + rest
        sys.path.insert(0, os.path.dirname(os.path.abspath(target)))

    status = EXIT_OK
    rec = None
    try:
        with record_ops(
            mode=args.mode,
            composite=not args.no_composite,
            explicit=not args.no_explicit,
            sdpa_math=not args.no_sdpa_math,
            command=display,
        ) as rec:
            try:
                if kind == "module":
                    runpy.run_module(target, run_name="__main__", alter_sys=True)
                elif kind == "code":
                    exec(compile(target, "<string>", "exec"), {"__name__": "__main__"})
                else:
                    runpy.run_path(target, run_name="__main__")
            except SystemExit as exc:  # sys.exit(N) in the program: its status, not a failure of ours
                code = exc.code
                if code not in (None, 0):
                    if not isinstance(code, int):  # sys.exit("message") prints the message, status 1
                        sys.stderr.write(f"{code}\n")
                        code = 1
                    status = EXIT_PROGRAM
                    rec.error = f"the program exited with status {code}"
    except BaseException as exc:  # the program's own failure: show it, keep what was recorded
        if isinstance(exc, KeyboardInterrupt):
            status = 130
        else:
            status = EXIT_PROGRAM
            print_program_traceback(exc)
            if args.mode == "fake" and "swap" in str(exc) and "_apply" in str(exc):
                sys.stderr.write(f"opcheck record: {FAKE_TO_HINT}\n")
    if rec is not None:
        _write(rec, args.output)
    return status


if __name__ == "__main__":
    sys.exit(main())
