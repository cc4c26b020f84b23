"""Validation harness: every runtime_sim scenario through the doctor's real CLI, compared
with the scenario's ground truth. Prints a table (scenario, expected, found, verdict) and
fails on any miss or any extra failing finding.

- check: ``python -m ascend_doctor check --root DIR --env-file DIR/user.env --json``;
  the failing findings (fail / timeout / error) must be exactly the expected ones, with
  their categories. An expected check the doctor does not have at all is a failure (a
  scenario may only expect what the doctor reports); a crashed check (error) is always one.
- triage / oom: a scenario with a workload runs it; ``triage`` must name its category (and
  first failing rank), ``oom --file`` its verdict.
- diagnose: ``python -m ascend_doctor diagnose --sim NAME --json`` with no symptom must end at
  the ground-truth cause: the triage category of a scenario with a workload, else the
  category of its first expected failing check, else no cause (a healthy host, exit 0).
- KNOWN_DOCTOR_GAPS: mismatches reported to the lead as the doctor's fault. They are
  strict: when the doctor starts matching, the test fails until the entry is removed.
"""
from __future__ import annotations

import json
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Tuple


from runtime_sim.host import build
from runtime_sim.scenarios import Scenario, load_all

FAILING = ("fail", "timeout", "error")
CHECK_TIMEOUT = 60.0

KNOWN_DOCTOR_GAPS: Dict[str, str] = {
}


@dataclass
class Row:
    scenario: Scenario
    expected: Dict[str, Tuple[str, str]]
    found: Dict[str, Tuple[str, Optional[str]]] = field(default_factory=dict)
    known_ids: Tuple[str, ...] = ()
    problems: List[str] = field(default_factory=list)
    notes: List[str] = field(default_factory=list)
    seconds: float = 0.0
    build_seconds: float = 0.0
    diagnose: str = "-"

    @property
    def name(self) -> str:
        return self.scenario.name


def _doctor(*args: str, timeout: float = CHECK_TIMEOUT) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "ascend_doctor", *args], capture_output=True, text=True, timeout=timeout)


def _judge_check(row: Row, root: str, env_file: str) -> None:
    started = time.perf_counter()
    # --timeout 1: the hanging npu-smi scenario need not wait out the default 8 s
    proc = _doctor("check", "--root", root, "--trust-root", "--env-file", env_file, "--json", "--timeout", "1")
    row.seconds = time.perf_counter() - started
    try:
        report = json.loads(proc.stdout)
    except ValueError:
        row.problems.append(f"check printed no JSON (exit {proc.returncode}): {proc.stderr.strip()[-300:]}")
        return
    if report.get("schema") != 1:
        row.problems.append("check JSON lacks schema 1")
    _compare(row, report.get("findings", []), proc.returncode)


def _compare(row: Row, findings: List[dict], returncode: int) -> None:
    """The check findings against the scenario's expectation: problems go to ``row.problems``."""
    row.known_ids = tuple(f["id"] for f in findings)
    row.found = {f["id"]: (f["status"], f.get("category")) for f in findings if f["status"] in FAILING}
    judged = {fid: v for fid, v in row.expected.items() if fid in row.known_ids}
    if any(status == "fail" for status, _ in judged.values()) and returncode != 1:
        row.problems.append(f"exit status {returncode}, expected 1 (a failing finding)")
    for fid, (status, category) in row.expected.items():
        if fid not in row.known_ids:
            row.problems.append(f"expected {fid} {status}/{category}, but the doctor has no check {fid}")
            continue
        got = row.found.get(fid)
        if got is None:
            actual = next(f for f in findings if f["id"] == fid)
            row.problems.append(f"miss {fid}: expected {status}, doctor says {actual['status']}: {actual['summary'][:120]}")
        elif got != (status, category):
            row.problems.append(f"{fid}: expected {status}/{category}, found {got[0]}/{got[1]}")
    for fid, (status, category) in row.found.items():
        if fid not in row.expected:
            summary = next(f["summary"] for f in findings if f["id"] == fid)
            row.problems.append(f"extra {fid} {status}/{category}: {summary[:120]}")


def _judge_runtime(row: Row, dest) -> None:
    s = row.scenario
    if s.workload is None:
        return
    from runtime_sim.host import run

    result = run(s, dest)
    proc = _doctor("triage", str(result.log_dir), str(result.console_file), "--json")
    try:
        incidents = json.loads(proc.stdout).get("incidents", [])
    except ValueError:
        row.problems.append(f"triage printed no JSON (exit {proc.returncode}): {proc.stderr.strip()[-200:]}")
        incidents = None
    if incidents is not None:
        first = incidents[0] if incidents else {}
        if first.get("category") != s.expect.triage_category:
            row.problems.append(f"triage: first incident {first.get('category')}, expected {s.expect.triage_category}")
        if s.expect.first_failing_rank is not None and first.get("rank") != s.expect.first_failing_rank:
            row.problems.append(f"triage: first failing rank {first.get('rank')}, expected {s.expect.first_failing_rank}")
        row.notes.append(f"triage {first.get('category')}" + (f" rank {first.get('rank')}" if first.get("rank") is not None else ""))
    if s.expect.oom_verdict:
        proc = _doctor("oom", "--file", str(result.console_file), "--json")
        try:
            verdict = json.loads(proc.stdout).get("verdict")
        except ValueError:
            verdict = None
        if verdict != s.expect.oom_verdict:
            row.problems.append(f"oom: verdict {verdict}, expected {s.expect.oom_verdict}")
        row.notes.append(f"oom {verdict}")


def expected_cause(s: Scenario) -> Optional[str]:
    """The category ``diagnose`` must end at (None: no cause, a healthy host)."""
    if s.expect.triage_category:
        return s.expect.triage_category
    return s.expect.check[0].category if s.expect.check else None


def _judge_diagnose(row: Row) -> None:
    s = row.scenario
    proc = _doctor("diagnose", "--sim", s.name, "--json", "--timeout", "1")
    try:
        doc = json.loads(proc.stdout)
    except ValueError:
        row.problems.append(f"diagnose printed no JSON (exit {proc.returncode}): {proc.stderr.strip()[-300:]}")
        return
    cause = doc.get("cause")
    prof = getattr(s.expect, "profile", None)
    if prof is not None:  # a job that only ran slowly: diagnose must end at the profile's layer
        want_layer, found_layer = prof.layer, (cause or {}).get("layer")
        row.diagnose = f"{want_layer or 'none'} / {found_layer or 'none'}" + (f" @{cause['step']}" if cause else "")
        if found_layer != want_layer:
            path = ", ".join(f"{st['id']}={st['verdict']}" for st in doc.get("steps", []))
            row.problems.append(f"diagnose: ended at layer {found_layer}, expected {want_layer} (path: {path})")
        if proc.returncode != (1 if want_layer else 0):
            row.problems.append(f"diagnose: exit {proc.returncode}, expected {1 if want_layer else 0}")
        return
    found = cause.get("category") if cause else None
    want = expected_cause(s)
    row.diagnose = f"{want or 'none'} / {found or 'none'}" + (f" @{cause['step']}" if cause else "")
    if found != want:
        path = ", ".join(f"{st['id']}={st['verdict']}" for st in doc.get("steps", []))
        row.problems.append(f"diagnose: ended at {found}, expected {want} (path: {path})")
    if proc.returncode != (1 if want else 0):
        row.problems.append(f"diagnose: exit {proc.returncode}, expected {1 if want else 0}")


def _evaluate(scenario: Scenario, base) -> Row:
    row = Row(scenario, {f.id: (f.status, f.category) for f in scenario.expect.check})
    try:
        host = build(scenario, base / scenario.name)
        row.build_seconds = host.seconds
        _judge_check(row, str(host.root), str(host.env_file))
        _judge_runtime(row, base / (scenario.name + "-run"))
        _judge_diagnose(row)
    except Exception as exc:  # one broken scenario must not hide the others' results
        row.problems.append(f"harness error: {type(exc).__name__}: {exc}")
    return row


def _fmt(d: Dict[str, Tuple[str, Optional[str]]]) -> str:
    return ", ".join(f"{k}{'' if s == 'fail' else '=' + s}" for k, (s, _) in sorted(d.items())) or "-"


def _table(rows: List[Row]) -> str:
    head = ("scenario", "expected (check)", "found (check)", "build/check", "diagnose (expected / found @step)", "verdict")
    lines = []
    for r in rows:
        gap = r.name in KNOWN_DOCTOR_GAPS
        if r.problems:
            verdict = "known doctor gap" if gap else "MISMATCH"
        else:
            verdict = "ok"
        if r.notes:
            verdict += " [" + "; ".join(r.notes) + "]"
        lines.append((r.name, _fmt(r.expected), _fmt(r.found), f"{r.build_seconds * 1000:.0f}ms/{r.seconds:.1f}s",
                      r.diagnose, verdict))
    widths = [max(len(str(x[i])) for x in lines + [head]) for i in range(5)]
    out = ["  ".join(h.ljust(w) for h, w in zip(head, widths + [0]))]
    out += ["  ".join(str(c).ljust(w) for c, w in zip(line, widths + [0])).rstrip() for line in lines]
    for r in rows:
        for p in r.problems:
            out.append(f"  {r.name}: {p}")
    return "\n".join(out)


def test_every_scenario_against_the_doctor(tmp_path, capsys):
    scenarios = load_all()
    with ThreadPoolExecutor(max_workers=4) as pool:
        rows = list(pool.map(lambda s: _evaluate(s, tmp_path), scenarios))
    table = _table(rows)
    with capsys.disabled():
        sys.stdout.write("\n\nruntime_sim scenarios vs ascend-doctor\n" + table + "\n")
    unexpected = [f"{r.name}: {p}" for r in rows if r.name not in KNOWN_DOCTOR_GAPS for p in r.problems]
    now_fixed = [r.name for r in rows if r.name in KNOWN_DOCTOR_GAPS and not r.problems]
    assert not unexpected, "scenarios where the doctor disagrees with the ground truth:\n" + "\n".join(unexpected)
    assert not now_fixed, f"the doctor now matches {now_fixed}: remove them from KNOWN_DOCTOR_GAPS"


def test_an_expected_check_the_doctor_lacks_fails_the_scenario():
    """A scenario that expects a check id the doctor's report does not contain is a mismatch,
    not something to wait for."""
    scenario = next(s for s in load_all() if s.expect.check)
    row = Row(scenario, {f.id: (f.status, f.category) for f in scenario.expect.check})
    kept = [{"id": fid, "status": status, "category": category, "summary": "as expected"}
            for fid, (status, category) in row.expected.items()]
    _compare(row, kept, 1)
    assert row.problems == []
    missing = next(iter(row.expected))
    row = Row(scenario, dict(row.expected))
    _compare(row, [f for f in kept if f["id"] != missing], 1)
    assert any(f"the doctor has no check {missing}" in p for p in row.problems)


def test_sim_flag_runs_a_catalog_scenario():
    proc = _doctor("check", "--sim", "set_env_not_sourced", "--json")
    failing = {f["id"] for f in json.loads(proc.stdout)["findings"] if f["status"] in FAILING}
    assert failing == {"env.set_env"} and proc.returncode == 1
    bad = _doctor("check", "--sim", "no_such_scenario")
    assert bad.returncode == 2 and "unknown scenario" in bad.stderr and "Traceback" not in bad.stderr
