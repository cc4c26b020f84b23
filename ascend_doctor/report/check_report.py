"""Rendering of a ``check`` run: console (flutter-doctor style), JSON (the contract), Markdown."""
from __future__ import annotations

from collections import Counter
from typing import Any, Dict, List, TextIO

from .. import __version__, output
from ..checks.base import GROUP_HEADLINE, group_title
from ..model import Finding, Status
from .console import escape, make_console, mark

PROBLEMS = (Status.FAIL, Status.WARN, Status.TIMEOUT, Status.ERROR)


def counts(findings: List[Finding]) -> Dict[str, int]:
    c = Counter(f.status.value for f in findings)
    return {s.value: c.get(s.value, 0) for s in Status}


def verdict(findings: List[Finding]) -> str:
    if any(f.status.rank >= 2 for f in findings):
        return "fail"
    if any(f.status == Status.WARN for f in findings):
        return "warn"
    return "ok"


def to_json(findings: List[Finding], host_info: Dict[str, Any], duration_s: float) -> Dict[str, Any]:
    summary = {"counts": counts(findings), "verdict": verdict(findings), "duration_s": round(duration_s, 3)}
    return output.envelope(summary, {"host": host_info, "findings": [f.to_json() for f in findings]})


def _summary_line(findings: List[Finding], duration_s: float) -> str:
    c = counts(findings)
    parts = []
    for key, word in (("fail", "failed"), ("warn", "warning"), ("timeout", "timed out"), ("error", "crashed"), ("ok", "passed"), ("skip", "skipped")):
        if c[key]:
            n = c[key]
            parts.append(f"{n} {word}{'s' if word == 'warning' and n != 1 else ''}")
    return ", ".join(parts) + f" in {duration_s:.2f} s"


def _next_step(findings: List[Finding]) -> str:
    first = next((f for f in findings if f.status.rank >= 2), None)
    if first is not None and first.status == Status.TIMEOUT:
        return f"{first.id} timed out: nothing after it could use its answer; see its fix."
    if first is not None and first.status == Status.ERROR:
        return f"The {first.id} check crashed; run with -v for its traceback and report it."
    if first is not None:
        return f"Fix {first.id} first: the checks after it may depend on it."
    if any(f.status == Status.WARN for f in findings):
        return "No failures; the warnings above are worth a look."
    return "No issues found."


def render_text(findings: List[Finding], host_info: Dict[str, Any], duration_s: float, verbose: int = 0, stream: TextIO = None) -> None:
    """flutter-doctor style: one line per area when all is well, the area's checks when not;
    ``verbose`` lists every check with its evidence and timing."""
    console = make_console(stream)
    where = host_info.get("root", "/")
    if host_info.get("sim"):
        where = f"simulated host {host_info['sim']}"
    head = f"ascend-doctor check · {'this machine' if where == '/' else where}"
    head += f" · user {host_info.get('user')} · {host_info.get('arch') or 'arch ?'}"
    if host_info.get("container"):
        head += " · container"
    if host_info.get("trusted") is False:
        head += " · untrusted tree: its programs are not run (--trust-root runs them)"
    console.print(f"[bold]{escape(head)}[/bold]")
    groups: Dict[str, List[Finding]] = {}
    for f in findings:
        groups.setdefault(f.group, []).append(f)
    gwidth = max((len(group_title(g)) for g in groups), default=12)
    quiet: List[List[str]] = []  # a run of areas shown in one line each: one table
    for group, members in groups.items():
        shown = [f for f in members if f.status != Status.SKIP or verbose]
        if not shown:
            continue
        worst = _worst(members)
        if not verbose and worst in (Status.OK, Status.SKIP):
            quiet.append([f"{mark(worst, console)} {escape(group_title(group))}", escape(_group_line(group, members))])
            continue
        _flush(console, quiet, gwidth)
        console.print(f"{mark(worst, console)} [bold]{escape(group_title(group))}[/bold]")
        # inside a troubled area, what was skipped because of the trouble is part of the story
        shown = [f for f in members if f.status != Status.SKIP or verbose or f.data.get("blocked_by")]
        rows = []
        for f in shown:
            timing = f" [dim]({f.duration_ms:.0f} ms)[/dim]" if verbose else ""
            text = [escape(f.summary) + timing]
            if f.status in PROBLEMS or verbose > 0:
                text += _detail(f, verbose)
            rows.append([f"{mark(f.status, console)} {escape(f.title)}", "\n".join(text)])
        output.print_table(console, None, rows, indent=4)
    _flush(console, quiet, gwidth)
    line = _summary_line(findings, duration_s)
    v = verdict(findings)
    colour = {"fail": "red", "warn": "yellow", "ok": "green"}[v]
    console.print(f"\n[{colour}]{escape(line)}.[/{colour}] {escape(_next_step(findings))}")
    if not verbose:
        console.print("[dim]Run with -v for every check, its evidence and timing.[/dim]")


_SEVERITY = {Status.FAIL: 5, Status.ERROR: 4, Status.TIMEOUT: 3, Status.WARN: 2, Status.OK: 1, Status.SKIP: 0}


def _worst(members: List[Finding]) -> Status:
    return max((f.status for f in members), key=lambda s: _SEVERITY[s])


def _group_line(group: str, members: List[Finding]) -> str:
    passed = [f for f in members if f.status == Status.OK]
    if not passed:
        return members[0].summary
    headline = next((f for f in passed if f.id == GROUP_HEADLINE.get(group)), passed[0])
    return f"{headline.summary} · {len(passed)} check{'s' if len(passed) != 1 else ''} passed"


def _flush(console, quiet: List[List[str]], gwidth: int) -> None:
    """Print the pending one-line areas as one table (titles padded alike in every such table)."""
    if quiet:
        output.print_table(console, None, quiet, indent=0, min_widths=(gwidth + 2,))
        quiet.clear()


def _detail(f: Finding, verbose: int) -> List[str]:
    """The lines under a check's summary (rich markup): evidence, fix, commands, details."""
    out: List[str] = []
    show_evidence = f.status in PROBLEMS or verbose
    if show_evidence:
        for label, value in (("found", f.evidence.found), ("required", f.evidence.required), ("source", f.evidence.source)):
            if value:
                out.append(f"[dim]{label:<9}[/dim]{escape(str(value))}")
    if f.status in PROBLEMS and f.fix:
        if f.fix.text:
            out.append(f"[dim]{'fix':<9}[/dim]{escape(f.fix.text)}")
        for cmd in f.fix.commands:
            out.append(f"{'':<9}[cyan]$ {escape(cmd)}[/cyan]")
    if f.details and (verbose or f.status in (Status.ERROR,)):
        for line in f.details[: 40 if verbose > 1 else 12]:
            out.append(f"[dim]{escape(line.rstrip())}[/dim]")
    return out


def render_markdown(findings: List[Finding], host_info: Dict[str, Any], duration_s: float) -> str:
    out = [
        *output.md_heading("check"),
        f"Host: `{host_info.get('sim') and 'simulated ' + host_info['sim'] or host_info.get('root')}` · user `{host_info.get('user')}` · {host_info.get('arch') or 'arch ?'}"
        + (" · container" if host_info.get("container") else "")
        + f" · ascend-doctor {__version__}",
        "",
    ]
    symbols = {"ok": "✓", "warn": "!", "fail": "✗", "skip": "–", "timeout": "⏱", "error": "☠"}
    out += output.md_table(["", "Check", "Result"],
                           [[symbols[f.status.value], f"{f.title} (`{f.id}`)", f.summary] for f in findings])
    problems = [f for f in findings if f.status in PROBLEMS]
    if problems:
        out += ["", "### Problems", ""]
        for f in problems:
            out.append(f"**{f.title}** (`{f.id}`, {f.status.value}, {f.category or 'other'}): {f.summary}")
            out.append("")
            for label, value in (("found", f.evidence.found), ("required", f.evidence.required), ("source", f.evidence.source)):
                if value:
                    out.append(f"- {label}: {value}")
            if f.fix.text:
                out.append(f"- fix: {f.fix.text}")
            if f.fix.commands:
                out += ["", "```sh", *f.fix.commands, "```"]
            out.append("")
    out += ["", f"_{_summary_line(findings, duration_s)}._"]
    return "\n".join(out) + "\n"

