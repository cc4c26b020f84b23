"""The bundle's SUMMARY.md: what to paste into an issue (built from the masked reports only)."""
from __future__ import annotations

from typing import Any, Dict, List, Optional

from .redact import describe_kinds

LABEL = {"chip": "chip", "driver": "driver", "firmware": "firmware", "cann": "CANN", "python": "Python",
         "torch": "torch", "torch_npu": "torch_npu"}
ORDER = ("chip", "driver", "firmware", "cann", "python", "torch", "torch_npu")
PROBLEM = ("fail", "timeout", "error", "warn")


def _cell(text: Any) -> str:
    return str(text if text is not None else "").replace("|", "\\|").replace("\n", " ")


def stack_line(stack: Dict[str, str]) -> str:
    return " · ".join(f"{LABEL[k]} {stack[k]}" for k in ORDER if stack.get(k)) or "no versions detected"


def render_summary(manifest: Dict[str, Any], check: Dict[str, Any], compat: Dict[str, Any],
                   triage: Optional[Dict[str, Any]], masked_kinds: Dict[str, int], secret_env: List[str],
                   files: List[Dict[str, Any]], left_out: List[Dict[str, str]]) -> str:
    host = manifest["host"]
    lines = [f"### ascend-doctor bundle · {host['label']}", ""]
    lines.append(f"ascend-doctor {manifest['tool']['version']} · created {manifest['created']} · "
                 f"user {host.get('user')} · {host.get('arch') or 'arch ?'}")
    if manifest["redacted"]:
        bits = [describe_kinds(masked_kinds)] if masked_kinds else []
        if secret_env:
            bits.append(f"secret variables kept only as 'set': {', '.join(secret_env)}")
        lines.append("Redacted: " + ("; ".join(bits) if bits else "nothing identifying found") +
                     " (masked consistently: the same value has the same mask in every file).")
    else:
        lines.append("**Not redacted** (--no-redact): host names, addresses, user names and secrets are as found.")
    lines += ["", f"**Stack:** {stack_line(host.get('stack') or {})}", ""]

    counts = check["summary"]["counts"]
    lines.append(f"**check:** {check['summary']['verdict']} — " + ", ".join(
        f"{counts[k]} {k}" for k in ("fail", "timeout", "error", "warn", "ok", "skip") if counts.get(k)))
    problems = [f for f in check["findings"] if f["status"] in PROBLEM]
    if problems:
        lines += ["", "| check | status | summary | fix |", "|---|---|---|---|"]
        for f in problems:
            fix = (f.get("fix") or {}).get("commands") or []
            lines.append(f"| `{f['id']}` | {f['status']} | {_cell(f['summary'])} | {_cell('`' + fix[0] + '`' if fix else '')} |")
    lines.append("")
    lines.append(f"**compat:** {compat.get('verdict')}")
    bad = [p for p in compat.get("pairs", []) if p.get("verdict") != "compatible"]
    for p in bad[:6]:
        lines.append(f"- {p['a']} ~ {p['b']}: {p['verdict']} — {_cell(p.get('reason'))}")
    lines.append("")
    if triage is None:
        lines.append("**triage:** no CANN logs found on the host")
    else:
        st = triage.get("stats", {})
        incidents = triage.get("incidents") or []
        job = triage.get("job") or {}
        lines.append(f"**triage of the newest logs:** {len(incidents)} incident{'s' if len(incidents) != 1 else ''} "
                     f"in {st.get('files')} files ({st.get('lines')} lines)")
        if job.get("first_failing_rank") is not None:
            lines.append(f"- first failing rank: **rank {job['first_failing_rank']}** ({job.get('method')}): {_cell(job.get('reason'))}")
        for i, inc in enumerate(incidents[:5], 1):
            where = ", ".join(x for x in (f"rank {inc['rank']}" if inc.get("rank") is not None else "",
                                          f"device {inc['device']}" if inc.get("device") is not None else "",
                                          inc.get("first_seen") or "") if x)
            role = " (symptom)" if inc.get("role") == "symptom" else ""
            lines.append(f"{i}. [{inc.get('category')}] {_cell(inc.get('title'))}{role}" + (f" — {where}" if where else ""))
            ev = inc.get("evidence") or []
            if i == 1 and ev:
                lines.append(f"   ```\n   {ev[0].get('text', '')[:300]}\n   ```")
        if len(incidents) > 5:
            lines.append(f"... and {len(incidents) - 5} more (triage.json)")
    lines += ["", "<details><summary>Bundle contents</summary>", ""]
    kinds: Dict[str, int] = {}
    for f in files:
        kinds[f["kind"]] = kinds.get(f["kind"], 0) + 1
    lines.append(", ".join(f"{n} {k}" for k, n in sorted(kinds.items())) + " files; manifest.json lists each with its size, "
                 "SHA-256, source and what was masked in it.")
    if left_out:
        lines.append("")
        lines.append("Left out:")
        for item in left_out[:10]:
            lines.append(f"- `{item['path']}`: {item['reason']}")
        if len(left_out) > 10:
            lines.append(f"- ... {len(left_out) - 10} more (manifest.json)")
    lines += ["", "</details>", "", "Re-run the triage from the bundle: `ascend-doctor triage BUNDLE.tar.gz`", ""]
    return "\n".join(lines)
