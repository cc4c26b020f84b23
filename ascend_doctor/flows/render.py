"""diagnose's output: the JSON document (docs/output.md's envelope), text and Markdown."""
from __future__ import annotations

import textwrap
from typing import Any, Dict, List, Optional

from .. import output

MARK = {"confirmed": "✗", "ruled_out": "✓", "inconclusive": "?", "not_run": "-"}
LABEL = {"confirmed": "confirmed", "ruled_out": "ruled out", "inconclusive": "inconclusive", "not_run": "not run"}
VERDICTS = tuple(MARK)
WRAP = 92  # detail text is folded here, so a file gets the same lines as a terminal


def to_json(result: Any, why: str, sim: Optional[str] = None) -> Dict[str, Any]:
    steps = [s.to_json() for s in result.steps]
    cause = result.cause
    summary = {
        "symptom": result.flow.symptom,
        "cause": {"category": cause.get("category"), "step": cause.get("step")} if cause else None,
        "steps": output.counts((s["verdict"] for s in steps), VERDICTS),
        "left": len(result.left),
    }
    doc: Dict[str, Any] = output.envelope(summary, {
        "symptom": result.flow.symptom,
        "symptom_reason": why,
        "flow": result.flow.title,
        "steps": steps,
        "cause": cause,
        "ruled_out": [s.id for s in result.steps if s.verdict == "ruled_out"],
        "left": result.left,
    })
    if sim:
        doc["sim"] = sim
    return doc


def _labelled(label: str, text: str, width: int = WRAP) -> List[str]:
    lines = textwrap.wrap(text, width=width - len(label), break_on_hyphens=False) or [""]
    return [label + lines[0]] + [" " * len(label) + ln for ln in lines[1:]]


def _wrap(label: str, text: str, width: int = 100) -> List[str]:
    return ["      " + ln for ln in _labelled(label, text, width - 6)]


def render_text(doc: Dict[str, Any]) -> str:
    lines = [f"ascend-doctor diagnose: {doc['symptom']} -- {doc['flow']}", f"  why this flow: {doc['symptom_reason']}", ""]
    rows = []
    for n, s in enumerate(doc["steps"], 1):
        cell = [f"{s['id']}: {s['question']}"]
        if s["ran"]:
            cell += _labelled("ran:   ", s["ran"])
        cell += _labelled("found: ", s["found"])
        if s.get("means"):
            cell += _labelled("means: ", s["means"])
        if s["verdict"] == "not_run":
            cell += _labelled("collect: ", s.get("collect") or "")
            cell += _labelled("run:     ", s.get("command") or "")
        rows.append([f"{n}.", f"{MARK[s['verdict']]} {LABEL[s['verdict']]}", "\n".join(cell)])
    lines += output.table_lines(None, rows, right=(0,))
    lines.append("")
    cause = doc["cause"]
    if cause:
        lines += _wrap("", f"CAUSE ({cause['category']}{', ' + cause['layer'] if cause.get('layer') else ''}): {cause['summary']}")
        fix = cause.get("fix") or {}
        if fix.get("text"):
            lines += _wrap("fix: ", fix["text"])
        for cmd in fix.get("commands") or []:
            lines.append(f"        $ {cmd}")
    else:
        lines.append("      no cause confirmed.")
    if doc["ruled_out"]:
        lines.append(f"      ruled out: {', '.join(doc['ruled_out'])}")
    left = [i for i in doc["left"] if i["verdict"] != "not_reached"]
    if left:
        lines.append("      left open:")
        for item in left:
            tail = f" -> {item['command']}" if item.get("command") else ""
            lines.append(f"        {item['id']} ({item['verdict'].replace('_', ' ')}){tail}")
    not_reached = [i["id"] for i in doc["left"] if i["verdict"] == "not_reached"]
    if not_reached:
        lines.append(f"      not reached: {', '.join(not_reached)}")
    return "\n".join(lines) + "\n"


def render_md(doc: Dict[str, Any]) -> str:
    lines = [*output.md_heading("diagnose", doc["symptom"]),
             f"{doc['flow']}. Why this flow: {output.md_cell(doc['symptom_reason'])}.", ""]
    rows = []
    for n, s in enumerate(doc["steps"], 1):
        found = s["found"] + (f" Collect: {s.get('collect')}; run `{s.get('command')}`" if s["verdict"] == "not_run" else "")
        rows.append((n, f"{s['id']}: {s['question']}", LABEL[s["verdict"]], found, s["next"] or ""))
    lines += output.md_table(["#", "step", "verdict", "found", "next"], rows)
    lines.append("")
    cause = doc["cause"]
    if cause:
        lines.append(f"**Cause ({cause['category']})**: {output.md_cell(cause['summary'])}")
        fix = cause.get("fix") or {}
        if fix.get("text"):
            lines += ["", f"**Fix**: {output.md_cell(fix['text'])}"]
        if fix.get("commands"):
            lines += ["", "```sh"] + list(fix["commands"]) + ["```"]
    else:
        lines.append("No cause confirmed.")
    if doc["left"]:
        lines += ["", "Left: " + ", ".join(f"{i['id']} ({i['verdict'].replace('_', ' ')})" for i in doc["left"])]
    return "\n".join(lines) + "\n"
