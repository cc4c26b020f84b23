"""``ascend-doctor diagnose [SYMPTOM]``: run the troubleshooting flow of a symptom.

The symptom (init, oom, unsupported_op, slow, jitter, multi_card) is given, or picked from
the logs' root incident, else from the profile, else from the host's checks. The flow
(``ascend_doctor/flows/data/<symptom>.yaml``) is run step by step until a step confirms a
cause; the output is the path it took: each step, what it found, what is ruled out, what
is left (with what to collect and the command for each step that could not run).

``--sim SCENARIO`` builds the scenario's host and, when it has a workload, runs it and
reads its logs (plog tree and console output) like ``--logs``.

Exit codes: 0 no cause found, 1 a cause confirmed, 2 bad input, 3 internal error.
"""
from __future__ import annotations

import atexit
import json
import shutil
import sys
import tempfile
from pathlib import Path
from typing import List, Optional, TextIO, Tuple

from ..errors import UsageError
from ..flows.evidence import Evidence
from ..flows.model import SYMPTOMS, FlowError, load_flow
from ..flows.render import render_md, render_text, to_json
from ..flows.runner import pick_symptom, run_flow
from .common import check_timeout, make_host, output_format



def _sim(scenario: str) -> Tuple[Path, Path, List[str], List[str]]:
    """Materialise a scenario: (root, env file, log paths and profile paths of its workload run)."""
    from runtime_sim.host import BuildError
    from runtime_sim.host import build as sim_build
    from runtime_sim.host import run as sim_run
    from runtime_sim.scenarios import load, names

    name = scenario.replace("-", "_")
    if name not in names():
        raise UsageError(f"--sim {scenario}: unknown scenario; choose one of {', '.join(names())}")
    tmp = Path(tempfile.mkdtemp(prefix="ascend-diag-"))
    atexit.register(shutil.rmtree, tmp, True)
    spec = load(name)
    try:
        if spec.workload is not None:
            result = sim_run(spec, tmp / "host")
            logs = [str(result.log_dir), str(result.console_file)]
            return Path(result.host.root), Path(result.host.env_file), logs, _sim_profiles(result)
        built = sim_build(spec, tmp / "host")
    except (BuildError, KeyError, ValueError, LookupError) as exc:
        raise UsageError(f"--sim {scenario}: {str(exc).strip(chr(39))}") from None
    return Path(built.root), Path(built.env_file), [], []


def _sim_profiles(result) -> List[str]:
    """Profiling output a scenario's workload wrote (scenarios with a performance cause)."""
    workload = getattr(result, "workload", None)
    facts = getattr(workload, "facts", None) or {}
    for holder in (result, workload, facts):
        for attr in ("profile_dir", "profile_dirs", "profile"):
            value = holder.get(attr) if isinstance(holder, dict) else getattr(holder, attr, None)
            if isinstance(value, (str, Path)) and Path(value).exists():
                return [str(value)]
            if isinstance(value, (list, tuple)) and value and all(isinstance(x, (str, Path)) for x in value):
                return [str(x) for x in value]
    return []


def _exists(paths: List[str], option: str) -> None:
    for p in paths:
        if p != "-" and not Path(p).exists():
            raise UsageError(f"{option} {p}: no such file or directory")


def run_diagnose(
    symptom: Optional[str] = None,
    root: Optional[Path] = None,
    env_file: Optional[Path] = None,
    sim: Optional[str] = None,
    logs: Optional[List[str]] = None,
    profile: Optional[List[str]] = None,
    baseline: Optional[List[str]] = None,
    timeout: float = 8.0,
    fmt: str = "text",
    json_flag: bool = False,
    out: Optional[TextIO] = None,
) -> int:
    out = out or sys.stdout
    fmt = output_format(fmt, json_flag)
    if symptom is not None:
        symptom = symptom.replace("-", "_")
        if symptom not in SYMPTOMS:
            raise UsageError(f"unknown symptom {symptom!r}: choose one of {', '.join(SYMPTOMS)}")
    if sim and (root or env_file):
        raise UsageError("--sim builds its own host: do not combine it with --root or --env-file")
    check_timeout(timeout)
    logs, profile, baseline = list(logs or []), list(profile or []), list(baseline or [])
    if "-" in logs:
        raise UsageError("--logs -: diagnose reads files and directories (save the output first)")
    _exists(logs, "--logs")
    _exists(profile, "--profile")
    _exists(baseline, "--baseline")
    if baseline and not profile:
        raise UsageError("--baseline needs --profile (the run to compare with the baseline)")
    if sim:
        root, env_file, sim_logs, sim_profile = _sim(sim)
        logs += sim_logs
        profile += sim_profile

    trusted = bool(sim)  # the doctor built that tree itself; a --root tree's programs do not run

    def host():
        return make_host(root, env_file, trust_root=trusted)

    ev = Evidence(host, logs, profile, baseline, timeout=timeout)
    if root is not None or env_file is not None:
        ev.host()  # bad --root / --env-file is bad input: say so before any step runs
    try:
        if symptom is None:
            symptom, why = pick_symptom(ev)
        else:
            why = "named on the command line"
        flow = load_flow(symptom)
    except FlowError as exc:
        raise UsageError(str(exc)) from None
    result = run_flow(flow, ev)
    doc = to_json(result, why, sim)
    if fmt == "json":
        out.write(json.dumps(doc, indent=2) + "\n")
    elif fmt == "md":
        out.write(render_md(doc))
    else:
        out.write(render_text(doc))
    return 1 if result.cause else 0
