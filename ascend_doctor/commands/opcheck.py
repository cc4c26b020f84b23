"""`ascend-doctor opcheck`: record a model's ops on CPU, then judge them on two torch_npu versions.

    ascend-doctor opcheck record [-o OPS.json] [--mode eager|fake|meta] [--timeout S] -- python SCRIPT.py [ARGS...]
    ascend-doctor opcheck compare OPS.json [--from V] --to V [--fail-on unsupported|fallback|change] [--all]
                                  [--replay DIR [--cann V] [--soc SOC]]
    ascend-doctor opcheck versions

Each takes --json and --format text|json|md. Exit codes: record 0 / 1 (the program failed or
was stopped; what it ran is still written) / 2 usage (also: no torch for that Python); compare 0 / 1 (per
--fail-on: an op used fails on the target by default) / 2 usage (bad manifest, unknown version).
"""
from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import List, Optional, Sequence, Union

from .. import children
from ..errors import UsageError
from ..inputs import os_message
from ..facts import Facts
from ..opcheck import render
from ..opcheck.check import check
from ..opcheck.choices import DEFAULT_SOC, FailOn, Mode, Soc, choose
from ..opcheck.manifest import ManifestError, load
from ..opcheck.replay import ReplayError, replay, summary_lines
from .common import make_host, output_format

RECORD_TIMEOUT = 3600.0
_PYTHON_NAME = re.compile(r"^python(\d+(\.\d+)*)?(\.exe)?$")


def _package_root() -> str:
    import ascend_doctor

    return str(Path(ascend_doctor.__file__).resolve().parent.parent)


def _split_program(argv: Sequence[str]) -> tuple:
    """['python', 'x.py', ...] / ['x.py', ...] / ['python3', '-m', 'pkg'] -> (interpreter, program argv)."""
    args = list(argv)
    if args and args[0] == "--":
        args = args[1:]
    if not args:
        raise UsageError("opcheck record: give the program after --, e.g. `opcheck record -- python train.py`")
    first = args[0]
    if _PYTHON_NAME.match(os.path.basename(first)):
        interp = shutil.which(first) if os.sep not in first else first
        if not interp or not os.path.exists(interp):
            raise UsageError(f"opcheck record: {first}: interpreter not found")
        rest = args[1:]
    elif first.endswith(".py") or first in ("-m", "-c"):
        interp, rest = sys.executable, args
    else:
        raise UsageError(f"opcheck record: {first}: expected `python SCRIPT.py ...`, `SCRIPT.py ...` or `python -m MODULE ...`")
    if not rest:
        raise UsageError("opcheck record: the interpreter needs a script, -m MODULE or -c CODE")
    if rest[0] not in ("-m", "-c"):
        if rest[0].startswith("-"):
            raise UsageError(f"opcheck record: interpreter option {rest[0]} is not supported; give SCRIPT.py, -m or -c")
        if not os.path.isfile(rest[0]):
            raise UsageError(f"opcheck record: {rest[0]}: no such file")
    elif len(rest) < 2:
        raise UsageError(f"opcheck record: {rest[0]} needs an argument")
    return interp, rest


def _default_output(program: List[str]) -> str:
    if program[0] == "-m":
        stem = program[1].replace(".", "_")
    elif program[0] == "-c":
        stem = "program"
    else:
        stem = Path(program[0]).stem
    return f"{stem}.ops.json"


def run_record(
    argv: Sequence[str],
    output: Optional[Union[str, Path]] = None,
    mode: str = Mode.EAGER,
    timeout: float = RECORD_TIMEOUT,
    composite: bool = True,
    fmt: str = "text",
    json_flag: bool = False,
) -> int:
    """Record the aten ops of ``argv`` (a Python program) into an op manifest."""
    fmt = output_format(fmt, json_flag)
    mode = _choice(Mode, mode, "--mode")
    if not 0 < timeout <= 7 * 24 * 3600:
        raise UsageError("--timeout must be a positive number of seconds")
    interp, program = _split_program(argv)
    out = str(output) if output else _default_output(program)
    out_dir = os.path.dirname(os.path.abspath(out))
    if not os.path.isdir(out_dir):
        raise UsageError(f"-o {out}: directory {out_dir} does not exist")
    cmd = [interp, "-m", "ascend_doctor.opcheck.runner", "--output", out, "--mode", mode,
           "--display", json.dumps(list(argv)[1:] if argv and argv[0] == "--" else list(argv))]
    if not composite:
        cmd.append("--no-composite")
    cmd += ["--"] + program
    env = dict(os.environ)
    # The child interpreter may not have ascend-doctor installed: let it find this copy.
    env["PYTHONPATH"] = os.pathsep.join(p for p in (_package_root(), env.get("PYTHONPATH", "")) if p)
    # With --json or --format md, stdout carries only our summary: the program's own output goes to stderr.

    # its own session, marked: on every way out (done, timeout, Ctrl-C, an error) the program
    # and whatever it left running (DataLoader workers, a daemonised helper) are killed
    proc = children.spawn(cmd, env=env, stdin=None, stdout=sys.stderr.fileno() if fmt != "text" else None, stderr=None)
    try:
        rc = proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        sys.stderr.write(f"ascend-doctor: opcheck record: the program ran longer than {timeout:.0f} s and was stopped\n")
        return 1
    finally:
        children.finish(proc)
    if rc == 3:
        raise UsageError(f"opcheck record: torch is not installed for {interp} (pip install 'ascend-doctor[torch]')")
    if rc == 2:
        raise UsageError("opcheck record: the recorder rejected the program arguments (see above)")
    if not os.path.exists(out):
        sys.stderr.write(f"ascend-doctor: opcheck record: no manifest written (recorder exit status {rc})\n")
        return 1

    try:
        m = load(out)
    except ManifestError as exc:
        sys.stderr.write(f"ascend-doctor: opcheck record: {exc}\n")
        return 1
    rec = m.recorded
    summary = _record_summary(m, out)
    if fmt == "json":
        sys.stdout.write(render.record_json(out, m))
    elif fmt == "md":
        sys.stdout.write(render.record_md(summary))
    sys.stderr.write(f"ascend-doctor: opcheck {summary}\n")
    return 0 if rc == 0 and rec.get("complete", True) else 1


def _record_summary(m, out: str) -> str:
    """One line: what was recorded, or how the program ended and what it left."""
    rec = m.recorded
    how = f"{rec.get('seconds', 0):.1f} s [{rec.get('mode')}]"
    if rec.get("complete", True):
        return f"recorded {len(m.ops)} ops, {m.total_calls} calls in {how} -> {out}"
    error = rec.get("error") or "it failed"
    ended = error if error.startswith("the program") else f"the program failed ({error})"
    if not m.ops:
        return f"record: {ended} before running any op: nothing recorded ({out} holds an empty, incomplete manifest)"
    return f"record: {ended}; recorded the {len(m.ops)} ops, {m.total_calls} calls it ran before, in {how} -> {out} (incomplete)"


def _choice(enum, value, option: str) -> str:
    try:
        return choose(enum, value, option)
    except ValueError as exc:
        raise UsageError(str(exc)) from None


def host_torch_npu(python: Optional[str] = None, root: Optional[Path] = None,
                   env_file: Optional[Path] = None, sim: Optional[str] = None) -> str:
    """torch_npu version of the target Python, via the fact gatherer `check` uses."""
    facts = Facts(make_host(root, env_file, sim), python=python)
    stack = facts.python_stack()
    version = stack.version_of("torch_npu")
    if not version:
        where = stack.interpreter or "the target Python"
        why = f" ({stack.error})" if stack.error else ""
        raise UsageError(f"--from not given and no torch_npu found in {where}{why}; pass --from VERSION")
    return version


def run_compare(
    manifest: Union[str, Path],
    from_v: Optional[str] = None,
    to_v: Optional[str] = None,
    fmt: str = "text",
    json_flag: bool = False,
    fail_on: str = FailOn.UNSUPPORTED,
    show_all: bool = False,
    python: Optional[str] = None,
    root: Optional[Path] = None,
    env_file: Optional[Path] = None,
    sim: Optional[str] = None,
    replay_dir: Optional[Union[str, Path]] = None,
    cann: Optional[str] = None,
    soc: Optional[str] = None,
) -> int:
    """Judge a manifest's ops on ``from_v`` and ``to_v``; print the report; exit per ``fail_on``.

    ``replay_dir``: also run the ops on runtime_sim's simulated NPU at ``to_v`` (with CANN
    ``cann``, default its pair; chip ``soc``) and write the logs there.
    """
    from compat_matrix.op_support import UnknownVersionError

    fmt = output_format(fmt, json_flag)
    fail_on = _choice(FailOn, fail_on, "--fail-on")
    if soc is not None:
        soc = _choice(Soc, soc, "--soc")
    if not to_v:
        raise UsageError("opcheck compare: --to VERSION is required (a torch_npu wheel such as 2.7.1.post8, a release line such as 26.1.0, or a CANN version such as 9.1.0)")
    if (cann or soc) and not replay_dir:
        raise UsageError("--cann and --soc choose the simulated host of --replay DIR")
    if replay_dir and Path(replay_dir).exists() and not Path(replay_dir).is_dir():
        raise UsageError(f"--replay {replay_dir}: exists and is not a directory (give a directory for the simulated logs; it is created if missing)")
    try:
        m = load(manifest)
    except ManifestError as exc:
        raise UsageError(str(exc)) from None
    if from_v is None:
        from_v = host_torch_npu(python, root, env_file, sim)
    try:
        report = check(m, from_v, to_v)
    except UnknownVersionError as exc:
        raise UsageError(str(exc)) from None
    replayed = None
    if replay_dir:
        logs = _replay_dir(replay_dir)
        try:
            replayed = replay(m, to_v, logs, cann=cann, soc=soc or DEFAULT_SOC.value)
        except ReplayError as exc:
            raise UsageError(f"--replay: {exc}") from None
        except ValueError as exc:  # a CANN version the simulator cannot take
            raise UsageError(f"--cann {cann}: {exc}") from None
    if fmt == "json":
        doc = report.to_json()
        if replayed is not None:
            doc["replay"] = replayed.to_json()
        sys.stdout.write(json.dumps(doc, indent=2) + "\n")
    else:
        text = render.to_markdown(report, show_all=show_all) if fmt == "md" else render.to_text(report, show_all=show_all)
        if replayed is not None:
            lines = summary_lines(replayed)
            text += "\n" + ("\n".join(["## Replay", "", "```"] + lines + ["```"]) if fmt == "md" else "\n".join(lines)) + "\n"
        sys.stdout.write(text)
    code = report.exit_code(fail_on)
    if replayed is not None and replayed.failed:
        code = max(code, 1)
    return code


def _replay_dir(path: Union[str, Path]) -> Path:
    """The directory --replay writes its logs to: made if missing; anything that is not a
    directory we can write (a file, a path under /proc) is a one-line usage error."""
    p = Path(path)
    if p.exists() and not p.is_dir():
        raise UsageError(f"--replay {p}: exists and is not a directory (give a directory for the simulated logs; it is created if missing)")
    try:
        p.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UsageError(os_message(f"--replay {p}: cannot create the directory", exc)) from None
    if not os.access(p, os.W_OK | os.X_OK):
        raise UsageError(f"--replay {p}: directory is not writable")
    return p


def run_versions(fmt: str = "text", json_flag: bool = False) -> int:
    """List the torch_npu lines and builds the op data covers (every one is a valid --from/--to)."""
    doc = render.versions_doc()
    fmt = output_format(fmt, json_flag)
    sys.stdout.write(json.dumps(doc, indent=2) + "\n" if fmt == "json" else
                     render.versions_md(doc) if fmt == "md" else render.versions_text(doc))
    return 0
