"""The driver side of a simulated host: version files, install info, driver libraries,
dcmi, and the npu-smi stand-in with everything it prints for this host."""
from __future__ import annotations

import json
import os
from typing import Dict, List, Optional, Tuple

from compat_matrix.host_rules import first_accepting, parse_ranges

from .npu_smi import SmiChip, SmiProcess, dcmi_failure, render_board, render_info, render_list, render_mapping
from .plan import HostPlan
from .tree import Tree

STANDINS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "standins")


def write_driver(tree: Tree, plan: HostPlan) -> None:
    spec = plan.spec
    base = plan.install_base
    if plan.has_driver:
        assert plan.driver is not None
        tree.write(f"{base}/driver/version.info", plan.driver.text(), mode=0o444)
        for sub in ("include", "tools", "lib64/common"):
            tree.mkdir(f"{base}/driver/{sub}")
        tree.placeholder_library(f"{base}/driver/lib64/driver/libascend_hal.so", spec.arch, {"driver": plan.driver.get("Version")})
        tree.placeholder_library(f"{base}/driver/lib64/libdcmi.so", spec.arch, {"driver": plan.driver.get("Version")})
        if plan.firmware is not None:
            tree.write(f"{base}/firmware/version.info", plan.firmware.text(), mode=0o444)
    if spec.driver is not None and plan.mounted("install_info"):
        tree.write("/etc/ascend_install.info", install_info(plan), mode=0o644)
    if spec.driver is not None and plan.mounted("dcmi"):
        tree.placeholder_library("/usr/local/dcmi/libdcmi.so", spec.arch)
    path = plan.npu_smi_path
    if path is not None:
        write_npu_smi(tree, plan, path)


def install_info(plan: HostPlan) -> str:
    """/etc/ascend_install.info as the driver and firmware installers leave it."""
    base = plan.install_base
    lines = [
        "UserName=HwHiAiUser",
        "UserGroup=HwHiAiUser",
        "Driver_Install_Type=run",
        f"Driver_Install_Path_Param={base}",
        f"Driver_Install_For_All={'yes' if plan.spec.driver_for_all else 'no'}",
        "Driver_Install_Mode=normal",
    ]
    if plan.spec.install_complete:
        lines.append("Driver_Install_Status=complete")
    if plan.spec.firmware is not None:
        lines += ["Firmware_Install_Type=run", f"Firmware_Install_Path_Param={base}"]
    return "\n".join(lines) + "\n"


# ---------------------------------------------------------------- npu-smi
def smi_chips(plan: HostPlan) -> List[SmiChip]:
    """The chips npu-smi reports, with telemetry near the captured baselines (seeded)."""
    chip = plan.chip
    rng = plan.rng
    health = dict(plan.spec.npu_smi.health)
    used_by: Dict[Tuple[int, int], int] = {}
    for p in plan.spec.npu_smi.processes:
        key = (p.npu, p.chip)
        used_by[key] = used_by.get(key, 0) + p.memory_mb
    out = []
    for dev in plan.devices:
        proc_mb = used_by.get((_card_number(plan, dev), dev.chip), 0)
        power = "NA" if chip.power_w is None else f"{chip.power_w + rng.uniform(-6, 6):.1f}"
        temp = chip.temp_c + rng.randint(-3, 3)
        if chip.hbm_mb:
            hbm = (chip.idle_hbm_used_mb + rng.randint(-20, 20) + proc_mb, chip.hbm_mb)
            memory = (0, 0)
        else:
            hbm = None
            total = chip.memory_mb[dev.chip % len(chip.memory_mb)]
            memory = (chip.idle_memory_used_mb + rng.randint(-200, 200) + proc_mb, total)
        out.append(
            SmiChip(
                npu_id=dev.npu_id,
                chip=dev.chip,
                logic_id=dev.logic_id,
                name=chip.name,
                health=health.get(dev.logic_id, "OK"),
                power=power,
                temp=temp,
                hugepages=(0, 0),
                bus_id=dev.bus_id,
                aicore=0,
                memory=memory,
                hbm=hbm,
            )
        )
    return out


def _card_number(plan: HostPlan, dev) -> int:
    """Scenario processes name cards by position (0..npus-1); npu-smi prints the card's id."""
    return dev.logic_id // plan.chip.chips_per_npu


def smi_processes(plan: HostPlan) -> List[SmiProcess]:
    out = []
    for p in plan.spec.npu_smi.processes:
        dev = next((d for d in plan.devices if _card_number(plan, d) == p.npu and d.chip == p.chip), None)
        if dev is not None:
            out.append(SmiProcess(npu_id=dev.npu_id, chip=p.chip, pid=p.pid, name=p.name, memory_mb=p.memory_mb))
    return out


def firmware_compatibility(plan: HostPlan) -> str:
    """What `-t board` prints as Compatibility: both files' own rules must accept the pair."""
    if plan.driver is None or plan.firmware is None:
        return "UNKNOWN"
    drv = plan.driver.get("Version") or ""
    fw = plan.firmware.get("Version") or ""
    # the driver tooling's own range rule (compat_matrix.host_rules), applied to both files' lists
    fw_ok = first_accepting(fw, _pairs(plan.driver.get("compatible_version_fw") or "")) is not None
    drv_ok = first_accepting(drv, _pairs(plan.firmware.get("compatible_version_drv") or "")) is not None
    return "OK" if fw_ok and drv_ok else "NOK"


def _pairs(text: str) -> List[Tuple[str, str]]:
    return parse_ranges(text) if text.strip() else []


def npu_smi_outputs(plan: HostPlan) -> Dict[str, str]:
    assert plan.driver is not None
    version = plan.driver.get("Version") or ""
    chips = smi_chips(plan)
    outputs = {
        "info": render_info(
            plan.chip.dialect,
            version,
            version,
            chips,
            smi_processes(plan),
            incomplete_install=not plan.spec.install_complete and plan.spec.container is None,
        ),
        "info -l": render_list(chips),
        "info -m": render_mapping(chips, mcu_rows=plan.chip.family == "910b"),
    }
    compat = firmware_compatibility(plan)
    fw_version = plan.firmware.get("Version") if plan.firmware is not None and plan.has_driver else None
    per_card = {}
    for c in chips:
        per_card.setdefault(c.npu_id, []).append(c)
    for npu, group in per_card.items():
        board = render_board(npu, version, fw_version, compat, group[0].bus_id, plan.chip.pci_device_id, len(group))
        outputs[f"info -t board -i {npu}"] = board
        for c in group:
            outputs[f"info -t board -i {npu} -c {c.chip}"] = board
    return outputs


def write_npu_smi(tree: Tree, plan: HostPlan, path: str) -> None:
    behaviour, access_problem = plan.npu_smi_behaviour()
    with open(os.path.join(STANDINS, "npu_smi_script.py"), encoding="utf-8") as fh:
        source = fh.read()
    version = (plan.driver.get("Version") if plan.driver else None) or ""
    failure, status = ("", 0)
    outputs: Dict[str, str] = {}
    if behaviour == "dcmi_error":
        failure, status = dcmi_failure(plan.spec.npu_smi.code, access_problem)
        mode = "fail"
    elif behaviour == "hang":
        mode = "hang"
    else:
        mode = "ok"
        outputs = npu_smi_outputs(plan)
    source = (
        source.replace('"@@BEHAVIOUR@@"', json.dumps(mode))
        .replace('"@@FAILURE@@"', json.dumps(failure))
        .replace("FAILURE_STATUS = 0", f"FAILURE_STATUS = {status}")
        .replace("OUTPUTS = {}", "OUTPUTS = " + json.dumps(outputs, indent=1, sort_keys=True))
        .replace('"@@VERSION@@"', json.dumps(version))
    )
    tree.write(path, f"#!{plan.python_exe} -IS\n" + source, mode=0o755)


def npu_smi_preview(plan: HostPlan) -> Optional[str]:
    """What `npu-smi info` prints on this host, or None when it does not print a table."""
    if plan.npu_smi_path is None or plan.npu_smi_behaviour()[0] != "ok":
        return None
    return npu_smi_outputs(plan)["info"]
