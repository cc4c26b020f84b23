"""Logs checks: recent ERROR incidents in the host's CANN application logs (plog).

The log root is ``$ASCEND_PROCESS_LOG_PATH``, else ``$ASCEND_WORK_PATH``, else
``$HOME/ascend/log`` of the judged user (https://github.com/hicann/runtime/blob/681ef7610df13c8128982901142a2c869ddbb53e/docs/zh/log_ref/viewing_logs_ep.md). The newest
processes' plog and device logs are read through the Host and triaged; what they show is
a past failure, so it is reported as a warning with its root cause and fix.
"""
from __future__ import annotations

import io
import shlex
from typing import List, Optional, Tuple

from ..host import ReadError
from ..model import Evidence, Fix
from ..parsers.plog import parse_plog_file_name
from .base import Context, Result, check, ok, skip, warn
from .environment import toolkit_commands

RECENT_PROCESSES = 10  # the newest processes' logs are read
MAX_BYTES = 48 << 20  # at most this much log text is read by the quick check
_FILE_LIMIT = 21 << 20  # a plog file rolls over at 20 MB


def log_root(ctx: Context) -> Optional[str]:
    env = ctx.host.env
    for key in ("ASCEND_PROCESS_LOG_PATH", "ASCEND_WORK_PATH"):
        value = (env.get(key) or "").strip()
        if value.startswith("/"):
            return value.rstrip("/") or "/"
    home = ctx.host.home()
    return f"{home.rstrip('/')}/ascend/log" if home else None


def recent_log_files(ctx: Context, root: str, processes: int = RECENT_PROCESSES) -> List[Tuple[str, int]]:
    """(path, size) of the newest processes' log files under ``root``, newest process first."""
    host = ctx.host
    by_pid = {}
    for cls in ("debug", "run"):
        for sub in host.listdir(f"{root}/{cls}"):
            if sub != "plog" and not sub.startswith("device-"):
                continue
            d = f"{root}/{cls}/{sub}"
            for name in host.listdir(d):
                meta = parse_plog_file_name(name)
                if meta is None:
                    continue
                path = f"{d}/{name}"
                st = host.stat(path)
                if st is None or st.kind != "file":
                    continue
                newest, files = by_pid.get(meta.pid, ("", []))
                files.append((path, st.size))
                by_pid[meta.pid] = (max(newest, meta.created), files)
    ranked = sorted(by_pid.values(), key=lambda v: v[0], reverse=True)[:processes]
    return [f for _, files in ranked for f in sorted(files)]


def _applies(ctx: Context) -> Optional[str]:
    root = log_root(ctx)
    if root is None:
        return "no HOME or ASCEND_PROCESS_LOG_PATH to find the logs"
    if not ctx.host.is_dir(root):
        return f"no CANN log directory at {root}"
    return None


@check("logs.recent_errors", "Recent errors in CANN logs", "logs", applies=_applies, timeout=20.0)
def recent_errors(ctx: Context) -> Result:
    root = log_root(ctx)
    assert root is not None
    files = recent_log_files(ctx, root)
    if not files:
        return skip(f"no plog files under {root}")
    # the triage engine (every parser and the knowledge base, a tenth of a plain `check`) is
    # loaded only when there are logs to read
    from ..triage.engine import triage_walk
    from ..triage.render import root_cause_line
    from ..triage.sources import Source, Walk, describe

    walk = Walk()
    budget = MAX_BYTES
    for path, size in files:
        if budget <= 0:
            walk.skip(path, "not read: the quick check's size budget is used up")
            continue
        try:
            data = ctx.host.read_bytes(path, limit=min(_FILE_LIMIT, budget))
        except ReadError as exc:
            walk.skip(path, str(exc))
            continue
        budget -= len(data)
        parts = tuple(p for p in path.split("/") if p)
        pid, device, log_class, kind, origin = describe(path, parts, parts[-1])
        walk.sources.append(Source(path, (lambda d=data: io.BytesIO(d)), origin=origin, pid=pid, device=device,
                                   log_class=log_class, kind_hint=kind))
    report = triage_walk(walk)
    n_files = report.stats.files
    skipped = [f"{s.path}: {s.reason}" for s in report.stats.skipped[:5]]
    if not report.incidents:
        return ok(f"no ERROR incidents in the newest {n_files} log file(s) under {root}",
                  evidence=Evidence(found=f"{n_files} files, {report.stats.lines} lines", source=root), details=skipped)
    first = report.incidents[0]
    v = first.verdict
    where = ", ".join(x for x in (
        f"rank {first.rank}" if first.rank is not None else "",
        f"pid {first.pid}" if first.pid is not None else "",
        first.first_seen or "",
    ) if x)
    ev = first.evidence()
    found = f"{ev[0][0]}:{ev[0][1]}: {ev[0][2][:200]}" if ev else root_cause_line(first)
    n = len(report.incidents)
    details = [f"{i + 1}. [{inc.verdict.category}] {root_cause_line(inc)}" for i, inc in enumerate(report.incidents[:10])]
    if report.job.method and report.job.method != "incomplete":
        details.insert(0, f"first failing rank: {report.job.first_rank} ({report.job.method}): {report.job.reason}")
    return warn(
        f"{n} incident{'s' if n != 1 else ''} in recent logs; root cause: {first.display_title}" + (f" ({where})" if where else ""),
        category=v.category,
        evidence=Evidence(found=found, required="no ERROR incidents", source=root),
        fix=Fix(text=v.fix_text + f" Full report: ascend-doctor triage {shlex.quote(ctx.host.here(root))}",
                commands=toolkit_commands(ctx, v.fix_commands)),
        kb=v.kb_id,
        details=details + skipped,
        data={"incidents": n, "root_cause": root_cause_line(first), "log_root": root},
    )
