"""The oom verb's output: text (verdict first, then the numbers, then the fix), JSON, Markdown."""
from __future__ import annotations

import json
import textwrap
from typing import List, Tuple

from ..core.units import format_size
from .model import Diagnosis

_ROWS: Tuple[Tuple[str, str], ...] = (
    ("requested", "requested (Tried to allocate)"),
    ("free", "free on the device"),
    ("allowed", "allowed (memory fraction)"),
    ("allocated", "allocated"),
    ("active", "active"),
    ("reserved", "reserved"),
    ("reserved_unallocated", "reserved - allocated"),
    ("pending_free", "pending free (other streams)"),
    ("inactive_split", "stranded (inactive split)"),
    ("largest_free_block", "largest free block"),
    ("free_in_cache", "free inside segments"),
    ("releasable", "in whole free segments"),
    ("outside_pytorch", "held outside PyTorch"),
    ("other_processes", "other processes"),
    ("total", "device capacity"),
)
_COUNTS = (("num_alloc_retries", "alloc retries (stats)"), ("cache_flush_lines", "cache flushes (log lines)"),
           ("num_ooms", "OOMs (stats)"), ("segments", "segments"))
_EVIDENCE_MAX = 300


def _rows(d: Diagnosis) -> List[Tuple[str, str, str]]:
    out: List[Tuple[str, str, str]] = []
    q = d.numbers.get("requested")
    for key, label in _ROWS:
        value = d.numbers.get(key)
        if value is None or (value == 0 and key in ("pending_free", "other_processes", "releasable")):
            continue
        extra = d.sources.get(key, "derived")
        if key == "reserved_unallocated" and q:
            extra = f"{value / q:.2f}x the request"
        if key == "inactive_split" and d.ratios.get("fragmentation") is not None:
            extra += f", {d.ratios['fragmentation']:.0%} of reserved"
        out.append((label, format_size(value), extra))
    for key, label in _COUNTS:
        value = d.counts.get(key)
        if value:
            out.append((label, str(value), ""))
    return out


def render_json(d: Diagnosis) -> str:
    return json.dumps(d.to_json(), indent=2, ensure_ascii=False)


def _wrap(text: str, indent: str) -> List[str]:
    return textwrap.wrap(text, width=100, initial_indent=indent, subsequent_indent=indent,
                         break_long_words=False, break_on_hyphens=False) or [indent.rstrip()]


def render_text(d: Diagnosis) -> str:
    out: List[str] = [d.summary]
    if d.rule_text:
        out.append(f"  why: {d.rule_text}")
    rows = _rows(d)
    if rows:
        where = f" (device {d.device})" if d.device is not None else ""
        out.append(f"numbers{where}:")
        width = max(len(r[0]) for r in rows)
        for label, value, extra in rows:
            out.append(f"  {label.ljust(width)}  {value.rjust(11)}" + (f"   [{extra}]" if extra else ""))
    if d.evidence:
        out.append("evidence:")
        for e in d.evidence:
            loc = f"{e.file}:{e.line}  " if e.file else f"{e.source}: "
            text = e.text if len(e.text) <= _EVIDENCE_MAX else e.text[: _EVIDENCE_MAX - 3] + "..."
            out.append(f"  {loc}{text}")
    plan = d.plan
    if plan is not None:
        if plan.fix_text:
            out.extend(_wrap("fix: " + plan.fix_text, ""))
        for cmd in plan.commands:
            out.append(f"  $ {cmd}")
        if plan.code:
            out.append("  in the program:")
            out.extend(f"    {line}" for line in plan.code)
        shown = [a for a in plan.advice if a.status != "not_for_this"]
        if shown:
            release = f" (torch_npu: {d.release})" if d.release else ""
            out.append(f"allocator settings{release}:")
            sw = max(len(a.setting) for a in shown)
            for a in shown:
                have = {True: "available", False: f"needs {a.since} or later", None: f"since {a.since}"}[a.supported]
                out.append(f"  {a.status:<12} {a.setting.ljust(sw)}  {have}")
                out.extend(_wrap(a.why, "               "))
    if d.notes:
        out.append("notes:")
        for n in d.notes:
            lines = _wrap(n, "    ")
            out.append("  - " + lines[0].lstrip())
            out.extend(lines[1:])
    if d.kb:
        out.append(f"more: ascend-doctor explain {d.kb}")
    return "\n".join(out) + "\n"


def render_md(d: Diagnosis) -> str:
    out: List[str] = ["# ascend-doctor oom", "", f"**{d.verdict}** ({d.status}): {d.title}", ""]
    if d.rule_text:
        out += [f"Rule: {d.rule_text}.", ""]
    rows = _rows(d)
    if rows:
        out += ["| number | value | note |", "|---|---:|---|"]
        out += [f"| {label} | {value} | {extra} |" for label, value, extra in rows]
        out.append("")
    if d.evidence:
        out += ["## Evidence", "", "```"]
        for e in d.evidence:
            loc = f"{e.file}:{e.line}  " if e.file else f"{e.source}: "
            out.append(f"{loc}{e.text[:_EVIDENCE_MAX]}")
        out += ["```", ""]
    plan = d.plan
    if plan is not None:
        out += ["## Fix", "", plan.fix_text, ""]
        if plan.commands:
            out += ["```sh"] + plan.commands + ["```", ""]
        if plan.code:
            out += ["In the program:", "", "```python"] + plan.code + ["```", ""]
        shown = [a for a in plan.advice if a.status != "not_for_this"]
        if shown:
            out += ["| setting | status | torch_npu | why |", "|---|---|---|---|"]
            for a in shown:
                have = {True: "available", False: f"needs {a.since} or later", None: f"since {a.since}"}[a.supported]
                out.append(f"| `{a.setting}` | {a.status} | {have} | {a.why} |")
            out.append("")
    if d.notes:
        out += ["## Notes", ""] + [f"- {n}" for n in d.notes] + [""]
    if d.kb:
        out += [f"KB: `{d.kb}`", ""]
    return "\n".join(out)
