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
from typing import Any, Dict, List, Optional, TextIO, Tuple

from .. import __version__
from ..errors import UsageError
from ..flows.evidence import Evidence
from ..flows.model import SYMPTOMS, FlowError, load_flow
from ..flows.runner import pick_symptom, run_flow
from .common import check_timeout, make_host, output_format

MARK = {"confirmed": "✗", "ruled_out": "✓", "inconclusive": "?", "not_run": "-"}
LABEL = {"confirmed": "confirmed", "ruled_out": "ruled out", "inconclusive": "inconclusive", "not_run": "not run"}


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


def to_json(result, why: str, sim: Optional[str] = None) -> Dict[str, Any]:
    doc: Dict[str, Any] = {
        "schema": 1,
        "tool": {"name": "ascend-doctor", "version": __version__},
        "symptom": result.flow.symptom,
        "symptom_reason": why,
        "flow": result.flow.title,
        "steps": [s.to_json() for s in result.steps],
        "cause": result.cause,
        "ruled_out": [s.id for s in result.steps if s.verdict == "ruled_out"],
        "left": result.left,
    }
    if sim:
        doc["sim"] = sim
    return doc


def _wrap(label: str, text: str, width: int = 100) -> List[str]:
    import textwrap

    pad = " " * 6
    lines = textwrap.wrap(text, width=width - len(pad) - len(label)) or [""]
    return [pad + label + lines[0]] + [pad + " " * len(label) + ln for ln in lines[1:]]


def render_text(doc: Dict[str, Any]) -> str:
    lines = [f"diagnose: {doc['symptom']} -- {doc['flow']}", f"  why this flow: {doc['symptom_reason']}", ""]
    for n, s in enumerate(doc["steps"], 1):
        lines.append(f"  {n}. {MARK[s['verdict']]} {LABEL[s['verdict']]:<12} {s['id']}: {s['question']}")
        if s["ran"]:
            lines += _wrap("ran:   ", s["ran"])
        lines += _wrap("found: ", s["found"])
        if s.get("means"):
            lines += _wrap("means: ", s["means"])
        if s["verdict"] == "not_run":
            lines += _wrap("collect: ", s.get("collect") or "")
            lines += _wrap("run:     ", s.get("command") or "")
    lines.append("")
    cause = doc["cause"]
    if cause:
        lines += _wrap("", f"CAUSE ({cause['category']}{', ' + cause['layer'] if cause.get('layer') else ''}): {cause['summary']}")
        fix = cause.get("fix") or {}
        if fix.get("text"):
            lines += _wrap("fix: ", fix["text"])
        for cmd in fix.get("commands") or []:
            lines.append(f"        $ {cmd}")
    else:
        lines.append("      no cause confirmed.")
    if doc["ruled_out"]:
        lines.append(f"      ruled out: {', '.join(doc['ruled_out'])}")
    left = [i for i in doc["left"] if i["verdict"] != "not_reached"]
    if left:
        lines.append("      left open:")
        for item in left:
            tail = f" -> {item['command']}" if item.get("command") else ""
            lines.append(f"        {item['id']} ({item['verdict'].replace('_', ' ')}){tail}")
    not_reached = [i["id"] for i in doc["left"] if i["verdict"] == "not_reached"]
    if not_reached:
        lines.append(f"      not reached: {', '.join(not_reached)}")
    return "\n".join(lines) + "\n"


def _md(text: str) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def render_md(doc: Dict[str, Any]) -> str:
    lines = [f"## diagnose: {doc['symptom']}", "", f"{doc['flow']}. Why this flow: {_md(doc['symptom_reason'])}.", "",
             "| # | step | verdict | found | next |", "|---|---|---|---|---|"]
    for n, s in enumerate(doc["steps"], 1):
        found = s["found"] + (f" Collect: {s.get('collect')}; run `{s.get('command')}`" if s["verdict"] == "not_run" else "")
        lines.append(f"| {n} | {_md(s['id'])}: {_md(s['question'])} | {LABEL[s['verdict']]} | {_md(found)} | {_md(s['next'] or '')} |")
    lines.append("")
    cause = doc["cause"]
    if cause:
        lines.append(f"**Cause ({cause['category']})**: {_md(cause['summary'])}")
        fix = cause.get("fix") or {}
        if fix.get("text"):
            lines += ["", f"**Fix**: {_md(fix['text'])}"]
        if fix.get("commands"):
            lines += ["", "```sh"] + list(fix["commands"]) + ["```"]
    else:
        lines.append("No cause confirmed.")
    if doc["left"]:
        lines += ["", "Left: " + ", ".join(f"{i['id']} ({i['verdict'].replace('_', ' ')})" for i in doc["left"])]
    return "\n".join(lines) + "\n"
