"""Profiling analysis: msprof / torch_npu profiler output -> the route's four layers, with numbers.

Public functions (other verbs, such as ``diagnose``, call them directly):

``analyze(paths: list[str]) -> dict``
    Read every profiling file under ``paths`` (directories or files: torch_npu ``*_ascend_pt``
    trees, msprof ``PROF_*`` trees of CANN 8.x and <= 7.0, sliced files, several runs or ranks,
    msprof-analyze ``cluster_analysis_output``) in a streaming fashion and return the ``profile``
    JSON document, schema 1::

        {"schema": 1, "inputs": [paths],
         "runs": [{"path", "layout", "torch_npu"?, "cann"?, "rank"?, "level"?}],
         "devices": [{"device", "rank", "span_us", "busy_pct", "copy_pct", "comm_pct",
                      "top_ops": [{"type", "core", "count", "total_us", "share_pct"}],
                      "small_ops": {"count", "share_pct", "threshold_us", "time_us", "longest_run", "runs", "kernels"},
                      "dynamic_shape_ops": [{"type", "shapes"}],
                      "slow_path_ops": [{"type", "core", "reason", "total_us"}],
                      "largest_gaps": [{"start_us", "gap_us"}], "tasks", "run"}],
         "slowest_rank": int | None, "slowest_rank_reason": str | None,
         "findings": [{"id", "layer", "summary", "evidence", "fix", "impact_us", "device"?, "commands"?}],
         "notes": [str]}

    ``layer`` is one of ``dispatch``, ``copy``, ``fusion``, ``dynamic_shape``, ``slow_path``,
    ``communication``; findings are ordered by ``impact_us`` (the device time at stake), so the
    first one is the one to fix first. Percentages are of the device's span (first task start
    to last task end, or the step trace's Computing + Communication(Not Overlapped) + Free);
    ``busy_pct`` counts compute and communication, ``comm_pct`` only communication that compute
    does not overlap, ``copy_pct`` memcpy tasks (not busy, as in msprof's overlap analysis).
    A value that the files cannot give is ``None``. Raises :class:`ProfileInputError` (one line)
    when a path is missing or holds no profiling output.

``compare(base: list[str], new: list[str]) -> dict``
    Both analyses (``base``, ``new``), the versions each side recorded (``versions``:
    ``{"base": {"torch_npu", "cann"}, "new": {...}}`` from ``profiler_info*.json``), NEW's
    ``devices``/``findings``/``slowest_rank``, and ``changes``: per op type
    ``{"type", "base_us", "new_us", "ratio", "base_count", "new_count", "base_core", "new_core"}``
    (``ratio`` = new/base, None when the op is new), ordered by the absolute change in time.
"""
from __future__ import annotations

from .analysis import ProfileInputError, analyze, compare

__all__ = ["analyze", "compare", "ProfileInputError"]
