"""`check --format prometheus`: the run as gauges in Prometheus' text exposition format, for
node_exporter's textfile collector (format: https://prometheus.io/docs/instrumenting/exposition_formats/;
collector: https://github.com/prometheus/node_exporter#textfile-collector).

Each check is a state set (one series per status, 1 for the status it has), the stack's
versions are labels of one info gauge, and the NPUs' count and health come from npu-smi.
Write it atomically, as the collector reads whatever is in the directory:

    ascend-doctor check --format prometheus > DIR/ascend.prom.$$ && mv DIR/ascend.prom.$$ DIR/ascend.prom
"""
from __future__ import annotations

import time
from typing import Any, Dict, Iterable, List, Optional, Tuple

from .. import __version__
from ..model import Finding, Status

STATUSES = tuple(s.value for s in Status)
STACK_LABELS = ("chip", "driver", "firmware", "cann", "python", "torch", "torch_npu")


def escape(value: Any) -> str:
    return str(value).replace("\\", "\\\\").replace("\n", "\\n").replace('"', '\\"')


def _labels(pairs: Iterable[Tuple[str, Any]]) -> str:
    inner = ",".join(f'{k}="{escape(v)}"' for k, v in pairs)
    return "{" + inner + "}" if inner else ""


class _Out:
    def __init__(self) -> None:
        self.lines: List[str] = []

    def metric(self, name: str, help_text: str, samples: List[Tuple[List[Tuple[str, Any]], float]]) -> None:
        self.lines.append(f"# HELP {name} {help_text}")
        self.lines.append(f"# TYPE {name} gauge")
        for labels, value in samples:
            v = int(value) if float(value).is_integer() else round(float(value), 6)
            self.lines.append(f"{name}{_labels(labels)} {v}")


def render(findings: List[Finding], host_info: Dict[str, Any], duration_s: float, now: Optional[float] = None) -> str:
    out = _Out()
    out.metric("ascend_doctor_build_info", "ascend-doctor version that wrote these metrics.",
               [([("version", __version__)], 1)])
    samples = []
    for f in findings:
        for s in STATUSES:
            samples.append(([("check", f.id), ("group", f.group), ("status", s)], 1 if f.status.value == s else 0))
    out.metric("ascend_doctor_check_status", "Status of each check: 1 for the status it has (ok, warn, fail, skip, timeout, error), 0 for the others.", samples)
    counts = {s: 0 for s in STATUSES}
    for f in findings:
        counts[f.status.value] += 1
    out.metric("ascend_doctor_checks", "Checks in this run, by status.", [([("status", s)], n) for s, n in counts.items()])
    verdict = "fail" if any(f.status.rank >= 2 for f in findings) else ("warn" if counts["warn"] else "ok")
    out.metric("ascend_doctor_verdict", "The run's verdict: 1 for the one it has (ok, warn, fail).",
               [([("verdict", v)], 1 if v == verdict else 0) for v in ("ok", "warn", "fail")])
    stack = host_info.get("stack") or {}
    labels = [(k, stack.get(k, "")) for k in STACK_LABELS] + [("arch", host_info.get("arch") or "")]
    out.metric("ascend_doctor_stack_info", "The judged software stack; versions as labels (empty when not found).", [(labels, 1)])
    devices = next((f.data.get("devices") for f in findings if f.id == "npu_smi.info" and isinstance(f.data.get("devices"), list)), None)
    if devices is not None:
        out.metric("ascend_doctor_npu_devices", "NPUs npu-smi lists.", [([], len({d.get('npu') for d in devices}))])
        out.metric("ascend_doctor_npu_healthy", "Health of each NPU chip as npu-smi reports it: 1 when OK.",
                   [([("npu", d.get("npu")), ("chip", d.get("chip")), ("health", d.get("health") or "")],
                     1 if str(d.get("health") or "").upper() == "OK" else 0) for d in devices])
    out.metric("ascend_doctor_check_duration_seconds", "How long the checks took.", [([], round(duration_s, 3))])
    out.metric("ascend_doctor_last_run_timestamp_seconds", "When the checks ran (Unix time).",
               [([], round(now if now is not None else time.time(), 3))])
    return "\n".join(out.lines) + "\n"


OOM_VERDICTS = ("oom_fragmentation", "oom_capacity", "external", "none")


def render_oom(doc: Dict[str, Any], now: Optional[float] = None) -> str:
    """`oom --format prometheus`: the verdict, the fragmentation ratios and the byte counts of
    an `oom --json` document (its contract fields), as gauges."""
    out = _Out()
    device = doc.get("device")
    dev = [("device", device)] if device is not None else []
    verdict = doc.get("verdict")
    out.metric("ascend_doctor_oom_verdict", "The out-of-memory verdict: 1 for the one it has.",
               [(dev + [("verdict", v)], 1 if v == verdict else 0) for v in OOM_VERDICTS])
    ratios = [(dev + [("ratio", k)], v) for k, v in sorted((doc.get("ratios") or {}).items()) if isinstance(v, (int, float))]
    if ratios:
        out.metric("ascend_doctor_oom_ratio", "Fragmentation ratios: gap_over_request is (reserved - allocated) / the failed request; "
                   "cache_unused is (reserved - allocated) / reserved; fragmentation is 1 - largest free block / free in the cache.", ratios)
    numbers = [(dev + [("number", k)], v) for k, v in sorted((doc.get("numbers") or {}).items()) if isinstance(v, (int, float))]
    if numbers:
        out.metric("ascend_doctor_oom_bytes", "Memory numbers of the analysed out-of-memory (bytes).", numbers)
    out.metric("ascend_doctor_last_run_timestamp_seconds", "When the analysis ran (Unix time).",
               [([], round(now if now is not None else time.time(), 3))])
    return "\n".join(out.lines) + "\n"
