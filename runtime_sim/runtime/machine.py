"""The simulated hardware a process runs on: its NPUs and what is wrong with them."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import List, Optional

GiB = 1024 ** 3

# Faults a device can have when a process opens it (keys of data/device_failures.yaml).
OPEN_FAULTS = ("driver_open_failed", "device_memory_taken", "tsd_open_failed",
               "opp_verify_failed", "driver_internal")


@dataclass
class DeviceSpec:
    """One physical NPU.

    ``used_by_others`` is HBM other processes hold (npu-smi shows it as used);
    ``open_fault`` makes opening the device fail the way data/device_failures.yaml says.
    ``chip_id``/``die_id`` are what "The error from device(chipId:.., dieId:..)" prints.
    """

    phy_id: int
    hbm_bytes: int = 64 * GiB
    used_by_others: int = 0
    open_fault: Optional[str] = None
    chip_id: Optional[int] = None
    die_id: int = 0

    def __post_init__(self) -> None:
        if self.open_fault is not None and self.open_fault not in OPEN_FAULTS:
            raise ValueError(f"device {self.phy_id}: unknown open_fault {self.open_fault!r}; "
                             f"expected one of {', '.join(OPEN_FAULTS)}")
        if self.chip_id is None:
            self.chip_id = self.phy_id


@dataclass
class Machine:
    """A host with ``devices``; ``host_ip`` is what HCCL prints for this node."""

    devices: List[DeviceSpec] = field(default_factory=lambda: [DeviceSpec(i) for i in range(8)])
    host_ip: str = "127.10.0.1"
    soc: str = "Ascend910B2"

    @classmethod
    def with_devices(cls, count: int, hbm_bytes: int = 64 * GiB, **kwargs: object) -> "Machine":
        return cls(devices=[DeviceSpec(i, hbm_bytes=hbm_bytes) for i in range(count)], **kwargs)

    def device(self, phy_id: int) -> DeviceSpec:
        for dev in self.devices:
            if dev.phy_id == phy_id:
                return dev
        raise KeyError(phy_id)
