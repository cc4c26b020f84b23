"""Command line: one thin function per verb; the work happens in ascend_doctor.commands.

Exit codes: 0 clean, 1 findings at or above the threshold, 2 usage error,
3 internal error. Bad input is one line on stderr, never a traceback
(set ASCEND_DOCTOR_DEBUG=1 to see one for an internal error).
"""
from __future__ import annotations

import sys
from pathlib import Path
from typing import Callable, List, Optional

import click
import typer
from typer.core import TyperGroup

from . import __version__
from .commands.outcome import format_conflict, run_verb, stream_setup
from .opcheck.choices import DEFAULT_SOC, FailOn, Mode, Soc

app = typer.Typer(
    name="ascend-doctor",
    help="Environment doctor and diagnostics for Huawei Ascend NPUs (CANN, torch_npu, PyTorch). Read-only.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
    context_settings={"help_option_names": ["-h", "--help"]},
)

JSON_OPT = typer.Option(False, "--json", help="JSON on stdout (schema 1), nothing else on stdout.")
FORMAT_OPT = typer.Option("text", "--format", help="text | json | md", metavar="FORMAT")
ROOT_OPT = typer.Option(None, "--root", help="Read the machine as if DIR were /.", metavar="DIR")
ENV_FILE_OPT = typer.Option(None, "--env-file", help="The environment to judge: KEY=VALUE lines.", metavar="FILE")
TRUST_ROOT_OPT = typer.Option(False, "--trust-root", help="Let the --root tree's own programs (npu-smi, python3) run on this machine. Without it they never run: versions come from files.")
NPU_SMI_FILE_OPT = typer.Option(None, "--npu-smi", help="A saved `npu-smi info` output to read instead of running npu-smi.", metavar="FILE")


def _call(fn: Callable[..., int], *args, **kwargs) -> None:
    """Run a verb; turn bad input into one line + exit 2, a crash into one line + exit 3."""
    problem = format_conflict(*_format_given())
    if problem:
        sys.stderr.write(f"ascend-doctor: error: {problem}\n")
        sys.stderr.flush()
        raise typer.Exit(2)
    raise typer.Exit(run_verb(fn, *args, **kwargs))


def _format_given() -> tuple:
    """(--json given, the --format value when typed on the command line, else None) of the
    verb being run: every verb names the two options ``json_out`` and ``fmt``."""
    ctx = click.get_current_context(silent=True)
    if ctx is None:
        return False, None
    typed = ctx.get_parameter_source("fmt") == click.core.ParameterSource.COMMANDLINE
    return bool(ctx.params.get("json_out")), (ctx.params.get("fmt") if typed else None)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"ascend-doctor {__version__}")
        raise typer.Exit(0)


@app.callback()
def main_options(
    version: bool = typer.Option(False, "--version", callback=_version, is_eager=True, help="Print the version and exit."),
) -> None:
    """Environment doctor and diagnostics for Huawei Ascend NPUs."""


@app.command()
def check(
    root: Optional[Path] = ROOT_OPT,
    env_file: Optional[Path] = ENV_FILE_OPT,
    python: Optional[str] = typer.Option(None, "--python", help="Target interpreter (default: python3 on the judged PATH).", metavar="PATH"),
    tier: str = typer.Option("quick", "--tier", help="quick (read-only, < 1 s) | deep (also imports torch_npu and runs one op on NPU 0)."),
    expect_devices: Optional[int] = typer.Option(None, "--expect-devices", help="Fail unless this many NPUs are present.", metavar="N"),
    fail_on: str = typer.Option("fail", "--fail-on", help="Exit 1 on findings at or above: warn | fail."),
    sim: Optional[str] = typer.Option(None, "--sim", help="Check a bundled simulated host (python -m runtime_sim list).", metavar="SCENARIO"),
    only: Optional[List[str]] = typer.Option(None, "--only", help="Run only these check ids or groups (repeatable).", metavar="ID"),
    timeout: float = typer.Option(8.0, "--timeout", help="Seconds npu-smi may take before it is killed and reported.", metavar="SECONDS"),
    trust_root: bool = TRUST_ROOT_OPT,
    npu_smi: Optional[str] = NPU_SMI_FILE_OPT,
    verbose: int = typer.Option(0, "-v", "--verbose", count=True, help="Show evidence, timings and skipped checks."),
    json_out: bool = JSON_OPT,
    fmt: str = typer.Option("text", "--format", help="text | json | md | prometheus (gauges for node_exporter's textfile collector)"),
) -> None:
    """Check the driver, devices, CANN toolkit, environment and Python stack."""
    from .commands.check import run_check

    _call(
        run_check,
        root=root,
        env_file=env_file,
        python=python,
        tier=tier,
        expect_devices=expect_devices,
        fail_on=fail_on,
        sim=sim,
        fmt=fmt,
        json_flag=json_out,
        verbose=verbose,
        only=only,
        timeout=timeout,
        trust_root=trust_root,
        npu_smi=npu_smi,
    )


@app.command()
def triage(
    paths: List[str] = typer.Argument(..., help="Log files, directories (~/ascend/log trees, several ranks), .gz/.tar.gz, bundles, or - for stdin.", metavar="PATH..."),
    verbose: int = typer.Option(0, "-v", "--verbose", count=True, help="Every incident with all its evidence."),
    json_out: bool = JSON_OPT,
    fmt: str = typer.Option("text", "--format", help="text | json | md | html (one self-contained page: a timeline per rank)"),
) -> None:
    """Name the root cause of a failure from plogs, device logs and console output."""
    from .commands.triage import run_triage

    _call(run_triage, paths, "json" if json_out else fmt, verbose=verbose)


@app.command(context_settings={"ignore_unknown_options": True})
def explain(
    query: List[str] = typer.Argument(..., help="An error code (507035, EZ9999, ERR00100, 0x26, -8005, hccl:7) or a pasted error line; - reads a pasted block from stdin.", metavar="CODE|TEXT"),
    json_out: bool = JSON_OPT,
    fmt: str = FORMAT_OPT,
) -> None:
    """Explain an error code or a pasted error: meaning, likely cause, checks to run, fix."""
    from .commands.explain import run_explain

    _call(run_explain, " ".join(query), "json" if json_out else fmt)


@app.command()
def oom(
    text: Optional[List[str]] = typer.Argument(None, help="The out-of-memory line, quoted; - reads it from stdin.", metavar="TEXT"),
    file: Optional[List[str]] = typer.Option(None, "--file", "-f", help="Log file, directory or archive to scan (repeatable; - is stdin).", metavar="F"),
    stats: Optional[str] = typer.Option(None, "--stats", help="torch.npu.memory_stats() as JSON or printed dict, or a memory_summary() table.", metavar="F"),
    snapshot: Optional[str] = typer.Option(None, "--snapshot", help="Memory snapshot: _dump_snapshot() / OOM_SNAPSHOT_ENABLE pickle, or JSON.", metavar="F"),
    npu_smi: Optional[str] = typer.Option(None, "--npu-smi", help="Saved `npu-smi info` output: who else holds the device.", metavar="F"),
    device: Optional[int] = typer.Option(None, "--device", help="Device to analyse (default: the one in the message).", metavar="N"),
    pid: Optional[int] = typer.Option(None, "--pid", help="Pid of the failing process (to tell it from others in npu-smi).", metavar="PID"),
    torch_npu: Optional[str] = typer.Option(None, "--torch-npu", help="torch_npu version, to say which allocator settings it has (2.1.0.post13, 7.2.0).", metavar="V"),
    alloc_conf: Optional[str] = typer.Option(None, "--alloc-conf", help="PYTORCH_NPU_ALLOC_CONF the job ran with (default: what the log shows).", metavar="S"),
    json_out: bool = JSON_OPT,
    fmt: str = typer.Option("text", "--format", help="text | json | md | prometheus (verdict, fragmentation ratios, bytes) | html (with --snapshot: the pool's segments and blocks)"),
) -> None:
    """Out of memory: capacity, fragmentation of the caching pool, or memory held by someone else? With the fix.

    Also: `ascend-doctor oom simulate TRACE` (allocator what-if) and `ascend-doctor oom watch --stats F`
    (fragmentation ratio as Prometheus lines); -h after either shows its options.
    """
    from .commands.oom import SUBCOMMANDS, run_oom

    if text and text[0] in SUBCOMMANDS and len(text) > 1 and not (file or stats or snapshot or npu_smi):
        # reached only when the app is driven without main() (which dispatches these itself)
        extra = (["--json"] if json_out else []) + (["--format", fmt] if fmt != "text" else [])
        oom_tools(args=list(text) + extra, prog_name="ascend-doctor oom", standalone_mode=True)

    if fmt in ("prometheus", "html") and not json_out:
        _call(_oom_rendered, run_oom, fmt, " ".join(text) if text else None, files=file, stats=stats, snapshot=snapshot,
              npu_smi=npu_smi, device=device, pid=pid, torch_npu=torch_npu, alloc_conf=alloc_conf)
    _call(run_oom, " ".join(text) if text else None, files=file, stats=stats, snapshot=snapshot, npu_smi=npu_smi,
          device=device, pid=pid, torch_npu=torch_npu, alloc_conf=alloc_conf, fmt=fmt, json_flag=json_out)


def _oom_rendered(run_oom: Callable[..., int], fmt: str, text: Optional[str], **kwargs) -> int:
    """oom --format prometheus|html: the JSON analysis rendered as gauges or as a page (with
    the snapshot's segments and blocks drawn when --snapshot is given)."""
    import io
    import json

    buf = io.StringIO()
    code = run_oom(text, fmt="json", json_flag=True, out=buf, **kwargs)
    if not buf.getvalue().strip():
        return code
    doc = json.loads(buf.getvalue())
    if fmt == "prometheus":
        from .report.prometheus import render_oom

        sys.stdout.write(render_oom(doc))
        return code
    from .report.html import oom_html

    segments = None
    if kwargs.get("snapshot") and kwargs["snapshot"] != "-":  # stdin was read by the analysis
        from .memory.snapshot import load_snapshot

        segments = load_snapshot(kwargs["snapshot"], kwargs.get("device")).segments
    sys.stdout.write(oom_html(doc, segments))
    return code


@app.command()
def diagnose(
    symptom: Optional[str] = typer.Argument(None, help="init | oom | unsupported_op | slow | jitter | multi_card (default: picked from the logs, profile or host).", metavar="[SYMPTOM]"),
    root: Optional[Path] = ROOT_OPT,
    env_file: Optional[Path] = ENV_FILE_OPT,
    sim: Optional[str] = typer.Option(None, "--sim", help="Diagnose a bundled simulated host and its workload's logs (python -m runtime_sim list).", metavar="SCENARIO"),
    logs: Optional[List[str]] = typer.Option(None, "--logs", help="Log file or directory (plog tree, console output); repeatable.", metavar="PATH"),
    profile: Optional[List[str]] = typer.Option(None, "--profile", help="Profiling output (msprof PROF_* or torch_npu *_ascend_pt); repeatable.", metavar="DIR"),
    baseline: Optional[List[str]] = typer.Option(None, "--baseline", help="A baseline profile to compare --profile with (before an upgrade).", metavar="DIR"),
    timeout: float = typer.Option(8.0, "--timeout", help="Seconds npu-smi may take before it is killed and reported.", metavar="SECONDS"),
    json_out: bool = JSON_OPT,
    fmt: str = FORMAT_OPT,
) -> None:
    """Run the troubleshooting flow of a symptom; print each step, the cause and what is left."""
    from .commands.diagnose import run_diagnose

    _call(run_diagnose, symptom, root=root, env_file=env_file, sim=sim, logs=logs, profile=profile, baseline=baseline,
          timeout=timeout, fmt=fmt, json_flag=json_out)


oom_tools = typer.Typer(
    name="ascend-doctor oom",
    help="Allocator what-if and fragmentation monitoring (ascend-doctor oom TEXT analyses an out-of-memory).",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
    context_settings={"help_option_names": ["-h", "--help"]},
)


@oom_tools.command("simulate")
def oom_simulate(
    trace: str = typer.Argument(..., help="A runtime_sim trace name (training_varlen, llm_serving_kv_concat, video_diffusion), a trace JSON, or a memory snapshot with history (pickle or JSON).", metavar="TRACE"),
    conf: Optional[List[str]] = typer.Option(None, "--conf", help="A PYTORCH_NPU_ALLOC_CONF value to compare (repeatable; default: default, expandable_segments:True, max_split_size_mb, garbage_collection_threshold).", metavar="S"),
    release: Optional[str] = typer.Option(None, "--release", help="torch_npu release line whose allocator to simulate (5.0.0 ... 26.1.0, cuda; default 7.3.0).", metavar="LINE"),
    capacity: Optional[str] = typer.Option(None, "--capacity", help="Device memory (bytes or 64GiB); default: the trace's.", metavar="SIZE"),
    non_torch: Optional[str] = typer.Option(None, "--non-torch", help="Device memory held outside PyTorch (HCCL, runtime).", metavar="SIZE"),
    save_trace: Optional[str] = typer.Option(None, "--save-trace", help="Also write the events as a trace JSON.", metavar="FILE"),
    json_out: bool = JSON_OPT,
    fmt: str = FORMAT_OPT,
) -> None:
    """Replay an allocation trace under each allocator setting: peak reserved, stranded bytes, OOM or not."""
    from .commands.oom import run_simulate

    _call(run_simulate, trace, confs=conf, profile=release, capacity=capacity, non_torch=non_torch,
          save_trace=save_trace, fmt=fmt, json_flag=json_out)


@oom_tools.command("watch")
def oom_watch(
    stats: str = typer.Option(..., "--stats", help="torch.npu.memory_stats() saved as JSON or a printed dict (- is stdin).", metavar="F"),
    threshold: float = typer.Option(0.10, "--threshold", help="Fragmentation ratio (stranded / reserved) at which a restart is advised.", metavar="R"),
    pool: str = typer.Option("all", "--pool", help="all | large_pool | small_pool"),
    device: Optional[int] = typer.Option(None, "--device", help="Device whose statistics to read.", metavar="N"),
    label: Optional[List[str]] = typer.Option(None, "--label", help="Extra Prometheus label NAME=VALUE (repeatable).", metavar="NAME=VALUE"),
    output: Optional[str] = typer.Option(None, "--output", "-o", help="Also write the Prometheus text to this file, atomically (textfile collector).", metavar="FILE"),
    interval: Optional[float] = typer.Option(None, "--interval", help="Read the file again every SECONDS.", metavar="SECONDS"),
    count: Optional[int] = typer.Option(None, "--count", help="With --interval: stop after N readings.", metavar="N"),
    json_out: bool = JSON_OPT,
    fmt: str = typer.Option("prometheus", "--format", help="prometheus | text | json | md"),
) -> None:
    """memory_stats() -> fragmentation ratio and Prometheus text lines; exit 1 at or above the threshold."""
    from .commands.oom import run_watch

    _call(run_watch, stats, threshold=threshold, pool=pool, device=device, labels=label, output=output,
          interval=interval, count=count, fmt=fmt, json_flag=json_out)


class _OpcheckGroup(TyperGroup):
    """`opcheck MANIFEST ...`, the form before the sub-commands, is read as `opcheck compare MANIFEST ...`."""

    def resolve_command(self, ctx: click.Context, args: List[str]):  # type: ignore[override]
        if args and args[0] not in self.commands and args[0] not in ctx.help_option_names:
            import difflib

            near = difflib.get_close_matches(args[0], list(self.commands), n=1)
            if near and not Path(args[0]).exists():
                raise click.UsageError(f"no sub-command or manifest {args[0]!r}; did you mean `opcheck {near[0]}`?", ctx)
            args = ["compare", *args]
        return super().resolve_command(ctx, args)


opcheck_app = typer.Typer(
    name="opcheck",
    cls=_OpcheckGroup,
    help="Pre-upgrade operator check: record a model's aten ops on CPU (opcheck record), then compare two "
         "torch_npu/CANN versions (opcheck compare); opcheck versions lists the versions known. "
         "`opcheck MANIFEST ...` is short for `opcheck compare MANIFEST ...`.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
    context_settings={"help_option_names": ["-h", "--help"], "ignore_unknown_options": True},
)
app.add_typer(opcheck_app, name="opcheck")


@opcheck_app.command("record", context_settings={"allow_interspersed_args": False, "ignore_unknown_options": True})
def opcheck_record(
    program: List[str] = typer.Argument(..., help="The program, after --: python SCRIPT.py ARGS, SCRIPT.py ARGS, python -m MODULE ARGS or python -c CODE.", metavar="-- python SCRIPT.py ARGS..."),
    output: Optional[str] = typer.Option(None, "-o", "--output", help="Manifest file to write (default: <script>.ops.json here).", metavar="OPS.json"),
    mode: Mode = typer.Option(Mode.EAGER.value, "--mode", help="eager: real CPU tensors; fake: FakeTensor, no memory (large models); meta: the meta device."),
    timeout: float = typer.Option(3600.0, "--timeout", help="Stop the program after this many seconds.", metavar="SECONDS"),
    json_out: bool = JSON_OPT,
    fmt: str = FORMAT_OPT,
) -> None:
    """Run a Python program on the CPU and record the aten ops it calls into a manifest (needs torch)."""
    from .commands.opcheck import run_record

    _call(run_record, program, output=output, mode=mode.value, timeout=timeout, fmt=fmt, json_flag=json_out)


@opcheck_app.command("compare")
def opcheck_compare(
    manifest: str = typer.Argument(..., help="An op manifest written by `opcheck record`.", metavar="MANIFEST"),
    from_v: Optional[str] = typer.Option(None, "--from", help="Current torch_npu wheel, release line or CANN version (default: torch_npu of the target Python).", metavar="V"),
    to_v: Optional[str] = typer.Option(None, "--to", help="Target torch_npu wheel (2.7.1.post8), release line (26.1.0) or CANN version (9.1.0). Required.", metavar="V"),
    fail_on: FailOn = typer.Option(FailOn.UNSUPPORTED.value, "--fail-on", help="Exit 1 when an op used: unsupported (fails on the target) | fallback (also: runs on the CPU) | change (anything changes)."),
    show_all: bool = typer.Option(False, "--all", help="Also list every op with its status on both versions."),
    python: Optional[str] = typer.Option(None, "--python", help="Interpreter whose torch_npu is the default --from.", metavar="PATH"),
    replay: Optional[Path] = typer.Option(None, "--replay", help="Also run the ops on a simulated NPU at --to and write its logs (plog, console.log) to DIR (created if missing).", metavar="DIR"),
    cann: Optional[str] = typer.Option(None, "--cann", help="--replay: CANN of the simulated host (default: the one paired with --to).", metavar="V"),
    soc: Optional[Soc] = typer.Option(None, "--soc", help=f"--replay: chip of the simulated host (default {DEFAULT_SOC.value}): {', '.join(s.value for s in Soc)}.", metavar="SOC"),
    json_out: bool = JSON_OPT,
    fmt: str = FORMAT_OPT,
) -> None:
    """Judge a manifest's ops on two torch_npu/CANN versions: what breaks, what moves to the CPU, what to test."""
    from .commands.opcheck import run_compare

    _call(run_compare, manifest, from_v=from_v, to_v=to_v, fail_on=fail_on.value, show_all=show_all, python=python,
          fmt=fmt, json_flag=json_out, replay_dir=replay, cann=cann, soc=soc.value if soc else None)


@opcheck_app.command("versions")
def opcheck_versions(json_out: bool = JSON_OPT, fmt: str = FORMAT_OPT) -> None:
    """List the torch_npu lines and builds the op data covers (each one is a valid --from/--to)."""
    from .commands.opcheck import run_versions

    _call(run_versions, fmt=fmt, json_flag=json_out)


@app.command()
def compat(
    cann: Optional[str] = typer.Option(None, "--cann", help="CANN version, e.g. 8.0.RC1, 8.5.0.", metavar="V"),
    driver: Optional[str] = typer.Option(None, "--driver", help="NPU driver (HDK) version, e.g. 24.1.rc2.", metavar="V"),
    firmware: Optional[str] = typer.Option(None, "--firmware", help="NPU firmware version, e.g. 7.3.0.1.231.", metavar="V"),
    torch: Optional[str] = typer.Option(None, "--torch", help="PyTorch version, e.g. 2.4.0.", metavar="V"),
    torch_npu: Optional[str] = typer.Option(None, "--torch-npu", help="torch_npu wheel version, e.g. 2.4.0.post2.", metavar="V"),
    python: Optional[str] = typer.Option(None, "--python", help="Python version, e.g. 3.10.", metavar="V"),
    chip: Optional[str] = typer.Option(None, "--chip", help="Chip or product, e.g. 910B3, A3, 310P3, 'Atlas 350'.", metavar="C"),
    suggest: bool = typer.Option(False, "--suggest", help="List the complete supported stacks for what is given, newest first."),
    upgrade: bool = typer.Option(False, "--upgrade", help="Plan the moves from the host's stack to one with the given versions."),
    prerelease: bool = typer.Option(False, "--prerelease", "--all-builds", help="--suggest: also list pre-release, beta and hotfix builds and PyPI releases no CANN table lists."),
    root: Optional[Path] = ROOT_OPT,
    env_file: Optional[Path] = ENV_FILE_OPT,
    sim: Optional[str] = typer.Option(None, "--sim", help="Read a bundled simulated host (python -m runtime_sim list).", metavar="SCENARIO"),
    trust_root: bool = TRUST_ROOT_OPT,
    npu_smi: Optional[str] = NPU_SMI_FILE_OPT,
    json_out: bool = JSON_OPT,
    fmt: str = FORMAT_OPT,
) -> None:
    """Judge driver, firmware, CANN, torch, torch_npu and Python against the version tables (no flags: this host)."""
    from .commands.compat import run_compat

    _call(run_compat, cann=cann, driver=driver, firmware=firmware, torch=torch, torch_npu=torch_npu, python=python,
          chip=chip, suggest=suggest, upgrade=upgrade, prerelease=prerelease, root=root, env_file=env_file, sim=sim,
          trust_root=trust_root, npu_smi=npu_smi, fmt=fmt, json_flag=json_out)


@app.command()
def profile(
    paths: List[str] = typer.Argument(..., help="Profiling output: *_ascend_pt / PROF_* / cluster_analysis_output trees or their parent (several runs or ranks), or `compare BASE NEW`.", metavar="DIR...|compare BASE NEW"),
    verbose: int = typer.Option(0, "-v", "--verbose", count=True, help="Every device and finding."),
    json_out: bool = JSON_OPT,
    fmt: str = FORMAT_OPT,
) -> None:
    """Performance from msprof / torch_npu profiler output: busy share, gaps, copies, top ops, fusion, shapes, slow paths, communication."""
    from .commands.profile import run_profile

    _call(run_profile, paths, fmt=fmt, json_flag=json_out, verbose=verbose)


@app.command()
def bundle(
    output: Optional[str] = typer.Option(None, "-o", "--output", help="Archive to write (default: ascend-doctor-bundle-<time>.tar.gz here).", metavar="FILE.tar.gz"),
    root: Optional[Path] = ROOT_OPT,
    env_file: Optional[Path] = ENV_FILE_OPT,
    sim: Optional[str] = typer.Option(None, "--sim", help="Bundle a simulated host (a runtime scenario also runs its job).", metavar="SCENARIO"),
    logs: Optional[List[str]] = typer.Option(None, "--logs", help="Also bundle this console capture or log directory (repeatable).", metavar="PATH"),
    no_redact: bool = typer.Option(False, "--no-redact", help="Keep host names, addresses, user names, serials and secrets as found."),
    python: Optional[str] = typer.Option(None, "--python", help="Target interpreter (default: python3 on the judged PATH).", metavar="PATH"),
    timeout: float = typer.Option(8.0, "--timeout", help="Seconds npu-smi may take before it is killed and reported.", metavar="SECONDS"),
    trust_root: bool = TRUST_ROOT_OPT,
    json_out: bool = JSON_OPT,
    fmt: str = FORMAT_OPT,
) -> None:
    """One redacted .tar.gz for a bug report: check, compat, triage of the newest logs, the raw files read, a manifest and a Markdown summary."""
    from .commands.bundle import run_bundle

    _call(run_bundle, output=output, root=root, env_file=env_file, sim=sim, logs=logs, redact=not no_redact,
          python=python, timeout=timeout, trust_root=trust_root, fmt=fmt, json_flag=json_out)


@app.command()
def fleet(
    reports: List[str] = typer.Argument(..., help="Nodes' `check --json` files, bundles, or directories of them.", metavar="REPORT..."),
    verbose: int = typer.Option(0, "-v", "--verbose", count=True, help="Also each failing check's summary and the report file."),
    json_out: bool = JSON_OPT,
    fmt: str = FORMAT_OPT,
) -> None:
    """Many nodes: the majority stack, what differs on each node (driver, firmware, CANN, torch_npu, NPUs, health, checks), and which to fix first."""
    from .commands.fleet import run_fleet

    _call(run_fleet, reports, fmt=fmt, json_flag=json_out, verbose=verbose)


def main() -> None:
    stream_setup()
    argv = sys.argv[1:]
    try:
        if len(argv) >= 2 and argv[0] == "oom" and argv[1] in ("simulate", "watch"):
            code = _run(oom_tools, argv[1:], "ascend-doctor oom")  # sub-commands of oom; `oom TEXT` is unchanged
        else:
            code = _run(app, argv, None)
    except SystemExit:
        raise
    except Exception as exc:  # click itself failed (broken terminal, encoding)
        sys.stderr.write(f"ascend-doctor: internal error: {type(exc).__name__}: {exc}\n")
        sys.exit(3)
    sys.exit(code)


_NO_ARGS_HELP = getattr(click.exceptions, "NoArgsIsHelpError", ())  # click >= 8.2


def _run(typer_app: typer.Typer, args: List[str], prog_name: Optional[str]) -> int:
    """Run the command line; a usage error it finds (a value not among the choices, a missing
    argument, an unknown option) is one line and exit 2, as bad input is in every verb."""
    try:
        code = typer_app(args=args, prog_name=prog_name, standalone_mode=False)
    except _NO_ARGS_HELP as exc:  # a bare group: its help
        exc.show()
        return exc.exit_code
    except click.UsageError as exc:
        where = exc.ctx.command_path if exc.ctx is not None else (prog_name or "ascend-doctor")
        sys.stderr.write(f"ascend-doctor: error: {' '.join(exc.format_message().split())} (see {where} --help)\n")
        return 2
    except click.Abort:
        sys.stderr.write("ascend-doctor: interrupted\n")
        return 130
    except click.ClickException as exc:
        exc.show()
        return exc.exit_code
    return code if isinstance(code, int) else 0
