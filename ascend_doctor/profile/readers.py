"""Feed each kind of profiling file into the per-device accumulators."""
from __future__ import annotations

import os
import re
from typing import Any, Callable, Dict, List, Optional, Tuple

from .device import DeviceAcc
from .discover import Run
from .stream import FormatError, JsonArrayReader, col, csv_rows, load_small_json, number

Get = Callable[[int], DeviceAcc]

COMPUTE_TASK_TYPES = {"AI_CORE", "AI_VECTOR_CORE", "AI_CPU", "MIX_AIC", "MIX_AIV", "FFTS_PLUS", "OTHER", "KERNEL_AICORE",
                      "KERNEL_AICPU", "KERNEL_MIX_AIC", "KERNEL_MIX_AIV", ""}
_HCOM_SUFFIX = re.compile(r"_\d+(?:_\d+)*$")  # hcom_allReduce__868_0_1 -> hcom_allReduce_ (kernel_details' Type)
_OPT = re.compile(r"Optimizer\.step#(\w+)\.step")
_RANK_IN_NAME = re.compile(r"_(\d+)\.json$")


def run_info(run: Run, notes: List[str]) -> Dict[str, Any]:
    """profiler_info*.json: rank, torch_npu and CANN versions (when the profiler wrote them)."""
    out: Dict[str, Any] = {}
    for path in run.of("info"):
        try:
            doc = load_small_json(path, limit=4 * 1024 * 1024)
        except (FormatError, OSError) as exc:
            notes.append(str(exc))
            continue
        if not isinstance(doc, dict):
            continue
        rank = doc.get("rank_id")
        if rank is None:
            m = _RANK_IN_NAME.search(os.path.basename(path))
            rank = int(m.group(1)) if m else None
        try:
            out["rank"] = int(rank) if rank is not None and int(rank) >= 0 else None
        except (TypeError, ValueError):
            pass
        for key in ("torch_npu_version", "cann_version"):
            if doc.get(key):
                out[key.replace("_version", "")] = str(doc[key])
        exp = ((doc.get("config") or {}).get("experimental_config") or {}) if isinstance(doc.get("config"), dict) else {}
        if isinstance(exp, dict) and exp.get("_profiler_level"):
            out["level"] = str(exp["_profiler_level"])
    return out


def read_kernels(path: str, get: Get, default_device: int, notes: Optional[List[str]] = None) -> int:
    """kernel_details.csv (torch_npu) or op_summary_*.csv (msprof): one row per device task."""
    cols, rows = csv_rows(path)
    i_start = col(cols, "start time", "task start time")
    i_dur = col(cols, "duration", "task duration")
    if i_start is None or i_dur is None:
        for _ in rows:
            break
        raise FormatError(f"{path}: no start time / duration columns")
    i_type = col(cols, "type", "op type")
    i_name = col(cols, "name", "op name")
    i_core = col(cols, "accelerator core", "task type")
    i_dev = col(cols, "device id")
    i_shape = col(cols, "input shapes")
    i_oshape = col(cols, "output shapes")
    i_state = col(cols, "op state")
    i_step = col(cols, "step id")
    if notes is not None:
        missing = [what for what, i in (("core (AI Core / AI CPU)", i_core), ("OP State", i_state), ("Input Shapes", i_shape)) if i is None]
        if missing:
            notes.append(f"{path}: no {', '.join(missing)} column (a Level0 or task-time l0 capture): the checks that need "
                         "them (AI CPU slow paths, dynamic-shape kernels, shape variety) could not run; profile with "
                         "profiler_level=Level1 and record_shapes=True to have them")
    width = max(i for i in (i_start, i_dur, i_type, i_name, i_core, i_dev, i_shape, i_oshape, i_state, i_step) if i is not None) + 1
    acc: Optional[DeviceAcc] = None
    acc_dev: Optional[int] = None
    n = 0
    for row in rows:
        if len(row) < width:
            continue
        start = number(row[i_start])
        dur = number(row[i_dur])
        if start is None or dur is None:
            continue
        dev = default_device
        if i_dev is not None:
            d = row[i_dev]
            if d.isdigit():
                dev = int(d)
        if dev != acc_dev:
            acc, acc_dev = get(dev), dev
        name = row[i_name] if i_name is not None else ""
        type_ = row[i_type] if i_type is not None else ""
        if not type_ or type_ == "N/A":
            type_ = _kernel_type(name)  # Level0 tables carry no type: take it from the kernel name
        acc.task(start, dur, row[i_core] if i_core is not None else "", type_, name,
                 row[i_shape] if i_shape is not None else "", row[i_state] if i_state is not None else "",
                 row[i_oshape] if i_oshape is not None else "",
                 int(row[i_step]) if i_step is not None and row[i_step].isdigit() else None)
        n += 1
    return n


def read_task_time(path: str, get: Get, default_device: int, copies_only: bool) -> int:
    """task_time*.csv: every device task; the only CSV with memcpy tasks in msprof output."""
    cols, rows = csv_rows(path)
    i_name = col(cols, "kernel name")
    i_type = col(cols, "kernel type")
    i_dur = col(cols, "task time")
    i_start = col(cols, "task start")
    i_dev = col(cols, "device id")
    if i_start is None or i_dur is None:
        raise FormatError(f"{path}: no task_start / task_time columns")
    n = 0
    for row in rows:
        try:
            start = number(row[i_start])
            dur = number(row[i_dur])
            ktype = row[i_type] if i_type is not None else ""
            name = row[i_name] if i_name is not None else ""
        except IndexError:
            continue
        if start is None or dur is None:
            continue
        is_copy = ktype.upper() in ("MEMCPY_ASYNC", "SDMA_SQE", "PCIE_DMA_SQE")
        if copies_only and not is_copy:
            continue
        dev = int(row[i_dev]) if i_dev is not None and row[i_dev].isdigit() else default_device
        get(dev).task(start, dur, ktype, name if name != "N/A" else ktype, name if name != "N/A" else ktype)
        n += 1
    return n


_COPY_API = ("aclrtMemcpy", "aclrtMemcpyAsync", "aclrtMemcpy2d", "aclrtMemcpy2dAsync")
_ALLOC_API = ("aclrtMalloc", "aclrtMallocAlign32", "aclrtFree", "aclMallocMemInner", "aclrtFreePhysical",
              "aclrtMallocPhysical", "aclrtMapMem", "aclrtUnmapMem")
_SYNC_API = ("aclrtSynchronizeStream", "aclrtSynchronizeStreamWithTimeout", "aclrtSynchronizeDevice",
             "aclrtSynchronizeEvent")
_COMPILE_API = ("aclopCompileAndExecute", "aclopCompileAndExecuteV2", "opCompile", "aclopCompile")


def read_timeline(path: str, get: Get, default_device: int, device_tasks: bool, notes: List[str], copies: bool = True) -> int:
    """trace_view.json / msprof_*.json: device tasks (when no kernel table was read), memcpy
    tasks, collectives, and the host events the rules need (compiles, syncs, allocations,
    host copies, optimizer steps)."""
    reader = JsonArrayReader(path)
    pid_dev: Dict[Any, int] = {}
    n = 0
    for ev in reader:
        if not isinstance(ev, dict):
            continue
        ph = ev.get("ph")
        if ph == "M":
            if ev.get("name") == "process_labels":
                label = str((ev.get("args") or {}).get("labels", ""))
                m = re.search(r"NPU\s*(\d+)", label)
                if m:
                    pid_dev[ev.get("pid")] = int(m.group(1))
            continue
        if ph != "X":
            continue
        name = ev.get("name")
        if not isinstance(name, str):
            continue
        try:
            ts = float(ev.get("ts"))
            dur = float(ev.get("dur", 0) or 0)
        except (TypeError, ValueError):
            continue
        args = ev.get("args")
        dev = pid_dev.get(ev.get("pid"), default_device)
        if isinstance(args, dict) and ("Task Type" in args or "Task Id" in args):
            ttype = str(args.get("Task Type", ""))
            up = name.upper()
            is_copy = up.startswith("MEMCPY") or ttype.upper() == "MEMCPY_ASYNC"
            if not is_copy and ttype.upper() not in COMPUTE_TASK_TYPES:
                continue  # collective sub-tasks (SDMA, Notify Wait, Write Value), events: the hcom_ op covers them
            if (is_copy and copies) or (device_tasks and not is_copy):
                core = "MEMCPY_ASYNC" if is_copy else ttype
                get(dev).task(ts, dur, core, _kernel_type(name), name)
                n += 1
            continue
        if name.startswith("hcom_"):
            if device_tasks:
                get(dev).task(ts, dur, "HCCL", _HCOM_SUFFIX.sub("", name.split("@")[0]), name)
                n += 1
            continue
        if name.startswith("AscendCL@"):
            api = name[9:]
            acc = get(dev)
            if api.startswith(_COPY_API):
                acc.host_event("copy_api", dur)
            elif api in _ALLOC_API:
                acc.host_event("alloc", dur)
            elif api in _SYNC_API:
                acc.host_event("sync", dur)
            elif api in _COMPILE_API:
                acc.host_event("compile", dur)
            continue
        if ev.get("cat") == "cpu_op" or name.startswith(("ProfilerStep#", "Optimizer.step#")):
            if name.startswith("ProfilerStep#"):
                get(dev).steps += 1
            elif name.startswith("Optimizer.step#"):
                m = _OPT.match(name)
                if m:
                    acc = get(dev)
                    acc.optimizers[m.group(1)] = acc.optimizers.get(m.group(1), 0) + 1
    if reader.stopped:
        notes.append(f"{path}: read {reader.count} events, then stopped: {reader.stopped}")
    return n


def _kernel_type(name: str) -> str:
    """Device task name -> op type: ``aclnnInplaceZero_ZerosLikeAiCore_ZerosLike`` -> ``ZerosLike``,
    ``MatMul91`` -> ``MatMul`` (the timeline carries no type column)."""
    if name.startswith("aclnn") and "_" in name:
        return name.rsplit("_", 1)[-1]
    if name.startswith("hcom_"):
        return _HCOM_SUFFIX.sub("", name)
    base = name
    if base.startswith("trans_"):
        base = base[6:]
    stripped = base.rstrip("0123456789")
    if stripped.endswith("_"):
        stripped = stripped.rstrip("_0123456789")
    return stripped or base


def read_opstat(path: str, get: Get, default_device: int) -> int:
    cols, rows = csv_rows(path)
    i_type = col(cols, "op type")
    i_core = col(cols, "core type")
    i_count = col(cols, "count")
    i_total = col(cols, "total time")
    i_ratio = col(cols, "ratio")
    i_dev = col(cols, "device id")
    if i_type is None or i_total is None:
        raise FormatError(f"{path}: no OP Type / Total Time columns")
    n = 0
    for row in rows:
        try:
            total = number(row[i_total])
            if total is None:
                continue
            dev = int(row[i_dev]) if i_dev is not None and row[i_dev].isdigit() else default_device
            get(dev).opstat.append({
                "type": row[i_type],
                "core": row[i_core] if i_core is not None else "",
                "count": int(number(row[i_count]) or 0) if i_count is not None else 0,
                "total_us": total,
                "ratio": number(row[i_ratio]) if i_ratio is not None else None,
            })
            n += 1
        except IndexError:
            continue
    return n


STEP_FIELDS = {"computing": "computing", "communication(not overlapped)": "comm_not_overlapped",
               "overlapped": "overlapped", "communication": "communication", "free": "free"}


def read_step_trace(path: str, get: Get, default_device: int) -> int:
    """step_trace_time.csv: the profiler's own Computing / Communication / Free split per step."""
    cols, rows = csv_rows(path)
    idx = {field: cols[name] for name, field in STEP_FIELDS.items() if name in cols}
    if "computing" not in idx or "free" not in idx:
        raise FormatError(f"{path}: no Computing / Free columns")
    i_dev = col(cols, "device id")
    n = 0
    for row in rows:
        dev = int(row[i_dev]) if i_dev is not None and i_dev < len(row) and row[i_dev].isdigit() else default_device
        acc = get(dev)
        if acc.step_trace is None:
            acc.step_trace = {f: 0.0 for f in STEP_FIELDS.values()}
        for field, i in idx.items():
            if i < len(row):
                acc.step_trace[field] += number(row[i]) or 0.0
        n += 1
    return n


def read_cluster_step(path: str, get_rank: Callable[[int], DeviceAcc]) -> int:
    """cluster_step_trace_time.csv (msprof-analyze): one rank row per step."""
    cols, rows = csv_rows(path)
    i_type = col(cols, "type")
    i_index = col(cols, "index")
    idx = {field: cols[name] for name, field in STEP_FIELDS.items() if name in cols}
    if i_index is None or "computing" not in idx or "free" not in idx:
        raise FormatError(f"{path}: no Index / Computing / Free columns")
    n = 0
    for row in rows:
        if i_type is not None and row[i_type].strip().lower() != "rank":
            continue
        try:
            rank = int(row[i_index])
        except (ValueError, IndexError):
            continue
        acc = get_rank(rank)
        if acc.step_trace is None:
            acc.step_trace = {f: 0.0 for f in STEP_FIELDS.values()}
        for field, i in idx.items():
            if i < len(row):
                acc.step_trace[field] += number(row[i]) or 0.0
        n += 1
    return n


def comm_ops(doc: Any, cluster: bool) -> List[Tuple[Optional[int], str, Dict[str, Any]]]:
    """(rank or None, op name, op record) from communication.json / cluster_communication.json.

    torch_npu: ``{step: {collective|p2p: {op@group: record}}}``; cluster output:
    ``{collective|p2p: {step: {op@group: {rank: record}}}}`` (older ones put the step first)."""
    out: List[Tuple[Optional[int], str, Dict[str, Any]]] = []
    if not isinstance(doc, dict):
        return out

    def walk(node: Any, depth: int) -> None:
        if not isinstance(node, dict) or depth > 4:
            return
        for key, value in node.items():
            if not isinstance(value, dict):
                continue
            if "Communication Time Info" in value:
                out.append((None, str(key), value))
            elif cluster and "@" in str(key) or str(key).startswith("hcom_"):
                for rank, rec in value.items():
                    if isinstance(rec, dict) and "Communication Time Info" in rec:
                        try:
                            out.append((int(rank), str(key), rec))
                        except ValueError:
                            out.append((None, str(key), rec))
            elif str(key) != "Total Op Info":
                walk(value, depth + 1)

    walk(doc, 0)
    return [o for o in out if not o[1].startswith("Total Op Info")]
