"""Version-matrix checks: the installed CANN, driver, torch, torch_npu and Python judged
against the official version tables (compat_matrix), each verdict with its source row.

They complement the same-release and host-list checks (python.torch_npu_match,
toolkit.driver_compat): those read what the files say about each other, these read what
the vendor tables say. compat_matrix verdicts map to statuses as
compatible -> ok, not_recommended / unknown -> warn, incompatible -> fail.
"""
from __future__ import annotations

from typing import Any, Dict, List, Optional, Sequence

from ..chips import chip_family
from ..model import Evidence, Fix, Status
from .base import Context, Result, check, skip

_STATUS = {"compatible": Status.OK, "not_recommended": Status.WARN, "unknown": Status.WARN,
           "incompatible": Status.FAIL}


ALL_COMPONENTS = ("chip", "driver", "firmware", "cann", "python", "torch", "torch_npu")


def host_stack(ctx: Context, components: Sequence[str]) -> Dict[str, str]:
    """The versions the facts hold for this host, as compat_matrix components."""
    return stack_from_facts(ctx.facts, components)


def stack_from_facts(facts: Any, components: Sequence[str] = ALL_COMPONENTS) -> Dict[str, str]:
    """{component: version} from a Facts object; missing or unreadable facts are left out,
    and only the facts behind ``components`` are touched (npu-smi and the Python probe are
    slow). Also used by `ascend-doctor compat` with no flags."""
    want = set(components)
    out: Dict[str, str] = {}
    if "driver" in want:
        drv = facts.driver()
        if drv.ok:
            out["driver"] = drv.value.version
    if "firmware" in want:
        fw = facts.firmware()
        if fw.ok:
            out["firmware"] = fw.value.version
    if "cann" in want:
        active = facts.toolkit().active
        if active is not None and active.info is not None:
            out["cann"] = active.info.version
    if "chip" in want:
        chip = chip_from_facts(facts)
        if chip:
            out["chip"] = chip
    if want & {"python", "torch", "torch_npu"}:
        py = facts.python_stack()
        if py.python and "python" in want:
            out["python"] = py.python
        for pkg in ("torch", "torch_npu"):
            v = py.version_of(pkg)
            if v and pkg in want:
                out[pkg] = v
    return out


def chip_from_facts(facts: Any) -> Optional[str]:
    """The chip family of the NPUs npu-smi lists (only when they are all of one family)."""
    info = facts.npu_smi().info
    if info is None or not info.chips:
        return None

    fams = set()
    for chip in info.chips:
        fam = chip_family(chip.name)
        if fam is None:
            return None
        fams.add(fam.family)
    return fams.pop() if len(fams) == 1 else None


def _safe_evaluate(stack: Dict[str, str]):
    """evaluate(), leaving out components whose version the grammar cannot read."""
    from compat_matrix import evaluate
    from compat_matrix.errors import CompatError

    skipped: List[str] = []
    usable = dict(stack)
    while True:
        try:
            return evaluate(usable), skipped
        except CompatError as exc:
            bad = next((k for k, v in usable.items() if _bad(k, v)), None)
            if bad is None:
                raise
            skipped.append("%s %r: %s" % (bad, usable.pop(bad), exc))


def _bad(component: str, value: str) -> bool:
    from compat_matrix.chips import try_chip_family
    from compat_matrix.versions import try_parse_version

    if component == "chip":
        return try_chip_family(value) is None
    return try_parse_version(value, component) is None


def _result(pair, summary: str, fix: Fix, details: List[str], data: Dict[str, Any]) -> Result:
    status = _STATUS[pair.verdict]
    return Result(status, summary, category="version_mismatch" if status != Status.OK else None,
                  evidence=Evidence(found=pair.found, required=pair.required, source=pair.source),
                  fix=fix if status != Status.OK else Fix(), details=details, data=data)


def _summary(pair) -> str:
    if pair.verdict == "compatible":
        return pair.reason
    if pair.verdict == "unknown":
        return "not covered by the version tables: " + pair.reason
    if pair.verdict == "not_recommended":
        return "works by the tables but not recommended: " + pair.reason
    return pair.reason


@check("python.cann_match", "CANN and torch_npu match the version tables", "python",
       category="version_mismatch", requires=("python.packages",))
def cann_match(ctx: Context) -> Result:
    stack = host_stack(ctx, ("cann", "torch", "torch_npu"))
    if "torch_npu" not in stack:
        return skip("torch_npu is not installed in the target Python")
    if "cann" not in stack:
        return skip("no CANN toolkit install record to compare with")
    rep, skipped = _safe_evaluate({k: stack[k] for k in ("cann", "torch_npu") if k in stack})
    pair = rep.pair("cann", "torch_npu")
    if pair is None:
        return skip("cannot read the versions: " + "; ".join(skipped))
    fix = _fix_cann_torch_npu(stack) if pair.verdict != "compatible" else Fix()
    return _result(pair, _summary(pair), fix, rep.notes, {"pairs": [p.to_json() for p in rep.pairs]})


def _fix_cann_torch_npu(stack: Dict[str, str]) -> Fix:
    from compat_matrix import suggest
    from compat_matrix.errors import CompatError

    cann = stack["cann"]
    cmds: List[str] = []
    try:
        same_torch = suggest({"cann": cann, "torch": stack["torch"]}) if "torch" in stack else []
        any_torch = suggest({"cann": cann})
    except CompatError:
        same_torch, any_torch = [], []
    built_same = [s for s in same_torch if s.pairing == "built_for"] or same_torch
    built_any = [s for s in any_torch if s.pairing == "built_for"] or any_torch
    if built_same:
        cmds.append("pip install torch-npu==%s" % built_same[0].components["torch_npu"])
        text = "Install the torch_npu build for your torch %s whose release line supports CANN %s." % (stack.get("torch"), cann)
    elif built_any:
        s = built_any[0]
        cmds.append("pip install torch==%s torch-npu==%s" % (s.components["torch"], s.components["torch_npu"]))
        text = ("No torch_npu for torch %s supports CANN %s: move to torch %s with torch_npu %s, or install the "
                "CANN release your torch_npu is made for." % (stack.get("torch"), cann, s.components["torch"],
                                                               s.components["torch_npu"]))
    else:
        text = "No table pairs CANN %s with a torch_npu build; list the supported stacks." % cann
    cmds.append("ascend-doctor compat --cann %s --suggest" % cann)
    return Fix(text, cmds)


# one root cause, one failure: when the files already show torch and torch_npu apart
# (python.torch_npu_match) or the toolkit refusing the driver (toolkit.driver_compat),
# the matrix check that would say the same is skipped
@check("python.stack_matrix", "torch, torch_npu and Python match the version tables", "python",
       category="version_mismatch", requires=("python.packages", "python.torch_npu_match"))
def stack_matrix(ctx: Context) -> Result:
    stack = host_stack(ctx, ("python", "torch", "torch_npu"))
    wanted = dict(stack)
    if len(wanted) < 2 or ("torch" not in wanted and "torch_npu" not in wanted):
        return skip("needs Python and torch or torch_npu")
    rep, skipped = _safe_evaluate(wanted)
    if not rep.pairs:
        return skip("nothing the tables can judge" + (": " + "; ".join(skipped) if skipped else ""))
    order = {"incompatible": 0, "not_recommended": 1, "unknown": 2, "compatible": 3}
    worst = sorted(rep.pairs, key=lambda p: order[p.verdict])[0]
    details = ["%s ~ %s: %s - %s" % (p.a, p.b, p.verdict, p.reason) for p in rep.pairs] + rep.notes + skipped
    if worst.verdict == "compatible":
        summary = "%s (%d pairs checked)" % ("; ".join(sorted({p.found for p in rep.pairs})), len(rep.pairs))
    else:
        summary = _summary(worst)
    return _result(worst, summary, _fix_stack(worst, stack), details, {"pairs": [p.to_json() for p in rep.pairs]})


def _fix_stack(pair, stack: Dict[str, str]) -> Fix:
    cmds: List[str] = []
    if {pair.a, pair.b} == {"torch", "torch_npu"} and pair.required and pair.required.startswith("torch "):
        cmds.append("pip install torch==%s" % pair.required.split(" ", 1)[1])
        text = "Install the PyTorch release torch_npu is built for (or the torch_npu built for your torch)."
    elif "python" in (pair.a, pair.b):
        text = "Use a Python the wheels exist for (%s)." % (pair.required or "see the tables")
    else:
        text = "Pick a stack the tables support."
    if "torch" in stack:
        cmds.append("ascend-doctor compat --torch %s --suggest" % stack["torch"].split("+")[0])
    return Fix(text, cmds)


@check("toolkit.hdk_match", "CANN and NPU driver match the release notes", "toolkit",
       category="version_mismatch", requires=("toolkit.installed", "driver.installed", "toolkit.driver_compat"))
def hdk_match(ctx: Context) -> Result:
    stack = host_stack(ctx, ("cann", "driver", "chip"))
    if "cann" not in stack or "driver" not in stack:
        return skip("needs the CANN toolkit record and the driver version.info")
    want = {k: stack[k] for k in ("cann", "driver", "chip") if k in stack}
    rep, skipped = _safe_evaluate(want)
    pair = rep.pair("cann", "driver")
    if pair is None:
        return skip("cannot read the versions: " + "; ".join(skipped))
    if pair.verdict == "unknown":
        prior = ctx.results.get("toolkit.driver_compat")
        if prior is not None and prior.status == Status.OK:
            # the tables are silent, and the toolkit's own compatible_version takes the driver
            return Result(Status.OK, "the version tables do not cover this pair (%s); the toolkit's own "
                          "compatible_version accepts the driver" % pair.reason,
                          evidence=Evidence(found=pair.found, required=pair.required, source=pair.source),
                          details=rep.notes + skipped, data={"pairs": [p.to_json() for p in rep.pairs]})
    cmds = ["ascend-doctor compat --cann %s%s --suggest" % (stack["cann"], " --chip " + stack["chip"] if "chip" in stack else "")]
    fix = Fix("Move the NPU driver and firmware to an HDK release this CANN supports (on an installed host: firmware "
              "first, then driver, then reboot), or install a CANN release that supports this driver.", cmds)
    return _result(pair, _summary(pair), fix, rep.notes + skipped, {"pairs": [p.to_json() for p in rep.pairs]})
