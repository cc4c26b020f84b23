"""Parser for ``npu-smi info`` tables and npu-smi failure text.

One parser for every published table dialect (samples in tests/check/data/npu_smi/SOURCES.md):
910B/A2 and the 910 family, A3 (two chips per card, ``Chip Phy-ID``), 310P/310B
(``Chip Device``, no HBM column), newer drivers with the ``Process id in container``
column, and the 950 layout (``NPU ID | Name | Health``). Rows are split on ``|`` and
read by content, never by column offsets, because widths differ between drivers.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Dict, List, Optional, Tuple

from ..inputs import int_or_none as num
from ..inputs import to_float
from ..lazyre import lazy
from .npu_smi_error import NpuSmiError, _ints, parse_npu_smi_error  # noqa: F401  (the failure text: its own module)

HEALTH_VALUES = ("OK", "Warning", "Alarm", "Critical", "UNKNOWN")

_HEADER = lazy(r"npu-smi\s+(\S+)\s+Version:\s*(\S+)")
_BUS_ID = lazy(r"^(?:[0-9A-Fa-f]{4,8}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}\.[0-9A-Fa-f]|NA|-)$")
_PAIR = lazy(r"(?<!\d)(\d+)\s*/\s*(\d+)")  # the lookbehind keeps a long digit run linear
_IDLE = lazy(r"No running processes found in NPU\s+(\d+)")
_INCOMPLETE = "The driver package may not be completely installed"


@dataclass
class NpuChip:
    npu_id: int
    chip_id: int
    name: str
    health: str
    phy_id: Optional[int] = None  # A3 Phy-ID / 310P "Device" column
    power_w: Optional[float] = None
    temp_c: Optional[float] = None
    hugepages: Optional[Tuple[int, int]] = None
    bus_id: Optional[str] = None
    aicore_pct: Optional[float] = None
    memory_mb: Optional[Tuple[int, int]] = None  # DDR used / total
    hbm_mb: Optional[Tuple[int, int]] = None  # HBM used / total

    @property
    def device_memory_mb(self) -> Optional[Tuple[int, int]]:
        """The memory a job allocates from: HBM where the chip has it, else DDR (310P/310B)."""
        if self.hbm_mb and self.hbm_mb[1]:
            return self.hbm_mb
        return self.memory_mb


@dataclass
class NpuProcess:
    npu_id: int
    chip_id: Optional[int]
    pid: int
    name: str
    memory_mb: Optional[int]
    container_pid: Optional[str] = None


@dataclass
class NpuSmiInfo:
    tool_version: Optional[str] = None
    driver_version: Optional[str] = None
    dialect: str = "unknown"  # a2 | a3 | 310 | 950 | unknown
    chips: List[NpuChip] = field(default_factory=list)
    processes: List[NpuProcess] = field(default_factory=list)
    idle_npus: List[int] = field(default_factory=list)
    driver_incomplete_warning: bool = False

    @property
    def npu_ids(self) -> List[int]:
        return sorted({c.npu_id for c in self.chips})

    def logical_devices(self) -> List[NpuChip]:
        """Chips in the order the runtime numbers them (A3: each chip is a device, by Phy-ID)."""
        if self.dialect == "a3":
            return sorted(self.chips, key=lambda c: (c.phy_id if c.phy_id is not None else 1 << 20))
        return sorted(self.chips, key=lambda c: (c.npu_id, c.chip_id))


def _cells(line: str) -> List[str]:
    return [c.strip() for c in line.strip().strip("|").split("|")]


def _to_float(text: str) -> Optional[float]:
    try:
        return to_float(text)
    except ValueError:
        return None


def parse_npu_smi_info(text: str) -> NpuSmiInfo:
    """Parse the full ``npu-smi info`` output. Raises ValueError when no table is present."""
    info = NpuSmiInfo()
    section = "preamble"  # preamble -> devices -> processes
    proc_columns = 0
    pending: Optional[Dict[str, object]] = None
    saw_table = False
    for raw in text.splitlines():
        line = raw.rstrip()
        if _INCOMPLETE in line:
            info.driver_incomplete_warning = True
            continue
        if not line.startswith("|"):
            continue
        saw_table = True
        m = _HEADER.search(line)
        if m:
            info.tool_version, info.driver_version = m.group(1), m.group(2)
            continue
        cells = _cells(line)
        joined = " ".join(cells)
        if "Process id" in joined and ("Process name" in joined or "Process memory" in joined):
            section = "processes"
            proc_columns = len(cells)
            continue
        if section != "processes" and "Health" in joined and "Name" in joined:
            section = "devices"
            info.dialect = "950" if cells[0].startswith("NPU ID") else "a2"
            continue
        if section == "devices" and "Bus-Id" in joined:
            first = cells[0]
            if "Phy-ID" in first:
                info.dialect = "a3"
            elif "Device" in first:
                info.dialect = "310"
            continue
        if section == "devices":
            pending = _device_row(info, cells, pending)
        elif section == "processes":
            _process_row(info, cells, proc_columns)
    if not saw_table or (not info.chips and info.driver_version is None and not info.processes and not info.idle_npus):
        raise ValueError("no npu-smi table in the output")
    return info


def _device_row(info: NpuSmiInfo, cells: List[str], pending: Optional[Dict[str, object]]) -> Optional[Dict[str, object]]:
    """Rows come in pairs: (NPU, Name | Health | power temp hugepages) then (Chip | Bus-Id | use)."""
    if info.dialect == "950":
        # | NPU ID | Name | Health | right |  then  |  |  | Bus-Id | right |
        if len(cells) < 4:
            return pending
        if cells[0] and cells[0].isdigit() and num(cells[0]) is not None:
            return {"npu": num(cells[0]), "chip": 0, "name": cells[1], "health": cells[2], "right": cells[3]}
        if pending is not None and _BUS_ID.match(cells[2] or "-"):
            _finish_chip(info, pending, None, cells[2], cells[3])
        return None
    if len(cells) < 3:
        return pending
    left, middle, right = cells[0], cells[1], cells[2]
    if _BUS_ID.match(middle) and pending is not None:
        ids = _ints(left)
        chip_id = ids[0] if ids else 0
        phy = ids[1] if len(ids) > 1 else None
        pending["chip"] = chip_id
        _finish_chip(info, pending, phy, middle, right)
        return None
    parts = left.split(None, 1)
    if parts and parts[0].isdigit() and num(parts[0]) is not None:
        return {"npu": num(parts[0]), "name": parts[1].strip() if len(parts) > 1 else "", "health": middle, "right": right}
    return pending


def _finish_chip(info: NpuSmiInfo, first: Dict[str, object], phy: Optional[int], bus: str, right: str) -> None:
    top = str(first["right"]).split()
    chip = NpuChip(
        npu_id=int(first["npu"]),  # type: ignore[arg-type]
        chip_id=int(first.get("chip", 0)),  # type: ignore[arg-type]
        name=str(first["name"]),
        health=str(first["health"]),
        phy_id=phy,
        power_w=_to_float(top[0]) if top else None,
        temp_c=_to_float(top[1]) if len(top) > 1 else None,
        bus_id=None if bus in ("NA", "-") else bus,
    )
    hp = _PAIR.search(str(first["right"]))
    if hp and num(hp.group(1)) is not None and num(hp.group(2)) is not None:
        chip.hugepages = (num(hp.group(1)), num(hp.group(2)))
    usage = right.split()
    chip.aicore_pct = _to_float(usage[0]) if usage else None
    pairs = [(num(a), num(b)) for a, b in _PAIR.findall(right) if num(a) is not None and num(b) is not None]
    if pairs:
        chip.memory_mb = pairs[0]
    if len(pairs) > 1:
        chip.hbm_mb = pairs[1]
    info.chips.append(chip)


def _process_row(info: NpuSmiInfo, cells: List[str], columns: int) -> None:
    joined = " ".join(cells)
    idle = _IDLE.search(joined)
    if idle:
        if num(idle.group(1)) is not None:
            info.idle_npus.append(num(idle.group(1)))
        return
    if len(cells) < 4:
        return
    ids = _ints(cells[0])
    if not ids or not cells[1].strip().isdigit() or num(cells[1]) is None:
        return
    info.processes.append(
        NpuProcess(
            npu_id=ids[0],
            chip_id=ids[1] if len(ids) > 1 else None,
            pid=num(cells[1]),
            name=cells[2],
            memory_mb=num(cells[3]),
            container_pid=cells[4] if len(cells) > 4 and cells[4] not in ("", "NA") else None,
        )
    )
