"""Write a capture in the layouts the real profilers write, with their file names and columns.

- torch_npu (``torch_npu.profiler``, Level1): ``{host}_{pid}_{ms stamp}_ascend_pt/`` with
  ``profiler_info[_{rank}].json``, ``profiler_metadata.json`` and ``ASCEND_PROFILER_OUTPUT/``
  holding ``kernel_details.csv``, ``op_statistic.csv``, ``step_trace_time.csv``,
  ``trace_view.json`` and, with collectives, ``communication.json``; plus the raw ``PROF_*``
  directory it keeps (``device_N/data``, ``host/data``).
- msprof (CANN 8.x text export): ``PROF_{6 digits}_{17-digit stamp}_{16 chars}/`` with raw
  ``device_N/data`` and ``host/data`` and ``mindstudio_profiler_output/`` holding
  ``op_summary_{stamp}.csv`` (or ``op_summary_slice_N_{stamp}.csv`` slices), ``op_statistic_*``,
  ``task_time_*`` and the ``msprof_{stamp}.json`` timeline.

Sources of the formats: https://github.com/Ascend/pytorch/blob/9e73e708ab9350d203475609f36f8a43f6a0c2ab/docs/en/developer_notes/ascend_pytorch_profiler_user_guide.md
(torch_npu directory and files), https://github.com/Ascend/msprof/blob/9ba1ac7be913da2944126672b6808db3860d40a3/docs/en/user_guide/profile_data_file_references.md
(msprof files and columns); column order as in the msprof assemblers and their unit tests
(https://github.com/Ascend/msprof/tree/9ba1ac7be913da2944126672b6808db3860d40a3/analysis/csrc/application/summary).
Numbers are written as the tools write them: times in µs with three decimals, start cells with
a trailing TAB, shape cells of torch_npu wrapped in literal quotes.

Every file is written as the capture streams by; only per-op-type totals and one step's
intervals are held in memory.
"""
from __future__ import annotations

import csv
import json
import time
from pathlib import Path
from typing import Any, Callable, Dict, IO, Iterator, List, Optional, Tuple

KERNEL_DETAILS_HEADER = ["Step Id", "Model ID", "Task ID", "Stream ID", "Name", "Type", "OP State", "Accelerator Core",
                         "Start Time(us)", "Duration(us)", "Wait Time(us)", "Block Dim", "Mix Block Dim", "HF32 Eligible",
                         "Input Shapes", "Input Data Types", "Input Formats", "Output Shapes", "Output Data Types",
                         "Output Formats", "Context ID"]
OP_SUMMARY_HEADER = ["Device_id", "Model ID", "Task ID", "Stream ID", "Op Name", "OP Type", "OP State", "Task Type",
                     "Task Start Time(us)", "Task Duration(us)", "Task Wait Time(us)", "Block Num", "HF32 Eligible",
                     "Input Shapes", "Input Data Types", "Input Formats", "Output Shapes", "Output Data Types", "Output Formats"]
OP_STATISTIC_HEADER = ["Device_id", "OP Type", "Core Type", "Count", "Total Time(us)", "Min Time(us)", "Avg Time(us)",
                       "Max Time(us)", "Ratio(%)"]
TASK_TIME_HEADER = ["Device_id", "kernel_name", "kernel_type", "stream_id", "task_id", "task_time(us)", "task_start(us)",
                    "task_stop(us)"]
STEP_TRACE_HEADER = ["Device_id", "Step", "Computing", "Communication(Not Overlapped)", "Overlapped", "Communication", "Free",
                     "Stage", "Bubble", "Communication(Not Overlapped and Exclude Receive)", "Preparing"]
EAGER_MODEL = "4294967295"
BLOCK = {"AI_CORE": 24, "AI_VECTOR_CORE": 48, "MIX_AIC": 24, "AI_CPU": 1}


def _us(x: float) -> str:
    return f"{x:.3f}"


def _stamp(t_us: float, digits: int) -> str:
    lt = time.gmtime(t_us / 1e6)
    base = time.strftime("%Y%m%d%H%M%S", lt)
    frac = f"{int(t_us % 1e6):06d}"
    return (base + frac)[:digits]


class _Stats:
    """op_statistic rows and the step trace, from the tasks as they stream by."""

    def __init__(self) -> None:
        self.ops: Dict[Tuple[str, str], List[float]] = {}
        self.steps: Dict[int, List[Tuple[float, float, str]]] = {}
        self.step_rows: List[List[str]] = []
        self.prev_end: Optional[float] = None
        self.cur_step: Optional[int] = None

    def wait(self, start: float, dur: float) -> float:
        w = 0.0 if self.prev_end is None else max(0.0, start - self.prev_end)
        self.prev_end = start + dur if self.prev_end is None else max(self.prev_end, start + dur)
        return w

    def add(self, device: int, start: float, dur: float, type_: str, core: str, step: int) -> None:
        if core not in ("COMMUNICATION", "HCCL", "MEMCPY_ASYNC"):
            rec = self.ops.get((type_, core))
            if rec is None:
                self.ops[(type_, core)] = [1, dur, dur, dur]
            else:
                rec[0] += 1
                rec[1] += dur
                rec[2] = min(rec[2], dur)
                rec[3] = max(rec[3], dur)
        if self.cur_step is not None and step != self.cur_step:
            self._close(device)
        self.cur_step = step
        kind = "comm" if core in ("COMMUNICATION", "HCCL") else ("copy" if core == "MEMCPY_ASYNC" else "compute")
        self.steps.setdefault(step, []).append((start, start + dur, kind))

    def _close(self, device: int) -> None:
        step = self.cur_step
        tasks = self.steps.pop(step, [])
        if not tasks:
            return

        def union(kinds: Tuple[str, ...]) -> float:
            iv = sorted((s, e) for s, e, k in tasks if k in kinds)
            total, cur_s, cur_e = 0.0, None, None
            for s, e in iv:
                if cur_e is None or s > cur_e:
                    if cur_e is not None:
                        total += cur_e - cur_s
                    cur_s, cur_e = s, e
                else:
                    cur_e = max(cur_e, e)
            if cur_e is not None:
                total += cur_e - cur_s
            return total

        span = max(e for _, e, _ in tasks) - min(s for s, _, _ in tasks)
        computing = union(("compute",))
        comm = union(("comm",))
        both = union(("compute", "comm"))
        not_overlapped = both - computing
        free = span - both
        self.step_rows.append([str(device), str(step), _us(computing), _us(not_overlapped), _us(comm - not_overlapped),
                               _us(comm), _us(free), _us(span), "0.000", _us(not_overlapped), "0.000"])

    def finish(self, device: int) -> None:
        if self.cur_step is not None:
            self._close(device)
            self.cur_step = None

    def opstat_rows(self, device: int) -> List[List[str]]:
        total = sum(v[1] for v in self.ops.values()) or 1.0
        rows = []
        for (t, c), (n, tot, lo, hi) in sorted(self.ops.items(), key=lambda kv: -kv[1][1]):
            rows.append([str(device), t, c, str(int(n)), _us(tot), _us(lo), _us(tot / n), _us(hi), _us(100.0 * tot / total)])
        return rows


class _Trace:
    """A Chrome-trace array written one event at a time."""

    def __init__(self, fh: IO[str]) -> None:
        self.fh = fh
        self.first = True
        fh.write("[")

    def event(self, ev: Dict[str, Any]) -> None:
        self.fh.write(("\n" if self.first else ",\n") + json.dumps(ev, separators=(", ", ": ")))
        self.first = False

    def close(self) -> None:
        self.fh.write("\n]\n")


def _meta(trace: _Trace, pid: int, name: str, label: Optional[str], threads: Dict[int, str], sort_index: int) -> None:
    trace.event({"name": "process_name", "pid": pid, "tid": 0, "args": {"name": name}, "ph": "M"})
    if label:
        trace.event({"name": "process_labels", "pid": pid, "tid": 0, "args": {"labels": label}, "ph": "M"})
    trace.event({"name": "process_sort_index", "pid": pid, "tid": 0, "args": {"sort_index": sort_index}, "ph": "M"})
    for tid, tname in threads.items():
        trace.event({"name": "thread_name", "pid": pid, "tid": tid, "args": {"name": tname}, "ph": "M"})


def _shape_cell(shapes: str, quoted: bool) -> str:
    if not shapes:
        return "N/A" if not quoted else '""'
    return f'"{shapes}"' if quoted else shapes


def write_torch_npu(events: Callable[[], Iterator[Tuple]], dest: Path, *, pid: int, rank: Optional[int], device: int,
                    torch_npu: str, cann: str, hostname: str = "localhost", level: str = "Level1") -> Path:
    """One ``*_ascend_pt`` directory for one process (rank). ``events`` yields the capture (it is
    called twice: the CSVs, then the timeline)."""
    from runtime_sim.profiler.engine import T0

    name = f"{hostname}_{pid}_{_stamp(T0, 17)}_ascend_pt"
    root = Path(dest) / name
    out = root / "ASCEND_PROFILER_OUTPUT"
    out.mkdir(parents=True, exist_ok=True)
    prof = root / f"PROF_000001_{_stamp(T0, 17)}_{(pid * 7919) % (1 << 40):016X}"[:64]
    for raw in (prof / f"device_{device}" / "data", prof / "host" / "data"):
        raw.mkdir(parents=True, exist_ok=True)
    info_name = f"profiler_info_{rank}.json" if rank is not None else "profiler_info.json"
    info = {
        "config": {
            "common_config": {"activities": ["ProfilerActivity.CPU", "ProfilerActivity.NPU"],
                              "schedule": {"wait": 0, "active": 1, "warmup": 0, "repeat": 1, "skip_first": 0},
                              "record_shapes": True, "profile_memory": False, "with_stack": False, "with_flops": False,
                              "with_modules": False},
            "experimental_config": {"_profiler_level": level, "_aic_metrics": "ACL_AICORE_NONE", "_l2_cache": False,
                                    "_data_simplification": True, "_export_type": ["text"]},
        },
        "start_info": {"syscnt_enable": True, "freq": 100.0, "start_cnt": 0, "start_monotonic": 0},
        "end_info": {"collectionTimeEnd": 0},
        "torch_npu_version": torch_npu,
        "cann_version": cann,
        "rank_id": rank if rank is not None else -1,
    }
    (root / info_name).write_text(json.dumps(info, indent=4), encoding="utf-8")
    (root / "profiler_metadata.json").write_text(json.dumps({"ENV_VARIABLES": {"ASCEND_GLOBAL_LOG_LEVEL": "3",
                                                                               "TASK_QUEUE_ENABLE": "1"}}, indent=4), encoding="utf-8")
    stats = _Stats()
    comm: Dict[str, Any] = {}
    with open(out / "kernel_details.csv", "w", encoding="utf-8", newline="") as fh, \
            open(out / "task_time.csv", "w", encoding="utf-8", newline="") as tfh:
        w = csv.writer(fh)
        w.writerow(KERNEL_DETAILS_HEADER)
        tw = csv.writer(tfh)
        tw.writerow(TASK_TIME_HEADER)
        for ev in events():
            if ev[0] == "comm":
                _, start, dur, op, mb, transit_ms, wait_ms = ev
                comm.setdefault(f"step{len(stats.step_rows) + 1}", {"collective": {}, "p2p": {}})
                comm[f"step{len(stats.step_rows) + 1}"]["collective"][f"{op}@{13681369207305868844}"] = _comm_record(start, dur, mb, transit_ms, wait_ms)
                continue
            if ev[0] != "task":
                continue
            _, start, dur, kname, type_, core, stream, tid, shapes, dtypes, state, step, extra = ev
            wait = stats.wait(start, dur)
            stats.add(device, start, dur, type_, core, step)
            tw.writerow([device, "N/A" if core == "MEMCPY_ASYNC" else kname, core, stream, tid, _us(dur), _us(start) + "\t",
                         _us(start + dur) + "\t"])
            if core == "MEMCPY_ASYNC":
                continue  # copies are no kernels: task_time and the timeline carry them
            is_comm = core in ("COMMUNICATION", "HCCL")
            w.writerow([step, EAGER_MODEL, "N/A" if is_comm else tid, "N/A" if is_comm else stream, kname, type_,
                        "N/A" if is_comm else state, core, _us(start) + "\t", _us(dur), _us(wait),
                        0 if is_comm else BLOCK.get(core, 8), "N/A" if is_comm else 0, "N/A" if is_comm else "NO",
                        "N/A" if is_comm else _shape_cell(shapes, True), "N/A" if is_comm else dtypes.replace(",", ";") or "N/A",
                        "N/A" if is_comm else ";".join(["ND"] * max(1, shapes.count(";") + 1)),
                        "N/A" if is_comm else _shape_cell(shapes.split(";")[0], True), "N/A" if is_comm else (dtypes.split(";")[0] or "N/A"),
                        "N/A" if is_comm else "ND", "N/A"])
    stats.finish(device)
    with open(out / "op_statistic.csv", "w", encoding="utf-8", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(OP_STATISTIC_HEADER)
        w.writerows(stats.opstat_rows(device))
    with open(out / "step_trace_time.csv", "w", encoding="utf-8", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(STEP_TRACE_HEADER)
        w.writerows(stats.step_rows)
    if comm:
        (out / "communication.json").write_text(json.dumps(comm, indent=4), encoding="utf-8")
    with open(out / "trace_view.json", "w", encoding="utf-8") as fh:
        _timeline(_Trace(fh), events(), pid=pid, device=device, torch_track=True)
    return root


def _comm_record(start: float, dur: float, mb: float, transit_ms: float, wait_ms: float) -> Dict[str, Any]:
    elapse = dur / 1000.0
    empty = {"Transit Size(MB)": 0, "Transit Time(ms)": 0, "Bandwidth(GB/s)": 0, "Large Packet Ratio": 0, "Size Distribution": {}}
    hccs = {"Transit Size(MB)": mb, "Transit Time(ms)": transit_ms, "Bandwidth(GB/s)": round(mb / 1024 / (transit_ms / 1000), 4) if transit_ms else 0,
            "Large Packet Ratio": 1.0, "Size Distribution": {str(round(mb / 8, 6)): [8, transit_ms]}}
    return {
        "Communication Time Info": {"Start Timestamp(us)": round(start, 3), "Elapse Time(ms)": round(elapse, 6),
                                    "Transit Time(ms)": round(transit_ms, 6), "Wait Time(ms)": round(wait_ms, 6),
                                    "Synchronization Time(ms)": round(wait_ms, 6), "Idle Time(ms)": round(max(elapse - transit_ms - wait_ms, 0.0), 6),
                                    "Wait Time Ratio": round(wait_ms / (wait_ms + transit_ms), 4) if wait_ms + transit_ms else 0,
                                    "Synchronization Time Ratio": round(wait_ms / (wait_ms + transit_ms), 4) if wait_ms + transit_ms else 0},
        "Communication Bandwidth Info": {"RDMA": dict(empty), "HCCS": hccs, "PCIE": dict(empty), "SDMA": dict(hccs), "SIO": dict(empty)},
    }


def _timeline(trace: _Trace, events: Iterator[Tuple], *, pid: int, device: int, torch_track: bool) -> None:
    hw_pid = 800 + device
    cann_pid = pid * 100 + 2
    _meta(trace, cann_pid, "CANN", "CPU", {pid: f"Thread {pid}"}, 6)
    _meta(trace, hw_pid, "Ascend Hardware", f"NPU {device}", {2: "Stream 2", 3: "Stream 3", 7: "Stream 7"}, 7)
    if torch_track:
        _meta(trace, pid, "Python", "CPU", {pid: f"Thread {pid}"}, 1)
    conn = 0
    for ev in events:
        kind = ev[0]
        if kind == "task":
            _, start, dur, kname, type_, core, stream, tid, shapes, dtypes, state, step, extra = ev
            conn += 1
            args: Dict[str, Any] = {"Model Id": int(EAGER_MODEL), "Task Type": core, "Physic Stream Id": stream, "Task Id": tid,
                                    "Batch Id": 0, "Subtask Id": 4294967295, "connection_id": conn}
            if core == "MEMCPY_ASYNC":
                size = int(extra.get("size", 0))
                args.update({"size(B)": size, "bandwidth(GB/s)": round(size / 1e9 / (dur / 1e6), 4) if dur else 0,
                             "operation": extra.get("operation", "other")})
            trace.event({"name": kname, "pid": hw_pid, "tid": stream, "ts": _us(start), "dur": round(dur, 3), "args": args, "ph": "X"})
        elif kind == "api":
            _, start, dur, api = ev
            trace.event({"name": f"AscendCL@{api}", "pid": cann_pid, "tid": pid, "ts": _us(start), "dur": round(dur, 3),
                         "args": {"Thread Id": pid, "Mode": "ACL_RTS", "level": "acl", "id": api, "item_id": "0"}, "ph": "X"})
        elif kind == "step" and torch_track:
            _, start, dur, n = ev
            trace.event({"ph": "X", "name": f"ProfilerStep#{n}", "pid": pid, "tid": pid, "ts": _us(start), "dur": round(dur, 3),
                         "cat": "cpu_op", "args": {"Sequence number": -1, "Fwd thread id": 0}})
        elif kind == "cpu_op" and torch_track:
            _, start, dur, name = ev
            trace.event({"ph": "X", "name": name, "pid": pid, "tid": pid, "ts": _us(start), "dur": round(dur, 3),
                         "cat": "cpu_op", "args": {"Sequence number": -1, "Fwd thread id": 0}})
    trace.close()


def write_msprof(events: Callable[[], Iterator[Tuple]], dest: Path, *, pid: int, device: int, slices: int = 1,
                 slice_rows: int = 0) -> Path:
    """One msprof ``PROF_*`` directory (CANN 8.x text export) for one process."""
    from runtime_sim.profiler.engine import T0

    stamp17 = _stamp(T0, 17)
    stamp14 = _stamp(T0 + 5e6, 14)
    root = Path(dest) / f"PROF_000001_{stamp17}_{(pid * 104729) % (1 << 60):016X}"[:60]
    out = root / "mindstudio_profiler_output"
    out.mkdir(parents=True, exist_ok=True)
    for raw in (root / f"device_{device}" / "data", root / "host" / "data"):
        raw.mkdir(parents=True, exist_ok=True)
    stats = _Stats()
    summary_files: List[IO[str]] = []

    def summary_writer(i: int) -> Any:
        name = f"op_summary_slice_{i}_{stamp14}.csv" if slices > 1 else f"op_summary_{stamp14}.csv"
        fh = open(out / name, "w", encoding="utf-8", newline="")
        summary_files.append(fh)
        w = csv.writer(fh)
        w.writerow(OP_SUMMARY_HEADER)
        return w

    n_slice, rows_in_slice = 0, 0
    w = summary_writer(0)
    with open(out / f"task_time_{stamp14}.csv", "w", encoding="utf-8", newline="") as tfh:
        tw = csv.writer(tfh)
        tw.writerow(TASK_TIME_HEADER)
        for ev in events():
            if ev[0] != "task":
                continue
            _, start, dur, kname, type_, core, stream, tid, shapes, dtypes, state, step, extra = ev
            wait = stats.wait(start, dur)
            stats.add(device, start, dur, type_, core, step)
            is_copy = core == "MEMCPY_ASYNC"
            tw.writerow([device, "N/A" if is_copy else kname, core, stream, tid, _us(dur), _us(start) + "\t", _us(start + dur) + "\t"])
            if is_copy:
                continue
            if slices > 1 and slice_rows and rows_in_slice >= slice_rows and n_slice < slices - 1:
                n_slice += 1
                rows_in_slice = 0
                w = summary_writer(n_slice)
            rows_in_slice += 1
            is_comm = core in ("COMMUNICATION", "HCCL")
            w.writerow([device, EAGER_MODEL, "N/A" if is_comm else tid, "N/A" if is_comm else stream, kname, type_,
                        "N/A" if is_comm else state, core, _us(start) + "\t", _us(dur), _us(wait),
                        0 if is_comm else BLOCK.get(core, 8), "N/A" if is_comm else "NO",
                        "N/A" if is_comm else (shapes or "N/A"), "N/A" if is_comm else (dtypes.replace(",", ";") or "N/A"),
                        "N/A" if is_comm else ";".join(["ND"] * max(1, shapes.count(";") + 1)),
                        "N/A" if is_comm else (shapes.split(";")[0] or "N/A"), "N/A" if is_comm else (dtypes.split(";")[0] or "N/A"),
                        "N/A" if is_comm else "ND"])
    for fh in summary_files:
        fh.close()
    stats.finish(device)
    with open(out / f"op_statistic_{stamp14}.csv", "w", encoding="utf-8", newline="") as fh:
        csv.writer(fh).writerows([OP_STATISTIC_HEADER] + stats.opstat_rows(device))
    with open(out / f"msprof_{stamp14}.json", "w", encoding="utf-8") as fh:
        _timeline(_Trace(fh), events(), pid=pid, device=device, torch_track=False)
    (out / "README.txt").write_text("Timeline and summary data exported by msprof (simulated by runtime_sim).\n", encoding="utf-8")
    return root
