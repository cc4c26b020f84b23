"""The software stack named in the input, judged against the version tables.

A paste that carries the environment (collect_env, ``pip list``, a ``pip install`` log,
``npu-smi info``) names versions; ``compat`` knows which go together. When two named
versions do not, that is an incident of its own (``version_mismatch``), with the lines that
named them as evidence and ``compat`` as the fix. Where it goes in the answer: first when the
input's first incident is no recognised cause (an unrecognised line, a wrapper, a broad class
of ``other``) or is itself a version problem, naming the displaced answer as the runner-up;
otherwise after the failures, because an out-of-memory error or a link that went down is not
explained by a version pair.

The tables load only when the input names at least two components (they cost ~60 ms).
"""
from __future__ import annotations

from typing import Dict, List, Optional, Tuple

from ..parsers.stack_text import StackFact
from .events import Event
from .incidents import Incident
from .knowledge import Knowledge, RuleRef, Verdict

RULE = RuleRef("stack.incompatible", "Versions named in the input do not go together")
_FLAGS = {"cann": "--cann", "driver": "--driver", "torch": "--torch", "torch_npu": "--torch-npu",
          "python": "--python", "chip": "--chip"}
_LABEL = {"cann": "CANN", "driver": "driver", "torch": "torch", "torch_npu": "torch_npu", "python": "Python", "chip": "chip"}
_WEIGHT = 60
NUMPY_ENTRY = "version.numpy2_under_cann"
_CANN_NUMPY2 = "9.0.0"  # the first CANN whose Python packages the KB entry counts as NumPy 2 ready

Located = Tuple[str, StackFact]  # (file, fact)


def latest(facts: List[Located], order: Dict[str, int]) -> Dict[str, Located]:
    """Each component's version as the input last states it (a ``pip install`` after a
    ``pip list`` is the state the job ran with); files count in the order given."""
    out: Dict[str, Located] = {}
    for file, fact in sorted(facts, key=lambda f: (order.get(f[0], len(order)), f[1].line)):
        out[fact.component] = (file, fact)
    return out


def judge(named: Dict[str, Located], knowledge: Optional[Knowledge] = None) -> Optional[Incident]:
    """An incident when two named versions do not go together (or NumPy 2 sits under a CANN
    that needs NumPy 1), else None."""
    from compat_matrix.chips import try_family_from_user
    from compat_matrix.versions import try_parse_version

    valid = {c: loc for c, loc in named.items()
             if (try_family_from_user(loc[1].version) if c == "chip" else try_parse_version(loc[1].version, c)) is not None}
    numpy = valid.pop("numpy", None)
    pair = _pair(valid)
    if pair is None and numpy is not None and knowledge is not None:
        return _numpy_under_cann(numpy, valid.get("cann"), knowledge)
    return pair


def _pair(valid: Dict[str, Located]) -> Optional[Incident]:
    if sum(c != "chip" for c in valid) < 2:
        return None
    from compat_matrix import evaluate

    stack = {c: loc[1].version for c, loc in valid.items()}
    bad = [p for p in evaluate(stack).pairs if p.verdict == "incompatible"]
    if not bad:
        return None
    first = bad[0]
    flags = " ".join(f"{_FLAGS[c]} {v}" for c, v in stack.items())
    names = ", ".join(f"{_LABEL[c]} {v}" for c, v in stack.items())
    verdict = Verdict(
        role="root", category="version_mismatch", weight=_WEIGHT,
        title=f"The versions in the input do not go together: {first.found}",
        cause=f"{first.found}: {first.reason}" + (f" (and {len(bad) - 1} more pair(s); see compat)" if len(bad) > 1 else ""),
        fix_text=(f"The input names {names}. Install the versions the tables require ({first.required}), "
                  "or ask compat for complete stacks that keep the versions you want."),
        fix_commands=[f"ascend-doctor compat {flags}", f"ascend-doctor compat {flags} --suggest"],
        signal=RULE, confidence="medium",
    )
    shown = sorted({(file, fact.line, fact.text) for c, (file, fact) in valid.items() if c in (first.a, first.b)},
                   key=lambda e: e[1]) or sorted({(f, x.line, x.text) for f, x in valid.values()}, key=lambda e: e[1])
    return _incident(verdict, shown)


def _numpy_under_cann(numpy: Located, cann: Optional[Located], knowledge: Knowledge) -> Optional[Incident]:
    """NumPy 2 named where CANN's Python code needs NumPy 1 (CANN before 9.0, or a CANN the
    input does not name: then the answer is a guess and says so)."""
    from compat_matrix.versions import parse_version

    if parse_version(numpy[1].version, "numpy") < parse_version("2.0", "numpy"):
        return None
    if cann is not None and parse_version(cann[1].version, "cann") >= parse_version(_CANN_NUMPY2, "cann"):
        return None
    if not knowledge.kb.has_entry(NUMPY_ENTRY):
        return None
    verdict = knowledge.verdict_of(NUMPY_ENTRY, role="root", weight=_WEIGHT, confidence="medium" if cann else "low")
    shown = sorted({(f, x.line, x.text) for f, x in ([numpy] + ([cann] if cann else []))}, key=lambda e: e[1])
    return _incident(verdict, shown)


def _incident(verdict: Verdict, shown: List[Tuple[str, int, str]]) -> Incident:
    file, line, text = shown[0]
    head = Event(kind="stack", text=text, file=file, line=line, origin=file)
    inc = Incident(events=[], verdicts=[], headline=head, verdict=verdict, scope=(file, None, None), synthetic=True)
    inc.evidence_override = list(shown)
    return inc


def place(inc: Incident, ordered: List[Incident]) -> List[Incident]:
    """The stack incident in the answer (see the module's docstring)."""
    failures = [i for i in ordered if i.role != "advisory"]
    if failures:
        top = failures[0]
        v = top.verdict
        unexplained = ((v.kb_id is None and not top.synthetic) or top.role == "wrapper" or v.category == "version_mismatch"
                       or (v.category == "other" and (v.kb_id or "").startswith("class.")))
        if not unexplained:
            at = ordered.index(failures[-1]) + 1
            return ordered[:at] + [inc] + ordered[at:]
        inc.verdict.runner_up = {"kb": top.verdict.kb_id, "category": top.verdict.category, "title": top.display_title}
    return [inc] + ordered
