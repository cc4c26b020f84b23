"""The ``ascend-doctor`` entry point: a start-up fast path for the one-line questions.

``ascend-doctor triage PATH...`` and ``ascend-doctor explain CODE|TEXT`` in their plain forms
(paths or a query, ``--json``, ``--format F``, ``-v``) run here without importing the full
command-line parser (typer and click take a third of the start-up of such a question). Any
other form, any other verb, ``--help`` and anything unexpected go to ``ascend_doctor.cli``,
which owns the command line; ``commands.outcome.run_verb`` is the one place where a verb's
outcome becomes an exit code and a one-line message, for both paths. tests/test_launch.py keeps the two paths
giving the same output and exit code.
"""
from __future__ import annotations

import sys
from typing import Dict, List, Optional

from .commands.outcome import format_conflict, quiet_stdout, run_verb, stream_setup

_FAST = ("triage", "explain", "check")
# the options each fast verb takes here: value options (the check's form) and flags
_VALUED = {"triage": ("--format",), "explain": ("--format",), "check": ("--format", "--root", "--env-file")}
_VERBOSE = ("triage", "check")


def _plain(argv: List[str]) -> Optional[tuple]:
    """(verb, operands, format, --json, verbose, options) when argv is a plain triage/explain/check call
    (only the options listed above), else None."""
    if not argv or argv[0] not in _FAST:
        return None
    verb, operands, fmt, json_out, verbose = argv[0], [], None, False, 0
    options: Dict[str, str] = {}
    rest = argv[1:]
    i = 0
    while i < len(rest):
        arg = rest[i]
        name, eq, value = arg.partition("=")
        if arg == "--json":
            json_out = True
        elif name in _VALUED[verb] and (eq or i + 1 < len(rest)):
            if not eq:
                value = rest[i + 1]
                i += 1
            if name == "--format":
                fmt = value
            elif not value or name in options:
                return None  # empty or repeated: the full parser says what is wrong
            else:
                options[name] = value
        elif verb in _VERBOSE and arg in ("-v", "--verbose", "-vv"):
            verbose += 2 if arg == "-vv" else 1
        elif arg == "--" and verb != "check":
            operands.extend(rest[i + 1:])
            break
        elif arg.startswith("-") and arg != "-":
            return None  # an option the full parser knows better (or rejects with its message)
        else:
            operands.append(arg)
        i += 1
    if (verb == "check") == bool(operands):
        return None  # check takes no operands; triage and explain need one
    if format_conflict(json_out, fmt):
        return None  # the full parser gives the message
    return verb, operands, fmt or "text", json_out, verbose, options


def run() -> None:
    """The ``ascend-doctor`` command (and ``python -m ascend_doctor``): ``main``, and a one-line
    question's process ends without the interpreter's teardown (see ``_end``)."""
    main(end_now=True)


def main(end_now: bool = False) -> None:
    plain = _plain(sys.argv[1:])
    if plain is None:
        from .cli import main as full

        full()
        return
    stream_setup()
    verb, operands, fmt, json_out, verbose, options = plain
    if verb == "check":
        from pathlib import Path

        from .commands.check import run_check

        root, env_file = options.get("--root"), options.get("--env-file")
        code = run_verb(run_check, root=Path(root) if root else None, env_file=Path(env_file) if env_file else None,
                        fmt=fmt, json_flag=json_out, verbose=verbose)
    elif verb == "triage":
        from .commands.triage import run_triage

        code = run_verb(run_triage, operands, "json" if json_out else fmt, verbose=verbose)
    else:
        from .commands.explain import run_explain

        code = run_verb(run_explain, " ".join(operands), "json" if json_out else fmt)
    try:
        sys.stdout.flush()
    except BrokenPipeError:  # `... | head`: the reader left; that is not an error of ours
        quiet_stdout()
    if end_now and verb != "check":
        _end(code)
    sys.exit(code)


def _end(code: int) -> None:
    """End the process with ``code`` now. The verb has returned, ``run_verb`` has finished every
    child (the one exit handler these verbs register, ``children.kill_all``), and the output is
    flushed: what is left is the interpreter's teardown (every module and object freed, a last
    garbage collection), about 10 ms, a tenth of a one-line answer, for nothing the user sees.
    ``check`` keeps the ordinary exit (its probes run in threads); anything unusual too."""
    import atexit
    import os

    try:
        sys.stderr.flush()
    except (OSError, ValueError):
        return
    handlers = getattr(atexit, "_ncallbacks", None)  # CPython's count of registered exit handlers
    if handlers is None or handlers() > 1:  # unknown, or a handler other than children's: the ordinary exit runs it
        return
    os._exit(code)
