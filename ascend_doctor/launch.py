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
from typing import List, Optional

from .commands.outcome import quiet_stdout, run_verb, stream_setup

_FAST = ("triage", "explain")


def _plain(argv: List[str]) -> Optional[tuple]:
    """(verb, operands, format, verbose) when argv is a plain triage/explain call, else None."""
    if not argv or argv[0] not in _FAST:
        return None
    verb, operands, fmt, json_out, verbose = argv[0], [], "text", False, 0
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
    if not operands:
        return None
    return verb, operands, ("json" if json_out else fmt), verbose


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
        quiet_stdout()
    sys.exit(code)
