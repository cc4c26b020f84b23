"""Run the registered checks against one Host and collect Findings.

Each check runs in its own daemon thread with a timeout, so a stuck check becomes a
``timeout`` finding and the run goes on; an exception becomes an ``error`` finding.
A check whose ``requires`` did not pass is skipped with the reason, which keeps one
root cause from being reported again by every check downstream of it.
"""
from __future__ import annotations

import threading
import time
import traceback
from dataclasses import dataclass, field
from typing import Callable, Dict, List, Optional

from ..facts import Facts
from ..host import Host
from ..model import Finding, Status
from .base import Check, Context, Options, Result, registry

QUICK_DEADLINE_S = 60.0
DEEP_DEADLINE_S = 240.0


@dataclass
class CheckRun:
    findings: List[Finding] = field(default_factory=list)
    duration_s: float = 0.0
    facts: Optional[Facts] = None


class UnknownCheck(ValueError):
    """An --only selector that names no check, group or id prefix."""


def _selects(selector: str, chk: Check) -> bool:
    return selector in (chk.id, chk.group) or chk.id.startswith(selector.rstrip(".") + ".")


def selected_checks(options: Options, only: Optional[List[str]] = None) -> List[Check]:
    """Checks of the tier, or those ``only`` names (ids, groups or id prefixes such as ``env``);
    a named deep check runs even in the quick tier, since asking for it by name is asking for it."""
    every = registry()
    if not only:
        return [c for c in every if c.tier == "quick" or options.tier == "deep"]
    unknown = [s for s in only if not any(_selects(s, c) for c in every)]
    if unknown:
        groups = sorted({c.group for c in every})
        raise UnknownCheck(
            f"--only {unknown[0]}: no such check; give an id ({', '.join(c.id for c in every[:4])}, ...), "
            f"an id prefix (env, devices) or a group ({', '.join(groups)}); `ascend-doctor check -v` lists the ids"
        )
    return [c for c in every if any(_selects(s, c) for s in only) and (c.tier == "quick" or options.tier == "deep" or c.id in only)]


def run_checks(
    host: Host,
    options: Options,
    only: Optional[List[str]] = None,
    deadline_s: Optional[float] = None,
    on_progress: Optional[Callable[[Check], None]] = None,
) -> CheckRun:
    start = time.monotonic()
    deadline = start + (deadline_s or (DEEP_DEADLINE_S if options.tier == "deep" else QUICK_DEADLINE_S))
    facts = Facts(host, python=options.python, command_timeout=options.command_timeout,
                  npu_smi_file=options.npu_smi_file)
    checks = selected_checks(options, only)
    ids = {c.id for c in checks}
    # the two slow facts start now, in parallel with the file checks
    facts.prefetch([k for k, cid in (("npu_smi", "npu_smi.info"), ("python_stack", "python.interpreter")) if cid in ids])
    ctx = Context(host=host, facts=facts, options=options)
    run = CheckRun(facts=facts)
    for chk in checks:
        if on_progress:
            on_progress(chk)
        t0 = time.monotonic()
        result = _run_one(chk, ctx, deadline)
        ctx.results[chk.id] = result
        run.findings.append(_finding(chk, result, (time.monotonic() - t0) * 1000.0))
    run.duration_s = time.monotonic() - start
    return run


def _run_one(chk: Check, ctx: Context, deadline: float) -> Result:
    # not applicable comes first: a check that has nothing to judge here is not "blocked"
    if chk.applies is not None:
        try:
            reason = chk.applies(ctx)
        except Exception as exc:  # a broken applicability test must not end the run
            return _crash(exc)
        if reason:
            return Result(Status.SKIP, f"skipped: {reason}")
    for dep in chk.requires:
        prior = ctx.results.get(dep)
        if prior is None:
            continue  # not selected in this run: do not block on it
        # a dependency that was merely not applicable does not block; one that failed,
        # or was itself blocked, does
        if prior.status in (Status.FAIL, Status.TIMEOUT, Status.ERROR) or prior.data.get("blocked_by"):
            return Result(Status.SKIP, f"skipped: needs {dep} ({prior.status.value})", data={"blocked_by": dep})
    remaining = deadline - time.monotonic()
    if remaining <= 0:
        return Result(Status.TIMEOUT, "not run: the global deadline was reached")
    # a check may wait for one command, so it gets at least that command's timeout
    return _call_with_timeout(chk, ctx, min(max(chk.timeout, ctx.options.command_timeout + 2), remaining))


def _call_with_timeout(chk: Check, ctx: Context, timeout: float) -> Result:
    box: Dict[str, Result] = {}

    def target() -> None:
        try:
            box["result"] = chk.run(ctx)
        except Exception as exc:
            box["result"] = _crash(exc)

    worker = threading.Thread(target=target, name=f"check-{chk.id}", daemon=True)
    worker.start()
    worker.join(timeout)
    if worker.is_alive():
        return Result(Status.TIMEOUT, f"no result within {timeout:.0f} s")
    return box.get("result") or Result(Status.ERROR, "check returned nothing")


def _crash(exc: BaseException) -> Result:
    message = str(exc).splitlines()[0] if str(exc) else ""
    return Result(
        Status.ERROR,
        f"check crashed: {type(exc).__name__}: {message}"[:300],
        details=traceback.format_exception(type(exc), exc, exc.__traceback__)[-6:],
    )


def _finding(chk: Check, result: Result, duration_ms: float) -> Finding:
    category = result.category
    if category is None and result.status in (Status.FAIL, Status.WARN, Status.TIMEOUT):
        category = chk.category
    return Finding(
        id=chk.id,
        title=chk.title,
        group=chk.group,
        status=result.status,
        summary=result.summary,
        category=category,
        evidence=result.evidence,
        fix=result.fix,
        kb=result.kb,
        duration_ms=duration_ms,
        details=result.details,
        data=result.data,
    )
