"""Fragmentation monitoring for a running service: ``memory_stats()`` -> a few numbers and
Prometheus text-format lines, for the "restart the worker when fragmentation passes a
threshold" practice.

In a service (no ascend-doctor process needed; only this module, which imports nothing
heavy)::

    import torch, torch_npu
    from ascend_doctor.memory.watch import fragmentation_metrics, prometheus_text

    m = fragmentation_metrics(torch.npu.memory_stats(), threshold=0.10)
    if m["over_threshold"]:
        ...  # drain and restart this worker
    body = prometheus_text(m, labels={"device": "0", "worker": "w1"})  # serve on /metrics

The ratio is ``inactive_split_bytes / reserved_bytes``: the share of the reserved pool that
sits free inside partly used segments, which neither ``empty_cache()`` nor the out-of-memory
retry can give back (expandable segments keep it near zero). ``cache_unused_ratio`` is
``(reserved - allocated) / reserved``, what the OOM message's "reserved ... allocated" gap
shows. ``num_alloc_retries`` counts the times the allocator had to flush its cache and go
back to the driver: a rising count is the warning before the OOM.

Sources for the keys and their meaning: torch.cuda.memory_stats() documentation
(https://pytorch.org/docs/stable/generated/torch.cuda.memory_stats.html) -- torch_npu's
``torch.npu.memory_stats()`` returns the same keys.
"""
from __future__ import annotations

import math
import re
from typing import Any, Dict, Mapping, Optional

from ..output import envelope

DEFAULT_THRESHOLD = 0.10
PREFIX = "ascend_npu_memory"
_LABEL = re.compile(r"^[a-zA-Z_][a-zA-Z0-9_]*$")

# metric name, help, type, key in the metrics dict
_METRICS = (
    ("reserved_bytes", "Bytes reserved by the caching allocator (segments obtained from the driver).", "gauge", "reserved_bytes"),
    ("allocated_bytes", "Bytes handed to tensors.", "gauge", "allocated_bytes"),
    ("stranded_bytes", "Free bytes inside partly used segments (inactive split): no cache flush can return them.", "gauge", "stranded_bytes"),
    ("fragmentation_ratio", "stranded_bytes / reserved_bytes.", "gauge", "fragmentation_ratio"),
    ("cache_unused_ratio", "(reserved_bytes - allocated_bytes) / reserved_bytes.", "gauge", "cache_unused_ratio"),
    ("pending_free_bytes", "Freed bytes still waiting for other streams (active - allocated).", "gauge", "pending_free_bytes"),
    ("alloc_retries_total", "Cache flushes: the allocator failed to get memory and released its cache to retry.", "counter", "num_alloc_retries"),
    ("ooms_total", "Out-of-memory errors raised by the allocator.", "counter", "num_ooms"),
    ("fragmentation_over_threshold", "1 when fragmentation_ratio is at or above the threshold (restart advised).", "gauge", "over_threshold"),
)


def _flatten(obj: Mapping[str, Any], prefix: str = "") -> Dict[str, Any]:
    out: Dict[str, Any] = {}
    for key, value in obj.items():
        name = f"{prefix}{key}"
        if isinstance(value, Mapping):
            out.update(_flatten(value, name + "."))
        else:
            out[name] = value
    return out


def _num(stats: Mapping[str, Any], key: str) -> int:
    value = stats.get(key, 0)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or (isinstance(value, float) and not math.isfinite(value)):
        raise ValueError(f"memory_stats {key}: not a number ({value!r})")
    return int(value)


def fragmentation_metrics(stats: Mapping[str, Any], threshold: float = DEFAULT_THRESHOLD, pool: str = "all") -> Dict[str, Any]:
    """Numbers from ``torch.npu.memory_stats()`` (flat ``"a.b.c"`` keys or the nested dict).

    ``pool``: ``all``, ``large_pool`` or ``small_pool``. Raises ValueError for statistics
    without ``reserved_bytes.<pool>.current`` or with non-numeric values.
    """
    if not isinstance(stats, Mapping):
        raise ValueError("memory_stats must be a mapping (torch.npu.memory_stats())")
    if pool not in ("all", "large_pool", "small_pool"):
        raise ValueError(f"pool {pool!r}: choose all, large_pool or small_pool")
    if not 0 < threshold <= 1:
        raise ValueError("threshold must be in (0, 1]")
    flat = stats if any("." in str(k) for k in stats) else _flatten(stats)
    if f"reserved_bytes.{pool}.current" not in flat:
        raise ValueError(f"memory_stats has no reserved_bytes.{pool}.current: is this torch.npu.memory_stats()?")
    reserved = _num(flat, f"reserved_bytes.{pool}.current")
    allocated = _num(flat, f"allocated_bytes.{pool}.current")
    active = _num(flat, f"active_bytes.{pool}.current")
    stranded = _num(flat, f"inactive_split_bytes.{pool}.current")
    ratio = stranded / reserved if reserved else 0.0
    return {
        "pool": pool,
        "reserved_bytes": reserved,
        "allocated_bytes": allocated,
        "stranded_bytes": stranded,
        "fragmentation_ratio": round(ratio, 6),
        "cache_unused_ratio": round((reserved - allocated) / reserved, 6) if reserved else 0.0,
        "pending_free_bytes": max(0, active - allocated),
        "num_alloc_retries": _num(flat, "num_alloc_retries"),
        "num_ooms": _num(flat, "num_ooms"),
        "peak_reserved_bytes": _num(flat, f"reserved_bytes.{pool}.peak"),
        "threshold": threshold,
        "over_threshold": ratio >= threshold,
    }


def watch_json(stats: str, metrics: Mapping[str, Any]) -> Dict[str, Any]:
    """One reading as the ``--json`` document (one line per reading with ``--interval``)."""
    summary = {"over_threshold": metrics["over_threshold"], "fragmentation_ratio": metrics["fragmentation_ratio"]}
    return envelope(summary, {"stats": stats, "metrics": dict(metrics)})


def _escape(value: str) -> str:
    return value.replace("\\", "\\\\").replace("\n", "\\n").replace('"', '\\"')


def prometheus_text(metrics: Mapping[str, Any], labels: Optional[Mapping[str, str]] = None, prefix: str = PREFIX) -> str:
    """Prometheus text exposition format (version 0.0.4): HELP, TYPE and one sample per metric.

    Format: https://prometheus.io/docs/instrumenting/exposition_formats/#text-based-format
    """
    labels = dict(labels or {})
    labels.setdefault("pool", str(metrics.get("pool", "all")))
    for name in labels:
        if not _LABEL.match(name) or name.startswith("__"):
            raise ValueError(f"label name {name!r} is not a valid Prometheus label name")
    label_text = "{" + ",".join(f'{k}="{_escape(str(v))}"' for k, v in sorted(labels.items())) + "}"
    lines = []
    for name, help_text, kind, key in _METRICS:
        value = metrics[key]
        value = 1 if value is True else 0 if value is False else value
        full = f"{prefix}_{name}"
        lines.append(f"# HELP {full} {help_text}")
        lines.append(f"# TYPE {full} {kind}")
        lines.append(f"{full}{label_text} {value:.6g}" if isinstance(value, float) else f"{full}{label_text} {value}")
    return "\n".join(lines) + "\n"
