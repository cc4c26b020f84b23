"""Self-contained HTML reports (inline CSS and SVG; no script, font or image is fetched):

- ``triage_html``: for a multi-rank failure a timeline per rank, the first failure marked
  with its cause, each symptom tied to the incident that caused it; then the incidents.
- ``oom_html``: the verdict and numbers, and from a snapshot a picture of the caching
  pool: each segment a bar, each block in address order, coloured allocated, pending,
  stranded (free inside a segment that live blocks keep from being released) or free
  (in a segment no live block holds, which a cache flush returns).

Both are built from the verbs' JSON documents (the contract fields), plus the snapshot's
segments for the pool picture.
"""
from __future__ import annotations

import re
from datetime import datetime
from html import escape
from typing import Any, Dict, List, Optional, Sequence, Tuple

from .. import __version__

CSS = """
body{font:14px/1.45 -apple-system,'Segoe UI',Roboto,'Helvetica Neue',Arial,sans-serif;margin:24px;color:#1d2329;max-width:1200px}
h1{font-size:20px;margin:0 0 4px} h2{font-size:16px;margin:24px 0 8px} .sub{color:#5b6670;margin:0 0 16px}
.verdict{padding:10px 14px;border-left:4px solid #c62828;background:#fdf1f1;margin:12px 0}
.verdict.ok{border-color:#2e7d32;background:#eef7ee}
code,pre{font:12px/1.4 ui-monospace,Menlo,Consolas,monospace} pre{background:#f5f7f9;padding:8px;overflow-x:auto;white-space:pre-wrap}
table{border-collapse:collapse;margin:8px 0} td,th{padding:3px 10px;border-bottom:1px solid #e3e7eb;text-align:left;vertical-align:top}
th{font-weight:600;background:#f5f7f9} td.num{text-align:right;font-variant-numeric:tabular-nums}
.role-root_cause{color:#c62828;font-weight:600} .role-symptom{color:#b26a00} .role-advisory{color:#5b6670}
.legend span{display:inline-block;margin-right:14px} .sw{display:inline-block;width:12px;height:12px;margin-right:4px;vertical-align:-2px;border:1px solid #0002}
svg text{font:12px -apple-system,'Segoe UI',Roboto,Arial,sans-serif}
footer{margin-top:28px;color:#8a949c;font-size:12px}
"""
COLORS = {"root_cause": "#c62828", "symptom": "#ef8f00", "advisory": "#8a949c",
          "allocated": "#3b6fb6", "pending": "#8e6bbf", "stranded": "#d84315", "free": "#cfd8dc"}
_TS = re.compile(r"(\d{4})-(\d{2})-(\d{2})[-T ](\d{2}):(\d{2}):(\d{2})(?:[.,](\d{1,6}))?(?:[.,](\d{1,3}))?")


def parse_time(text: Optional[str]) -> Optional[float]:
    """Seconds of a plog (2025-10-24-11:27:34.628.139) or ISO-like timestamp; None when absent."""
    if not text:
        return None
    m = _TS.search(text)
    if not m:
        return None
    y, mo, d, h, mi, s = (int(x) for x in m.groups()[:6])
    frac = 0.0
    if m.group(7):
        if m.group(8):  # plog: milliseconds, then microseconds
            frac = int(m.group(7)) / 1e3 + int(m.group(8)) / 1e6
        else:
            frac = float("0." + m.group(7))
    try:
        return datetime(y, mo, d, h, mi, s).timestamp() + frac
    except ValueError:
        return None


def _page(title: str, body: List[str]) -> str:
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'\">"
            f"<title>{escape(title)}</title><style>{CSS}</style></head><body>\n" + "\n".join(body)
            + f"\n<footer>ascend-doctor {escape(__version__)} · self-contained report: nothing is loaded from the network</footer>"
            "\n</body></html>\n")


# ------------------------------------------------------------------------------ triage
def triage_html(doc: Dict[str, Any]) -> str:
    incidents: List[Dict[str, Any]] = doc.get("incidents") or []
    job = doc.get("job") or {}
    stats = doc.get("stats") or {}
    first_rank = job.get("first_failing_rank")
    body = ["<h1>ascend-doctor triage</h1>",
            f"<p class=\"sub\">{len(incidents)} incident{'s' if len(incidents) != 1 else ''} in {stats.get('files', 0)} files "
            f"({stats.get('lines', 0)} lines)</p>"]
    if incidents:
        root = incidents[0]
        body.append(f"<div class=\"verdict\" id=\"root-cause\"><b>Root cause:</b> [{escape(str(root.get('category')))}] "
                    f"{escape(str(root.get('title')))}"
                    + (f"<br><b>First failing rank:</b> <span id=\"first-failing-rank\">rank {escape(str(first_rank))}</span> "
                       f"({escape(str(job.get('method')))}): {escape(str(job.get('reason') or ''))}" if first_rank is not None else "")
                    + "</div>")
    else:
        body.append("<div class=\"verdict ok\">No incidents.</div>")
    ranks = sorted(set(job.get("ranks_seen") or []) | {i["rank"] for i in incidents if i.get("rank") is not None})
    if len(ranks) > 1 or any(i.get("role") == "symptom" for i in incidents):
        body.append("<h2>Timeline per rank</h2>")
        body.append(_timeline(incidents, ranks, first_rank, set(job.get("silent_ranks") or [])))
    body.append("<h2>Incidents</h2>")
    body.append("<table><tr><th>#</th><th>role</th><th>category</th><th>what</th><th>rank</th><th>first seen</th><th>caused by</th></tr>")
    for n, inc in enumerate(incidents, 1):
        role = str(inc.get("role"))
        cb = inc.get("caused_by")
        body.append(f"<tr class=\"incident\"><td>{n}</td><td class=\"role-{escape(role)}\">{escape(role.replace('_', ' '))}</td>"
                    f"<td>{escape(str(inc.get('category')))}</td><td>{escape(str(inc.get('title')))}</td>"
                    f"<td>{'' if inc.get('rank') is None else inc['rank']}</td><td>{escape(str(inc.get('first_seen') or ''))}</td>"
                    f"<td>{'' if cb is None else '#' + str(cb + 1)}</td></tr>")
    body.append("</table>")
    if incidents:
        root = incidents[0]
        ev = root.get("evidence") or []
        fix = root.get("fix") or {}
        body.append("<h2>Evidence and fix for #1</h2>")
        if ev:
            body.append("<pre>" + escape("\n".join(f"{e.get('file')}:{e.get('line')}  {e.get('text')}" for e in ev[:6])) + "</pre>")
        if fix.get("text"):
            body.append(f"<p>{escape(fix['text'])}</p>")
        if fix.get("commands"):
            body.append("<pre>" + escape("\n".join("$ " + c for c in fix["commands"])) + "</pre>")
    return _page("ascend-doctor triage", body)


def _timeline(incidents: Sequence[Dict[str, Any]], ranks: List[int], first_rank: Optional[int], silent: set) -> str:
    timed = [(i, parse_time(i.get("first_seen")), parse_time(i.get("last_seen")) or parse_time(i.get("first_seen")))
             for i in incidents if i.get("rank") is not None]
    times = [t for _, a, b in timed for t in (a, b) if t is not None]
    t0, t1 = (min(times), max(times)) if times else (0.0, 1.0)
    if t1 - t0 < 1e-6:
        t1 = t0 + 1.0
    left, width, row = 90, 760, 34
    height = 40 + row * len(ranks) + 30
    x = lambda t: left + (t - t0) / (t1 - t0) * width  # noqa: E731
    y = {r: 30 + row * k for k, r in enumerate(ranks)}
    out = [f"<svg id=\"timeline\" xmlns=\"http://www.w3.org/2000/svg\" width=\"{left + width + 330}\" height=\"{height}\" role=\"img\" "
           "aria-label=\"timeline of incidents per rank\">"]
    for r in ranks:
        cls = "rank-row first-failing" if r == first_rank else "rank-row"
        fill = "#fdecea" if r == first_rank else ("#f5f7f9" if ranks.index(r) % 2 else "#ffffff")
        out.append(f"<g class=\"{cls}\" data-rank=\"{r}\"><rect x=\"0\" y=\"{y[r] - row / 2 + 2}\" width=\"{left + width + 330}\" "
                   f"height=\"{row - 4}\" fill=\"{fill}\"/>"
                   f"<text x=\"8\" y=\"{y[r] + 4}\" font-weight=\"{'700' if r == first_rank else '400'}\">rank {r}</text>"
                   + (f"<text x=\"{left + width + 12}\" y=\"{y[r] + 4}\" fill=\"#5b6670\">no error of its own</text>" if r in silent and r != first_rank else "")
                   + "</g>")
    index = {id(i): n for n, i in enumerate(incidents)}
    first_marked = False
    for inc, a, b in timed:
        r = inc["rank"]
        if a is None:
            continue
        role = str(inc.get("role"))
        color = COLORS.get(role, "#5b6670")
        n = index[id(inc)] + 1
        if b is not None and x(b) - x(a) >= 1:
            out.append(f"<line x1=\"{x(a):.1f}\" y1=\"{y[r]}\" x2=\"{x(b):.1f}\" y2=\"{y[r]}\" stroke=\"{color}\" stroke-width=\"4\" stroke-opacity=\"0.45\"/>")
        title = f"#{n} {role.replace('_', ' ')}: {inc.get('title')} ({inc.get('first_seen')})"
        if r == first_rank and not first_marked and role == "root_cause":
            first_marked = True
            cx, cy = x(a), y[r]
            out.append(f"<g id=\"first-failure\" class=\"first-failure\"><title>{escape(title)}</title>"
                       f"<polygon points=\"{cx:.1f},{cy - 11} {cx + 11:.1f},{cy} {cx:.1f},{cy + 11} {cx - 11:.1f},{cy}\" fill=\"{color}\" stroke=\"#000\"/>"
                       f"<text class=\"first-failure-label\" x=\"{left + width + 12}\" y=\"{cy + 4}\" fill=\"{color}\" font-weight=\"700\">"
                       f"first failure: {escape(_short(str(inc.get('title')), 40))}</text></g>")
        else:
            out.append(f"<circle class=\"incident-mark role-{escape(role)}\" cx=\"{x(a):.1f}\" cy=\"{y[r]}\" r=\"6\" fill=\"{color}\">"
                       f"<title>{escape(title)}</title></circle>")
            if inc.get("caused_by") is not None and r not in silent:
                out.append(f"<text x=\"{left + width + 12}\" y=\"{y[r] + 4}\" fill=\"{color}\">{escape(_short(str(inc.get('title')), 30))} "
                           f"(caused by #{inc['caused_by'] + 1})</text>")
    axis_y = 30 + row * len(ranks) - 6
    out.append(f"<line x1=\"{left}\" y1=\"{axis_y}\" x2=\"{left + width}\" y2=\"{axis_y}\" stroke=\"#8a949c\"/>")
    for k in range(5):
        t = t0 + (t1 - t0) * k / 4
        label = datetime.fromtimestamp(t).strftime("%H:%M:%S") if times else ""
        out.append(f"<text x=\"{left + width * k / 4:.1f}\" y=\"{axis_y + 18}\" text-anchor=\"middle\" fill=\"#5b6670\">{label}</text>")
    out.append("</svg>")
    legend = ("<p class=\"legend\"><span><span class=\"sw\" style=\"background:#c62828\"></span>root cause (diamond: the first failure)</span>"
              "<span><span class=\"sw\" style=\"background:#ef8f00\"></span>symptom</span>"
              "<span><span class=\"sw\" style=\"background:#8a949c\"></span>advisory</span></p>")
    return "\n".join(out) + legend


def _short(text: str, n: int) -> str:
    return text if len(text) <= n else text[: n - 1] + "…"


# ------------------------------------------------------------------------------ oom
def _gib(n: Optional[float]) -> str:
    if n is None:
        return "?"
    for unit, div in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if abs(n) >= div:
            return f"{n / div:.2f} {unit}"
    return f"{int(n)} B"


def oom_html(doc: Dict[str, Any], segments: Optional[Sequence[Any]] = None, max_rows: int = 80) -> str:
    """``doc``: `oom --json`; ``segments``: SnapshotFacts.segments (with their blocks) or None."""
    verdict = str(doc.get("verdict"))
    summary = doc.get("summary")
    summary = str((summary.get("text") if isinstance(summary, dict) else summary) or doc.get("title") or "")
    if summary.startswith(verdict + ":"):
        summary = summary[len(verdict) + 1:].strip()
    body = ["<h1>ascend-doctor oom</h1>",
            f"<div class=\"verdict{' ok' if verdict == 'none' else ''}\" id=\"oom-verdict\"><b>{escape(verdict)}</b>: "
            f"{escape(summary)}</div>"]
    numbers = doc.get("numbers") or {}
    if segments:
        body.append("<h2>Caching pool</h2>")
        body.append(_pool(segments, numbers.get("requested"), max_rows))
    rows = [(k, v) for k, v in numbers.items() if isinstance(v, (int, float))]
    if rows:
        body.append("<h2>Numbers</h2><table>" + "".join(
            f"<tr><td>{escape(k.replace('_', ' '))}</td><td class=\"num\">{_gib(v)}</td>"
            f"<td>{escape(str((doc.get('number_sources') or {}).get(k, '')))}</td></tr>" for k, v in rows) + "</table>")
    fix = doc.get("fix") or {}
    if isinstance(fix, dict) and fix.get("text"):
        body.append(f"<h2>Fix</h2><p>{escape(fix['text'])}</p>")
        if fix.get("commands"):
            body.append("<pre>" + escape("\n".join("$ " + c for c in fix["commands"])) + "</pre>")
    return _page("ascend-doctor oom", body)


def block_kinds(seg: Any) -> List[Tuple[int, str]]:
    """(size, kind) of a segment's blocks in address order; free blocks of a segment that live
    blocks hold (and that cannot grow or shrink) are 'stranded'."""
    blocks = list(getattr(seg, "blocks", []) or [])
    if not blocks:  # a segment list without blocks: its sums, in one piece each
        blocks = [(seg.allocated, "allocated"), (seg.pending, "pending"), (seg.free, "free")]
    stranded = not seg.whole_free and not seg.expandable
    return [(size, "stranded" if kind == "free" and stranded else kind) for size, kind in blocks if size > 0]


def _pool(segments: Sequence[Any], request: Optional[int], max_rows: int) -> str:
    segs = sorted(segments, key=lambda s: (s.address is None, s.address or 0))
    shown = sorted(segs, key=lambda s: -s.total)[:max_rows]
    shown_ids = {id(s) for s in shown}
    segs = [s for s in segs if id(s) in shown_ids]
    totals = {"allocated": 0, "pending": 0, "stranded": 0, "free": 0}
    for s in segments:
        for size, kind in block_kinds(s):
            totals[kind] += size
    left, width, row = 150, 820, 18
    height = row * len(segs) + 10
    out = [f"<p>{len(segments)} segments, {_gib(sum(s.total for s in segments))} reserved: "
           + ", ".join(f"<span class=\"total-{k}\">{k} {_gib(v)}</span>" for k, v in totals.items())
           + (f"; the failed request: {_gib(request)}" if request else "") + "</p>"]
    legend = "".join(f"<span><span class=\"sw\" style=\"background:{COLORS[k]}\"></span>{k}</span>"
                     for k in ("allocated", "pending", "stranded", "free"))
    out.append(f"<p class=\"legend\">{legend} (stranded: free inside a segment that live blocks keep from being released)</p>")
    out.append(f"<svg id=\"pool\" xmlns=\"http://www.w3.org/2000/svg\" width=\"{left + width + 20}\" height=\"{height}\" role=\"img\" aria-label=\"caching pool segments and blocks\">")
    for k, s in enumerate(segs):
        y0 = 4 + k * row
        seg_w = float(width)  # every segment drawn full width: its label gives the size
        label = f"{_gib(s.total)} {s.pool}" + (" exp" if s.expandable else "")
        out.append(f"<g class=\"segment\" data-total=\"{s.total}\"><text x=\"4\" y=\"{y0 + 12}\">{escape(label)}</text>"
                   f"<rect x=\"{left}\" y=\"{y0}\" width=\"{seg_w:.1f}\" height=\"{row - 4}\" fill=\"none\" stroke=\"#8a949c\"/>")
        xpos = float(left)
        for size, kind in block_kinds(s):
            w = size / s.total * seg_w if s.total else 0
            out.append(f"<rect class=\"block {kind}\" x=\"{xpos:.2f}\" y=\"{y0}\" width=\"{max(w, 0.6):.2f}\" height=\"{row - 4}\" "
                       f"fill=\"{COLORS[kind]}\"><title>{kind} {_gib(size)}</title></rect>")
            xpos += w
        out.append("</g>")
    out.append("</svg>")
    if len(segments) > len(segs):
        out.append(f"<p class=\"sub\">the {len(segs)} largest of {len(segments)} segments are drawn</p>")
    return "\n".join(out)
