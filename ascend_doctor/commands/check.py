"""`ascend-doctor check`: judge the environment, print findings, exit by --fail-on."""
from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import List, Optional

from ..checks.base import Options
from ..checks.runner import UnknownCheck, run_checks, selected_checks
from ..checks.stack import host_info
from ..errors import UsageError
from ..facts import open_input_file
from ..model import Finding, Status
from ..report import check_report, prometheus
from .common import check_timeout, make_host, output_format, target_python

FAIL_ON = {"fail": 2, "warn": 1}


def exit_code(findings: List[Finding], fail_on: str) -> int:
    threshold = FAIL_ON[fail_on]
    return 1 if any(f.status.rank >= threshold for f in findings if f.status != Status.SKIP) else 0


def run_check(
    root: Optional[Path] = None,
    env_file: Optional[Path] = None,
    python: Optional[str] = None,
    tier: str = "quick",
    expect_devices: Optional[int] = None,
    fail_on: str = "fail",
    sim: Optional[str] = None,
    fmt: str = "text",
    json_flag: bool = False,
    verbose: int = 0,
    only: Optional[List[str]] = None,
    timeout: float = 8.0,
    trust_root: bool = False,
    npu_smi: Optional[str] = None,
) -> int:
    fmt = "prometheus" if fmt == "prometheus" and not json_flag else output_format(fmt, json_flag)
    if tier not in ("quick", "deep"):
        raise UsageError(f"--tier {tier}: choose quick or deep")
    if fail_on not in FAIL_ON:
        raise UsageError(f"--fail-on {fail_on}: choose warn or fail")
    if expect_devices is not None and expect_devices < 0:
        raise UsageError("--expect-devices must be 0 or more")
    check_timeout(timeout)

    try:
        selected_checks(Options(tier=tier), only)
    except UnknownCheck as exc:
        raise UsageError(str(exc)) from None
    host = make_host(root, env_file, sim, trust_root=trust_root)
    python = target_python(host, python)
    if npu_smi:
        open_input_file(npu_smi, "--npu-smi").close()  # a bad path is a usage error now, not a finding
    options = Options(tier=tier, expect_devices=expect_devices, python=python, command_timeout=timeout,
                      npu_smi_file=npu_smi)
    progress = _progress_printer() if fmt == "text" and sys.stderr.isatty() else None
    run = run_checks(host, options, only=only, on_progress=progress)
    if progress:
        sys.stderr.write("\r\033[K")
        sys.stderr.flush()
    info = host_info(host, run.facts)
    if sim:
        info["sim"] = sim
    if not host.trusted:
        info["trusted"] = False
    if fmt == "json":
        sys.stdout.write(json.dumps(check_report.to_json(run.findings, info, run.duration_s), indent=2) + "\n")
    elif fmt == "prometheus":
        sys.stdout.write(prometheus.render(run.findings, info, run.duration_s))
    elif fmt == "md":
        sys.stdout.write(check_report.render_markdown(run.findings, info, run.duration_s))
    else:
        check_report.render_text(run.findings, info, run.duration_s, verbose=verbose)
    return exit_code(run.findings, fail_on)


def _progress_printer():
    def show(chk) -> None:
        sys.stderr.write(f"\r\033[Kchecking {chk.title} …")
        sys.stderr.flush()

    return show
