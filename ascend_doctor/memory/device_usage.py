"""Who holds a device's memory, from ``npu-smi info``: the HBM in use and the processes.

The failing process is found by pid when it is known (from ``--pid`` or from the log:
plog lines and torch_npu's error banner carry it); otherwise, among the processes on
the device, the one whose memory is closest to what PyTorch reserved is taken as ours
(and, without that figure, the largest). Everything else on the device is "others".

``npu-smi`` runs at another moment than the failure, often after the failing process
exited: its process table shows who else was there, its HBM figures are only context.
The device number in an OOM message is the logical one (after ASCEND_RT_VISIBLE_DEVICES);
without a better mapping it is taken as the NPU id, and the report says so.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import List, Optional, Tuple

from ..core.units import MiB
from ..parsers.npu_smi import NpuChip, NpuSmiInfo, parse_npu_smi_info
from .errors import MemoryInputError


@dataclass
class DeviceUsage:
    npu_id: int
    chip_name: Optional[str] = None
    total: Optional[int] = None  # HBM bytes (DDR on chips without HBM)
    used: Optional[int] = None
    processes: List[Tuple[int, str, Optional[int]]] = field(default_factory=list)  # pid, name, bytes
    ours: Optional[int] = None
    how: str = "none"  # pid | closest_to_reserved | largest | none

    @property
    def others(self) -> List[Tuple[int, str, Optional[int]]]:
        return [p for p in self.processes if p[0] != self.ours]

    @property
    def others_bytes(self) -> int:
        return sum(p[2] or 0 for p in self.others)


def _chip_for(info: NpuSmiInfo, device: int) -> Optional[NpuChip]:
    if info.dialect == "a3":
        logical = info.logical_devices()
        return logical[device] if 0 <= device < len(logical) else None
    for chip in info.chips:
        if chip.npu_id == device:
            return chip
    return None


def npu_smi_facts(text: str, device: int, pid: Optional[int] = None,
                  reserved: Optional[int] = None, name: str = "--npu-smi") -> DeviceUsage:
    """Usage of ``device`` from ``npu-smi info`` text. Raises MemoryInputError."""
    try:
        info = parse_npu_smi_info(text)
    except ValueError:
        raise MemoryInputError(f"{name}: no npu-smi info table in it") from None
    chip = _chip_for(info, device)
    if chip is None and not any(p.npu_id == device for p in info.processes):
        listed = ", ".join(str(n) for n in info.npu_ids) or "none"
        raise MemoryInputError(f"{name}: no NPU {device} in the table (NPUs: {listed})")
    usage = DeviceUsage(npu_id=chip.npu_id if chip else device, chip_name=chip.name if chip else None)
    mem = chip.device_memory_mb if chip else None
    if mem:
        usage.used, usage.total = mem[0] * MiB, mem[1] * MiB
    for p in info.processes:
        if p.npu_id != usage.npu_id:
            continue
        if chip is not None and p.chip_id is not None and info.dialect == "a3" and p.chip_id != chip.chip_id:
            continue
        usage.processes.append((p.pid, p.name, p.memory_mb * MiB if p.memory_mb is not None else None))
    pids = [p[0] for p in usage.processes]
    if pid is not None:
        usage.ours, usage.how = (pid, "pid") if pid in pids else (None, "pid")
    elif usage.processes and reserved is not None:
        usage.ours = min(usage.processes, key=lambda p: abs((p[2] or 0) - reserved))[0]
        usage.how = "closest_to_reserved"
    elif usage.processes:
        usage.ours = max(usage.processes, key=lambda p: p[2] or 0)[0]
        usage.how = "largest"
    return usage
