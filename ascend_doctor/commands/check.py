"""`ascend-doctor check`: judge the environment, print findings, exit by --fail-on."""
from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any, Dict, List, Optional

from ..checks.base import Options
from ..checks.runner import run_checks
from ..errors import UsageError
from ..host import Host
from ..model import Finding, Status
from ..report import check_report
from .common import check_timeout, make_host, output_format, target_python

FAIL_ON = {"fail": 2, "warn": 1}


def host_info(host: Host, facts) -> Dict[str, Any]:
    info: Dict[str, Any] = {
        "root": str(host.root),
        "arch": facts.arch() if facts else host.arch(),
        "container": facts.container() if facts else host.container(),
        "user": host.user.name,
    }
    if host.is_real:
        import socket

        info["hostname"] = socket.gethostname()
    if facts is not None:
        stack = known_stack(facts)
        if stack:
            info["stack"] = stack
    return info


# which fact each stack component comes from: only facts the run already gathered are used
_STACK_FACTS = {"driver": ("driver",), "firmware": ("firmware",), "cann": ("toolkit",), "chip": ("npu_smi",),
                "python": ("python_stack",), "torch": ("python_stack",), "torch_npu": ("python_stack",)}


def known_stack(facts) -> Dict[str, str]:
    """{component: version} of the judged stack, from the facts the checks gathered (no new
    command is run for it: a `check --only env` reports no npu-smi chip)."""
    from ..checks.compat_checks import stack_from_facts

    comps = [c for c, keys in _STACK_FACTS.items() if all(facts.known(k) for k in keys)]
    return stack_from_facts(facts, comps) if comps else {}


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
    from ..checks.runner import UnknownCheck, selected_checks

    try:
        selected_checks(Options(tier=tier), only)
    except UnknownCheck as exc:
        raise UsageError(str(exc)) from None
    host = make_host(root, env_file, sim, trust_root=trust_root)
    python = target_python(host, python)
    if npu_smi:
        from ..facts import open_input_file

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
        from ..report import prometheus

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
