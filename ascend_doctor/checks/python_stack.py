"""The Python stack of the target interpreter (``--python``, default ``python3`` on PATH).

Versions come from package metadata read by a stdlib-only probe in a child process;
nothing is imported, so a broken torch_npu cannot hang or crash this check.
"""
from __future__ import annotations

from typing import Optional, Tuple

from compat_matrix.versions import parse_version, try_parse_version

from ..facts import PYTHON_TIMEOUT
from ..model import Evidence, Fix
from .base import Context, Result, check, fail, ok, skip, timed_out, warn

PT_COMPAT = "https://github.com/Ascend/pytorch/blob/master/COMPATIBILITY.en.md"


def _base(version: str) -> str:
    """``2.1.0.post10`` -> ``2.1.0``, ``2.1.0+cpu`` -> ``2.1.0`` (the one version grammar); as given when unreadable."""
    v = try_parse_version(version, "torch")
    return v.base.public.text if v is not None else version


@check("python.interpreter", "Target Python interpreter", "python", category="env_path", timeout=PYTHON_TIMEOUT + 5)
def interpreter(ctx: Context) -> Result:
    fact = ctx.facts.python_stack()
    if fact.interpreter is None:
        return skip("no python3 on the judged PATH (use --python to name one)")
    res = fact.result
    if res is not None and res.timed_out:
        return timed_out(f"{fact.interpreter} did not answer within {PYTHON_TIMEOUT:.0f} s", evidence=Evidence(found=fact.interpreter))
    if res is not None and res.not_found:
        return fail(f"{fact.interpreter}: no such interpreter", evidence=Evidence(found=fact.interpreter), fix=Fix("Name an existing interpreter.", ["ascend-doctor check --python $(command -v python3)"]))
    if res is not None and res.foreign and not ctx.host.is_real:
        return skip(f"the judged machine's {fact.interpreter} cannot run on this machine ({res.error})")
    if fact.static:
        if fact.error:
            return skip(f"{fact.error}; the tree's programs are not run without --trust-root")
        where = ", ".join(fact.searched[:3]) or "no site directory"
        version = f"Python {fact.python}" if fact.python else "Python (version not shown by the tree)"
        return ok(f"{version}, packages from the tree's dist-info metadata ({where}); {fact.interpreter or 'python3'} "
                  "not run: give --trust-root to run it",
                  evidence=Evidence(found=fact.python or "unknown", source=where),
                  data={"python": fact.python, "packages": fact.packages, "static": True})
    if fact.error:
        return fail(f"{fact.interpreter} failed to run: {fact.error}", evidence=Evidence(found=fact.error))
    summary = f"Python {fact.python} ({fact.interpreter})"
    outside = _outside_maintained(fact.python)
    if outside is not None:
        return warn(summary + ": " + outside[0], evidence=Evidence(found=fact.python, required=outside[1], source=outside[2]),
                    fix=Fix(f"Use a Python that maintained torch_npu builds ship wheels for ({outside[1]}).",
                            ["ascend-doctor compat --python %s --suggest" % outside[1].rsplit("-", 1)[-1]]))
    return ok(summary, evidence=Evidence(found=fact.python, source=fact.interpreter), data={"python": fact.python, "packages": fact.packages})


@check("python.packages", "PyTorch and torch_npu installed", "python", category="env_path", requires=("python.interpreter",))
def packages(ctx: Context) -> Result:
    fact = ctx.facts.python_stack()
    if fact.error or (fact.python is None and not fact.static):
        return skip("the interpreter gave no package list")
    torch_v, npu_v = fact.version_of("torch"), fact.version_of("torch_npu")
    if not torch_v and not npu_v:
        return skip("neither torch nor torch_npu is installed in this interpreter")
    if npu_v and not torch_v:
        return fail(
            f"torch_npu {npu_v} is installed without torch",
            evidence=Evidence(found=f"torch_npu {npu_v}", required="torch of the same version", source=PT_COMPAT),
            fix=Fix("Install the PyTorch release torch_npu was built for.", [f"pip install torch=={_base(npu_v)}"]),
        )
    if torch_v and not npu_v:
        return warn(
            f"torch {torch_v} is installed but torch_npu is not: PyTorch will not see the NPU",
            evidence=Evidence(found=f"torch {torch_v}", required="torch_npu for that torch", source=PT_COMPAT),
            fix=Fix("Install the torch_npu release for this torch version (ascend-doctor compat --torch ... --suggest lists them).", [f"ascend-doctor compat --torch {_base(torch_v)} --suggest"]),
        )
    return ok(f"torch {torch_v}, torch_npu {npu_v}")


def _outside_maintained(python: Optional[str]) -> Optional[Tuple[str, str, Optional[str]]]:
    """(why, required range, source) when no maintained torch_npu build ships a wheel for this
    Python series; the range is compat_matrix's, the same `compat` judges with."""
    from compat_matrix import maintained_python

    v = try_parse_version(python, "python")
    series, source = maintained_python()
    if v is None or not series or "%d.%d" % v.series in series:
        return None
    lo, hi = series[0], series[-1]
    side = "older" if v < parse_version(lo, "python") else "newer"
    return (f"{side} than every Python a maintained torch_npu build ships wheels for ({lo}-{hi})", f"Python {lo}-{hi}", source)


@check("python.torch_npu_match", "torch and torch_npu versions agree", "python", category="version_mismatch", requires=("python.packages",))
def torch_npu_match(ctx: Context) -> Result:
    from compat_matrix import evaluate
    from compat_matrix.errors import CompatError

    fact = ctx.facts.python_stack()
    torch_v, npu_v = fact.version_of("torch"), fact.version_of("torch_npu")
    if not torch_v or not npu_v:
        return skip("needs both torch and torch_npu")
    try:
        pair = evaluate({"torch": torch_v, "torch_npu": npu_v}).pair("torch", "torch_npu")
    except CompatError as exc:
        return skip(f"cannot read versions torch {torch_v}, torch_npu {npu_v}: {exc}")
    if pair is None:
        return skip(f"no rule relates torch {torch_v} and torch_npu {npu_v}")
    evidence = Evidence(found=pair.found, required=pair.required, source=pair.source or PT_COMPAT)
    if pair.verdict == "compatible":
        return ok(pair.reason, evidence=evidence)
    fix = Fix(
        "torch_npu is built against one PyTorch release and pins it: install that torch, or the torch_npu built for your torch.",
        [f"pip install torch=={_base(npu_v)}", f"ascend-doctor compat --torch {_base(torch_v)} --suggest"],
    )
    if pair.verdict == "incompatible":
        return fail(pair.reason, evidence=evidence, fix=fix)
    return warn(pair.reason, evidence=evidence, fix=fix)
