"""Text and Markdown views of the ``profile`` document (the JSON is the document itself)."""
from __future__ import annotations

from typing import Any, Dict, List, Optional

from .. import output


def _pct(x: Optional[float]) -> str:
    return "n/a" if x is None else f"{x:.1f}%"


def _ms(us: Optional[float]) -> str:
    return "n/a" if us is None else f"{us / 1000:.2f} ms"


def _device_label(d: Dict[str, Any]) -> str:
    return f"rank {d['rank']} (device {d['device']})" if d.get("rank") is not None else f"device {d['device']}"


def _show(path: str) -> str:
    """A path as short as it can be said: relative to the working directory when under it."""
    import os

    try:
        rel = os.path.relpath(path)
    except ValueError:
        return path
    return path if rel.startswith("..") else rel


def render_json(doc: Dict[str, Any]) -> str:
    return output.dumps(doc).rstrip("\n")


def render_text(doc: Dict[str, Any], verbose: int = 0) -> str:
    out: List[str] = []
    runs = doc.get("runs", [])
    devs = doc.get("devices", [])
    out.append(f"ascend-doctor profile: {len(runs)} run{'s' if len(runs) != 1 else ''}, {len(devs)} device{'s' if len(devs) != 1 else ''}")
    out += output.table_lines(None, [
        (r["layout"], _show(r["path"]),
         ", ".join(f"{k} {r[k]}" for k in ("torch_npu", "cann", "level", "rank") if r.get(k) is not None))
        for r in runs])
    out.append("")
    limit = len(devs) if verbose else 8
    for d in devs[:limit]:
        out.append(f"{_device_label(d)}: span {_ms(d['span_us'])}, busy {_pct(d['busy_pct'])}, "
                   f"communication {_pct(d['comm_pct'])}, copies {_pct(d['copy_pct'])}")
        if d["largest_gaps"]:
            out.append("  largest idle gaps: " + ", ".join(f"{g['gap_us']:.0f} us" for g in d["largest_gaps"]))
        if d["top_ops"]:
            out += output.table_lines(
                ["top ops", "core", "count", "total", "share"],
                [(o["type"], o["core"], o["count"], _ms(o["total_us"]), f"{o['share_pct']:.1f}%")
                 for o in d["top_ops"][: 10 if verbose else 5]], right=(2, 3, 4))
        s = d["small_ops"]
        if s.get("kernels"):
            out.append(f"  small kernels (< {s['threshold_us']:.0f} us): {s['count']} of {s['kernels']} ({s['share_pct']:.0f}%), "
                       f"longest run {s['longest_run']}")
        if d["dynamic_shape_ops"]:
            out.append("  shapes per op: " + ", ".join(f"{x['type']} {x['shapes']}" for x in d["dynamic_shape_ops"][:6]))
        for sp in d["slow_path_ops"][:5]:
            out.append(f"  slow path: {sp['type']} ({sp['core']}): {sp['reason']}")
        out.append("")
    if len(devs) > limit:
        out.append(f"({len(devs) - limit} more devices; -v shows them)")
        out.append("")
    if doc.get("slowest_rank") is not None:
        out.append(f"slowest rank: {doc['slowest_rank']} ({doc.get('slowest_rank_reason')})")
        out.append("")
    findings = doc.get("findings", [])
    if not findings:
        out.append("No finding: nothing in these files points at dispatch, copies, fusion, dynamic shapes, slow paths or communication.")
    else:
        out.append(f"{len(findings)} finding{'s' if len(findings) != 1 else ''}, the largest time at stake first:")
        for i, f in enumerate(findings[: len(findings) if verbose else 8], 1):
            out.append(f"{i}. [{f['layer']}] {f['summary']}")
            out.append(f"   evidence: {f['evidence']}")
            out.append(f"   fix: {f['fix']}")
            for c in f.get("commands") or []:
                out.append(f"     $ {c}")
        if len(findings) > 8 and not verbose:
            out.append(f"({len(findings) - 8} more; -v shows them)")
    for n in doc.get("notes", [])[:5]:
        out.append(f"note: {n}")
    return "\n".join(out).rstrip() + "\n"


def render_md(doc: Dict[str, Any]) -> str:
    devs = doc.get("devices", [])
    out = output.md_heading("profile")
    out += output.md_table(["device", "rank", "span", "busy", "communication", "copies", "top op"],
                           [(d["device"], "" if d["rank"] is None else d["rank"], _ms(d["span_us"]), _pct(d["busy_pct"]),
                             _pct(d["comm_pct"]), _pct(d["copy_pct"]), d["top_ops"][0]["type"] if d["top_ops"] else "")
                            for d in devs], right=(2, 3, 4, 5))
    out.append("")
    if doc.get("slowest_rank") is not None:
        out.append(f"**Slowest rank:** {doc['slowest_rank']} ({doc.get('slowest_rank_reason')})")
        out.append("")
    for i, f in enumerate(doc.get("findings", []), 1):
        out.append(f"{i}. **[{f['layer']}] {f['summary']}**  ")
        out.append(f"   evidence: {f['evidence']}  ")
        out.append(f"   fix: {f['fix']}")
    if not doc.get("findings"):
        out.append("No finding.")
    return "\n".join(out) + "\n"


def render_compare_text(doc: Dict[str, Any], verbose: int = 0) -> str:
    out: List[str] = []
    vb, vn = doc["versions"]["base"], doc["versions"]["new"]

    def vers(v: Dict[str, str]) -> str:
        return ", ".join(f"{k} {v[k]}" for k in ("torch_npu", "cann") if k in v) or "versions not recorded"

    out.append("ascend-doctor profile compare")
    out.append(f"  base: {', '.join(_show(p) for p in doc['inputs']['base'])}  ({vers(vb)})")
    out.append(f"  new:  {', '.join(_show(p) for p in doc['inputs']['new'])}  ({vers(vn)})")
    for side in ("base", "new"):
        devs = doc[side]["devices"]
        busy = [d["busy_pct"] for d in devs if d["busy_pct"] is not None]
        span = [d["span_us"] for d in devs if d["span_us"]]
        if busy:
            out.append(f"  {side:<4}  span {_ms(max(span) if span else None)}, busy {sum(busy) / len(busy):.1f}%")
    out.append("")
    rows = []
    for c in doc["changes"][: 25 if verbose else 10]:
        ratio = "new" if c["ratio"] is None else f"x{c['ratio']:.2f}"
        core = ""
        if c["base_core"] and c["new_core"] and c["base_core"] != c["new_core"]:
            core = f"{c['base_core']} -> {c['new_core']}"
        rows.append((c["type"], _ms(c["base_us"]), _ms(c["new_us"]), ratio, core))
    out += output.table_lines(["op type", "base", "new", "ratio", "cores"], rows, right=(1, 2, 3))
    if doc["changes"]:
        first = doc["changes"][0]
        delta = first["new_us"] - first["base_us"]
        out.append("")
        out.append(f"Largest change: {first['type']} {'saves' if delta < 0 else 'adds'} {abs(delta) / 1000:.2f} ms"
                   + (f" (x{first['ratio']:.2f})" if first["ratio"] is not None else " (new in NEW)"))
    return "\n".join(out) + "\n"


def render_compare_md(doc: Dict[str, Any]) -> str:
    out = output.md_heading("profile compare")
    for side in ("base", "new"):
        v = doc["versions"][side]
        vers = ", ".join(f"{k} {v[k]}" for k in ("torch_npu", "cann") if k in v) or "versions not recorded"
        out.append(f"- **{side}**: `{', '.join(_show(p) for p in doc['inputs'][side])}` ({vers})")
    out.append("")
    out += output.md_table(["op type", "base (us)", "new (us)", "ratio", "cores"], [
        (c["type"], f"{c['base_us']:.1f}", f"{c['new_us']:.1f}", "" if c["ratio"] is None else c["ratio"],
         c["base_core"] if c["base_core"] == c["new_core"] else f"{c['base_core'] or '-'} -> {c['new_core'] or '-'}")
        for c in doc["changes"][:20]], right=(1, 2, 3))
    return "\n".join(out) + "\n"
