"""What a scenario's host looks like, worked out once before anything is written.

The plan resolves the scenario against the host data (chip, driver, toolkit), assigns
user and group ids, lists the logical devices and decides what npu-smi does. Builders
of each part read the plan and write files; none of them decides anything on its own.
"""
from __future__ import annotations

import os
import random
import sys
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Tuple

from runtime_sim.scenarios.schema import Scenario

from .catalog import Chip, HostCatalog, Toolkit, VersionFile, host_catalog

HW_USER = "HwHiAiUser"
ROOT_UID_HW = 1000  # uid/gid the Ascend images give HwHiAiUser (https://github.com/Ascend/ascend-docker-image/blob/master/Dockerfile/latest/common/ascend-infer/Dockerfile)
CONTROL_NODES = ("davinci_manager", "devmm_svm", "hisi_hdc")
EXTRA_NODES_910B = ("devmm_svm_agent", "dvpp_cmdlist")


@dataclass(frozen=True)
class Account:
    name: str
    uid: int
    gid: int
    home: str
    groups: Tuple[str, ...] = ()


@dataclass(frozen=True)
class Device:
    logic_id: int  # /dev/davinci<logic_id>, the id ASCEND_RT_VISIBLE_DEVICES counts
    npu_id: int  # the card id npu-smi prints
    chip: int  # chip index on the card
    bus_id: str


@dataclass
class HostPlan:
    scenario: Scenario
    catalog: HostCatalog
    chip: Chip
    devices: List[Device]
    hw: Account
    user: Account
    group_ids: Dict[str, int]
    builder_is_root: bool
    driver: Optional[VersionFile]
    firmware: Optional[VersionFile]
    toolkit: Optional[Toolkit]
    install_base: str = "/usr/local/Ascend"
    site_packages: str = ""
    python_exe: str = sys.executable
    rng: random.Random = field(default_factory=random.Random)

    # ------------------------------------------------------------ what is present
    @property
    def spec(self):
        return self.scenario.host

    def mounted(self, item: str) -> bool:
        """Whether a host item is present: always on bare metal, in a container only if mounted."""
        container = self.spec.container
        return container is None or item in container.mounts

    @property
    def has_driver(self) -> bool:
        return self.driver is not None and self.mounted("driver")

    @property
    def has_nodes(self) -> bool:
        return self.spec.devices == "all" and self.spec.driver is not None and self.mounted("devices")

    @property
    def node_mode(self) -> int:
        return 0o666 if self.spec.driver_for_all else 0o660

    def user_can_open_nodes(self) -> bool:
        if not self.has_nodes:
            return False
        if self.user.uid == 0 or self.node_mode & 0o006:
            return True
        return self.user.uid == self.hw.uid or HW_USER in self.user.groups

    @property
    def npu_smi_path(self) -> Optional[str]:
        if self.spec.driver is None or self.spec.npu_smi.behaviour == "absent" or not self.mounted("npu_smi"):
            return None
        return self.spec.npu_smi.location

    def npu_smi_behaviour(self) -> Tuple[str, bool]:
        """(ok | hang | dcmi_error, whether a dcmi error comes from unopenable device nodes)."""
        wanted = self.spec.npu_smi.behaviour
        if wanted in ("ok", "hang", "dcmi_error"):
            return wanted, False
        if not self.has_driver or not self.user_can_open_nodes():
            return "dcmi_error", True
        return "ok", False

    @property
    def logical_count(self) -> int:
        return len(self.devices)


def make_plan(scenario: Scenario, python_version: Optional[Tuple[int, int]] = None) -> HostPlan:
    cat = host_catalog()
    spec = scenario.host
    chip = cat.chips[spec.chip]
    devices: List[Device] = []
    for card in range(spec.npus):
        for c in range(chip.chips_per_npu):
            logic = card * chip.chips_per_npu + c
            bus = chip.bus_ids[card % len(chip.bus_ids)]
            devices.append(Device(logic_id=logic, npu_id=chip.npu_id(card), chip=c, bus_id=bus))
    builder_is_root = os.geteuid() == 0
    # Device nodes get HwHiAiUser's ids; without root we cannot chown, so HwHiAiUser takes
    # the builder's own ids and the nodes (owned by the builder) still map to HwHiAiUser.
    hw_uid, hw_gid = (ROOT_UID_HW, ROOT_UID_HW) if builder_is_root else (os.geteuid(), os.getegid())
    hw = Account(HW_USER, hw_uid, hw_gid, f"/home/{HW_USER}")
    group_ids: Dict[str, int] = {"root": 0, HW_USER: hw_gid}
    u = spec.user
    if u.name == "root":
        user = Account("root", 0, 0, u.home_dir, tuple(u.groups))
    else:
        uid = u.uid
        while uid in (hw_uid, 0):
            uid += 1
        gid = uid
        while gid in group_ids.values():
            gid += 1
        group_ids[u.name] = gid
        user = Account(u.name, uid, gid, u.home_dir, tuple(u.groups))
    next_gid = 2000
    for g in u.groups:
        if g not in group_ids:
            while next_gid in group_ids.values():
                next_gid += 1
            group_ids[g] = next_gid
    major, minor = python_version or sys.version_info[:2]
    return HostPlan(
        scenario=scenario,
        catalog=cat,
        chip=chip,
        devices=devices,
        hw=hw,
        user=user,
        group_ids=group_ids,
        builder_is_root=builder_is_root,
        driver=cat.drivers[spec.driver] if spec.driver else None,
        firmware=cat.firmwares[spec.firmware] if spec.firmware else None,
        toolkit=cat.toolkits[spec.cann.version] if spec.cann else None,
        site_packages=f"/usr/local/lib/python{major}.{minor}/site-packages",
        rng=random.Random(scenario.seed),
    )
