"""Driver and firmware checks.

Files: driver and firmware version.info (https://github.com/Ascend/mind-cluster/blob/master/component/ascend-faultdiag/test/st_testcase/modelarts-job-testdt/ascend/environment_check/worker-0/npu_info_before.txt),
/etc/ascend_install.info (https://github.com/Ascend/ascend-docker-image/blob/master/all-in-one/ascend_install.info);
kernel modules (https://github.com/verylucky01/driver/blob/master/scripts/package/custom/driver/common/scripts/deal_ko.sh).
"""
from __future__ import annotations

from typing import List, Optional, Tuple

from ..model import Evidence, Fix
from .base import Context, Result, check, fail, ok, skip, warn
from .container import ascend_traces, in_container

INSTALL_GUIDE = "https://github.com/verylucky01/driver/blob/master/scripts/package/driver/common/scripts/install.sh"
VERSION_INFO_DOC = "https://github.com/Ascend/mind-cluster/blob/master/docs/en/faultdiag/user_guide/03_collecting_logs.md"
DRIVER_INCOMPLETE_SOURCE = "npu_info_print.c in https://github.com/verylucky01/driver"
DCMI_RULE_SOURCE = "https://github.com/verylucky01/driver/blob/master/src/custom/dev_prod/user/dcmi/dcmi_inner/src/dcmi_permission_judge.c"

# Module name prefixes of every Ascend driver generation (23.x/24.x drv_*/ascend_*, 25.x asdrv_*).
MODULE_PREFIXES = ("drv_", "asdrv_", "ascend_")
MODULE_PROBES = ("drv_pcie_host", "drv_pcie_hdc_host", "drv_davinci_intf_host", "asdrv_dms", "asdrv_svm")


def _driver_installed_in_container(ctx: Context) -> bool:
    return in_container(ctx) is not None and ctx.host.is_dir(ctx.facts.install_root() + "/driver/lib64")


@check("driver.installed", "Driver installed", "driver", category="driver_init", requires=("container.mounts",))
def installed(ctx: Context) -> Result:
    fact = ctx.facts.driver()
    if fact.ok:
        return ok(f"driver {fact.value.version} ({fact.path})", evidence=Evidence(found=fact.value.version, source=fact.path))
    if fact.error:
        return fail(
            f"the driver's version file is unreadable: {fact.error}",
            evidence=Evidence(found=fact.error, required="Version=<driver version> in version.info", source=fact.path),
            fix=Fix("Reinstall the driver package so that version.info is rewritten.", _reinstall_commands()),
        )
    if _driver_installed_in_container(ctx):
        return ok("driver libraries are mounted from the host (version.info is not mounted, version unknown)")
    traces = ascend_traces(ctx)
    if in_container(ctx) and traces:
        return fail(
            "no Ascend driver in this container: the host's driver is not mounted",
            evidence=Evidence(found=f"{fact.path} missing", required="the host driver mounted into the container", source=INSTALL_GUIDE),
            fix=Fix(
                "Install the driver on the host (not in the image), then start the container with the driver "
                "mounted and the NPU devices passed through.",
                [
                    "docker run --device=/dev/davinci0 --device=/dev/davinci_manager --device=/dev/devmm_svm "
                    "--device=/dev/hisi_hdc -v /usr/local/Ascend/driver:/usr/local/Ascend/driver:ro "
                    "-v /usr/local/dcmi:/usr/local/dcmi -v /usr/local/bin/npu-smi:/usr/local/bin/npu-smi "
                    "-v /etc/ascend_install.info:/etc/ascend_install.info <image>",
                ],
            ),
        )
    commands = [
        "lspci | grep -i -E 'd80[0-9]|huawei'   # is an Ascend card on the PCIe bus?",
        "./Ascend-hdk-<chip>-npu-driver_<version>_linux-<arch>.run --full --install-for-all",
        "./Ascend-hdk-<chip>-npu-firmware_<version>.run --full",
        "reboot",
    ]
    text = (
        "Install the NPU driver, then the firmware, from the Ascend HDK release for your card "
        "(run as root), and reboot. If this machine has no Ascend NPU, ascend-doctor has nothing to check."
    )
    if in_container(ctx):
        text += " This is a container: install the driver on the host and mount it in (see container.mounts)."
    return fail(
        "no Ascend driver is installed on this machine",
        evidence=Evidence(
            found=f"{fact.path} missing" + (f"; {'; '.join(traces)}" if traces else "; no Ascend files at all"),
            required="the Ascend HDK driver and firmware (driver/version.info)",
            source=INSTALL_GUIDE,
        ),
        fix=Fix(text, commands),
    )


def _reinstall_commands() -> List[str]:
    return [
        "./Ascend-hdk-<chip>-npu-driver_<version>_linux-<arch>.run --full --install-for-all",
        "reboot",
    ]


@check("driver.version", "Driver version is consistent", "driver", category="driver_init", requires=("driver.installed",))
def version(ctx: Context) -> Result:
    fact = ctx.facts.driver()
    if not fact.ok:
        return skip("driver version.info is not available")
    installed_v = fact.value.version
    smi = ctx.facts.npu_smi()
    if smi.info is None or not smi.info.driver_version:
        return ok(f"driver {installed_v} (npu-smi did not report a version to compare)")
    running = smi.info.driver_version
    if running.lower() == installed_v.lower():
        return ok(f"driver {installed_v}; npu-smi reports the same version")
    return warn(
        f"version.info says {installed_v} but the loaded driver reports {running}: "
        "the driver was changed without a reboot, or npu-smi belongs to another install",
        evidence=Evidence(found=f"npu-smi Version: {running}", required=f"{installed_v} (version.info)", source=fact.path),
        fix=Fix(
            "Reboot so that the kernel loads the installed driver, then check again.",
            ["reboot", "npu-smi info | head -3"],
        ),
    )


@check("driver.install_complete", "Driver install completed", "driver", category="driver_init", requires=("driver.installed",))
def install_complete(ctx: Context) -> Result:
    if in_container(ctx):
        return skip("inside a container the host's install record is not authoritative")
    info = ctx.facts.install_info()
    smi = ctx.facts.npu_smi()
    flagged = bool(smi.info and smi.info.driver_incomplete_warning)
    status = (info.value or {}).get("Driver_Install_Status")
    if info.missing or status != "complete" or flagged:
        found = "file missing" if info.missing else (info.error or f"Driver_Install_Status={status or '(absent)'}")
        return warn(
            "the driver install did not record completion; it may be partial",
            evidence=Evidence(found=found, required="Driver_Install_Status=complete in /etc/ascend_install.info", source=DRIVER_INCOMPLETE_SOURCE),
            fix=Fix("Reinstall the driver package and let it run to the end.", _reinstall_commands()),
        )
    return ok("Driver_Install_Status=complete")


@check("driver.modules", "Driver kernel modules loaded", "driver", category="driver_init", requires=("driver.installed",))
def modules(ctx: Context) -> Result:
    loaded = ctx.facts.modules()
    if loaded is None:
        return skip("cannot read /proc/modules")
    ascend = sorted(m for m in loaded if m.startswith(MODULE_PREFIXES) or m in ("ts_agent",))
    if ascend:
        probes = [m for m in MODULE_PROBES if m in loaded]
        shown = ", ".join(probes or ascend[:3])
        return ok(f"{len(ascend)} Ascend kernel modules loaded ({shown})", details=ascend)
    return fail(
        "the driver is installed but none of its kernel modules is loaded",
        evidence=Evidence(found="no drv_*/asdrv_*/ascend_* module in /proc/modules", required="drv_pcie_host or asdrv_* modules", source="https://github.com/verylucky01/driver/blob/master/scripts/package/custom/driver/common/scripts/deal_ko.sh"),
        fix=Fix(
            "Find out why the modules did not load (often a kernel upgraded after the driver was installed), "
            "then reinstall the driver for the running kernel and reboot.",
            ["dmesg | grep -i -E 'davinci|drv_|asdrv' | tail -20", "uname -r", *_reinstall_commands()],
        ),
    )


def _firmware_applies(ctx: Context) -> Optional[str]:
    if in_container(ctx):
        return "firmware is not visible inside a container"
    return None


@check("firmware.version", "Firmware installed", "driver", category="driver_init", requires=("driver.installed",), applies=_firmware_applies)
def firmware_version(ctx: Context) -> Result:
    fact = ctx.facts.firmware()
    if fact.ok:
        return ok(f"firmware {fact.value.version}", evidence=Evidence(found=fact.value.version, source=fact.path))
    found = f"{fact.path} missing" if fact.missing else (fact.error or "unreadable")
    return fail(
        "no firmware version found: the firmware package is missing or broken",
        evidence=Evidence(found=found, required="firmware/version.info with Version=", source=VERSION_INFO_DOC),
        fix=Fix(
            "Install the firmware from the same HDK release as the driver, then reboot.",
            ["./Ascend-hdk-<chip>-npu-firmware_<driver version>.run --full", "reboot"],
        ),
    )


@check("driver.firmware_compat", "Driver and firmware match", "driver", category="version_mismatch", requires=("driver.installed", "firmware.version"))
def firmware_compat(ctx: Context) -> Result:
    from compat_matrix.host_rules import judge_driver_firmware

    drv, fw = ctx.facts.driver(), ctx.facts.firmware()
    if not drv.ok or not fw.ok:
        return skip("needs both version.info files")
    d, f = drv.value, fw.value
    # the rule npu-smi's "Compatibility" applies (dcmi, in verylucky01/driver), as pure data in compat_matrix
    pair = judge_driver_firmware(d.version, f.version, list(d.firmware_ranges), list(f.driver_ranges))
    evidence = Evidence(
        found=f"driver {d.version}, firmware {f.version}",
        required=f"compatible_version_fw={_fmt(d.firmware_ranges)} (driver); compatible_version_drv={_fmt(f.driver_ranges)} (firmware)",
        source=f"{drv.path}; {fw.path}; rule: {DCMI_RULE_SOURCE}",
    )
    if pair.verdict == "compatible":
        return ok(f"firmware {f.version} and driver {d.version} accept each other", evidence=evidence)
    if pair.verdict != "incompatible":
        return skip(f"driver {d.version}, firmware {f.version}: {pair.reason}")
    return fail(
        pair.reason,
        evidence=evidence,
        fix=Fix(
            "Install the firmware of the same HDK release as the driver (its package name carries the HDK "
            f"version, e.g. ..._npu-firmware_{d.version}.run), or the driver that matches the firmware; when "
            "upgrading an installed host, Huawei's order is firmware first, then driver. Reboot afterwards.",
            [f"./Ascend-hdk-<chip>-npu-firmware_{d.version}.run --full", "reboot", "npu-smi info -t board -i 0 | grep -i compatibility"],
        ),
    )


def _fmt(ranges: Tuple[Tuple[str, str], ...]) -> str:
    return ",".join(f"[{lo},{hi}]" for lo, hi in ranges) or "(none)"

