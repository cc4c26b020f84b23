"""Per-device accumulators: every device task is fed once, in the order the files hold it, and
only bounded state is kept (a small reorder window, top-N gaps, per-op-type totals, capped shape
sets), so memory does not grow with the size of the profile.
"""
from __future__ import annotations

import bisect
import heapq
import re
from collections import deque
from typing import Any, Deque, Dict, List, Optional, Set, Tuple

from . import facts

REORDER = 4096          # tasks may arrive this far out of start order (several streams) ...
REORDER_US = 10000.0    # ... or this many microseconds
TOP_GAPS = 5
MAX_SHAPES_PER_TYPE = 64
MAX_SHAPE_KEYS = 50000
MAX_WINDOW_KEYS = 20000
WINDOW_MAX = 10
MAX_SIGNATURES = 200000
SMALL_OP_US = facts.SMALL_OP_US
SMALL_RUN = facts.SMALL_RUN
HOST_BOUND_BUSY = facts.HOST_BOUND_BUSY
WINDOW_FULL = 20000
WINDOW_STRIDE = 16

COMM_CORES = {"HCCL", "COMMUNICATION"}
COPY_NAMES = {"MEMCPY_ASYNC", "SDMA_SQE", "PCIE_DMA_SQE", "MEMCPY", "KERNEL_MEMCPY"}
OTHER_PREFIXES = ("EVENT_", "NOTIFY", "WRITE_BACK", "INVALID", "PLACE_HOLDER", "STARS_", "MODEL_", "CAPTURE_", "STREAM_", "MAINTENANCE")
AICORE_CORES = {"AI_CORE", "AI_VECTOR_CORE", "MIX_AIC", "MIX_AIV", "FFTS_PLUS", "KERNEL_AICORE"}
AICPU_CORES = {"AI_CPU", "KERNEL_AICPU"}


def task_class(core: str, type_: str, name: str) -> str:
    """compute | comm | copy | other, from the core/task type column and the names."""
    c = core.upper()
    if c in COMM_CORES or type_.startswith(("hcom_", "hcom", "lccl", "lcoc")) or name.startswith(("hcom_", "lccl", "lcoc")):
        return "comm"
    if c in COPY_NAMES or name.upper() in COPY_NAMES:
        return "copy"
    if c.startswith(OTHER_PREFIXES) or name.upper().startswith(OTHER_PREFIXES):
        return "other"
    return "compute"


_NUM = re.compile(r"\d+")


def shape_elements(shapes: str) -> int:
    """Elements of all input tensors in a shapes cell (``"4096,12288;4608,12288"``)."""
    total = 0
    for tensor in shapes.split(";"):
        dims = _NUM.findall(tensor)
        if not dims:
            continue
        n = 1
        for d in dims:
            n *= int(d)
        total += n
    return total


_BY_LAST: Dict[str, List[Tuple[Tuple[str, ...], int]]] = {}
for _pattern, _ in facts.FUSION_PATTERNS:
    _BY_LAST.setdefault(_pattern[-1], []).append((_pattern, len(_pattern)))


class Union:
    """Length of the union of intervals fed roughly in start order; the largest idle gaps
    between them; and, per interval, the idle time just before it."""

    __slots__ = ("heap", "cur_s", "cur_e", "total", "first", "gaps", "starved", "fed", "late", "seq", "last", "newest")

    def __init__(self) -> None:
        self.heap: List[Tuple[float, float, float]] = []
        self.cur_s: Optional[float] = None
        self.cur_e = 0.0
        self.total = 0.0
        self.first: Optional[float] = None
        self.gaps: List[Tuple[float, float]] = []  # min-heap of (gap, start)
        self.starved = 0
        self.fed = 0
        self.late = 0
        self.seq = 0
        self.last = float("-inf")    # start of the last interval fed
        self.newest = float("-inf")  # newest start seen while reordering

    def push(self, s: float, e: float, starve_dur: float = -1.0) -> None:
        heap = self.heap
        if not heap and s >= self.last:
            self.last = s
            self._feed(s, e, starve_dur)  # in order: no reordering needed
            return
        heapq.heappush(heap, (s, e, starve_dur))
        if s > self.newest:
            self.newest = s
        # release what is older than the reorder window (count or time)
        while heap and (len(heap) > REORDER or heap[0][0] + REORDER_US <= self.newest):
            item = heapq.heappop(heap)
            if item[0] > self.last:
                self.last = item[0]
            self._feed(*item)

    def _feed(self, s: float, e: float, starve_dur: float) -> None:
        self.fed += 1
        if self.cur_s is None:
            self.cur_s, self.cur_e, self.first = s, e, s
            return
        if s > self.cur_e:
            gap = s - self.cur_e
            gaps = self.gaps
            if len(gaps) < TOP_GAPS:
                heapq.heappush(gaps, (gap, self.cur_e))
            elif gap > gaps[0][0]:
                heapq.heapreplace(gaps, (gap, self.cur_e))
            if starve_dur >= 0 and gap > facts.STARVED_GAP_RATIO * starve_dur:
                self.starved += 1
            self.total += self.cur_e - self.cur_s
            self.cur_s, self.cur_e = s, e
        else:
            if s < self.cur_s:
                self.late += 1
            if e > self.cur_e:
                self.cur_e = e

    def finish(self) -> None:
        heap = self.heap
        while heap:
            self._feed(*heapq.heappop(heap))
        if self.cur_s is not None:
            self.total += self.cur_e - self.cur_s
            self.cur_s = None

    @property
    def end(self) -> float:
        return self.cur_e


class DeviceAcc:
    """Everything measured for one device of one run."""

    def __init__(self, device: int, rank: Optional[int], run_root: str) -> None:
        self.device = device
        self.rank = rank
        self.run_root = run_root
        self.ops: Dict[Tuple[str, str], List[float]] = {}  # (type, core) -> [count, total]
        self.sigs: Dict[Tuple[str, ...], List[Any]] = {}
        self.busy = Union()
        self.compute = Union()
        self.copy = Union()
        self.copies_seen: List[float] = []
        self.copy_starts: List[float] = []  # copies read before the kernel table (sorted), to split sequences
        self.tasks = 0
        self.compute_count = 0
        self.compute_time = 0.0
        self.small_count = 0
        self.small_time = 0.0
        self.small_run = 0
        self.longest_small_run = 0
        self.small_runs = 0  # runs of >= SMALL_RUN consecutive small kernels
        self.shapes: Dict[str, Set[str]] = {}
        self.shape_stats: Dict[Tuple[str, str], List[float]] = {}
        self.shape_first: Dict[str, Dict[str, Tuple[Optional[int], int]]] = {}  # type -> shape -> (step, call index)
        self.type_steps: Dict[str, Set[int]] = {}
        self.ops_by_type: Dict[str, int] = {}
        self.state_seen = False
        self.states = {"dynamic": 0, "static": 0}
        self.aicpu: Dict[str, List[float]] = {}
        self.aicore_types: Set[str] = set()
        self.comm_time = 0.0
        self.copy_time = 0.0
        # fusion
        self.recent: Deque[str] = deque(maxlen=16)
        self.recent_dur: Deque[float] = deque(maxlen=16)
        self.patterns: Dict[Tuple[str, ...], List[Any]] = {}
        self.win: Deque[Tuple[int, float, float]] = deque(maxlen=WINDOW_MAX)  # (key id, start, dur)
        self.win_ids: Dict[Tuple[str, str, str], int] = {}
        self.windows: Dict[Tuple[int, ...], List[float]] = {}  # host-bound windows: [count, wall, busy, last_end]
        self.labels: List[Tuple[str, str, str]] = []
        # host side (timeline)
        self.host: Dict[str, List[float]] = {}  # kind -> [count, total]
        self.optimizers: Dict[str, int] = {}
        self.steps = 0
        # summaries written by the profiler
        self.step_trace: Optional[Dict[str, float]] = None
        self.opstat: List[Dict[str, Any]] = []
        self.comm_windows: List[Tuple[float, float, str]] = []
        self.contended: Dict[str, int] = {}
        self.sources: Set[str] = set()

    # ------------------------------------------------------------------ device tasks
    def _signature(self, core: str, type_: str, name: str, shapes: str, state: str, out_shapes: str,
                   step: Optional[int]) -> List[Any]:
        """What a row's text columns decide, computed once per distinct kernel signature:
        [class, op type, ops record, kind (1 AI CPU, 2 AI Core, 0 other), aicpu record,
        state key, shape-stat record, window id, fusion patterns ending here, type steps, last step]."""
        cls = task_class(core, type_, name)
        if cls == "other":
            return [cls]
        t = type_ or name
        key = (t, core or cls.upper())
        rec = self.ops.get(key)
        if rec is None:
            rec = self.ops[key] = [0, 0.0]
        if cls != "compute":
            return [cls, t, rec]
        cu = core.upper()
        kind = 1 if cu in AICPU_CORES else (2 if cu in AICORE_CORES else 0)
        arec = None
        if kind == 1:
            arec = self.aicpu.get(t)
            if arec is None:
                arec = self.aicpu[t] = [0, 0.0, 0.0]
        elif kind == 2:
            self.aicore_types.add(t)
        st = state.strip().lower() if state else ""
        st = st if st in self.states else ""
        shp = shapes.strip().strip('"') if shapes else ""
        if shp == "N/A":
            shp = ""
        srec = None
        if shp:
            seen = self.shapes.get(t)
            if seen is None:
                seen = self.shapes[t] = set()
            if len(seen) < MAX_SHAPES_PER_TYPE and shp not in seen:
                seen.add(shp)
                self.shape_first.setdefault(t, {})[shp] = (step, self.ops_by_type.get(t, 0) + 1)
            sk = (t, shp)
            srec = self.shape_stats.get(sk)
            if srec is None and len(self.shape_stats) < MAX_SHAPE_KEYS:
                srec = self.shape_stats[sk] = [0, 0.0, core]
        wkey = (name, shp, out_shapes.strip().strip('"'))
        wid = self.win_ids.get(wkey)
        if wid is None:
            if len(self.win_ids) < MAX_WINDOW_KEYS:
                wid = self.win_ids[wkey] = len(self.win_ids)
                self.labels.append((t, shp))
            else:
                wid = -1
        tsteps = self.type_steps.get(t) if step is not None else None
        if step is not None and tsteps is None:
            tsteps = self.type_steps[t] = set()
        return [cls, t, rec, kind, arec, st, srec, wid, _BY_LAST.get(t, ()), tsteps, None]

    def task(self, start: float, dur: float, core: str, type_: str, name: str,
             shapes: str = "", state: str = "", out_shapes: str = "", step: Optional[int] = None) -> None:
        if dur < 0:
            return
        sk = (core, type_, name, shapes, state, out_shapes)
        info = self.sigs.get(sk)
        if info is None or (info[0] == "compute" and info[9] is None and step is not None):
            info = self._signature(core, type_, name, shapes, state, out_shapes, step)
            if len(self.sigs) < MAX_SIGNATURES:
                self.sigs[sk] = info
        cls = info[0]
        if cls == "other":
            return
        self.tasks += 1
        end = start + dur
        rec = info[2]
        rec[0] += 1
        rec[1] += dur
        if cls == "copy":
            self.copy_time += dur
            self.copy.push(start, end)
            if len(self.copies_seen) < 200000:
                self.copies_seen.append(start)
            self.win.clear()
            return
        if cls == "comm":
            self.comm_time += dur
            self.busy.push(start, end)
            self.win.clear()
            return
        # compute
        _, t, _, kind, arec, st, srec, wid, patterns, tsteps, last_step = info
        self.busy.push(start, end, dur)
        self.compute.push(start, end)
        self.compute_count += 1
        self.compute_time += dur
        self.ops_by_type[t] = self.ops_by_type.get(t, 0) + 1
        if step is not None and step != last_step and tsteps is not None:
            info[10] = step
            if len(tsteps) < 4096:
                tsteps.add(step)
        if dur < SMALL_OP_US:
            self.small_count += 1
            self.small_time += dur
            run = self.small_run = self.small_run + 1
            if run == SMALL_RUN:
                self.small_runs += 1
            if run > self.longest_small_run:
                self.longest_small_run = run
        else:
            self.small_run = 0
        if kind == 1:
            arec[0] += 1
            arec[1] += dur
            if dur > arec[2]:
                arec[2] = dur
        if st:
            self.state_seen = True
            self.states[st] += 1
        if srec is not None:
            srec[0] += 1
            srec[1] += dur
        # fusion: op-type patterns on the kernel sequence
        recent = self.recent
        recent.append(t)
        self.recent_dur.append(dur)
        for pattern, n in patterns:
            if len(recent) >= n and tuple(list(recent)[-n:]) == pattern:
                spent = sum(list(self.recent_dur)[-n:])
                p = self.patterns.get(pattern)
                if p is None:
                    self.patterns[pattern] = [1, spent]
                else:
                    p[0] += 1
                    p[1] += spent
        # fusion: repeated windows of kernels that keep the device busy < 40 % of their wall time
        win = self.win
        if self.copy_starts and win:
            prev = win[-1]
            i = bisect.bisect_right(self.copy_starts, prev[1] + prev[2])
            if i < len(self.copy_starts) and self.copy_starts[i] < start:
                win.clear()  # a copy ran between the two kernels: not one sequence
        win.append((wid, start, dur))
        n = len(win)
        # past WINDOW_FULL kernels, windows are sampled at every WINDOW_STRIDE-th kernel and
        # their counts scaled back (an unbiased count at a fraction of the work)
        count = self.compute_count
        if n >= 2 and wid >= 0 and (count <= WINDOW_FULL or count % WINDOW_STRIDE == 0):
            weight = 1 if count <= WINDOW_FULL else WINDOW_STRIDE
            ids_all = tuple([w[0] for w in win])
            busy = dur
            windows = self.windows
            threshold = HOST_BOUND_BUSY
            for back in range(n - 2, -1, -1):
                k, s0, d0 = win[back]
                if k < 0:
                    break
                busy += d0
                wall = end - s0
                if wall <= 0 or busy >= threshold * wall:
                    continue
                ids = ids_all[back:]
                wrec = windows.get(ids)
                if wrec is None:
                    if len(windows) < MAX_WINDOW_KEYS:
                        windows[ids] = [weight, wall * weight, busy * weight]
                else:
                    wrec[0] += weight
                    wrec[1] += wall * weight
                    wrec[2] += busy * weight
        # bandwidth contention: a kernel running inside a collective's window
        if self.comm_windows:
            i = bisect.bisect_right(self.comm_windows, (start, float("inf"), "")) - 1
            if i >= 0:
                ws, we, op = self.comm_windows[i]
                if ws <= start < we:
                    self.contended[op] = self.contended.get(op, 0) + 1

    def host_event(self, kind: str, dur: float) -> None:
        rec = self.host.get(kind)
        if rec is None:
            self.host[kind] = [1, dur]
        else:
            rec[0] += 1
            rec[1] += dur

    def finish(self) -> None:
        self.busy.finish()
        self.compute.finish()
        self.copy.finish()

    # ------------------------------------------------------------------ measures
    @property
    def has_tasks(self) -> bool:
        return self.busy.fed > 0 or self.copy.fed > 0

    def active_total(self) -> float:
        """Time the device computes, communicates or copies (copies assumed not to overlap compute)."""
        return min(self.span(), self.busy.total + self.copy.total)

    def span(self) -> float:
        """First to last compute/communication task (as the profiler's overlap analysis counts
        it); copies only when there is nothing else."""
        if self.busy.first is not None:
            return self.busy.end - self.busy.first
        if self.copy.first is not None:
            return self.copy.end - self.copy.first
        return 0.0
