"""Triage output: JSON (the contract in README.md, "Machine output"), plain text and Markdown."""
from __future__ import annotations

import json
from typing import Any, Dict, List, Optional

from .. import __version__, kb
from ..model import SCHEMA
from ..parsers.cann_error import strip_source
from .engine import TriageReport
from .incidents import Incident

_DETAIL_MAX = 220


def _matching_line(inc: Incident) -> Optional[str]:
    """Of the lines merged into the headline, the first one the incident's own rule matches."""
    v = inc.verdict
    if v.kb_id is None or len(inc.headline.evidence) < 2:
        return None

    base = kb.load()
    for _, text in inc.headline.evidence:
        if any(m.entry.id == v.kb_id for m in base.match(text)):
            return text
    return None


def root_cause_line(inc: Incident) -> str:
    """One line: what failed, with the detail that identifies it."""
    detail = _matching_line(inc) or inc.headline.first_error or inc.headline.text
    detail = strip_source(detail).strip()
    if inc.synthetic:
        return inc.verdict.cause
    if len(detail) > _DETAIL_MAX:
        detail = detail[: _DETAIL_MAX - 3] + "..."
    cause = inc.verdict.cause.rstrip(". ")
    return f"{cause}: {detail}" if detail and detail not in cause else inc.verdict.cause


def explain_hint(inc: Incident) -> Optional[str]:
    codes = [c for c in inc.codes() if ":" not in c]
    specific = [c for c in codes if not c.endswith(("9999", "8888")) and not c.startswith("ERR")]
    pick = (specific or codes or [None])[0]
    return f"ascend-doctor explain {pick}" if pick else None


def incident_json(inc: Incident, index: Dict[int, int]) -> Dict[str, Any]:
    v = inc.verdict
    return {
        "category": v.category,
        "title": inc.display_title,
        "root_cause": root_cause_line(inc),
        "role": "root_cause" if v.role == "root" else v.role,
        "kb": v.kb_id,
        "signal": v.signal.id,
        "confidence": v.confidence,
        "runner_up": v.runner_up,
        "codes": inc.codes(),
        "pid": inc.pid,
        "device": inc.device,
        "rank": inc.rank,
        "origin": inc.scope[0],
        "first_seen": inc.first_seen,
        "last_seen": inc.last_seen,
        "count": inc.count,
        "caused_by": index.get(id(inc.caused_by)) if inc.caused_by is not None else None,
        "evidence": [{"file": f, "line": ln, "text": t} for f, ln, t in inc.evidence()],
        "fix": {"text": v.fix_text, "commands": list(v.fix_commands)},
        "checks": list(v.checks),
        "explain": explain_hint(inc),
        "notes": inc.all_notes(),
        "attached": [{"signal": a.signal.id, "count": a.count, "first": a.first, "last": a.last} for a in inc.attachments],
    }


def to_json(report: TriageReport) -> Dict[str, Any]:
    index = {id(inc): i for i, inc in enumerate(report.incidents)}
    return {
        "schema": SCHEMA,
        "tool": {"name": "ascend-doctor", "version": __version__},
        "stats": report.stats.to_json(),
        "job": report.job.to_json(),
        "incidents": [incident_json(inc, index) for inc in report.incidents],
    }


def render_json(report: TriageReport) -> str:
    return json.dumps(to_json(report), indent=2, ensure_ascii=False)


def _size(n: int) -> str:
    for unit in ("B", "KB", "MB", "GB"):
        if n < 1024 or unit == "GB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024  # type: ignore[assignment]
    return f"{n} B"


def _where(inc: Incident) -> str:
    bits = []
    if inc.rank is not None:
        bits.append(f"rank {inc.rank}")
    if inc.pid is not None:
        bits.append(f"pid {inc.pid}")
    if inc.device is not None:
        bits.append(f"device {inc.device}")
    if inc.first_seen:
        bits.append(inc.first_seen)
    if inc.count > 1:
        bits.append(f"{inc.count} lines")
    return " · ".join(bits)


def _summary(report: TriageReport) -> str:
    s = report.stats
    n = len(report.incidents)
    head = f"{n} incident{'s' if n != 1 else ''}" if n else "no incidents"
    return (f"{head} in {s.files} file{'s' if s.files != 1 else ''} ({_size(s.bytes)}, {s.lines} lines, "
            f"{s.events} error lines) in {s.seconds:.2f} s")


def render_text(report: TriageReport, verbose: int = 0) -> str:
    """The report for a terminal. Quiet by default: effects of an earlier incident that say
    the same thing (seven ranks timing out on the one that failed) fold into one entry, and
    evidence is cut to a few short lines; ``verbose`` shows everything."""
    out: List[str] = [f"ascend-doctor triage: {_summary(report)}"]
    index = {id(inc): i for i, inc in enumerate(report.incidents)}
    job = report.job
    if job.method and job.method != "incomplete":
        rank = f"rank {job.first_rank}" if job.first_rank is not None else "an unidentified rank"
        out.append(f"first failing rank: {rank} ({job.method.replace('_', ' ')}): {job.reason}")
    elif job.method == "incomplete":
        out.append(f"note: {job.reason}")
    for note in job.notes:
        out.append(f"note: {note}")
    groups = _fold_effects(report.incidents) if not verbose else [[inc] for inc in report.incidents]
    for group in groups:
        inc = group[0]
        i = index[id(inc)]
        v = inc.verdict
        out.append("")
        caused = f"  (caused by #{index[id(inc.caused_by)] + 1})" if inc.caused_by is not None and id(inc.caused_by) in index else ""
        if len(group) > 1:
            last = index[id(group[-1])]
            out.append(f"{i + 1}-{last + 1}. [{v.category}] {inc.display_title}{caused}")
            out.append(f"   {v.role}: the same on {len(group)} processes; each is an effect of #{index[id(inc.caused_by)] + 1}")
            for member in sorted(group, key=lambda m: (m.rank is None, m.rank or 0, m.pid or 0)):
                out.append(f"     {_where(member)}")
            out.append("   (ascend-doctor triage -v shows each one's evidence)")
            continue
        if v.role == "symptom":
            label = "symptom"
        elif v.role == "root":
            label = "root cause" if i == 0 and inc.caused_by is None else "cause"
        elif v.role == "advisory":
            label = "warning"
        else:
            label = "reported"
        out.append(f"{i + 1}. [{v.category}] {inc.display_title}{caused}")
        out.append(f"   {label}: {root_cause_line(inc)}")
        unsure = _unsure(v)
        if unsure:
            out.append(f"   {unsure}")
        where = _where(inc)
        if where:
            out.append(f"   where: {where}")
        for note in inc.all_notes():
            out.append(f"   note: {note}")
        out.append("   evidence:")
        evidence = inc.evidence()
        shown = evidence if verbose else evidence[:_QUIET_EVIDENCE]
        for f, ln, t in shown:
            out.append(f"     {f}:{ln}  {t[:300] if verbose else _cut(t, _QUIET_WIDTH)}")
        if len(shown) < len(evidence):
            out.append(f"     ... {len(evidence) - len(shown)} more line(s) with -v")
        if v.fix_text:
            out.append(f"   fix: {v.fix_text}")
        for cmd in v.fix_commands:
            out.append(f"     $ {cmd}")
        hint = explain_hint(inc)
        refs = ([f"ascend-doctor explain {v.kb_id}"] if v.kb_id else []) + ([hint] if hint else [])
        if refs:
            out.append("   more: " + " · ".join(refs))
    _skipped_text(report, out)
    return "\n".join(out) + "\n"


def _unsure(v: Any) -> Optional[str]:
    """'confidence: medium · or: [cat] title' when the answer is not certain."""
    if v.confidence == "high" and not v.runner_up:
        return None
    text = f"confidence: {v.confidence}"
    if v.runner_up:
        text += f" · or: [{v.runner_up['category']}] {v.runner_up['title']}"
    return text


_QUIET_EVIDENCE = 4
_QUIET_WIDTH = 180


def _cut(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"


def _fold_effects(incidents: List[Incident]) -> List[List[Incident]]:
    """Runs of incidents caused by the same earlier one and titled alike, as groups."""
    groups: List[List[Incident]] = []
    for inc in incidents:
        prev = groups[-1][0] if groups else None
        if (
            prev is not None
            and inc.caused_by is not None
            and inc.caused_by is prev.caused_by
            and inc.display_title == prev.display_title
        ):
            groups[-1].append(inc)
        else:
            groups.append([inc])
    return groups


def _skipped_text(report: TriageReport, out: List[str]) -> None:
    s = report.stats
    if s.skipped_count:
        out.append("")
        out.append(f"skipped {s.skipped_count} path{'s' if s.skipped_count != 1 else ''}:")
        for sk in s.skipped[:20]:
            out.append(f"  {sk.path}: {sk.reason}")
        if s.skipped_count > 20:
            out.append(f"  ... and {s.skipped_count - 20} more (see --json)")
    if s.truncated_lines:
        out.append(f"note: {s.truncated_lines} over-long line(s) were read only up to their first 64 KB")
    if s.dropped_events:
        out.append(f"note: {s.dropped_events} further distinct error lines were counted but not kept")


def render_md(report: TriageReport) -> str:
    out: List[str] = ["# ascend-doctor triage", "", _summary(report), ""]
    job = report.job
    if job.method:
        rank = f"rank {job.first_rank}" if job.first_rank is not None else "not identified"
        out.append(f"**First failing rank:** {rank} ({job.method}) — {job.reason}" if job.method != "incomplete" else f"**Note:** {job.reason}")
        out.append("")
    for note in job.notes:
        out.append(f"**Note:** {note}")
        out.append("")
    index = {id(inc): i for i, inc in enumerate(report.incidents)}
    for i, inc in enumerate(report.incidents):
        v = inc.verdict
        caused = f" (caused by #{index[id(inc.caused_by)] + 1})" if inc.caused_by is not None and id(inc.caused_by) in index else ""
        out.append(f"## {i + 1}. `{v.category}` {inc.display_title}{caused}")
        out.append("")
        out.append(f"- **Cause:** {root_cause_line(inc)}")
        unsure = _unsure(v)
        if unsure:
            out.append(f"- **{unsure.split(':', 1)[0].capitalize()}:**{unsure.split(':', 1)[1]}")
        where = _where(inc)
        if where:
            out.append(f"- **Where:** {where}")
        if v.kb_id:
            out.append(f"- **KB:** `{v.kb_id}`")
        for note in inc.all_notes():
            out.append(f"- **Note:** {note}")
        out.append("")
        out.append("Evidence:")
        out.append("")
        out.append("```")
        for f, ln, t in inc.evidence():
            out.append(f"{f}:{ln}  {t[:300]}")
        out.append("```")
        out.append("")
        if v.fix_text:
            out.append(f"**Fix:** {v.fix_text}")
            out.append("")
        if v.fix_commands:
            out.append("```sh")
            out.extend(v.fix_commands)
            out.append("```")
            out.append("")
    lines: List[str] = []
    _skipped_text(report, lines)
    out.extend(ln for ln in lines if ln)
    return "\n".join(out) + "\n"
