"""From profiling files to the ``profile`` JSON document (schema 1): per-device numbers for the
four layers of the slow-inference route, and findings ordered by the time at stake."""
from __future__ import annotations

import os
import statistics
from dataclasses import dataclass
from typing import Any, Callable, Dict, List, Optional, Tuple

from ..inputs import os_message
from ..output import counts, envelope
from . import facts
from .device import AICORE_CORES, DeviceAcc, shape_elements
from .discover import Run, discover
from .readers import (
    comm_ops,
    read_cluster_step,
    read_kernels,
    read_opstat,
    read_step_trace,
    read_task_time,
    read_timeline,
    run_info,
)
from .stream import FormatError, col, csv_rows, load_small_json

TOP_OPS = 10


class ProfileInputError(ValueError):
    """Nothing readable as a profile; one line."""


def _r(x: float, nd: int = 2) -> float:
    return round(float(x), nd)


class Job:
    """All devices of all runs given."""

    def __init__(self) -> None:
        self.devices: Dict[Tuple[str, int], DeviceAcc] = {}
        self.notes: List[str] = []
        self.runs: List[Dict[str, Any]] = []
        self.comm_records: List[Tuple[Optional[int], str, Dict[str, Any], Tuple[str, int]]] = []

    def getter(self, run: Run, rank: Optional[int]) -> Callable[[int], DeviceAcc]:
        def get(dev: int) -> DeviceAcc:
            key = (run.root, dev)
            acc = self.devices.get(key)
            if acc is None:
                acc = self.devices[key] = DeviceAcc(dev, rank, run.root)
            return acc
        return get


def _read_run(job: Job, run: Run) -> None:
    info = run_info(run, job.notes)
    rank = info.get("rank")
    default_device = _peek_device(run)
    if default_device is None:
        default_device = rank if (rank is not None and run.layout != "torch_npu") else 0
    get = job.getter(run, rank)
    job.runs.append({"path": run.root, "layout": run.layout, **{k: v for k, v in info.items() if k != "rank"},
                     **({"rank": rank} if rank is not None else {})})

    def attempt(fn: Callable[..., int], path: str, *args: Any) -> int:
        try:
            return fn(path, *args)
        except (FormatError, OSError) as exc:
            job.notes.append(str(exc) if isinstance(exc, FormatError) else os_message(path, exc))
            return 0

    if run.layout == "cluster":
        def get_rank(r: int) -> DeviceAcc:
            key = (run.root, r)
            acc = job.devices.get(key)
            if acc is None:
                acc = job.devices[key] = DeviceAcc(r, r, run.root)
            return acc
        for path in run.of("cluster_step"):
            attempt(read_cluster_step, path, get_rank)
        for path in run.of("cluster_comm"):
            try:
                doc = load_small_json(path)
            except (FormatError, OSError) as exc:
                job.notes.append(str(exc))
                continue
            for r, op, rec in comm_ops(doc, cluster=True):
                job.comm_records.append((r, op, rec, (run.root, r if r is not None else 0)))
        return

    # communication windows first: kernels overlapping them are counted while streaming
    for path in run.of("comm"):
        try:
            doc = load_small_json(path)
        except (FormatError, OSError) as exc:
            job.notes.append(str(exc))
            continue
        acc = get(default_device)
        for _, op, rec in comm_ops(doc, cluster=False):
            job.comm_records.append((rank, op, rec, (run.root, default_device)))
            t = rec.get("Communication Time Info") or {}
            try:
                s = float(t.get("Start Timestamp(us)"))
                e = s + float(t.get("Elapse Time(ms)")) * 1000.0
                acc.comm_windows.append((s, e, op))
            except (TypeError, ValueError):
                continue
        acc.comm_windows.sort()

    # copies first (task_time): the kernel pass then knows where copies split kernel sequences
    have_kernels = bool(run.of("kernels"))
    copies = 0
    if have_kernels or run.of("timeline"):
        for path in run.of("task_time"):
            copies += attempt(read_task_time, path, get, default_device, True)
        for acc in list(job.devices.values()):
            if acc.run_root == run.root and acc.copies_seen:
                acc.copy_starts = sorted(acc.copies_seen) if len(acc.copies_seen) < 200000 else []
    kernel_rows = 0
    for path in run.of("kernels"):
        kernel_rows += attempt(read_kernels, path, get, default_device, job.notes if path == run.of("kernels")[0] else None)
    timeline_tasks = 0
    for path in run.of("timeline"):
        timeline_tasks += attempt(read_timeline, path, get, default_device, kernel_rows == 0, job.notes, copies == 0)
    if not (have_kernels or run.of("timeline")):
        for path in run.of("task_time"):
            attempt(read_task_time, path, get, default_device, False)
    for path in run.of("opstat"):
        attempt(read_opstat, path, get, default_device)
    for path in run.of("step_trace"):
        attempt(read_step_trace, path, get, default_device)


def _peek_device(run: Run) -> Optional[int]:
    """The device of a run whose kernel table has no Device_id column (torch_npu Level0/1):
    the first Device_id of its step trace or op statistic, else None."""
    for kind in ("step_trace", "opstat", "kernels"):
        for path in run.of(kind)[:1]:
            try:
                cols, rows = csv_rows(path)
            except (FormatError, OSError):
                continue
            i = col(cols, "device id")
            try:
                for row in rows:
                    if i is not None and i < len(row) and row[i].isdigit():
                        return int(row[i])
                    break
            finally:
                rows.close()
    return None


# ---------------------------------------------------------------------------- per device

def _top_ops(acc: DeviceAcc) -> List[Dict[str, Any]]:
    if acc.ops:
        total = sum(v[1] for v in acc.ops.values()) or 1.0
        ranked = sorted(acc.ops.items(), key=lambda kv: -kv[1][1])[:TOP_OPS]
        return [{"type": t, "core": c, "count": int(v[0]), "total_us": _r(v[1], 3), "share_pct": _r(100.0 * v[1] / total)}
                for (t, c), v in ranked]
    if acc.opstat:
        total = sum(o["total_us"] for o in acc.opstat) or 1.0
        ranked = sorted(acc.opstat, key=lambda o: -o["total_us"])[:TOP_OPS]
        return [{"type": o["type"], "core": o["core"], "count": o["count"], "total_us": o["total_us"],
                 "share_pct": _r(o["ratio"] if o["ratio"] is not None else 100.0 * o["total_us"] / total, 3)}
                for o in ranked]
    return []


def _shares(acc: DeviceAcc) -> Dict[str, Optional[float]]:
    """span, busy, copy and communication shares: the profiler's own step trace when there is
    one, else measured from the device tasks."""
    out: Dict[str, Optional[float]] = {"span_us": None, "busy_pct": None, "copy_pct": None, "comm_pct": None}
    span = acc.span()
    if acc.has_tasks and span > 0:
        out["span_us"] = _r(span)
        out["busy_pct"] = _r(100.0 * acc.busy.total / span)
        out["copy_pct"] = _r(min(100.0, 100.0 * acc.copy.total / span))
        out["comm_pct"] = _r(100.0 * max(acc.busy.total - acc.compute.total, 0.0) / span)
    st = acc.step_trace
    if st is not None:
        e2e = st["computing"] + st["comm_not_overlapped"] + st["free"]
        if e2e > 0:
            out["span_us"] = out["span_us"] or _r(e2e)
            out["busy_pct"] = _r(100.0 * (st["computing"] + st["comm_not_overlapped"]) / e2e)
            out["comm_pct"] = _r(100.0 * st["comm_not_overlapped"] / e2e)
    if out["copy_pct"] is None and out["span_us"] and "copy_api" in acc.host:
        out["copy_pct"] = _r(min(100.0, 100.0 * acc.host["copy_api"][1] / out["span_us"]))
    return out


def _slow_path(acc: DeviceAcc) -> List[Dict[str, Any]]:
    out: List[Dict[str, Any]] = []
    for t, (count, total, longest) in sorted(acc.aicpu.items(), key=lambda kv: -kv[1][1]):
        if t in acc.aicore_types:
            reason = (f"runs on AI CPU {int(count)}x ({total:.1f} us, longest {longest:.1f} us) although the same op type "
                      "runs on AI Core elsewhere in this profile: a dtype or shape the AI Core kernel does not take")
        else:
            reason = f"runs on AI CPU {int(count)}x ({total:.1f} us, longest {longest:.1f} us): the generic CPU-side kernel, not an AI Core one"
        out.append({"type": t, "core": "AI_CPU", "reason": reason, "total_us": _r(total, 3)})
    # an op type whose time per element on one shape is far out of line with its other shapes
    by_type: Dict[str, List[Tuple[str, float, float, float]]] = {}
    for (t, shp), (count, total, core) in acc.shape_stats.items():
        if str(core).upper() not in AICORE_CORES:
            continue
        elems = shape_elements(shp)
        if elems <= 0 or count <= 0:
            continue
        by_type.setdefault(t, []).append((shp, total / count / elems, total, count))
    for t, rows in by_type.items():
        if len(rows) < 3:
            continue
        median = statistics.median(r[1] for r in rows)
        if median <= 0:
            continue
        for shp, rate, total, count in rows:
            if rate >= facts.SLOW_OUTLIER * median and total >= 0.01 * max(acc.compute_time, 1e-9) and total / count >= facts.SMALL_OP_US:
                out.append({"type": t, "core": "AI_CORE",
                            "reason": f"input shape {shp}: {rate / median:.0f}x the time per element of the other shapes of {t} "
                                      f"({total / count:.1f} us per call, {int(count)} calls): a slow generic path for this shape",
                            "total_us": _r(total, 3)})
    return out


def _dynamic(acc: DeviceAcc) -> List[Dict[str, Any]]:
    """Op types whose input shapes keep changing: many distinct shapes, and new ones still
    appearing after the first step (or, without step ids, in the second half of the op's calls).
    A static model shows all its shapes in its first step, however many there are."""
    rows = []
    for t, seen in acc.shapes.items():
        if len(seen) < facts.DYNAMIC_SHAPES:
            continue
        firsts = acc.shape_first.get(t, {})
        steps = acc.type_steps.get(t)
        if steps is not None and len(steps) >= 2:
            first_step = min(steps)
            late = sum(1 for (step, _) in firsts.values() if step is not None and step > first_step)
        elif steps is not None:
            continue  # one step: growth cannot be judged
        else:
            calls = acc.ops_by_type.get(t, 0)
            late = sum(1 for (_, idx) in firsts.values() if idx > 0.5 * calls)
        if late >= max(3, 0.3 * len(seen)):
            rows.append({"type": t, "shapes": len(seen), "new_after_first_step": late})
    return sorted(rows, key=lambda r: -r["shapes"])


def device_doc(acc: DeviceAcc) -> Dict[str, Any]:
    shares = _shares(acc)
    gaps = sorted(acc.busy.gaps, reverse=True)
    small_share = 100.0 * acc.small_count / acc.compute_count if acc.compute_count else 0.0
    return {
        "device": acc.device,
        "rank": acc.rank,
        **shares,
        "top_ops": _top_ops(acc),
        "small_ops": {"count": acc.small_count, "share_pct": _r(small_share), "threshold_us": facts.SMALL_OP_US,
                      "time_us": _r(acc.small_time), "longest_run": acc.longest_small_run,
                      "runs": acc.small_runs, "kernels": acc.compute_count},
        "dynamic_shape_ops": _dynamic(acc),
        "slow_path_ops": _slow_path(acc),
        "largest_gaps": [{"start_us": _r(s, 3), "gap_us": _r(g, 3)} for g, s in gaps],
        "tasks": acc.tasks,
        "run": acc.run_root,
    }


# ---------------------------------------------------------------------------- findings

def _finding(fid: str, layer: str, summary: str, evidence: str, fix: str, impact_us: float, device: Any = None,
             commands: Optional[List[str]] = None) -> Dict[str, Any]:
    f = {"id": fid, "layer": layer, "summary": summary, "evidence": evidence, "fix": fix, "impact_us": _r(impact_us)}
    if device is not None:
        f["device"] = device
    if commands:
        f["commands"] = commands
    return f


def _where(acc: DeviceAcc) -> str:
    return f"rank {acc.rank}" if acc.rank is not None else f"device {acc.device}"


@dataclass
class _DeviceView:
    """What the device rules read: the accumulator, its summary, and what several rules share."""

    acc: DeviceAcc
    doc: Dict[str, Any]
    where: str
    span: float
    busy: Optional[float]
    seqs: List[Tuple[float, Tuple[int, ...], float, float]]  # (wall, kernel ids, repeats, busy), longest first
    alloc: Any  # host allocation calls: [count, us], or None
    compiles: Any  # operator compilations: [count, us], or None

    def seq_text(self, seq: Tuple[float, Tuple[int, ...], float, float]) -> str:
        wall, ids, count, kbusy = seq
        names = [self.acc.labels[i][0] for i in ids]
        shown = " > ".join(names if len(names) <= 6 else names[:6] + [f"... ({len(names)} kernels)"])
        return f"the kernel sequence {shown} repeats {int(count)}x and keeps the device busy only {100 * kbusy / wall:.0f}% of its wall time"


def device_findings(acc: DeviceAcc, doc: Dict[str, Any]) -> List[Dict[str, Any]]:
    """The findings of one device, rule by rule (dispatch, copy, fusion, dynamic shapes, slow path)."""
    span = doc["span_us"] or 0.0
    # repeated kernel sequences that keep the device busy < 40 % of their wall time
    seqs = []
    for ids, (count, wall, kbusy) in acc.windows.items():
        if count > facts.SEQUENCE_REPEATS and span > 0 and wall / span > facts.SEQUENCE_SPAN_SHARE:
            seqs.append((wall, ids, count, kbusy))
    seqs.sort(key=lambda s: (-s[0], -len(s[1])))
    view = _DeviceView(acc=acc, doc=doc, where=_where(acc), span=span, busy=doc["busy_pct"], seqs=seqs,
                       alloc=acc.host.get("alloc"), compiles=acc.host.get("compile"))
    out: List[Dict[str, Any]] = []
    for rule in _DEVICE_RULES:
        out.extend(rule(view, out))
    return out


def _rule_dispatch_host_bound(d: _DeviceView, prior: List[Dict[str, Any]]) -> List[Dict[str, Any]]:
    """Dispatch: the host does not feed the device (idle time that copies, compiles and
    allocations do not explain: those have findings of their own)."""
    acc, doc, where, span = d.acc, d.doc, d.where, d.span
    busy, seqs, alloc, compiles, seq_text = d.busy, d.seqs, d.alloc, d.compiles, d.seq_text
    out: List[Dict[str, Any]] = []
    starved = acc.busy.starved
    n = acc.compute_count
    if busy is not None and n >= 20:
        active = 100.0 * acc.active_total() / span if span else busy
        idle_us = span * (100.0 - active) / 100.0
        explained = (alloc[1] if alloc else 0.0) + (compiles[1] if compiles else 0.0)
        starved_share = starved / n if n else 0.0
        free = 100.0 - busy
        low = active < facts.BUSY_DISPATCH_PCT or (free >= 100 * facts.FREE_SHARE_WARN and starved_share > facts.STARVED_OPS_SHARE
                                                   and active < 100 * (1 - facts.FREE_SHARE_WARN))
        if low:
            gaps = doc["largest_gaps"][:3]
            gap_txt = ", ".join(f"{g['gap_us']:.0f} us" for g in gaps)
            host = []
            if "sync" in acc.host:
                host.append(f"{int(acc.host['sync'][0])} stream synchronisations")
            if compiles:
                host.append(f"{int(compiles[0])} operator compilations ({compiles[1] / 1000:.1f} ms)")
            out.append(_finding(
                "dispatch.host_bound", "dispatch",
                f"{where}: the NPU is busy {busy:.1f}% of the time; the host does not issue work fast enough",
                f"busy {busy:.1f}% of {span / 1000:.2f} ms; {starved} of {n} kernels ({100 * starved_share:.0f}%) start after an idle gap longer "
                f"than 0.2x their own duration; {acc.small_count} kernels under {facts.SMALL_OP_US:.0f} us; largest gaps {gap_txt}"
                + ("; " + ", ".join(host) if host else "") + (f"; {seq_text(seqs[0])}" if seqs else ""),
                "Give the device more work per launch and stop the host from waiting: larger batches, fewer tiny ops (fuse them), "
                "no .item()/.cpu()/synchronize in the step, ASCEND_LAUNCH_BLOCKING unset, the task queue on (TASK_QUEUE_ENABLE=2 "
                "moves more dispatch work off the Python thread), graph mode (torchair / aclgraph) for static parts.",
                max(idle_us - explained, 0.1 * idle_us), where,
                ["unset ASCEND_LAUNCH_BLOCKING", "export TASK_QUEUE_ENABLE=2"]))
    return out


def _rule_dispatch_allocation(d: _DeviceView, prior: List[Dict[str, Any]]) -> List[Dict[str, Any]]:
    """Dispatch: allocation calls on the host between kernels (jitter)."""
    doc, where, alloc = d.doc, d.where, d.alloc
    out: List[Dict[str, Any]] = []
    if alloc and alloc[1] >= facts.ALLOC_TOTAL_US:
        out.append(_finding(
            "dispatch.allocation", "dispatch",
            f"{where}: {int(alloc[0])} device memory allocations/frees took {alloc[1] / 1000:.1f} ms on the host during the capture",
            f"AscendCL malloc/free calls: {int(alloc[0])}, {alloc[1]:.0f} us in total (rule: >= {facts.ALLOC_TOTAL_US:.0f} us); "
            f"largest device gaps {', '.join(str(round(g['gap_us'])) + ' us' for g in doc['largest_gaps'][:3])}",
            "The caching allocator goes back to the driver inside the step (empty_cache() calls, or a pool that keeps missing "
            "because shapes vary): drop empty_cache() from the loop, keep shapes stable, reserve the memory once "
            "(expandable segments, or warm-up steps with the largest shapes).",
            alloc[1], where, ["export PYTORCH_NPU_ALLOC_CONF=expandable_segments:True"]))
    return out


def _rule_copy(d: _DeviceView, prior: List[Dict[str, Any]]) -> List[Dict[str, Any]]:
    """Copy: host<->device copies take a large share of the time."""
    acc, doc, where, span, busy = d.acc, d.doc, d.where, d.span, d.busy
    out: List[Dict[str, Any]] = []
    copy = doc["copy_pct"]
    if copy is not None and copy >= facts.COPY_PCT:
        copy_us = acc.copy.total if acc.copy.fed else acc.host.get("copy_api", [0, 0.0])[1]
        out.append(_finding(
            "copy.host_device", "copy",
            f"{where}: host<->device copies take {copy:.1f}% of the time",
            f"memcpy tasks: {acc.ops.get(('MEMCPY_ASYNC', 'MEMCPY_ASYNC'), [0])[0] if acc.copy.fed else int(acc.host.get('copy_api', [0])[0])} copies, "
            f"{copy_us / 1000:.2f} ms of {span / 1000:.2f} ms; the device computes meanwhile only {busy or 0:.1f}% of the time",
            "Keep tensors on the NPU across steps (create them there, move the model and inputs once), batch small "
            "transfers into one, use pinned host memory with non_blocking=True, and take results back to the host only "
            "when needed (no per-step .item()/.cpu()).",
            copy_us, where))
    return out


def _rule_fusion_patterns(d: _DeviceView, prior: List[Dict[str, Any]]) -> List[Dict[str, Any]]:
    """Fusion: known op sequences."""
    acc, where = d.acc, d.where
    out: List[Dict[str, Any]] = []
    for pattern, fused in facts.FUSION_PATTERNS:
        hit = acc.patterns.get(pattern)
        if hit:
            out.append(_finding(
                "fusion.pattern", "fusion",
                f"{where}: {'-'.join(pattern)} runs as {len(pattern)} separate kernels {hit[0]}x; one fused op does it: {fused}",
                f"kernel sequence {list(pattern)} seen {hit[0]} times (source of the pattern: {facts.FUSION_SOURCE})",
                f"Call the fused op ({fused}) in the model code, or enable the graph fusion pass that produces it.",
                hit[1] * (1.0 - 1.0 / len(pattern)), where))
    return out


def _rule_fusion_optimizer(d: _DeviceView, prior: List[Dict[str, Any]]) -> List[Dict[str, Any]]:
    """Fusion: unfused optimizer."""
    acc, where = d.acc, d.where
    out: List[Dict[str, Any]] = []
    for opt, count in sorted(acc.optimizers.items()):
        fused = facts.FUSED_OPTIMIZERS.get(opt)
        if fused:
            out.append(_finding(
                "fusion.optimizer", "fusion",
                f"{where}: the optimizer step is torch's {opt}, one small kernel per parameter; {fused} updates all parameters in a few kernels",
                f"Optimizer.step#{opt}.step on the host timeline {count}x (source: {facts.OPTIMIZER_SOURCE})",
                f"Replace torch.optim.{opt} with {fused} (same arguments).",
                0.0, where))
    return out


def _rule_fusion_sequences(d: _DeviceView, prior: List[Dict[str, Any]]) -> List[Dict[str, Any]]:
    """Fusion: host-bound repeated sequences (when the device as a whole is not host-bound:
    then the dispatch finding says it and names the sequence)."""
    acc, where, seqs, seq_text = d.acc, d.where, d.seqs, d.seq_text
    out: List[Dict[str, Any]] = []
    dispatch_fired = any(f["id"] == "dispatch.host_bound" for f in prior)
    if seqs and not dispatch_fired:
        wall, ids, count, kbusy = seqs[0]
        out.append(_finding(
            "fusion.host_bound_sequence", "fusion",
            f"{where}: {seq_text(seqs[0])}",
            f"{len(seqs)} repeated sequences of 2-10 kernels are host-bound (busy < {100 * facts.HOST_BOUND_BUSY:.0f}% of their span, "
            f"> {facts.SEQUENCE_REPEATS} repeats); the longest covers {wall / 1000:.2f} ms",
            "Fuse the sequence into one op (a fused torch_npu API, a custom kernel, or graph mode so the compiler fuses it), "
            "or batch the work so each kernel does more.",
            wall - kbusy, where))
    if acc.small_runs and not acc.patterns and acc.compute_count and acc.small_count >= 0.5 * acc.compute_count and not seqs:
        out.append(_finding(
            "fusion.small_op_runs", "fusion",
            f"{where}: {acc.small_count} of {acc.compute_count} kernels run under {facts.SMALL_OP_US:.0f} us, in {acc.small_runs} runs of "
            f"{facts.SMALL_RUN} or more (longest {acc.longest_small_run})",
            f"small kernels take {acc.small_time / 1000:.2f} ms in total",
            "Long runs of tiny element-wise kernels are what graph fusion removes: use the fused torch_npu ops for the "
            "pattern, or graph mode (torchair) for this part of the model.",
            acc.small_time, where))
    return out


def _rule_dynamic_shapes(d: _DeviceView, prior: List[Dict[str, Any]]) -> List[Dict[str, Any]]:
    """Dynamic shapes: ops with many input shapes, only dynamic-shape kernels, or a storm of compilations."""
    acc, doc, where, compiles = d.acc, d.doc, d.where, d.compiles
    out: List[Dict[str, Any]] = []
    dyn = doc["dynamic_shape_ops"]
    if dyn:
        worst = dyn[0]
        out.append(_finding(
            "dynamic_shape.shapes", "dynamic_shape",
            f"{where}: {len(dyn)} op types run with many input shapes ({worst['type']}: {worst['shapes']}"
            f"{'+' if worst['shapes'] >= 64 else ''} shapes)",
            ", ".join(f"{d['type']} {d['shapes']}" for d in dyn[:8])
            + (f"; {int(compiles[0])} operator compilations ({compiles[1] / 1000:.1f} ms)" if compiles else ""),
            "Pad inputs to a few fixed buckets (sequence length, batch) so each op sees a handful of shapes; with varying "
            "shapes keep jit compilation off so binary kernels are used.",
            (compiles[1] if compiles else 0.0)
            + 0.1 * sum(acc.shape_stats.get((d["type"], s), [0, 0.0])[1] for d in dyn for s in acc.shapes.get(d["type"], ())),
            where, ["python -c 'import torch_npu; torch_npu.npu.set_compile_mode(jit_compile=False)'"]))
    elif acc.state_seen and acc.states["static"] == 0 and acc.states["dynamic"] > 0:
        out.append(_finding(
            "dynamic_shape.op_state", "dynamic_shape",
            f"{where}: every operator ran as a dynamic-shape kernel ({acc.states['dynamic']} of {acc.states['dynamic']})",
            "OP State column: no 'static' row",
            "If the shapes are in fact fixed, compile static kernels: torch_npu.npu.set_compile_mode(jit_compile=False) with "
            "torch_npu.npu.config.allow_internal_format = False, or pad varying inputs to fixed buckets.",
            0.0, where))
    elif compiles and compiles[0] >= facts.COMPILE_STORM:
        out.append(_finding(
            "dynamic_shape.compile", "dynamic_shape",
            f"{where}: {int(compiles[0])} operator compilations during the capture ({compiles[1] / 1000:.1f} ms)",
            f"AscendCL@aclopCompileAndExecute / opCompile events: {int(compiles[0])} (rule: >= {facts.COMPILE_STORM})",
            "New shapes are being compiled inside the step: pad to fixed buckets and use binary kernels "
            "(torch_npu.npu.set_compile_mode(jit_compile=False)).",
            compiles[1], where))
    return out


def _rule_slow_path(d: _DeviceView, prior: List[Dict[str, Any]]) -> List[Dict[str, Any]]:
    """Slow path: ops on the AI CPU, or far slower than their peers."""
    doc, where = d.doc, d.where
    out: List[Dict[str, Any]] = []
    for op in doc["slow_path_ops"]:
        out.append(_finding(
            "slow_path.aicpu" if op["core"] == "AI_CPU" else "slow_path.outlier", "slow_path",
            f"{where}: {op['type']} takes a slow path: {op['reason']}",
            f"{op['type']}: {op['total_us']:.1f} us in total on {op['core']}",
            "Check the op's dtype and shape against what the AI Core kernel accepts (cast the input, e.g. int64 -> int32, "
            "or float64 -> float32); a newer CANN / torch_npu may carry the fast kernel: compare a profile after the upgrade "
            "with `ascend-doctor profile compare OLD NEW`.",
            op["total_us"], where))
    return out


_DEVICE_RULES: Tuple[Callable[[_DeviceView, List[Dict[str, Any]]], List[Dict[str, Any]]], ...] = (
    _rule_dispatch_host_bound,
    _rule_dispatch_allocation,
    _rule_copy,
    _rule_fusion_patterns,
    _rule_fusion_optimizer,
    _rule_fusion_sequences,
    _rule_dynamic_shapes,
    _rule_slow_path,
)


def comm_findings(job: Job) -> List[Dict[str, Any]]:
    out: List[Dict[str, Any]] = []
    small_sdma = total_sdma = 0
    contended = []
    retrans = []
    for rank, op, rec, key in job.comm_records:
        bw = rec.get("Communication Bandwidth Info") or {}
        sdma = bw.get("SDMA") or {}
        rdma = bw.get("RDMA") or {}
        try:
            sdma_mb = float(sdma.get("Transit Size(MB)") or 0)
            sdma_bw = float(sdma.get("Bandwidth(GB/s)") or 0)
            rdma_mb = float(rdma.get("Transit Size(MB)") or 0)
            rdma_ms = float(rdma.get("Transit Time(ms)") or 0)
        except (TypeError, ValueError):
            continue
        if sdma_mb > 0:
            total_sdma += 1
            if sdma_mb < facts.SDMA_MIN_PACKET_MB:
                small_sdma += 1
        if rdma_mb > 0 and rdma_ms > facts.RETRANSMISSION_MS:
            retrans.append((rank, op, rdma_mb, rdma_ms))
        acc = job.devices.get(key)
        if acc is not None and acc.contended.get(op) and 0 < sdma_bw < facts.CONTENTION_RATIO * facts.SDMA_BASELINE_GBPS:
            contended.append((rank, op, sdma_bw))
    if total_sdma and small_sdma / total_sdma > facts.SMALL_PACKET_SHARE:
        out.append(_finding(
            "communication.small_packets", "communication",
            f"{small_sdma} of {total_sdma} collectives move less than {facts.SDMA_MIN_PACKET_MB:.0f} MB over SDMA: many small transfers",
            f"{100 * small_sdma / total_sdma:.0f}% of SDMA collectives under {facts.SDMA_MIN_PACKET_MB:.0f} MB (rule: > "
            f"{100 * facts.SMALL_PACKET_SHARE:.0f}%, {facts.RULE_SOURCES}packet.yaml)",
            "Bucket gradients into larger collectives (DDP bucket_cap_mb, fewer and larger all-reduces) so each transfer "
            "reaches full bandwidth.",
            0.0))
    for rank, op, bw in contended[:3]:
        out.append(_finding(
            "communication.bandwidth_contention", "communication",
            f"{op.split('@')[0]} moves SDMA data at {bw:.2f} GB/s while compute kernels run beside it "
            f"(below {facts.CONTENTION_RATIO * facts.SDMA_BASELINE_GBPS:.1f} GB/s)",
            f"rank {rank if rank is not None else '-'}: {op}; baseline {facts.SDMA_BASELINE_GBPS} GB/s x {facts.CONTENTION_RATIO} "
            f"({facts.RULE_SOURCES}bandwidth_contention.yaml)",
            "The collective competes with overlapping compute for memory bandwidth: move it to where compute is light, "
            "or accept less overlap for this op.",
            0.0))
    for rank, op, mb, ms in retrans[:3]:
        out.append(_finding(
            "communication.retransmission", "communication",
            f"rank {rank}: one RDMA transfer of {mb:.0f} MB took {ms / 1000:.1f} s: the network retransmitted",
            f"{op}: RDMA {mb:.0f} MB in {ms:.0f} ms (rule: a single transfer > {facts.RETRANSMISSION_MS:.0f} ms, "
            f"{facts.RULE_SOURCES}rdma_analysis.yaml)",
            "Check the RoCE links of this rank's node (hccn_tool -i <dev> -stat -g for retransmission counters, link "
            "flaps, PFC/ECN settings, HCCL_RDMA_TC / HCCL_RDMA_SL).",
            ms * 1000.0, f"rank {rank}", ["hccn_tool -i 0 -stat -g"]))
    return out


def slowest_rank(docs: List[Dict[str, Any]], accs: List[DeviceAcc]) -> Tuple[Optional[int], str]:
    """The rank the others wait for: if computing differs by more than 5 % across ranks, the
    one computing longest; else the one that waits least in communication (it arrives last)."""
    ranked = [(d, a) for d, a in zip(docs, accs) if d["rank"] is not None]
    if len(ranked) < 2:
        return None, ""
    rows = []
    for d, a in ranked:
        st = a.step_trace
        if st is not None:
            comp, comm, free = st["computing"], st["comm_not_overlapped"], st["free"]
        elif d["span_us"]:
            comp = a.compute.total
            comm = max(a.busy.total - a.compute.total, 0.0)
            free = d["span_us"] - a.busy.total
        else:
            continue
        rows.append((d["rank"], comp, comm, free))
    if len(rows) < 2:
        return None, ""
    comps = [r[1] for r in rows]
    mean = sum(comps) / len(comps)
    if mean > 0 and (max(comps) - min(comps)) / mean > facts.SLOW_RANK_SPREAD:
        r = max(rows, key=lambda x: x[1])
        return r[0], f"rank {r[0]} computes longest ({r[1] / 1000:.1f} ms vs a mean of {mean / 1000:.1f} ms)"
    comms = [r[2] for r in rows]
    if max(comms) <= 0:
        return None, ""
    r = min(rows, key=lambda x: x[2])
    return r[0], (f"rank {r[0]} waits least in communication ({r[2] / 1000:.1f} ms vs up to {max(comms) / 1000:.1f} ms "
                  f"on others, {r[3] / 1000:.1f} ms free): the others wait for it")


def analyze(paths: List[str]) -> Dict[str, Any]:
    """Analyse msprof / torch_npu profiler output under ``paths`` (see ascend_doctor.profile)."""
    doc = _analyze(paths)[0]
    return envelope(_summary(doc), doc)


def _summary(doc: Dict[str, Any]) -> Dict[str, Any]:
    """The envelope's summary of one analysis (docs/output.md)."""
    return {"runs": len(doc["runs"]), "devices": len(doc["devices"]), "findings": len(doc["findings"]),
            "layers": counts(f["layer"] for f in doc["findings"]), "slowest_rank": doc["slowest_rank"]}


def _analyze(paths: List[str]) -> Tuple[Dict[str, Any], List[DeviceAcc]]:
    missing = [p for p in paths if not os.path.exists(p)]
    if missing:
        raise ProfileInputError(f"{missing[0]}: no such file or directory")
    found = discover(paths)
    if not found.runs:
        why = f" ({found.skipped[0][0]}: {found.skipped[0][1]})" if found.skipped else ""
        raise ProfileInputError(f"no profiling output (kernel_details / op_summary / op_statistic / trace_view / step_trace_time / "
                                f"cluster files) under {', '.join(paths)}{why}")
    job = Job()
    for run in found.runs:
        _read_run(job, run)
    accs = [a for a in job.devices.values()]
    for a in accs:
        a.finish()
    accs = [a for a in accs if a.has_tasks or a.step_trace is not None or a.opstat or a.host]
    accs.sort(key=lambda a: (a.rank if a.rank is not None else 1 << 30, a.run_root, a.device))
    docs = [device_doc(a) for a in accs]
    findings: List[Dict[str, Any]] = []
    for a, d in zip(accs, docs):
        findings.extend(device_findings(a, d))
    findings.extend(comm_findings(job))
    slow, why = slowest_rank(docs, accs)
    ranked = [d for d in docs if d["rank"] is not None and d["comm_pct"] is not None]
    if ranked:
        worst = max(ranked, key=lambda d: d["comm_pct"])
        if worst["comm_pct"] >= facts.COMM_PCT:
            findings.append(_finding(
                "communication.share", "communication",
                f"communication the compute does not hide takes {worst['comm_pct']:.1f}% of the time on rank {worst['rank']}"
                + (f"; {why}" if slow is not None else ""),
                "; ".join(f"rank {d['rank']}: comm {d['comm_pct']:.1f}%, busy {d['busy_pct']:.1f}%" for d in ranked[:16]),
                "More cards are not faster while they wait for each other: fix the slowest rank first (its input "
                "pipeline, host, or link), then overlap communication with compute (gradient bucketing, "
                "communication on its own stream) and check HCCL's algorithm and link bandwidth.",
                (worst["span_us"] or 0) * worst["comm_pct"] / 100.0, f"rank {worst['rank']}"))
    elif len(docs) == 1 and docs[0]["comm_pct"] is not None and docs[0]["comm_pct"] >= facts.COMM_PCT:
        d = docs[0]
        findings.append(_finding(
            "communication.share", "communication",
            f"communication the compute does not hide takes {d['comm_pct']:.1f}% of the time on device {d['device']}",
            f"busy {d['busy_pct']:.1f}%, communication not overlapped {d['comm_pct']:.1f}%",
            "Overlap communication with compute (gradient bucketing, communication on its own stream) and check the "
            "slowest rank and link bandwidth with the other ranks' profiles.",
            (d["span_us"] or 0) * d["comm_pct"] / 100.0))
    findings.sort(key=lambda f: -f["impact_us"])
    return ({
        "inputs": [os.path.abspath(p) for p in paths],
        "runs": job.runs,
        "devices": docs,
        "slowest_rank": slow,
        "slowest_rank_reason": why or None,
        "findings": findings,
        "notes": job.notes + [f"skipped {p}: {r}" for p, r in found.skipped],
    }, accs)


def _versions(doc: Dict[str, Any]) -> Dict[str, str]:
    out: Dict[str, str] = {}
    for run in doc.get("runs", []):
        for key in ("torch_npu", "cann"):
            if run.get(key) and key not in out:
                out[key] = run[key]
    return out


def compare(base: List[str], new: List[str]) -> Dict[str, Any]:
    """Per op type, total device time in BASE and NEW; ``changes`` ordered by the absolute change."""
    a, accs_a = _analyze(base)
    b, accs_b = _analyze(new)

    def totals(accs: List[DeviceAcc]) -> Dict[str, List[Any]]:
        t: Dict[str, List[Any]] = {}
        for acc in accs:
            items = [((k[0], k[1]), v[0], v[1]) for k, v in acc.ops.items()] or \
                [((o["type"], o["core"]), o["count"], o["total_us"]) for o in acc.opstat]
            for (typ, core), count, total in items:
                rec = t.setdefault(typ, [0.0, 0, set()])
                rec[0] += total
                rec[1] += count
                rec[2].add(core)
        return t

    ta, tb = totals(accs_a), totals(accs_b)
    changes = []
    for typ in set(ta) | set(tb):
        x = ta.get(typ, [0.0, 0, set()])
        y = tb.get(typ, [0.0, 0, set()])
        ratio = round(y[0] / x[0], 3) if x[0] > 0 else None
        changes.append({"type": typ, "base_us": _r(x[0], 3), "new_us": _r(y[0], 3), "ratio": ratio,
                        "base_count": x[1], "new_count": y[1],
                        "base_core": "/".join(sorted(x[2])) or None, "new_core": "/".join(sorted(y[2])) or None})
    changes.sort(key=lambda c: -abs(c["new_us"] - c["base_us"]))
    top = changes[0] if changes else None
    summary = dict(_summary(b), changes=len(changes),
                   largest_change={"type": top["type"], "delta_us": _r(top["new_us"] - top["base_us"], 3),
                                   "ratio": top["ratio"]} if top else None)
    return envelope(summary, {
        "inputs": {"base": a["inputs"], "new": b["inputs"]},
        "versions": {"base": _versions(a), "new": _versions(b)},
        "base": a,
        "new": b,
        "devices": b["devices"],
        "slowest_rank": b["slowest_rank"],
        "findings": b["findings"],
        "changes": changes,
    })
