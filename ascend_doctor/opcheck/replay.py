"""Replay a manifest on runtime_sim's simulated NPU at the target versions.

Every op that would run on its own on the target release (not inside a fused parent) is
sent, in recorded order and with its recorded dtype, through ``runtime_sim.ops.OpRunner``
of a simulated process with the target torch_npu and CANN. That process writes what the
upgrade would produce: the CPU-fallback warnings on the console, the plog lines, and the
error (console text and plog) of the first op that fails, where the process stops. The
console text is saved as ``console.log`` next to the plog tree, and the tree is triaged
with ``ascend-doctor triage``'s engine, exactly as a user's logs would be.

The simulated host is a separate world (runtime_sim never imports ascend_doctor); this
module only drives it through its public API.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

from ascend_doctor.opcheck.choices import DEFAULT_SOC as _DEFAULT_SOC
from ascend_doctor.opcheck.classify import classify
from ascend_doctor.opcheck.manifest import Manifest, OpEntry
from ascend_doctor.triage.engine import triage_paths
from ascend_doctor.triage.render import render_json

DEFAULT_SOC = _DEFAULT_SOC.value
DEFAULT_START = "2025-10-24 11:16:52"
PID = 2111667
CONSOLE_FILE = "console.log"


class ReplayError(RuntimeError):
    pass


@dataclass
class ReplayResult:
    target: Dict[str, Any]
    cann: str
    soc: str
    out_dir: Path
    console: str
    outcomes: List[Dict[str, Any]]
    failed: Optional[Dict[str, Any]] = None
    logs: List[Path] = field(default_factory=list)
    triage: Optional[Dict[str, Any]] = None  # triage's JSON report of out_dir

    @property
    def exit_code(self) -> int:
        return 1 if self.failed else 0

    def to_json(self) -> Dict[str, Any]:
        return {
            "target": self.target,
            "cann": self.cann,
            "soc": self.soc,
            "out_dir": str(self.out_dir),
            "console": self.console,
            "outcomes": self.outcomes,
            "failed": self.failed,
            "logs": [str(p) for p in self.logs],
            "triage": self.triage,
        }


def _main_dtype(entry: OpEntry) -> str:
    """The dtype the op computes in: the first floating dtype of its first signature."""
    for sig in entry.dtypes:
        for dt in sig:
            if dt.startswith(("float", "bfloat", "complex")):
                return dt
        if sig:
            return sig[0]
    return "float32"


def ops_to_replay(manifest: Manifest, support: Any) -> List[Tuple[OpEntry, str]]:
    """Ops that run on their own on this release, in recorded order, with their status."""
    verdicts = classify(manifest, support)
    chosen = [e for e in manifest.ops if verdicts[e.op].own_calls > 0 and verdicts[e.op].status != "covered"]
    chosen.sort(key=lambda e: (e.first if e.first is not None else 1 << 62, e.op))
    return [(e, verdicts[e.op].status) for e in chosen]


def replay(
    manifest: Manifest,
    to_v: str,
    out_dir: Path,
    cann: Optional[str] = None,
    soc: str = DEFAULT_SOC,
    seed: int = 0,
    log_level: int = 1,
    triage: bool = True,
) -> ReplayResult:
    """Run the manifest on a simulated NPU with torch_npu ``to_v`` (and ``cann``, default: its pair)."""
    from compat_matrix import op_support

    try:
        from runtime_sim.ops import OpRunner
        from runtime_sim.plog.timefmt import MS
        from runtime_sim.runtime import Machine, NpuError, SimClock, SimProcess, Stack, TorchNpu
    except ImportError as exc:  # pragma: no cover - runtime_sim ships with ascend-doctor
        raise ReplayError(f"the simulator (runtime_sim) is not available: {exc}") from None

    res = op_support.resolve(to_v)
    rel = res.release
    cann_v = cann or rel.cann
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    try:
        stack = Stack(cann=cann_v, torch_npu=rel.wheel, torch=f"{rel.torch}.0")
    except ValueError as exc:
        raise ReplayError(f"cannot simulate CANN {cann_v} with torch_npu {rel.wheel}: {exc}") from None
    env = {"ASCEND_GLOBAL_LOG_LEVEL": str(int(log_level))}
    proc = SimProcess(out_dir, PID, "python3", env, stack, SimClock.at(DEFAULT_START), seed)
    npu = TorchNpu(proc, Machine.with_devices(1, soc=soc))
    outcomes: List[Dict[str, Any]] = []
    failed: Optional[Dict[str, Any]] = None
    try:
        npu.set_device(0)
        runner = OpRunner(npu, soc=soc)
        for entry, status in ops_to_replay(manifest, op_support.load_branch(res.data_key)):
            dtype = _main_dtype(entry)
            if status == "unsupported" and entry.op.startswith("npu::"):
                # A torch_npu custom op the release does not have fails in Python (no such
                # attribute) before any NPU work; the simulator has no console text for that.
                failed = {"op": entry.op, "dtype": dtype, "category": "unsupported_op", "code": None,
                          "error": f"torch_npu {rel.wheel} has no custom op {entry.op}"}
                outcomes.append({"op": entry.op, "dtype": dtype, "path": "missing"})
                break
            try:
                out = runner.run(entry.op, dtype)
            except NpuError as err:
                proc.say(err.console)
                failed = {"op": entry.op, "dtype": dtype, "category": err.category, "code": err.code,
                          "error": err.console.strip().splitlines()[0] if err.console.strip() else ""}
                outcomes.append({"op": entry.op, "dtype": dtype, "path": "error"})
                break
            outcomes.append({"op": out.op, "dtype": dtype, "path": out.path, "kernel": out.kernel, "warned": out.warned})
            proc.clock.advance(50)
    finally:
        proc.noise(proc.noise_device).exit(proc.clock.now + 50 * MS)
        proc.close()
    console = "\n".join(proc.console)
    (out_dir / CONSOLE_FILE).write_text(console + ("\n" if console else ""), encoding="utf-8")
    result = ReplayResult(res.to_json(), cann_v, soc, out_dir, console, outcomes, failed,
                          list(proc.log.paths) + [out_dir / CONSOLE_FILE])
    if triage:
        import json

        result.triage = json.loads(render_json(triage_paths([str(out_dir)])))
    return result


def summary_lines(r: ReplayResult) -> List[str]:
    """A short text account of a replay, for the opcheck report."""
    t = r.target
    ran = len(r.outcomes)
    by: Dict[str, int] = {}
    for o in r.outcomes:
        by[o["path"]] = by.get(o["path"], 0) + 1
    lines = [
        f"Replay on a simulated {r.soc} with torch_npu {t['wheel']} and CANN {r.cann} (runtime_sim): "
        f"{ran} ops run (" + ", ".join(f"{n} {p}" for p, n in sorted(by.items(), key=lambda kv: -kv[1])) + ")",
    ]
    if r.console.strip():
        lines.append("  console:")
        lines += ["    " + ln for ln in r.console.strip().splitlines()[:20]]
    if r.failed:
        lines.append(f"  stopped at {r.failed['op']} ({r.failed['dtype']}): {r.failed['error']}")
    incidents = (r.triage or {}).get("incidents", [])
    if incidents:
        lines.append(f"  triage of {r.out_dir}: " + "; ".join(f"[{i.get('category')}] {i.get('title')}" for i in incidents[:3]))
    else:
        lines.append(f"  triage of {r.out_dir}: no incidents")
    lines.append(f"  logs: {r.out_dir} (ascend-doctor triage {r.out_dir})")
    return lines
