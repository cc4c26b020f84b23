"""Run a flow: answer each step from the evidence, stop at the first confirmed cause.

A step's verdict is ``confirmed`` (its evidence names a cause: the flow ends there),
``ruled_out`` (the evidence was read and shows no such cause), ``inconclusive`` (the
evidence could not decide: a check blocked by another one, a log without the message) or
``not_run`` (the input it needs was not given: the step says what to collect and the exact
command). ``next`` is where the flow goes from there: the step's own ``next``, or for a
check blocked by a check of a later step, that step (the blocker is the better lead).
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Tuple

from ..model import Status
from .evidence import Evidence
from .model import Flow, Step

FAILING = (Status.FAIL, Status.TIMEOUT)


@dataclass
class StepResult:
    id: str
    question: str
    ran: str
    found: str
    verdict: str
    next: Optional[str] = None
    means: str = ""
    collect: Optional[str] = None
    command: Optional[str] = None
    cause: Optional[Dict[str, Any]] = None
    jump: Optional[str] = None  # a step to go to instead of the following one

    def to_json(self) -> Dict[str, Any]:
        out: Dict[str, Any] = {"id": self.id, "question": self.question, "ran": self.ran, "found": self.found,
                               "verdict": self.verdict, "next": self.next, "means": self.means}
        if self.verdict == "not_run":
            out["collect"] = self.collect
            out["command"] = self.command
        return out


@dataclass
class FlowResult:
    flow: Flow
    steps: List[StepResult] = field(default_factory=list)
    cause: Optional[Dict[str, Any]] = None
    left: List[Dict[str, Any]] = field(default_factory=list)


def _fix(raw: Any) -> Dict[str, Any]:
    if isinstance(raw, dict):
        return {"text": str(raw.get("text") or ""), "commands": [str(c) for c in raw.get("commands") or []]}
    return {"text": "", "commands": []}


def _short(text: str, limit: int = 240) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


# ---------------------------------------------------------------------- step kinds
def _checks(step: Step, ev: Evidence, flow: Flow) -> StepResult:
    findings = ev.findings()
    ran = "check " + ", ".join(step.checks)
    res = StepResult(step.id, step.question, ran, "", "ruled_out")
    present = [findings[c] for c in step.checks if c in findings]
    failing = [f for f in present if f.status in FAILING]
    if failing:
        f = failing[0]
        res.verdict = "confirmed"
        res.found = f"{f.id} {f.status.value}: {_short(f.summary)}"
        res.cause = {"category": f.category or "other", "summary": f.summary, "fix": f.fix.to_json(),
                     "step": step.id, "evidence": {"check": f.id, "status": f.status.value,
                                                   **f.evidence.to_json()}}
        return res
    blocked = [(f, f.data.get("blocked_by")) for f in present if f.status == Status.SKIP and f.data.get("blocked_by")]
    crashed = [f for f in present if f.status == Status.ERROR]
    judged = [f for f in present if f.status in (Status.OK, Status.WARN)]
    parts = [f"{f.id} {f.status.value}" + (f": {_short(f.summary, 120)}" if f.status == Status.WARN else "")
             for f in judged]
    if blocked or crashed:
        res.verdict = "inconclusive"
        for f, by in blocked:
            prior = findings.get(by)
            parts.append(f"{f.id} not judged: needs {by}" + (f" ({prior.status.value})" if prior else ""))
            owner = next((s.id for s in flow.steps if by in s.checks), None)
            if owner is not None and flow.index(owner) > flow.index(step.id) and res.jump is None:
                res.jump = owner
        for f in crashed:
            parts.append(f"{f.id} could not run: {_short(f.summary, 120)}")
    elif not judged:
        skipped = [f for f in present if f.status == Status.SKIP]
        parts = [f"{f.id}: {_short(f.summary, 120)}" for f in skipped] or ["none of these checks exists in this build"]
        res.found = "does not apply here: " + "; ".join(parts)
        return res
    res.found = "; ".join(parts)
    return res


def _not_run(step: Step, why: str) -> StepResult:
    return StepResult(step.id, step.question, "", why, "not_run", collect=step.collect, command=step.command)


def _triage(step: Step, ev: Evidence, flow: Flow) -> StepResult:
    doc = ev.triage()
    if doc is None:
        return _not_run(step, "no logs given (--logs)")
    stats = doc.get("stats") or {}
    res = StepResult(step.id, step.question, f"triage of {stats.get('files', 0)} file(s), {stats.get('lines', 0)} lines",
                     "", "ruled_out")
    incidents = doc.get("incidents") or []
    if not stats.get("files"):
        res.verdict = "inconclusive"
        res.found = "no readable log text in the inputs"
        return res
    if not incidents:
        res.found = "no incidents in the logs"
        return res
    first = incidents[0]
    if first.get("category") in step.categories:
        res.verdict = "confirmed"
        where = f" (rank {first['rank']})" if first.get("rank") is not None else ""
        res.found = f"root incident {first['category']}{where}: {_short(first.get('title', ''))}"
        ev0 = (first.get("evidence") or [{}])[0]
        title, root = first.get("title", "") or "", first.get("root_cause", "") or ""
        summary = root if root.startswith(title) else f"{title}: {root}" if root else title
        res.cause = {"category": first["category"], "summary": summary,
                     "fix": _fix(first.get("fix")), "step": step.id,
                     "evidence": {"file": ev0.get("file"), "line": ev0.get("line"), "text": _short(ev0.get("text", ""), 400)}}
        if first.get("rank") is not None:
            res.cause["rank"] = first["rank"]
        return res
    later = [i for i in incidents[1:] if i.get("category") in step.categories]
    if later:
        res.verdict = "inconclusive"
        res.found = (f"a {later[0]['category']} incident is in the logs, but the root incident is "
                     f"{first.get('category')}: {_short(first.get('title', ''), 120)}")
    else:
        res.found = f"{len(incidents)} incident(s), none {'/'.join(step.categories)}; root: {first.get('category')}: {_short(first.get('title', ''), 120)}"
    return res


def _oom(step: Step, ev: Evidence, flow: Flow) -> StepResult:
    got = ev.oom()
    if got is None:
        return _not_run(step, "no logs given (--logs)")
    facts, doc = got
    res = StepResult(step.id, step.question, f"oom analysis of {len(facts.files)} file(s)", "", "ruled_out")
    if doc is None:
        if step.retries and facts.retries:
            res.verdict = "confirmed"
            res.found = f"{facts.retries} cache flush(es) (the allocator went back to the driver), no out-of-memory"
            res.cause = {"category": step.category or "oom_fragmentation",
                         "summary": f"the caching allocator flushed its cache {facts.retries} time(s) and refilled it from the driver: each flush stalls the device",
                         "fix": {"text": "Keep the pool warm: pre-allocate the largest buffers at start-up, keep shapes in a few buckets, "
                                         "and turn on expandable segments so the pool grows without flushing.",
                                 "commands": ["export PYTORCH_NPU_ALLOC_CONF=expandable_segments:True"]},
                         "step": step.id}
            return res
        res.verdict = "inconclusive" if not step.retries else "ruled_out"
        res.found = ("no out-of-memory message in the logs" if not step.retries else "no cache flush and no out-of-memory in the logs")
        return res
    verdict = doc.get("verdict")
    res.found = f"verdict {verdict}: {_short(doc.get('title', ''))}"
    if verdict in step.verdicts:
        res.verdict = "confirmed"
        category = step.category or doc.get("category") or "other"
        res.cause = {"category": category, "summary": doc.get("title", ""), "fix": _fix(doc.get("fix")), "step": step.id,
                     "evidence": {"numbers": {k: v for k, v in (doc.get("numbers") or {}).items() if v is not None},
                                  "rule": (doc.get("rule") or {}).get("id")}}
    return res


def _finding_for(doc: Dict[str, Any], layers: Tuple[str, ...]) -> Optional[Dict[str, Any]]:
    for f in doc.get("findings") or []:
        if f.get("layer") in layers:
            return f
    return None


def _profile_numbers(doc: Dict[str, Any]) -> str:
    devices = doc.get("devices") or []
    if not devices:
        return "no device in the profile"
    parts = []
    for d in devices[:4]:
        label = f"rank {d['rank']}" if d.get("rank") is not None else f"device {d.get('device')}"
        nums = ", ".join(f"{k.replace('_pct', '')} {d[k]:.0f}%" for k in ("busy_pct", "copy_pct", "comm_pct")
                         if isinstance(d.get(k), (int, float)))
        parts.append(f"{label}: {nums}")
    more = f" (+{len(devices) - 4} more)" if len(devices) > 4 else ""
    return "; ".join(parts) + more


def _profile(step: Step, ev: Evidence, flow: Flow) -> StepResult:
    status, doc = ev.profile()
    if status == "none":
        return _not_run(step, "no profile given (--profile)")
    if status == "absent":
        return _not_run(step, doc)
    res = StepResult(step.id, step.question, f"profile of {', '.join(ev.profile_paths)}", "", "ruled_out")
    if status == "error":
        res.verdict = "inconclusive"
        res.found = f"the profile could not be read: {doc}"
        return res
    found = _finding_for(doc, step.layers)
    if found is not None:
        res.verdict = "confirmed"
        res.found = f"{found.get('layer')}: {_short(found.get('summary', ''))}"
        res.cause = {"category": "other", "layer": found.get("layer"), "finding": found.get("id"),
                     "summary": found.get("summary", ""), "fix": _fix(found.get("fix")) if isinstance(found.get("fix"), dict)
                     else {"text": str(found.get("fix") or ""), "commands": []},
                     "step": step.id, "evidence": found.get("evidence")}
        if doc.get("slowest_rank") is not None:
            res.cause["slowest_rank"] = doc["slowest_rank"]
        return res
    res.found = f"no {'/'.join(step.layers)} finding; {_profile_numbers(doc)}"
    return res


def _op_totals(doc: Dict[str, Any]) -> Dict[str, float]:
    totals: Dict[str, float] = {}
    for d in doc.get("devices") or []:
        for op in d.get("top_ops") or []:
            if isinstance(op.get("total_us"), (int, float)) and op.get("type"):
                totals[op["type"]] = totals.get(op["type"], 0.0) + float(op["total_us"])
    return totals


def _baseline(step: Step, ev: Evidence, flow: Flow) -> StepResult:
    status, base = ev.baseline()
    if status == "none":
        return _not_run(step, "no baseline given (--baseline)")
    if status == "absent":
        return _not_run(step, base)
    pstatus, new = ev.profile()
    if pstatus != "ok":
        return _not_run(step, "a baseline needs --profile of the run to compare")
    res = StepResult(step.id, step.question, "top operators of the profile against the baseline", "", "ruled_out")
    if status == "error":
        res.verdict = "inconclusive"
        res.found = f"the baseline could not be read: {base}"
        return res
    before, after = _op_totals(base), _op_totals(new)
    changes = sorted(((after[t] - before[t], t) for t in after if t in before and before[t] > 0), reverse=True)
    worst = next(((delta, t) for delta, t in changes if after[t] >= step.ratio * before[t]), None)
    if worst is None:
        res.found = f"{len(changes)} operator(s) in both; none {step.ratio:g}x slower"
        return res
    delta, op = worst
    ratio = after[op] / before[op]
    res.verdict = "confirmed"
    res.found = f"{op}: {before[op]:.0f} us -> {after[op]:.0f} us ({ratio:.1f}x)"
    res.cause = {"category": "other", "layer": "slow_path", "summary": f"{op} takes {ratio:.1f}x its baseline time "
                 f"({before[op]:.0f} us -> {after[op]:.0f} us): it runs on a slower implementation since the change",
                 "fix": {"text": f"Compare the {op} implementation of both releases (profile each with the same shapes); "
                                 "stay on or return to the release of the baseline until a release restores the fast path.",
                         "commands": []},
                 "step": step.id, "evidence": {"op": op, "base_us": before[op], "new_us": after[op]}}
    return res


_OP_PATTERNS = (
    re.compile(r"\b(npu::npu_[a-z0-9_]+|aten::[a-z0-9_]+(?:\.[A-Za-z0-9_]+)?)"),
    re.compile(r"(?<![\w:])(npu_[a-z0-9_]+)\b"),
    re.compile(r"operator '(?:aten::)?([a-z0-9_]+(?:\.[A-Za-z0-9_]+)?)'"),
)


def failing_op(doc: Optional[Dict[str, Any]]) -> Optional[str]:
    """The operator an unsupported-op incident names, as an op-support key."""
    if not doc:
        return None
    for inc in doc.get("incidents") or []:
        if inc.get("category") != "unsupported_op":
            continue
        texts = [inc.get("root_cause") or "", inc.get("title") or ""] + [e.get("text") or "" for e in inc.get("evidence") or []]
        for pattern in _OP_PATTERNS:
            for text in texts:
                m = pattern.search(text)
                if m:
                    name = m.group(1)
                    if "::" in name:
                        return name
                    return ("npu::" if name.startswith("npu_") else "aten::") + name
    return None


def _opcheck(step: Step, ev: Evidence, flow: Flow) -> StepResult:
    doc = ev.triage()
    if doc is None:
        return _not_run(step, "no logs given (--logs): the failing operator is not known")
    op = failing_op(doc)
    res = StepResult(step.id, step.question, "op-support tables of every torch_npu release", "", "inconclusive")
    if op is None:
        res.found = "no operator named in an unsupported-operator incident"
        return res
    version = ev.torch_npu_version()
    from compat_matrix import op_support

    if not version:
        res.found = f"{op}: the installed torch_npu version could not be read"
        return res
    try:
        here = op_support.load_release(version)
        branch = op_support.resolve(version).branch
    except ValueError as exc:
        res.found = f"{op}: {_short(str(exc), 160)}"
        return res
    now = here.status(op)
    if now.npu_kernel:
        res.verdict = "ruled_out"
        res.found = f"{op} has an NPU kernel in torch_npu {version} ({now.path}): the failure is in its inputs, not a missing op"
        return res
    releases = op_support.releases()
    order = [r.branch for r in releases]
    later = releases[order.index(branch) + 1:] if branch in order else releases
    first = next((r for r in later if op_support.load_branch(r.branch).status(op).npu_kernel), None)
    if first is None:
        res.verdict = "ruled_out"
        res.found = f"{op} has no NPU kernel in torch_npu {version} nor in any later release with data"
        return res
    res.verdict = "confirmed"
    res.found = f"{op}: no NPU kernel in torch_npu {version}; first in {first.wheel} (CANN {first.cann})"
    res.cause = {"category": "unsupported_op", "summary": f"{op} has no NPU kernel in the installed torch_npu {version}; "
                 f"torch_npu {first.wheel} (release {first.release}, CANN {first.cann}) has one",
                 "fix": {"text": f"Upgrade to torch_npu {first.wheel} with CANN {first.cann}, or replace the operator by one "
                                 "this release implements.",
                         "commands": [f"pip install torch-npu=={first.wheel}"]},
                 "step": step.id, "evidence": {"op": op, "installed": version, "supported_from": first.wheel}}
    return res


KIND = {"checks": _checks, "triage": _triage, "oom": _oom, "profile": _profile, "baseline": _baseline, "opcheck": _opcheck}


def run_flow(flow: Flow, ev: Evidence) -> FlowResult:
    out = FlowResult(flow)
    i = 0
    visited: List[str] = []
    while i < len(flow.steps):
        step = flow.steps[i]
        res = KIND[step.kind](step, ev, flow)
        res.means = step.means.get(res.verdict, "")
        visited.append(step.id)
        out.steps.append(res)
        if res.verdict == "confirmed":
            res.next = None
            out.cause = res.cause
            break
        target = res.jump or step.next
        j = flow.index(target) if target else i + 1
        res.next = flow.steps[j].id if j < len(flow.steps) else None
        i = j
    for res in out.steps:
        if res.verdict in ("inconclusive", "not_run"):
            item = {"id": res.id, "question": res.question, "verdict": res.verdict, "why": res.found}
            if res.verdict == "not_run":
                item["collect"], item["command"] = res.collect, res.command
            out.left.append(item)
    for step in flow.steps:
        if step.id not in visited:
            item = {"id": step.id, "question": step.question, "verdict": "not_reached",
                    "why": "the flow stopped at a confirmed cause" if out.cause else "skipped: an earlier step led past it"}
            if step.command:
                item["command"] = step.command
            out.left.append(item)
    return out


# ---------------------------------------------------------------------- the symptom
CATEGORY_SYMPTOM = {
    "driver_init": "init",
    "env_path": "init",
    "version_mismatch": "init",
    "device_busy_permission": "init",
    "oom_capacity": "oom",
    "oom_fragmentation": "oom",
    "unsupported_op": "unsupported_op",
    "aicore_exec": "unsupported_op",
    "hccl_comm": "multi_card",
}
LAYER_SYMPTOM = {"communication": "multi_card"}


def pick_symptom(ev: Evidence) -> Tuple[str, str]:
    """(symptom, why): from the logs' root incident, else the profile, else the host."""
    doc = ev.triage()
    if doc is not None:
        incidents = doc.get("incidents") or []
        if incidents:
            first = incidents[0]
            symptom = CATEGORY_SYMPTOM.get(first.get("category"))
            if str(first.get("kb") or "").startswith("oom."):
                symptom = "oom"  # memory held by another process is device_busy_permission, but the symptom is an OOM
            if symptom:
                return symptom, f"the logs' root incident is {first.get('category')}: {_short(first.get('title', ''), 120)}"
        oom = ev.oom()
        if oom is not None and oom[0].retries:
            return "jitter", f"the logs show {oom[0].retries} allocator cache flush(es) and no failure"
    status, prof = ev.profile()
    if status == "ok":
        first_f = (prof.get("findings") or [{}])[0] if prof.get("findings") else {}
        symptom = LAYER_SYMPTOM.get(first_f.get("layer"), "slow")
        why = (f"the profile's first finding is {first_f.get('layer')}" if first_f
               else "a profile was given and the logs name no failure")
        return symptom, why
    if status in ("absent", "error"):
        return "slow", "a profile was given and the logs name no failure"
    failing = [f for f in ev.check_run().findings if f.status in FAILING]
    if failing:
        f = failing[0]
        return CATEGORY_SYMPTOM.get(f.category or "", "init"), f"the host check {f.id} fails ({f.category})"
    if doc is not None:
        return "init", "the logs name no failure; the host is read first"
    return "init", "no logs or profile given; the host is read first"
