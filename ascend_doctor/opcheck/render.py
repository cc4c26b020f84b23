"""Text and Markdown views of an opcheck report (JSON comes from ``Report.to_json``)."""
from __future__ import annotations

from typing import Any, Dict, List, Optional, Tuple

from ascend_doctor import output
from ascend_doctor.opcheck.classify import OpVerdict
from ascend_doctor.opcheck.diff import OpChange, Report

VERDICT_LINE = {
    "breaks": "BREAKS: ops this model uses fail on the target",
    "slower": "SLOWER: ops this model uses move to the CPU on the target",
    "changes": "CHANGES: nothing breaks; some ops take another path (test them)",
    "same": "SAME: every op this model uses behaves as before",
}
GROUPS = (
    ("breaks", "What breaks"),
    ("slower", "What gets slower (newly on the CPU)"),
    ("on_cpu", "Already on the CPU in both versions"),
    ("test", "What to test"),
    ("faster", "What gets faster"),
)
FALLBACK_HOWTO = (
    "On the NPU each CPU-fallback op prints once: \"CAUTION: The operator '<op>' is not currently supported on the "
    "NPU backend and will fall back to run on the CPU.\" TORCH_NPU_WARNING_DISABLE=1 hides it."
)


def _version(r: Dict[str, Any]) -> str:
    text = f"{r['given']} -> {r['branch']} (torch {r['torch']}, torch_npu {r['wheel']}, CANN {r['cann'] or 'unknown'})"
    if r.get("data") == "wheel":
        text += f" [ops: {r['source']}]"
    return text


def _state(v: OpVerdict) -> str:
    if v.status == "npu":
        return f"NPU {v.path}"
    if v.status == "covered":
        return "inside " + "+".join(v.covered_by)
    return {"cpu_fallback": "CPU fallback", "tocpu": "CPU (tocpu)"}.get(v.status, v.status)


def _recorded(report: Report) -> str:
    m = report.manifest
    rec = m.recorded or {}
    bits = [f"{len(m.ops)} ops, {m.total_calls} calls"]
    if rec.get("torch"):
        bits.append(f"recorded with torch {rec['torch']}")
    if rec.get("mode"):
        bits.append(f"{rec['mode']} tensors")
    return ", ".join(bits)


# Order inside "What to test": kernel changes first, bookkeeping last.
TEST_ORDER = ("removed_but_decomposed", "newly_npu_kernel", "path_changed", "dtype_warning", "unknown",
              "no_longer_covered", "now_covered")


def _visible(report: Report, impact: str) -> List[OpChange]:
    """Changes to list under a heading; ops absorbed into (or released by) a composite op
    whose own change is listed are folded into that op's line."""
    changed = {c.op for c in report.changes if c.change and c.change not in ("now_covered", "no_longer_covered")}
    items = [c for c in report.group(impact) if not (c.parent and c.parent in changed)]
    if impact == "test":
        items.sort(key=lambda c: (TEST_ORDER.index(c.change) if c.change in TEST_ORDER else len(TEST_ORDER), c.op))
    return items


def _group_paths(items: List[OpChange], least: int = 3) -> Tuple[List[OpChange], List[Tuple[str, List[OpChange]]]]:
    """Path changes shared by ``least`` or more ops are shown once, with the op list."""
    by: Dict[str, List[OpChange]] = {}
    for c in items:
        if c.change == "path_changed" and c.detail:
            by.setdefault(c.detail, []).append(c)
    grouped = {d: ops for d, ops in by.items() if len(ops) >= least}
    singles = [c for c in items if not (c.change == "path_changed" and c.detail in grouped)]
    return singles, sorted(grouped.items(), key=lambda kv: -len(kv[1]))


def _absorbed(report: Report, op: str) -> List[str]:
    return [c.op for c in report.changes if c.change == "now_covered" and c.parent == op]


def _tally(report: Report) -> str:
    names = {"breaks": "break", "slower": "newly on the CPU", "on_cpu": "on the CPU in both",
             "test": "to test", "faster": "faster"}
    return ", ".join(f"{len(_visible(report, k))} {v}" for k, v in names.items())


def _change_row(c: OpChange, report: Report) -> List[str]:
    """[op, calls, what changes + why, hint, ... one per line]: a row of a group's table."""
    lines = [f"{_state(c.before)} -> {_state(c.after)}"]
    if c.why:
        lines.append(c.why)
    absorbed = _absorbed(report, c.op)
    if absorbed:
        shown = ", ".join(absorbed[:6]) + (f" and {len(absorbed) - 6} more" if len(absorbed) > 6 else "")
        lines.append(f"replaces {len(absorbed)} recorded op{'s' if len(absorbed) != 1 else ''}: {shown}")
    if c.children:
        kids = ", ".join(f"{o} ({s})" for o, s in c.children[:8])
        more = f" and {len(c.children) - 8} more" if len(c.children) > 8 else ""
        lines.append(f"runs as: {kids}{more}")
    if c.hint:
        lines.append(f"hint: {c.hint}")
    return [c.op, f"x{c.calls}", "\n".join(lines)]


def to_text(report: Report, show_all: bool = False) -> str:
    out: List[str] = []
    m = report.manifest
    out.append(f"opcheck {m.path or '(manifest)'}: {_recorded(report)}")
    out.append(f"  from {_version(report.source)}")
    out.append(f"  to   {_version(report.target)}")
    if report.skew:
        out.append(f"  warning: {report.skew.note}")
    out.append("")
    out.append(VERDICT_LINE[report.verdict])
    out.append("  " + _tally(report))
    for impact, title in GROUPS:
        items = _visible(report, impact)
        if not items:
            continue
        out.append("")
        out.append(f"{title} ({len(items)})")
        singles, groups = _group_paths(items)
        if singles:
            out += output.table_lines(None, [_change_row(c, report) for c in singles], right=(1,))
        for detail, ops in groups:
            out.append(f"  {len(ops)} ops: {detail}")
            out.append("      " + ", ".join(f"{c.op} x{c.calls}" for c in ops))
    unchanged = [c for c in report.changes if c.change is None]
    counts: Dict[str, int] = {}
    for c in unchanged:
        counts[c.after.status] = counts.get(c.after.status, 0) + 1
    out.append("")
    labels = {"npu": "NPU kernel", "covered": "inside a fused parent", "decomposed": "decomposed by PyTorch",
              "cpu_fallback": "CPU fallback", "tocpu": "CPU (tocpu)", "unknown": "unknown", "unsupported": "unsupported"}
    out.append(
        f"Unchanged: {len(unchanged)} ops ("
        + ", ".join(f"{n} {labels.get(s, s)}" for s, n in sorted(counts.items(), key=lambda kv: -kv[1]))
        + ")"
    )
    if report.group("slower") or report.group("on_cpu"):
        out.append("")
        out.append(FALLBACK_HOWTO)
    if show_all:
        out.append("")
        out.append("All ops:")
        out += output.table_lines(["op", "calls", "from", "to"],
                                  [(c.op, c.calls, _state(c.before), _state(c.after)) for c in report.changes],
                                  right=(1,))
    for n in _other_notes(report):
        out.append(f"note: {n}")
    return "\n".join(out) + "\n"


def _other_notes(report: Report) -> List[str]:
    """Notes not already shown as the warning at the top."""
    return [n for n in report.notes if not (report.skew and n == report.skew.note)]


def _md_escape(text: str) -> str:
    return text.replace("|", "\\|")


def to_markdown(report: Report, show_all: bool = False) -> str:
    m = report.manifest
    out = [
        *output.md_heading("opcheck", _md_escape(m.path or "manifest")),
        f"- manifest: {_recorded(report)}",
        f"- from: `{report.source['given']}` → `{report.source['branch']}` (torch {report.source['torch']}, CANN {report.source['cann']}; ops: {report.source.get('source', '')})",
        f"- to: `{report.target['given']}` → `{report.target['branch']}` (torch {report.target['torch']}, CANN {report.target['cann']}; ops: {report.target.get('source', '')})",
        "",
    ]
    if report.skew:
        out += [f"> **warning:** {_md_escape(report.skew.note)}", ""]
    out += [
        f"**{VERDICT_LINE[report.verdict]}** ({_tally(report)})",
    ]
    for impact, title in GROUPS:
        items = _visible(report, impact)
        if not items:
            continue
        out += ["", f"## {title} ({len(items)})", "", "| op | calls | from | to | why |", "|---|---:|---|---|---|"]
        singles, groups = _group_paths(items)
        for detail, ops in groups:
            names = ", ".join(f"`{c.op}`" for c in ops)
            out.append(f"| {names} | {sum(c.calls for c in ops)} | | | {_md_escape(detail)} |")
        for c in singles:
            why = c.why + (f". Hint: {c.hint}" if c.hint else "")
            absorbed = _absorbed(report, c.op)
            if absorbed:
                why += f". Replaces {len(absorbed)} recorded op{'s' if len(absorbed) != 1 else ''}: " + ", ".join(f"`{o}`" for o in absorbed[:6])
            if c.children:
                why += ". Runs as: " + ", ".join(f"`{o}` ({s})" for o, s in c.children[:8])
            out.append(f"| `{c.op}` | {c.calls} | {_md_escape(_state(c.before))} | {_md_escape(_state(c.after))} | {_md_escape(why)} |")
    unchanged = [c for c in report.changes if c.change is None]
    out += ["", f"Unchanged: {len(unchanged)} ops."]
    if show_all:
        out += ["", "## All ops", ""]
        out += output.md_table(["op", "calls", "from", "to"],
                               [(f"`{c.op}`", c.calls, _state(c.before), _state(c.after)) for c in report.changes],
                               right=(1,))
    if _other_notes(report):
        out += [""] + [f"> note: {_md_escape(n)}" for n in _other_notes(report)]
    return "\n".join(out) + "\n"


# ---------------------------------------------------------------------------- opcheck record
def record_json(path: str, manifest: Any) -> str:
    """``opcheck record --json``: where the manifest went and what it holds."""
    rec = manifest.recorded or {}
    summary = {"ops": len(manifest.ops), "calls": manifest.total_calls, "complete": rec.get("complete", True)}
    return output.dumps(output.envelope(summary, {"manifest": path, "ops": len(manifest.ops),
                                                  "calls": manifest.total_calls,
                                                  "complete": rec.get("complete", True), "recorded": rec}))


def record_md(summary: str) -> str:
    """``opcheck record --format md``: the one line of what was recorded, under the shared heading."""
    return "\n".join(output.md_heading("opcheck record") + [summary]) + "\n"


# ---------------------------------------------------------------------------- opcheck versions
def versions_doc() -> Dict[str, Any]:
    """The torch_npu lines and builds the op data covers (every one is a valid --from/--to),
    and the release branches read from upstream files: the ``opcheck versions --json`` document."""
    from compat_matrix import op_support
    from compat_matrix.op_support import store

    rels = op_support.releases()
    wheels = {r.wheel: r for r in store.wheel_releases()}
    lines = store.wheel_lines()
    payload = {
        "lines": [{"line": ln["line"], "torch": wheels[ln["base"]].torch, "newest": ln["base"],
                   "counts": dict(wheels[ln["base"]].counts),
                   "builds": [{"wheel": w, "cann": wheels[w].cann or None, "cann_basis": wheels[w].cann_basis,
                               "branch": wheels[w].git_branch, "ops": wheels[w].counts.get("total"),
                               "source": wheels[w].source} for w in ln["builds"]]}
                  for ln in lines],
        "unreadable": store.wheel_unreadable(),
        "releases": [dict(r.to_json(), counts=dict(r.counts)) for r in rels],
    }
    summary = {"lines": len(lines), "builds": len(wheels), "unreadable": len(payload["unreadable"]),
               "releases": len(rels)}
    return output.envelope(summary, payload)


def _version_rows(doc: Dict[str, Any]) -> List[List[Any]]:
    rows = []
    for ln in reversed(doc["lines"]):
        base = next(b for b in ln["builds"] if b["wheel"] == ln["newest"])
        c = ln["counts"]
        others = [b["wheel"] for b in ln["builds"] if b["wheel"] != ln["newest"]]
        shown = ", ".join(w[len(ln["line"]):] or w for w in reversed(others))
        rows.append([ln["line"], ln["torch"], ln["newest"], base["cann"] or "?", c.get("total", 0), c.get("aten", 0),
                     c.get("npu", 0), f"{len(ln['builds'])}" + (f" (also {shown})" if shown else "")])
    return rows


_VERSION_HEAD = ["line", "torch", "newest", "CANN", "ops", "aten", "npu", "builds"]
_RELEASE_HEAD = ["branch", "release", "torch", "wheel", "CANN", "ops"]


def _release_rows(doc: Dict[str, Any]) -> List[List[Any]]:
    return [[r["branch"], r["release"], r["torch"], r["wheel"], r["cann"], r["counts"].get("total", "")]
            for r in doc["releases"]]


def _unreadable_line(doc: Dict[str, Any]) -> str:
    if doc["unreadable"]:
        return "not readable: " + "; ".join(f"{u['wheel']}: {u['reason']}" for u in doc["unreadable"])
    return "every build on the index was read; any of them is a --from/--to"


def versions_text(doc: Dict[str, Any], stream: Optional[Any] = None) -> str:
    out = [f"torch_npu lines, each build read from its own wheel (pypi: torch-npu==V): {doc['summary']['builds']} builds"]
    out += output.table_lines(_VERSION_HEAD, _version_rows(doc), right=(4, 5, 6), indent=0, stream=stream)
    out += [_unreadable_line(doc), "", "release branches (upstream op-plugin and torch_npu files at the branch's commit)"]
    out += output.table_lines(_RELEASE_HEAD, _release_rows(doc), right=(5,), indent=0, stream=stream)
    return "\n".join(out) + "\n"


def versions_md(doc: Dict[str, Any]) -> str:
    out = [*output.md_heading("opcheck versions"),
           f"torch_npu lines, each build read from its own wheel (`pip download torch-npu==V`): "
           f"{doc['summary']['builds']} builds", ""]
    out += output.md_table(_VERSION_HEAD, _version_rows(doc), right=(4, 5, 6))
    out += ["", _unreadable_line(doc), "", "## Release branches", "",
            "Upstream op-plugin and torch_npu files at the branch's commit.", ""]
    out += output.md_table(_RELEASE_HEAD, _release_rows(doc), right=(5,))
    return "\n".join(out) + "\n"
