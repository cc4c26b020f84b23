"""`ascend-doctor compat`: judge a stack against the version tables, list supported stacks,
or plan an upgrade.

Versions come from the flags; with no version flag, or with --root/--env-file/--sim, they
are read from the host the way `check` reads them (flags win over what is detected).

    compat --torch 2.1.0 --torch-npu 2.4.0.post2     verdict per pair, exit 0 only if compatible
    compat --torch 2.4.0 --suggest                   complete supported stacks, newest first
    compat --upgrade --cann 8.5.0                    moves from this host's stack to one with CANN 8.5.0
"""
from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any, Dict, List, Optional, TextIO, Tuple

from ..checks import load_all
from ..checks.compat_checks import stack_from_facts
from ..errors import UsageError
from ..facts import Facts
from ..report.console import escape, make_console
from .common import make_host, output_format

# flag name shown in messages, per component
FLAGS = {"chip": "--chip", "driver": "--driver", "firmware": "--firmware", "cann": "--cann",
         "python": "--python", "torch": "--torch", "torch_npu": "--torch-npu"}
LABEL = {"chip": "chip", "driver": "driver", "firmware": "firmware", "cann": "CANN", "python": "Python",
         "torch": "torch", "torch_npu": "torch_npu"}
MARK = {"compatible": ("✓", "green"), "not_recommended": ("!", "yellow"), "unknown": ("?", "yellow"),
        "incompatible": ("✗", "red")}


def run_compat(
    cann: Optional[str] = None,
    driver: Optional[str] = None,
    firmware: Optional[str] = None,
    torch: Optional[str] = None,
    torch_npu: Optional[str] = None,
    python: Optional[str] = None,
    chip: Optional[str] = None,
    suggest: bool = False,
    upgrade: bool = False,
    prerelease: bool = False,
    all_builds: bool = False,
    root: Optional[Path] = None,
    env_file: Optional[Path] = None,
    sim: Optional[str] = None,
    trust_root: bool = False,
    npu_smi: Optional[str] = None,
    fmt: str = "text",
    json_flag: bool = False,
    stream: Optional[TextIO] = None,
) -> int:
    fmt = output_format(fmt, json_flag)
    out = stream or sys.stdout
    if suggest and upgrade:
        raise UsageError("--suggest and --upgrade do not go together: pick one")
    flags = {k: v for k, v in (("chip", chip), ("driver", driver), ("firmware", firmware), ("cann", cann),
                                ("python", python), ("torch", torch), ("torch_npu", torch_npu)) if v is not None}
    _validate(flags)
    use_host = upgrade or bool(root or env_file or sim) or (not flags and not suggest)
    detected: Dict[str, str] = {}
    where = None
    if use_host:
        host = make_host(root, env_file, sim, trust_root=trust_root)
        where = f"simulated host {sim}" if sim else ("this machine" if str(host.root) == "/" else str(host.root))
        detected = _detect(host, npu_smi)
    if upgrade:
        if not flags:
            raise UsageError("--upgrade needs the target: give at least one of --cann, --torch, --torch-npu, --python, --driver")
        return _upgrade(detected, flags, where, fmt, out)
    stack = dict(detected)
    stack.update(flags)
    sources = {k: ("flag" if k in flags else "host") for k in stack}
    if suggest:
        # --prerelease (kept) and --all-builds both list every non-GA build: pre-release, beta,
        # hotfix tags and the PyPI releases no CANN table lists yet
        return _suggest(flags, prerelease or all_builds, fmt, out)
    return _evaluate(stack, sources, where, fmt, out)


def _validate(flags: Dict[str, str]) -> None:
    """Bad versions are usage errors: one line naming the flag and the accepted forms."""
    from compat_matrix.chips import chip_family
    from compat_matrix.errors import CompatError
    from compat_matrix.versions import parse_version

    for comp, value in flags.items():
        try:
            if comp == "chip":
                chip_family(value)
            else:
                parse_version(value, comp)
        except CompatError as exc:
            raise UsageError("%s %s: %s" % (FLAGS[comp], value, exc)) from None


def _detect(host: Any, npu_smi: Optional[str] = None) -> Dict[str, str]:
    # register every area first: importing compat_checks alone would give its checks an
    # earlier report order than the checks they require (a later `check` in this process
    # would then run them before their requirements)
    load_all()
    from compat_matrix.chips import try_chip_family
    from compat_matrix.versions import try_parse_version

    found = stack_from_facts(Facts(host, npu_smi_file=npu_smi))
    # a value the grammar cannot read is dropped here; `check` reports the file itself
    return {k: v for k, v in found.items()
            if (try_chip_family(v) if k == "chip" else try_parse_version(v, k)) is not None}


# ---------------------------------------------------------------------------- evaluate
def _evaluate(stack: Dict[str, str], sources: Dict[str, str], where: Optional[str], fmt: str, out: TextIO) -> int:
    from compat_matrix import evaluate

    rep = evaluate(stack)
    if where is not None and not rep.pairs:
        seen = ", ".join(LABEL[k] for k in stack) or "nothing"
        rep.notes.append("detected on %s: %s; give the other versions with --cann, --driver, --torch, "
                         "--torch-npu, --python, --chip" % (where, seen))
    if fmt == "json":
        data = rep.to_json()
        data["from"] = sources
        if where is not None:
            data["host"] = where
        out.write(json.dumps(data, indent=2) + "\n")
    elif fmt == "md":
        out.write(_md_report(rep, sources, where))
    else:
        _text_report(rep, sources, where, out)
    return rep.exit_code


def _stack_line(stack: Dict[str, str], sources: Optional[Dict[str, str]] = None) -> str:
    from compat_matrix.report import COMPONENTS

    parts = []
    for comp in COMPONENTS:
        if comp in stack:
            tag = " (host)" if sources and sources.get(comp) == "host" and "flag" in sources.values() else ""
            parts.append("%s %s%s" % (LABEL[comp], stack[comp], tag))
    return " · ".join(parts) or "(no versions)"


def _console(out: TextIO):
    return make_console(out)


def _mark(verdict: str, console: Any) -> str:
    symbol, colour = MARK[verdict]
    if console.encoding and "utf" not in console.encoding.lower():
        symbol = {"compatible": "ok", "not_recommended": "!", "unknown": "?", "incompatible": "x"}[verdict]
    return "[%s]%s[/%s]" % (colour, symbol, colour)


def _text_report(rep: Any, sources: Dict[str, str], where: Optional[str], out: TextIO) -> None:
    console = _console(out)
    head = "ascend-doctor compat · " + ("versions from %s" % where if where else "versions from the flags")
    console.print("[bold]%s[/bold]" % escape(head))
    console.print("  " + escape(_stack_line(rep.stack, sources)))
    if rep.pairs:
        console.print("")
    width = max((len("%s ~ %s" % (LABEL[p.a], LABEL[p.b])) for p in rep.pairs), default=10)
    for p in rep.pairs:
        name = ("%s ~ %s" % (LABEL[p.a], LABEL[p.b])).ljust(width)
        console.print("  %s %s  %s  %s" % (_mark(p.verdict, console), escape(name), escape(p.verdict.ljust(15)),
                                           escape(p.reason)))
        if p.verdict != "compatible":
            for label, value in (("found", p.found), ("required", p.required), ("source", p.source)):
                if value:
                    console.print("      [dim]%-9s[/dim]%s" % (label, escape(value)))
        elif p.source_id and p.source_id.startswith("pypi: "):
            # a pairing read from a wheel (no table lists it): say where it comes from
            console.print("      [dim]%-9s[/dim]%s" % ("source", escape("%s (%s)" % (p.source_id, p.source))))
    if rep.notes:
        console.print("")
        for n in rep.notes:
            console.print("  [dim]note[/dim] " + escape(n))
    colour = {"compatible": "green", "incompatible": "red"}.get(rep.verdict, "yellow")
    console.print("\n[%s]Verdict: %s.[/%s]%s" % (colour, rep.verdict, colour, escape(_next(rep))))


def _next(rep: Any) -> str:
    if rep.verdict == "compatible":
        return ""
    for comp in ("torch", "cann"):
        if comp in rep.stack:
            pinned = {comp: rep.stack[comp].split("+")[0] if comp == "torch" else rep.stack[comp]}
            return " Supported stacks: " + _suggest_command(pinned, _only_non_ga(pinned))
    return ""


def _only_non_ga(pinned: Dict[str, str]) -> bool:
    """True when only pre-release / unverified builds make stacks for these pins."""
    from compat_matrix import scan

    try:
        stacks, left_out = scan(pinned)
    except ValueError:
        return False
    return not stacks and any(lo.non_ga_filter for lo in left_out)


def _suggest_command(pinned: Dict[str, str], all_builds: bool = False) -> str:
    from compat_matrix.report import COMPONENTS

    parts = ["ascend-doctor compat"]
    for comp in COMPONENTS:
        if comp in pinned:
            value = pinned[comp]
            parts.append("%s %s" % (FLAGS[comp], "'%s'" % value if " " in value else value))
    parts.append("--suggest")
    if all_builds:
        parts.append("--prerelease")
    return " ".join(parts)


def _md_report(rep: Any, sources: Dict[str, str], where: Optional[str]) -> str:
    out = ["## ascend-doctor compat", "",
           "Stack (%s): %s" % (where or "flags", _stack_line(rep.stack, sources)), "",
           "| | Pair | Verdict | Reason | Required | Source |", "|---|---|---|---|---|---|"]
    for p in rep.pairs:
        out.append("| %s | %s ~ %s | %s | %s | %s | %s |" % (
            MARK[p.verdict][0], LABEL[p.a], LABEL[p.b], p.verdict, _cell(p.reason), _cell(p.required or ""),
            _cell(p.source or "")))
    if rep.notes:
        out += [""] + ["- " + n for n in rep.notes]
    out += ["", "**Verdict: %s**" % rep.verdict]
    return "\n".join(out) + "\n"


# ---------------------------------------------------------------------------- suggest
def _suggest(pinned: Dict[str, str], all_builds: bool, fmt: str, out: TextIO) -> int:
    from compat_matrix import scan

    stacks, left_out = scan(pinned, include_prerelease=all_builds, include_unverified=all_builds)
    missing = None if stacks else _missing(pinned, left_out)
    hidden = [lo for lo in left_out if lo.non_ga_filter] if not all_builds else []
    nxt = _suggest_command(pinned, True) if hidden else None
    if fmt == "json":
        out.write(json.dumps({"schema": 1, "pinned": pinned, "count": len(stacks),
                              "stacks": [s.to_json() for s in stacks],
                              "not_listed": [lo.to_json() for lo in left_out],
                              "missing": missing, "next": nxt}, indent=2) + "\n")
    elif fmt == "md":
        out.write(_md_stacks(pinned, stacks, left_out, missing, nxt))
    else:
        _text_stacks(pinned, stacks, left_out, missing, nxt, out)
    return 0 if stacks else 1


def _missing(pinned: Dict[str, str], left_out: List[Any]) -> str:
    """One line: what the data lacks for these pins (said when no stack is found)."""
    from compat_matrix import load_matrix
    from compat_matrix.versions import parse_version

    what = " and ".join("%s %s" % (LABEL[k], v) for k, v in pinned.items()) or "nothing pinned"
    if left_out:
        if all(lo.build.cann is None for lo in left_out):
            torches = sorted({lo.build.torch.text for lo in left_out})
            return ("no source names the CANN release any torch_npu build for PyTorch %s was made for; "
                    "without it no complete stack can be named" % ", ".join(torches))
        return "none of the %d known torch_npu build%s fits every pin (%s); the reasons are listed" % (
            len(left_out), "" if len(left_out) == 1 else "s", what.replace(" and ", ", "))
    if "torch_npu" in pinned:
        return ("torch_npu %s is in no table and not among the PyPI wheels the data lists" % pinned["torch_npu"])
    if "torch" in pinned:
        return "no torch_npu build for PyTorch %s is known, neither in a table nor on PyPI" % pinned["torch"]
    m = load_matrix()
    if "cann" in pinned:
        cann = m.commercial_cann(parse_version(pinned["cann"], "cann"))
        if not m.is_known_cann(cann):
            newest = [v.text for v in m.known_cann_releases()[-5:]]
            return ("CANN %s appears in no torch_npu table; the newest the tables name: %s"
                    % (pinned["cann"], ", ".join(reversed(newest))))
    return "no build the data knows fits all of %s" % what


def _py(stack: Any) -> str:
    p = stack.python
    return p[0] if len(p) == 1 else "%s-%s" % (p[0], p[-1])


def _py_list(pys: Optional[List[str]]) -> str:
    if not pys:
        return "Python ?"
    return "Python " + (pys[0] if len(pys) == 1 else "%s-%s" % (pys[0], pys[-1]))


_COLS = (("CANN", lambda s: s.components.get("cann", "unknown")), ("torch", lambda s: s.components["torch"]),
         ("torch_npu", lambda s: s.components["torch_npu"]), ("Python", _py),
         ("driver", lambda s: s.components.get("driver", "see HDK list" if "cann" in s.components else "-")),
         ("firmware", lambda s: s.components.get("firmware", "-")),
         ("release", lambda s: s.release or "-"),
         ("status", lambda s: s.status + ("" if s.pairing in ("built_for", "unpaired") else "*")))


def _left_out_rows(left_out: List[Any]) -> List[List[str]]:
    rows = []
    for lo in left_out:
        b = lo.build
        rows.append(["torch_npu " + b.torch_npu.text, b.status, "PyPI" if b.on_pypi else "not on PyPI",
                     _py_list(list(b.python) if b.python else None), lo.reason])
    return rows


def _text_stacks(pinned: Dict[str, str], stacks: List[Any], left_out: List[Any], missing: Optional[str],
                 nxt: Optional[str], out: TextIO) -> None:
    console = _console(out)
    pins = ", ".join("%s %s" % (LABEL[k], v) for k, v in pinned.items()) or "nothing pinned"
    console.print("[bold]%s[/bold]" % escape("ascend-doctor compat --suggest · %s · %d stack%s, newest first"
                                             % (pins, len(stacks), "" if len(stacks) == 1 else "s")))
    if not stacks:
        console.print("[red]No supported stack has all of: %s.[/red]" % escape(pins))
        if left_out:
            console.print("  [dim]known builds:[/dim]")
            rows = _left_out_rows(left_out)
            widths = [max(len(r[i]) for r in rows) for i in range(4)]
            for r in rows:
                console.print("    " + escape("  ".join(c.ljust(w) for c, w in zip(r[:4], widths)) + "  " + r[4]))
        if missing:
            console.print("  [dim]missing:[/dim] " + escape(missing))
        if nxt:
            console.print("  [dim]list them anyway:[/dim] [cyan]$ %s[/cyan]" % escape(nxt))
        return
    rows = [[fn(s) for _, fn in _COLS] for s in stacks]
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, (h, _) in enumerate(_COLS)]
    console.print("  " + escape("  ".join(h.ljust(w) for (h, _), w in zip(_COLS, widths))))
    for r in rows:
        console.print("  " + escape("  ".join(c.ljust(w) for c, w in zip(r, widths))))
    first = stacks[0]
    console.print("")
    if any(s.pairing == "supported" for s in stacks):
        console.print("  [dim]* supported by the release notes of its TorchNPU line, not the build made for this CANN[/dim]")
    if any(s.pairing == "unpaired" for s in stacks):
        console.print("  [dim]CANN unknown: on PyPI, but no source names the CANN release the build was made for "
                      "(verdict unknown)[/dim]")
    if "cann" in first.components:
        console.print("  [dim]HDK lines allowed for CANN %s:[/dim] %s" % (escape(first.components["cann"]),
                                                                        escape(", ".join(first.drivers) or "none in the data")))
    console.print("  [dim]install the first:[/dim] [cyan]$ pip install torch==%s torch-npu==%s[/cyan]"
                  % (escape(first.components["torch"]), escape(first.components["torch_npu"])))
    if nxt:
        hidden = sum(1 for lo in left_out if lo.non_ga_filter)
        console.print("  [dim]%d more build%s (pre-release or no CANN named) left out:[/dim] [cyan]$ %s[/cyan]"
                      % (hidden, "" if hidden == 1 else "s", escape(nxt)))


def _md_stacks(pinned: Dict[str, str], stacks: List[Any], left_out: List[Any], missing: Optional[str],
               nxt: Optional[str]) -> str:
    pins = ", ".join("%s %s" % (LABEL[k], v) for k, v in pinned.items()) or "nothing pinned"
    out = ["## ascend-doctor compat --suggest", "", "Pinned: %s · %d stacks, newest first" % (pins, len(stacks)), ""]
    if stacks:
        out += ["| " + " | ".join(h for h, _ in _COLS) + " |", "|" + "---|" * len(_COLS)]
        for s in stacks:
            out.append("| " + " | ".join(_cell(fn(s)) for _, fn in _COLS) + " |")
    if left_out and not stacks:
        out += ["", "Known builds, not listed:", "", "| torch_npu | status | PyPI | Python | why not listed |",
                "|---|---|---|---|---|"]
        for r in _left_out_rows(left_out):
            out.append("| " + " | ".join(_cell(c) for c in r) + " |")
    if missing:
        out += ["", "Missing: " + missing]
    if nxt:
        out += ["", "List the builds left out: `%s`" % nxt]
    return "\n".join(out) + "\n"


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


# ---------------------------------------------------------------------------- upgrade
def _upgrade(current: Dict[str, str], target: Dict[str, str], where: Optional[str], fmt: str, out: TextIO) -> int:
    from compat_matrix import upgrade_path

    try:
        plan = upgrade_path(current, target)
    except ValueError as exc:
        if fmt == "json":
            out.write(json.dumps({"schema": 1, "current": current, "target": target, "steps": None,
                                  "error": str(exc)}, indent=2) + "\n")
        else:
            out.write("ascend-doctor compat --upgrade: %s\n" % exc)
        return 1
    if fmt == "json":
        data = plan.to_json()
        data["host"] = where
        out.write(json.dumps(data, indent=2) + "\n")
        return 0
    lines: List[Tuple[str, str]] = []
    for i, step in enumerate(plan.steps, 1):
        lines.append(("%d. %s: %s -> %s" % (i, LABEL[step.component], step.current or "(none)", step.target), step.reason))
    if fmt == "md":
        md = ["## ascend-doctor compat --upgrade", "", "From (%s): %s" % (where, _stack_line(plan.current)),
              "", "To: %s" % _stack_line(plan.target), ""]
        for (head, reason), step in zip(lines, plan.steps):
            md += ["**%s** - %s" % (head, reason), "", "```sh", *step.commands, "```", ""]
        md += ["- " + n for n in plan.notes]
        out.write("\n".join(md) + "\n")
        return 0

    console = _console(out)
    console.print("[bold]%s[/bold]" % escape("ascend-doctor compat --upgrade · from %s" % where))
    console.print("  from  " + escape(_stack_line(plan.current)))
    console.print("  to    " + escape(_stack_line(plan.target)))
    console.print("")
    if not plan.steps:
        console.print("[green]Nothing to move: the current stack already has the target.[/green]")
    for (head, reason), step in zip(lines, plan.steps):
        console.print("  [bold]%s[/bold]  %s" % (escape(head), escape(reason)))
        for cmd in step.commands:
            console.print("      [cyan]$ %s[/cyan]" % escape(cmd))
    for n in plan.notes:
        console.print("  [dim]note[/dim] " + escape(n))
    console.print("\nVerdict before: %s; after: %s." % (plan.before.verdict, plan.after.verdict))
    return 0
