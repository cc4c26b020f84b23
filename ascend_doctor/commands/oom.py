"""``ascend-doctor oom [TEXT] [--file F]... [--stats F] [--snapshot F] [--npu-smi F]``:
capacity, fragmentation of the caching pool, or memory held by someone else?

TEXT is the pasted out-of-memory line (``-`` reads it from stdin); ``--file`` scans logs
(console output, plog trees, ``.gz``, tar archives) for it and for the cache flushes
before it; ``--stats`` takes ``torch.npu.memory_stats()`` (JSON, the printed dict, or
the ``memory_summary()`` table); ``--snapshot`` a memory snapshot (pickle or JSON);
``--npu-smi`` the output of ``npu-smi info`` (who else holds the device). Any
combination works; each adds numbers and evidence. Each F is a regular file or ``-``
(stdin, for one input at a time); a shell's process substitution (``--stats <(cat s.json)``,
a ``/dev/fd/N`` pipe) is read like stdin. A FIFO, socket, device node or a file under
``/proc``, ``/sys`` or ``/dev`` is refused before it is opened (one line, exit 2): a FIFO
with no writer would hang the run.

Exit codes: 0 no out-of-memory and no warning sign (verdict ``none``), 1 an
out-of-memory was analysed or the statistics show risk (stranded memory, cache flushes),
2 bad input (nothing given, empty text, text without an out-of-memory message, a file
that is not a snapshot, statistics with the wrong keys, an unknown --torch-npu), 3
internal error.
"""
from __future__ import annotations

import io
import sys
from typing import Any, BinaryIO, List, Optional, TextIO

from ..core.units import format_size, parse_size
from ..errors import UsageError
from ..inputs import os_message
from ..memory import MemoryInputError
from ..memory.advice import check_conf, release_from_text
from ..memory.device_usage import npu_smi_facts
from ..memory.input_file import open_input
from ..memory.message import scan_paths, scan_text
from ..memory.render import render_json, render_md, render_text
from ..memory.snapshot import load_snapshot
from ..memory.stats import load_stats
from ..memory.verdict import Inputs, analyze
from ..memory.watch import fragmentation_metrics, prometheus_text
from .common import output_format

MAX_TEXT = 1 << 20


def _read_text_file(path: str, what: str, stdin: Optional[BinaryIO] = None, limit: int = 16 << 20) -> str:
    fh = open_input(path, what, stdin)  # refuses FIFOs, devices and /proc files before opening
    try:
        raw = fh.read(limit)
    except OSError as exc:
        raise UsageError(os_message(f"{what} {path}", exc)) from None
    finally:
        if path != "-":
            fh.close()
    return raw.decode("utf-8", errors="replace") if isinstance(raw, bytes) else str(raw)


def run_oom(
    text: Optional[str] = None,
    files: Optional[List[str]] = None,
    stats: Optional[str] = None,
    snapshot: Optional[str] = None,
    npu_smi: Optional[str] = None,
    device: Optional[int] = None,
    pid: Optional[int] = None,
    torch_npu: Optional[str] = None,
    alloc_conf: Optional[str] = None,
    fmt: str = "text",
    json_flag: bool = False,
    out: Optional[TextIO] = None,
    stdin: Optional[BinaryIO] = None,
) -> int:
    """Analyse the inputs and print the diagnosis; returns the exit code. Bad input raises UsageError."""
    out = out or sys.stdout
    fmt = output_format(fmt, json_flag)
    files = list(files or [])
    if text is None and not files and not stats and not snapshot:
        raise UsageError("give the out-of-memory line (or - for stdin), --file LOG, --stats FILE or --snapshot FILE")
    readers = [name for name, wants in (("TEXT", text is not None and text.strip() == "-"), ("--file", "-" in files),
                                        ("--stats", stats == "-"), ("--snapshot", snapshot == "-"),
                                        ("--npu-smi", npu_smi == "-")) if wants]
    if len(readers) > 1:
        raise UsageError(f"stdin can be read once: use - for one input only, not for {' and '.join(readers)}")
    if device is not None and device < 0:
        raise UsageError(f"--device {device}: must be 0 or more")
    try:
        if alloc_conf is not None:
            check_conf(alloc_conf)
        return _run(text, files, stats, snapshot, npu_smi, device, pid, torch_npu, alloc_conf, fmt, out, stdin)
    except MemoryInputError as exc:
        raise UsageError(str(exc)) from None


def _run(text: Optional[str], files: List[str], stats_path: Optional[str], snapshot_path: Optional[str],
         npu_smi_path: Optional[str], device: Optional[int], pid: Optional[int], torch_npu: Optional[str],
         alloc_conf: Optional[str], fmt: str, out: TextIO, stdin: Optional[BinaryIO]) -> int:
    release = _release(torch_npu)
    log = _log_facts(text, files, stdin)
    hit = log.first_oom if log is not None else None
    use_device = device if device is not None else (hit.record.device if hit is not None else None)
    stats = load_stats(stats_path, device=use_device, stdin=stdin) if stats_path else None
    if use_device is None and stats is not None:
        use_device = stats.device
    snap = None
    notes: List[str] = []
    if snapshot_path:
        snap = _snapshot(snapshot_path, device, use_device, stdin, notes)
        if use_device is None:
            use_device = snap.device
    usage = None
    if npu_smi_path:
        reserved = hit.record.reserved if hit is not None and hit.record.reserved else (
            stats.reserved if stats is not None else None)
        usage = _usage(npu_smi_path, use_device, pid if pid is not None else (hit.pid if hit is not None else None),
                       reserved, stdin)
    diagnosis = analyze(Inputs(log=log, stats=stats, snapshot=snap, usage=usage, device=use_device,
                               release=release, alloc_conf=alloc_conf))
    diagnosis.notes.extend(notes)
    if log is not None and log.skipped:
        diagnosis.notes.append(_skipped_note(log.skipped))
    _render(diagnosis, fmt, out)
    return 1 if diagnosis.is_finding else 0


def _release(torch_npu: Optional[str]) -> Any:
    """The torch_npu release given with --torch-npu, or None."""
    if not torch_npu:
        return None

    try:
        return release_from_text(torch_npu)
    except ValueError as exc:
        raise UsageError(str(exc).splitlines()[0]) from None


def _log_facts(text: Optional[str], files: List[str], stdin: Optional[BinaryIO]) -> Any:
    """The out-of-memory facts of the pasted TEXT and the --file logs, merged; None when neither was given."""
    log = None
    if text is not None:
        body = text
        if body.strip() == "-":
            raw = (stdin or sys.stdin.buffer).read(MAX_TEXT)
            body = raw.decode("utf-8", errors="replace") if isinstance(raw, bytes) else str(raw)
        if not body.strip():
            raise UsageError("the text is empty: paste the out-of-memory line (quoted), or use - to read it from stdin")
        log = scan_text(body[:MAX_TEXT])
        if not log.ooms and not log.driver_ooms:
            raise UsageError("no out-of-memory message in the text (for other errors: ascend-doctor explain)")
    if files:
        found = scan_paths(files, stdin=stdin)
        if log is None:
            log = found
        else:
            log.merge(found)
    return log


def _snapshot(path: str, device: Optional[int], use_device: Optional[int], stdin: Optional[BinaryIO],
              notes: List[str]) -> Any:
    """The snapshot, for the judged device; another device's when it has none of that one (a note says so),
    unless --device asked for it."""
    snap_in = stdin
    if path == "-":  # read once: a second attempt for another device reads it again
        snap_in = io.BytesIO((stdin or sys.stdin.buffer).read())
    try:
        return load_snapshot(path, device=use_device, stdin=snap_in)
    except MemoryInputError:
        if device is not None or use_device is None:
            raise
    if snap_in is not None and path == "-":
        snap_in.seek(0)
    snap = load_snapshot(path, device=None, stdin=snap_in)  # another rank's snapshot: read what it has
    notes.append(f"the snapshot has no segments of device {use_device} (the message's device); "
                 f"it was read for device {snap.device}")
    return snap


def _usage(path: str, device: Optional[int], pid: Optional[int], reserved: Optional[int],
           stdin: Optional[BinaryIO]) -> Any:
    """Who holds the device, from saved ``npu-smi info`` output."""
    smi_text = _read_text_file(path, "--npu-smi", stdin)
    return npu_smi_facts(smi_text, device if device is not None else 0, pid=pid, reserved=reserved,
                         name=f"--npu-smi {path}")


def _skipped_note(skipped: List[Any]) -> str:
    shown = "; ".join(f"{p} ({r})" for p, r in skipped[:2])
    more = f" and {len(skipped) - 2} more" if len(skipped) > 2 else ""
    return f"skipped {len(skipped)} input{'s' if len(skipped) != 1 else ''}: {shown}{more}"


def _render(diagnosis: Any, fmt: str, out: TextIO) -> None:
    if fmt == "json":
        out.write(render_json(diagnosis) + "\n")
    elif fmt == "md":
        out.write(render_md(diagnosis))
    else:
        out.write(render_text(diagnosis))


# ---------------------------------------------------------------------- oom simulate / oom watch
SUBCOMMANDS = ("simulate", "watch")


def _size_arg(text: Optional[str], option: str) -> Optional[int]:
    if text is None:
        return None

    raw = text.strip()
    if raw.isdigit():
        return int(raw)
    size = parse_size(raw.replace("GiB", " GiB").replace("MiB", " MiB").replace("  ", " "))
    if size is None or size.value <= 0:
        raise UsageError(f"{option} {text}: give bytes or a size such as 64GiB or 512 MiB")
    return size.value


def run_simulate(trace: str, confs: Optional[List[str]] = None, profile: Optional[str] = None,
                 capacity: Optional[str] = None, non_torch: Optional[str] = None, save_trace: Optional[str] = None,
                 fmt: str = "text", json_flag: bool = False, out: Optional[TextIO] = None) -> int:
    """Replay TRACE under each setting; exit 0 when some setting finishes, 1 when none does."""
    import json

    from ..memory.whatif import default_confs, load_input, render_md, render_text, report, simulate, write_trace
    out = out or sys.stdout
    fmt = output_format(fmt, json_flag)
    cap = _size_arg(capacity, "--capacity")
    other = _size_arg(non_torch, "--non-torch")
    try:
        from runtime_sim.allocator import UnknownProfileError, get_profile

        if profile is not None:
            get_profile(profile)
    except UnknownProfileError as exc:
        raise UsageError(f"--release {profile}: {str(exc).splitlines()[0]}") from None
    try:
        ti = load_input(trace, capacity=cap, non_torch=other)
        chosen = list(confs) if confs else default_confs(profile)
        if confs and "" not in chosen and "default" not in chosen:
            chosen.insert(0, "")
        chosen = ["" if c == "default" else c for c in chosen]
        outcomes = simulate(ti, chosen, profile)
    except MemoryInputError as exc:
        raise UsageError(str(exc)) from None
    if save_trace:
        write_trace(save_trace, ti.name, ti.capacity, ti.non_torch, ti.events)
    doc = report(ti, outcomes, profile)
    if fmt == "json":
        out.write(json.dumps(doc, indent=2) + "\n")
    elif fmt == "md":
        out.write(render_md(doc))
    else:
        out.write(render_text(doc))
    return 0 if doc["finishes"] else 1


def run_watch(stats: str, threshold: float = 0.10, pool: str = "all", device: Optional[int] = None,
              labels: Optional[List[str]] = None, output: Optional[str] = None, interval: Optional[float] = None,
              count: Optional[int] = None, fmt: str = "prometheus", json_flag: bool = False,
              out: Optional[TextIO] = None, sleep=None) -> int:
    """Print fragmentation metrics of a memory_stats() file (Prometheus text by default).

    With ``--interval`` the file is read again every so many seconds (a service that dumps its
    statistics periodically), ``--count`` times or until interrupted; ``--output`` writes the
    Prometheus text atomically to a file (node_exporter's textfile collector reads such files).
    Exit 1 when the last reading is at or above the threshold (restart advised), else 0.
    """
    import json
    import os
    import time

    out = out or sys.stdout
    if json_flag:
        fmt = "json"
    if fmt not in ("prometheus", "text", "json", "md"):
        raise UsageError(f"--format {fmt}: choose prometheus, text, json or md")
    if not 0 < threshold <= 1:
        raise UsageError(f"--threshold {threshold}: a fraction in (0, 1], e.g. 0.1")
    if interval is not None and interval <= 0:
        raise UsageError("--interval must be positive")
    if count is not None and count < 1:
        raise UsageError("--count must be 1 or more")
    if stats == "-" and interval is not None:
        raise UsageError("--interval re-reads the file: give a path, not -")
    label_map = {}
    for item in labels or []:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise UsageError(f"--label {item}: use NAME=VALUE")
        label_map[key] = value
    if device is not None:
        label_map.setdefault("device", str(device))
    sleep = sleep or time.sleep
    n = 0
    over = False
    if fmt == "md":
        from ..output import md_heading

        out.write("\n".join(md_heading("oom watch", stats)) + "\n")
    while True:
        try:
            facts = load_stats(stats, device=device)
            metrics = fragmentation_metrics(facts.values, threshold=threshold, pool=pool)
            body = prometheus_text(metrics, labels=label_map)
        except (MemoryInputError, ValueError) as exc:
            raise UsageError(str(exc).splitlines()[0]) from None
        over = metrics["over_threshold"]
        if output:
            tmp = f"{output}.tmp.{os.getpid()}"
            with open(tmp, "w", encoding="utf-8") as fh:
                fh.write(body)
            os.replace(tmp, output)
        if fmt == "prometheus":
            out.write(body)
        elif fmt == "json":
            from ..memory.watch import watch_json

            out.write(json.dumps(watch_json(stats, metrics), ensure_ascii=False) + "\n")
        else:
            verdict = "RESTART ADVISED" if over else "ok"
            line = (f"{verdict}: fragmentation {metrics['fragmentation_ratio']:.1%} (threshold {threshold:.0%}); "
                    f"stranded {format_size(metrics['stranded_bytes'])} of {format_size(metrics['reserved_bytes'])} reserved; "
                    f"allocated {format_size(metrics['allocated_bytes'])}; cache flushes {metrics['num_alloc_retries']}; "
                    f"OOMs {metrics['num_ooms']}")
            out.write(("- " if fmt == "md" else "") + line + "\n")
        out.flush()
        n += 1
        if interval is None or (count is not None and n >= count):
            break
        sleep(interval)
    return 1 if over else 0
