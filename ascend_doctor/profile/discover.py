"""Which profiling files a path holds, grouped into runs (one profiled process each).

Layouts recognised (docs/profile.md lists them with their sources):

- torch_npu profiler: ``{worker}_{ts}_ascend_pt/`` (or ``_ascend_ms``) with
  ``ASCEND_PROFILER_OUTPUT/{kernel_details,op_statistic,step_trace_time,task_time}.csv``,
  ``trace_view.json``, ``communication.json``, ``communication_matrix.json`` and
  ``profiler_info[_{rank}].json`` beside it. Its embedded ``PROF_*`` directory repeats the same
  data and is read only when ``ASCEND_PROFILER_OUTPUT`` is missing.
- msprof, CANN 8.x: ``PROF_*/mindstudio_profiler_output/`` with ``op_summary_*.csv``,
  ``op_statistic_*.csv``, ``task_time_*.csv``, ``msprof_*.json`` (slices: ``*_slice_N_*``).
- msprof, CANN <= 7.0: ``PROF_*/device_N/summary/*.csv`` and ``device_N/timeline/*.json``.
- msprof-analyze cluster output: ``cluster_analysis_output/cluster_step_trace_time.csv`` and
  ``cluster_communication.json``.

Raw data (``device_N/data``, ``host/data``), databases and everything else are ignored.
Directory symlinks are not followed, and files are judged by ``openable.refusal`` before any
open, so FIFOs, sockets and device nodes are listed as skipped, never read.
"""
from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Tuple

from ..inputs import os_reason
from ..inputs.openable import refusal

KINDS = (
    (re.compile(r"^kernel_details(_\d+)?\.csv$"), "kernels"),
    (re.compile(r"^op_summary(_slice)?_[\d_]*\.csv$"), "kernels"),
    (re.compile(r"^op_statistic(_slice)?(_[\d_]*)?\.csv$"), "opstat"),
    (re.compile(r"^task_time(_slice)?(_[\d_]*)?\.csv$"), "task_time"),
    (re.compile(r"^cluster_step_trace_time\.csv$"), "cluster_step"),
    (re.compile(r"^step_trace_time(_\d+)?\.csv$"), "step_trace"),
    (re.compile(r"^trace_view(_\d+)?\.json$"), "timeline"),
    (re.compile(r"^msprof(_slice)?_[\d_]+\.json$"), "timeline"),
    (re.compile(r"^cluster_communication\.json$"), "cluster_comm"),
    (re.compile(r"^communication(_\d+)?\.json$"), "comm"),
    (re.compile(r"^profiler_info(_\d+)?\.json$"), "info"),
    (re.compile(r"^profiler_metadata\.json$"), "metadata"),
)
RAW_DIRS = {"data", "sqlite", "FRAMEWORK", "logs", "log"}
RUN_SUFFIXES = ("ascend_pt", "ascend_ms")


@dataclass
class Run:
    """One profiled process: its files by kind (each list in slice order)."""

    root: str
    layout: str  # torch_npu | msprof | msprof_legacy | cluster | files
    files: Dict[str, List[str]] = field(default_factory=dict)

    def add(self, kind: str, path: str) -> None:
        self.files.setdefault(kind, []).append(path)

    def of(self, kind: str) -> List[str]:
        return self.files.get(kind, [])


@dataclass
class Discovery:
    runs: List[Run]
    skipped: List[Tuple[str, str]]


def classify(name: str) -> Optional[str]:
    for pattern, kind in KINDS:
        if pattern.match(name):
            return kind
    return None


def _slice_key(path: str) -> Tuple:
    """Slices in their written order: the numbers in the name, compared as numbers."""
    base = os.path.basename(path)
    return tuple(int(n) for n in re.findall(r"\d+", base)), base


def _run_root(path: str, top: str) -> Tuple[str, str]:
    """The directory that stands for the run holding ``path``, and the layout."""
    parts = os.path.relpath(os.path.dirname(path), top).split(os.sep)
    parts = [] if parts == ["."] else parts
    anchors = [top] + [os.path.join(top, *parts[: i + 1]) for i in range(len(parts))]
    # innermost-first search for the markers
    for d in reversed(anchors):
        name = os.path.basename(d)
        if name.endswith(RUN_SUFFIXES):
            return d, "torch_npu"
    for d in reversed(anchors):
        name = os.path.basename(d)
        if name.startswith("PROF_"):
            return d, "msprof_legacy" if "/summary" in path.replace(os.sep, "/") or "/timeline/" in path.replace(os.sep, "/") else "msprof"
    parent = os.path.dirname(path)
    pname = os.path.basename(parent)
    if pname in ("ASCEND_PROFILER_OUTPUT", "mindstudio_profiler_output"):
        return os.path.dirname(parent), "torch_npu" if pname == "ASCEND_PROFILER_OUTPUT" else "msprof"
    if pname == "cluster_analysis_output":
        return parent, "cluster"
    return parent, "files"


def discover(paths: List[str]) -> Discovery:
    """Walk ``paths`` (directories or single files) and group the profiling files into runs."""
    runs: Dict[str, Run] = {}
    order: List[str] = []
    skipped: List[Tuple[str, str]] = []
    for top in paths:
        top = os.path.abspath(top)
        if os.path.isfile(top):
            candidates = [(top, os.path.dirname(top))]
        else:
            candidates = []
            for dirpath, dirnames, filenames in os.walk(top, followlinks=False):
                dirnames[:] = sorted(d for d in dirnames if d not in RAW_DIRS and not os.path.islink(os.path.join(dirpath, d)))
                for fn in sorted(filenames):
                    candidates.append((os.path.join(dirpath, fn), top))
        for path, base in candidates:
            kind = classify(os.path.basename(path))
            if kind is None:
                continue
            try:
                st = os.stat(path)
            except OSError as exc:
                skipped.append((path, os_reason(exc)))
                continue
            reason = refusal(path, st)
            if reason is not None:
                skipped.append((path, reason))
                continue
            root, layout = _run_root(path, base)
            if kind in ("cluster_step", "cluster_comm"):
                root, layout = os.path.dirname(path), "cluster"
            run = runs.get(root)
            if run is None:
                run = runs[root] = Run(root=root, layout=layout)
                order.append(root)
            run.add(kind, path)
    # a torch_npu run reads its own ASCEND_PROFILER_OUTPUT; its embedded PROF_* copy only
    # when that output is missing
    result: List[Run] = []
    for root in order:
        run = runs[root]
        if run.layout == "torch_npu":
            out_dir = os.path.join(root, "ASCEND_PROFILER_OUTPUT")
            if os.path.isdir(out_dir):
                for kind, files in list(run.files.items()):
                    keep = [f for f in files if not _inside_prof(f, root)]
                    if keep:
                        run.files[kind] = keep
                    else:
                        del run.files[kind]
        for kind in run.files:
            run.files[kind].sort(key=_slice_key)
        if run.files:
            result.append(run)
    return Discovery(runs=result, skipped=skipped)


def _inside_prof(path: str, root: str) -> bool:
    rel = os.path.relpath(path, root).split(os.sep)
    return any(p.startswith("PROF_") for p in rel[:-1])
