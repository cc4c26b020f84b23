"""The host builder's data: chips, driver / firmware / toolkit files, torch_npu builds.

Loaded once from ``data/*.yaml``; every entry there carries its public source.
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Dict, List, Optional, Tuple

from compat_matrix.chips import Family, family_from_npu_smi

DATA_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data")


def _family(name: str) -> Family:
    """The chip family of a name as npu-smi prints it, from compat_matrix's one chips table."""
    fam = family_from_npu_smi(name)
    if fam is None:
        raise ValueError("runtime_sim chips.yaml: %r is not a chip name npu-smi prints (compat_matrix/data/chips.yaml)" % name)
    return fam


@dataclass(frozen=True)
class Chip:
    name: str
    family: str
    dialect: str
    soc: str
    chips_per_npu: int
    bus_ids: Tuple[str, ...]
    pci_device_id: str
    temp_c: int
    power_w: Optional[float]
    hbm_mb: Optional[int] = None
    idle_hbm_used_mb: int = 0
    memory_mb: Tuple[int, ...] = ()
    idle_memory_used_mb: int = 0
    npu_ids: Tuple[int, ...] = ()

    @property
    def kernel_dir(self) -> str:
        """Directory name of this chip's kernels under opp/built-in/op_impl/ai_core/tbe/kernel."""
        return _family(self.name).kernel_dir or ""

    @property
    def ops_package(self) -> str:
        """The chip part of the CANN ops package name (Ascend-cann-<this>-ops)."""
        return _family(self.name).package or ""

    def npu_id(self, card: int) -> int:
        return self.npu_ids[card] if card < len(self.npu_ids) else card


@dataclass(frozen=True)
class VersionFile:
    """The ordered key=value fields of a version.info, and where they come from."""

    fields: Tuple[Tuple[str, str], ...]
    source: str
    modules: Optional[str] = None

    def get(self, key: str) -> Optional[str]:
        for k, v in self.fields:
            if k == key:
                return v
        return None

    def text(self) -> str:
        return "".join(f"{k}={v}\n" for k, v in self.fields)


@dataclass(frozen=True)
class Toolkit:
    version: str
    innerversion: str
    compatible_version: Optional[str]
    source: str
    component_version: Optional[str] = None
    path_has_arch: bool = True


@dataclass(frozen=True)
class TorchNpuBuild:
    version: str
    torch: str
    cann: str


@dataclass(frozen=True)
class HostCatalog:
    chips: Dict[str, Chip]
    drivers: Dict[str, VersionFile]
    firmwares: Dict[str, VersionFile]
    toolkits: Dict[str, Toolkit]
    module_sets: Dict[str, Tuple[str, ...]]
    torch_npu_builds: Dict[str, TorchNpuBuild]


def _read_yaml(name: str) -> Any:
    import yaml

    with open(os.path.join(DATA_DIR, name), encoding="utf-8") as fh:
        return yaml.safe_load(fh)


@lru_cache(maxsize=1)
def host_catalog() -> HostCatalog:
    pkgs = _read_yaml("packages.yaml")
    chips_raw = _read_yaml("chips.yaml")["chips"]
    chips = {}
    for name, c in chips_raw.items():
        chips[name] = Chip(
            name=name,
            family=_family(name).id,
            dialect=c["dialect"],
            soc=c["soc"],
            chips_per_npu=int(c["chips_per_npu"]),
            bus_ids=tuple(c["bus_ids"]),
            pci_device_id=c["pci_device_id"],
            temp_c=int(c["temp_c"]),
            power_w=c.get("power_w"),
            hbm_mb=c.get("hbm_mb"),
            idle_hbm_used_mb=int(c.get("idle_hbm_used_mb", 0)),
            memory_mb=tuple(c.get("memory_mb", ())),
            idle_memory_used_mb=int(c.get("idle_memory_used_mb", 0)),
            npu_ids=tuple(c.get("npu_ids", ())),
        )
    drivers = {v: _version_file(e) for v, e in pkgs["drivers"].items()}
    firmwares = {v: _version_file(e) for v, e in pkgs["firmwares"].items()}
    toolkits = {
        v: Toolkit(
            version=v,
            innerversion=e["innerversion"],
            compatible_version=e.get("compatible_version"),
            source=e["source"],
            component_version=e.get("component_version"),
            path_has_arch=bool(e.get("path_has_arch", True)),
        )
        for v, e in pkgs["toolkits"].items()
    }
    module_sets = {k: tuple(v) for k, v in pkgs["module_sets"].items()}
    builds = {v: TorchNpuBuild(v, e["torch"], e["cann"]) for v, e in pkgs["torch_npu_builds"].items()}
    return HostCatalog(chips, drivers, firmwares, toolkits, module_sets, builds)


def _version_file(entry: Dict[str, Any]) -> VersionFile:
    fields: List[Tuple[str, str]] = [(str(k), str(v)) for k, v in entry["fields"].items()]
    return VersionFile(fields=tuple(fields), source=entry["source"], modules=entry.get("modules"))
