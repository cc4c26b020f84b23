"""Deep tier: import torch_npu, ask for devices, run one small op on NPU 0.

Runs in the target interpreter, in a child process with a timeout. A failure is
explained through the knowledge base (the same rules triage uses for pasted errors).
"""
from __future__ import annotations

import shlex
from typing import Any, Optional

from ..facts import RUNTIME_TIMEOUT
from ..kb import load
from ..model import Evidence, Fix, Status
from .base import Context, Result, check, fail, ok, registry, skip, timed_out
from .environment import toolkit_commands
from .logs import log_root

IMPORT_CAUSES = ("env.set_env", "python.torch_npu_match", "toolkit.installed", "container.mounts", "driver.installed")
STEP_TITLES = {"import": "import torch_npu", "available": "torch.npu.is_available()", "device_count": "torch.npu.device_count()", "small_op": "a matmul on npu:0"}


def _explain(text: str) -> Optional[Any]:
    matches = load().match(text)
    return matches[0].entry if matches else None


def _quick_tier_cause(ctx: Context):
    """The first failed quick check about the driver, devices or container, if any."""
    for cid, res in ctx.results.items():
        if res.status == Status.FAIL and cid.split(".")[0] in ("container", "driver", "firmware", "devices", "npu_smi"):
            return cid, res
    return None


def _log_dir_here(ctx: Context) -> str:
    """The judged machine's CANN log directory, as a path of this machine (under --root, inside DIR)."""
    root = log_root(ctx)
    return shlex.quote(ctx.host.here(root)) if root else "~/ascend/log"


def _default_category(check_id: str) -> str:
    return next((c.category for c in registry() if c.id == check_id and c.category), "driver_init")


def _step_result(ctx: Context, name: str) -> Result:
    payload, res = ctx.facts.runtime_probe()
    if res is None:
        if not ctx.host.trusted:
            return skip("not run: the tree's python3 does not run on this machine without --trust-root")
        return skip("no target interpreter")
    if res.timed_out:
        return timed_out(f"the runtime probe did not finish within {RUNTIME_TIMEOUT:.0f} s (stuck in device init?)")
    steps = {s["step"]: s for s in (payload or {}).get("steps", [])}
    if payload is None:
        return fail(f"the runtime probe crashed: {(res.output.splitlines() or ['no output'])[-1][:300]}", details=res.output.splitlines()[-15:])
    step = steps.get(name)
    if step is None:
        return skip("an earlier step failed")
    if step["ok"]:
        if name == "available" and not step.get("value"):
            cause = _quick_tier_cause(ctx)
            if cause is not None:
                cid, res = cause
                return fail(
                    f"torch.npu.is_available() is False, as {cid} predicts ({res.summary})",
                    category=res.category or _default_category(cid),
                    evidence=Evidence(found="is_available() == False", required="True", source=f"{cid} above"),
                    fix=res.fix,
                )
            return fail(
                "torch.npu.is_available() is False: torch_npu loaded but sees no NPU, and no quick check explains it",
                category="driver_init",
                evidence=Evidence(found="is_available() == False", required="True"),
                fix=Fix(
                    "Look at what the runtime logged when torch_npu tried to open the device.",
                    [f"ascend-doctor triage {_log_dir_here(ctx)}", "ASCEND_GLOBAL_LOG_LEVEL=1 python -c \"import torch, torch_npu; print(torch.npu.is_available())\""],
                ),
            )
        return ok(f"{STEP_TITLES[name]}: {step.get('value')}")
    error = step.get("error", "")
    first = error.strip().splitlines()[-1] if error.strip() else step.get("error_type", "error")
    entry = _explain(error)
    fix = Fix()
    category = "other"
    kb = None
    if entry is not None:
        category, kb = entry.category, entry.id
        fix = Fix(getattr(entry.fix, "text", "") or "", toolkit_commands(ctx, getattr(entry.fix, "commands", []) or []))
    predicted = ""
    if name == "import":
        # the quick tier may already have named the reason (CANN not on the path, torch and
        # torch_npu apart): say so, so the two findings read as one cause and its proof
        cid = next((c for c in IMPORT_CAUSES if ctx.results.get(c) is not None and ctx.results[c].status == Status.FAIL), None)
        if cid is not None:
            predicted = f" (as {cid} predicts)"
    return fail(
        f"{STEP_TITLES[name]} failed{predicted}: {first[:300]}",
        category=category,
        kb=kb,
        evidence=Evidence(found=first[:300], required=f"{STEP_TITLES[name]} succeeds"),
        fix=fix,
        details=error.splitlines()[-15:],
    )


@check("runtime.import", "import torch_npu", "runtime", tier="deep", requires=("python.packages",), timeout=RUNTIME_TIMEOUT + 10)
def import_torch_npu(ctx: Context) -> Result:
    return _step_result(ctx, "import")


@check("runtime.available", "NPU visible to torch_npu", "runtime", tier="deep", requires=("runtime.import",), timeout=RUNTIME_TIMEOUT + 10)
def available(ctx: Context) -> Result:
    return _step_result(ctx, "available")


@check("runtime.small_op", "Small op on NPU 0", "runtime", tier="deep", requires=("runtime.available",), timeout=RUNTIME_TIMEOUT + 10)
def small_op(ctx: Context) -> Result:
    return _step_result(ctx, "small_op")
