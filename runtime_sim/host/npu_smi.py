"""What the simulated ``npu-smi`` prints: ``info`` in the real table dialects, and
``info -l``, ``info -m``, ``info -t board -i N``.

Column widths are those of real captures (tests render the captured values and compare
byte for byte): dialect ``a2`` is the 98-column 910B / Atlas A2 table
(vllm-project/vllm-ascend#6512, #1895); dialect ``310p`` is the 106-column table of
310P cards on 25.x drivers (vllm-project/vllm-ascend#6842). Field layouts of the key/value
subcommands follow the published samples (8-space indent, key padded to 31).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, List, Optional, Sequence, Tuple

INCOMPLETE_INSTALL_WARNING = (
    "[WARNING]The driver package may not be completely installed, which may cause function abnormal. "
    "Please reinstall it."
)


@dataclass(frozen=True)
class SmiChip:
    """One chip as npu-smi shows it: two table rows."""

    npu_id: int
    chip: int  # chip index on the card
    logic_id: int  # the logical device id (Device column on 310P, Chip Logic ID in -m)
    name: str  # 910B4, 310P3
    health: str
    power: str  # "97.9" or "NA"
    temp: int
    hugepages: Tuple[int, int]
    bus_id: str
    aicore: int
    memory: Tuple[int, int]  # DDR used / total (MB)
    hbm: Optional[Tuple[int, int]] = None  # HBM used / total (MB); None on 310P


@dataclass(frozen=True)
class SmiProcess:
    npu_id: int
    chip: int
    pid: int
    name: str
    memory_mb: int


@dataclass(frozen=True)
class Dialect:
    width: int  # inner width between the outer '|'
    cols: Tuple[int, int, int]  # the three cell widths of the device table
    head_split: Tuple[int, int]  # widths of "npu-smi X" and "Version: Y" in the title row
    header: Tuple[str, str]
    proc_header: str
    proc_cells: Tuple[int, int, int, int]
    npu_name: Tuple[int, int]  # first cell of row 1: id width, name width
    chip_cell: Tuple[int, int]  # first cell of row 2: chip width, device width (0: no device column)
    right1: Tuple[int, int, int]  # power, temp, hugepages
    right2: Tuple[int, int, int]  # aicore, memory, hbm (0: no hbm column)
    huge_used: int  # width of the used figure in "used / total"
    mem_used: int


DIALECTS: Dict[str, Dialect] = {
    "a2": Dialect(
        width=96,
        cols=(27, 15, 52),
        head_split=(33, 62),
        header=(
            "| NPU   Name                | Health        | Power(W)    Temp(C)           Hugepages-Usage(page)|",
            "| Chip                      | Bus-Id        | AICore(%)   Memory-Usage(MB)  HBM-Usage(MB)        |",
        ),
        proc_header="| NPU     Chip              | Process id    | Process name             | Process memory(MB)      |",
        proc_cells=(26, 14, 25, 24),
        npu_name=(6, 20),
        chip_cell=(26, 0),
        right1=(12, 18, 21),
        right2=(12, 18, 21),
        huge_used=5,
        mem_used=5,
    ),
    "310p": Dialect(
        width=104,
        cols=(31, 17, 54),
        head_split=(49, 54),
        header=(
            "| NPU     Name                  | Health          | Power(W)     Temp(C)           Hugepages-Usage(page) |",
            "| Chip    Device                | Bus-Id          | AICore(%)    Memory-Usage(MB)                        |",
        ),
        proc_header="| NPU     Chip                  | Process id      | Process name             | Process memory(MB)        |",
        proc_cells=(30, 16, 25, 26),
        npu_name=(8, 22),
        chip_cell=(8, 22),
        right1=(13, 18, 22),
        right2=(13, 40, 0),
        huge_used=6,
        mem_used=5,
    ),
}


def _rule(d: Dialect, ch: str, split: bool = True) -> str:
    if not split:
        return "+" + "-" * d.width + "+"
    return "+" + "+".join(ch * w for w in d.cols) + "+"


def _pair(used: int, total: int, used_width: int) -> str:
    return f"{str(used).ljust(used_width)}/ {total}"


def render_info(
    dialect: str,
    tool_version: str,
    driver_version: str,
    chips: Sequence[SmiChip],
    processes: Sequence[SmiProcess] = (),
    incomplete_install: bool = False,
) -> str:
    """The text of ``npu-smi info`` (with a trailing newline)."""
    d = DIALECTS[dialect]
    out: List[str] = [_rule(d, "-", split=False)]
    left, right = d.head_split
    out.append("| " + f"npu-smi {tool_version}".ljust(left) + f"Version: {driver_version}".ljust(right) + "|")
    out.append(_rule(d, "-"))
    out.extend(d.header)
    out.append(_rule(d, "="))
    by_npu: Dict[int, List[SmiChip]] = {}
    order: List[int] = []
    for c in chips:
        if c.npu_id not in by_npu:
            order.append(c.npu_id)
        by_npu.setdefault(c.npu_id, []).append(c)
    for npu in order:
        group = by_npu[npu]
        for i, c in enumerate(group):
            out.extend(_chip_rows(d, c))
            out.append(_rule(d, "=" if i == len(group) - 1 else "-"))
    out.append(_rule(d, "-"))
    out.append(d.proc_header)
    out.append(_rule(d, "="))
    procs_by_npu: Dict[int, List[SmiProcess]] = {}
    for p in processes:
        procs_by_npu.setdefault(p.npu_id, []).append(p)
    for npu in order:
        rows = procs_by_npu.get(npu)
        if not rows:
            out.append("| " + f"No running processes found in NPU {npu}".ljust(d.width - 1) + "|")
        else:
            for p in rows:
                a, b, c_, e = d.proc_cells
                out.append(
                    "| " + f"{str(p.npu_id).ljust(8)}{p.chip}".ljust(a)
                    + "| " + str(p.pid).ljust(b)
                    + "| " + p.name.ljust(c_)
                    + "| " + str(p.memory_mb).ljust(e) + "|"
                )
        out.append(_rule(d, "="))
    if incomplete_install:
        out.append(INCOMPLETE_INSTALL_WARNING)
    return "\n".join(out) + "\n"


def _chip_rows(d: Dialect, c: SmiChip) -> List[str]:
    idw, namew = d.npu_name
    p, t, h = d.right1
    row1 = (
        "| " + str(c.npu_id).ljust(idw) + c.name.ljust(namew)
        + "| " + c.health.ljust(d.cols[1] - 1)
        + "| " + c.power.ljust(p) + str(c.temp).ljust(t) + _pair(*c.hugepages, used_width=d.huge_used).ljust(h) + "|"
    )
    chipw, devw = d.chip_cell
    first = str(c.chip).ljust(chipw) + (str(c.logic_id).ljust(devw) if devw else "")
    a, m, hb = d.right2
    right = str(c.aicore).ljust(a) + _pair(*c.memory, used_width=d.mem_used).ljust(m)
    if hb:
        used, total = c.hbm or (0, 0)
        right += _pair(used, total, used_width=d.mem_used).ljust(hb)
    row2 = "| " + first + "| " + c.bus_id.ljust(d.cols[1] - 1) + "| " + right + "|"
    return [row1, row2]


def _kv(key: str, value: object) -> str:
    return "        " + key.ljust(31) + ": " + str(value)


def render_list(chips: Sequence[SmiChip]) -> str:
    """``npu-smi info -l``: the NPU ids and their chip counts."""
    counts: Dict[int, int] = {}
    for c in chips:
        counts[c.npu_id] = counts.get(c.npu_id, 0) + 1
    lines = [_kv("Total Count", len(counts)), ""]
    for npu, n in counts.items():
        lines += [_kv("NPU ID", npu), _kv("Chip Count", n), ""]
    return "\n".join(lines) + "\n"


def render_mapping(chips: Sequence[SmiChip], mcu_rows: bool) -> str:
    """``npu-smi info -m``: tab-indented, 31-wide columns; 910B cards add an Mcu row."""
    def row(*cells: object) -> str:
        return "\t" + "".join(str(c).ljust(31) for c in cells[:-1]) + str(cells[-1])

    lines = [row("NPU ID", "Chip ID", "Chip Logic ID", "Chip Name")]
    for c in chips:
        lines.append(row(c.npu_id, c.chip, c.logic_id, "Ascend " + c.name))
        if mcu_rows:
            lines.append(row(c.npu_id, c.chip + 1, "-", "Mcu"))
    return "\n".join(lines) + "\n"


def render_board(npu_id: int, driver: str, firmware: Optional[str], compatibility: str, bus_id: str, pci_device_id: str, chip_count: int) -> str:
    """``npu-smi info -t board -i N``."""
    lines = [
        _kv("NPU ID", npu_id),
        _kv("Software Version", driver),
        _kv("Firmware Version", firmware or "NA"),
        _kv("Compatibility", compatibility),
        _kv("Board ID", "0x02"),
        _kv("PCB ID", "A"),
        _kv("BOM ID", 1),
        _kv("PCIe Bus Info", bus_id),
        _kv("Slot ID", 0),
        _kv("Class ID", "NA"),
        _kv("PCI Vendor ID", "0x19e5"),
        _kv("PCI Device ID", pci_device_id),
        _kv("Subsystem Vendor ID", "0x0200"),
        _kv("Subsystem Device ID", "0x0100"),
        _kv("Chip Count", chip_count),
    ]
    return "\n".join(lines) + "\n"


def dcmi_failure(code: int, access_problem: bool) -> Tuple[str, int]:
    """Output and exit status of npu-smi when dcmi_init fails.

    npu_smi.c prints the dcmi line and passes the negative code to exit(), so the shell
    sees it modulo 256 (-8005 -> 187). When the device nodes cannot be opened the driver's
    log library first prints its DrvMngGetConsoleLogLevel line (HAMi ascend-device-plugin#66).
    """
    if code == -8020:
        text = f"dcmi model initialized failed, because the device is used. ret is {code}\n"
    else:
        text = f"dcmi module initialize failed. ret is {code}\n"
    if access_problem:
        text = "DrvMngGetConsoleLogLevel failed. (ret=4)\n" + text
    return text, code % 256
