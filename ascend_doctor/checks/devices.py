"""NPU device checks: npu-smi, health, device nodes and their permissions, who holds a card.

Formats and device facts: npu-smi (samples in tests/check/data/npu_smi/SOURCES.md;
health values https://hiascend.com/document/detail/zh/Atlas%20200I%20A2/24.1.RC3/RC/driverdevelopmentguide/atlasdg_11_0151.html), device nodes
and owner (https://github.com/verylucky01/driver/blob/master/scripts/package/driver/common/scripts/install.sh),
containers (https://github.com/Ascend/mind-cluster/blob/master/docs/en/scheduling/usage/containerization/02_usage_on_the_docker_client.md),
device selection (https://www.hiascend.com/document/detail/zh/CANNCommunityEdition/910/maintenref/envvar/envref_07_0028.html).
"""
from __future__ import annotations

from typing import Dict, List, Optional, Tuple

from ..facts import NPU_SMI_TIMEOUT
from ..kb import load
from ..model import Evidence, Fix
from ..parsers.npu_smi import NpuChip
from ..parsers.visible_devices import parse_rt_visible_devices
from .base import Context, Result, check, fail, ok, skip, timed_out, warn
from .container import in_container

NODES_SOURCE = "https://github.com/verylucky01/driver/tree/master/scripts/package/custom/driver"
HEALTH_SOURCE = "https://hiascend.com/document/detail/zh/Atlas%20200I%20A2/24.1.RC3/RC/driverdevelopmentguide/atlasdg_11_0151.html"
DCMI_SOURCE = "https://github.com/verylucky01/driver/blob/master/docs/en/Ascend_910B_DCMI_API/Ascend_910B_DCMI_API/return-codes.md"
CONTROL_NODES = ("/dev/davinci_manager", "/dev/hisi_hdc")
SVM_NODES = ("/dev/devmm_svm", "/dev/asdrv_svm")  # 950 drivers replace devmm_svm by asdrv_svm


def _explain_code(code: Optional[int]) -> Optional[str]:
    """Meaning of a dcmi return code from the knowledge base, when it knows it."""
    if code is None:
        return None
    info = load().lookup_code(str(code))
    return getattr(info, "meaning", None) if info else None


def _failed(ctx: Context, check_id: str) -> bool:
    prior = ctx.results.get(check_id)
    return prior is not None and prior.status.value == "fail"


def _dcmi_fix(code: int, ctx: Context) -> Fix:
    if code == -8020:
        return Fix(
            "The device is held by another container or process. Find it and stop it, or pick another device.",
            ["npu-smi info -t proc -i 0", "docker ps --format '{{.ID}} {{.Names}}'"],
        )
    commands = ["ls -l /dev/davinci* /dev/davinci_manager /dev/devmm_svm /dev/hisi_hdc", "id"]
    text = (
        "dcmi could not talk to the driver. Usual causes: the device nodes are not accessible to this user "
        "or not passed into the container, or the driver/firmware (or the kernel) was upgraded without a "
        "reboot. Check the nodes and your groups, then reboot if the driver changed."
    )
    if in_container(ctx):
        commands.append("docker run --device=/dev/davinci0 --device=/dev/davinci_manager --device=/dev/devmm_svm --device=/dev/hisi_hdc ...")
    else:
        commands.append("reboot")
    return Fix(text, commands)


def _chip_json(c: NpuChip) -> Dict[str, object]:
    return {
        "npu": c.npu_id,
        "chip": c.chip_id,
        "phy_id": c.phy_id,
        "name": c.name,
        "health": c.health,
        "bus_id": c.bus_id,
        "memory_mb": list(c.device_memory_mb) if c.device_memory_mb else None,
    }


def _devices(ctx: Context) -> List[NpuChip]:
    info = ctx.facts.npu_smi().info
    return info.logical_devices() if info else []


def _node_paths(ctx: Context) -> Tuple[List[str], List[str]]:
    """(required control/svm nodes that are missing, davinci<N> nodes present)."""
    host = ctx.host
    missing = [n for n in CONTROL_NODES if not host.is_device_node(n)]
    if not any(host.is_device_node(n) for n in SVM_NODES):
        missing.append(SVM_NODES[0])
    davinci = sorted(
        (p for p in host.glob("/dev", "davinci*") if p[len("/dev/davinci"):].isdigit() and host.is_device_node(p)),
        key=lambda p: int(p[len("/dev/davinci"):]),
    )
    return missing, davinci


@check("devices.nodes", "Device nodes present", "devices", category="driver_init", requires=("driver.installed",))
def nodes(ctx: Context) -> Result:
    missing, davinci = _node_paths(ctx)
    chips = _devices(ctx)
    container = in_container(ctx) is not None
    problems = list(missing)
    if not davinci:
        problems.insert(0, "/dev/davinci<N> (none)")
    elif chips and not container and len(davinci) < len(chips):
        problems.append(f"only {len(davinci)} /dev/davinci nodes for {len(chips)} chips")
    found = ", ".join(davinci + [n for n in CONTROL_NODES + SVM_NODES if ctx.host.is_device_node(n)]) or "no NPU device nodes"
    if not problems:
        return ok(f"{len(davinci)} davinci node(s) and the control nodes are present", evidence=Evidence(found=found))
    evidence = Evidence(found=found, required="/dev/davinci<N> per chip, /dev/davinci_manager, /dev/devmm_svm, /dev/hisi_hdc", source=NODES_SOURCE)
    if container:
        fix = Fix(
            "Pass the NPU device nodes into the container (or use the Ascend Docker Runtime with ASCEND_VISIBLE_DEVICES).",
            ["docker run --device=/dev/davinci0 --device=/dev/davinci_manager --device=/dev/devmm_svm --device=/dev/hisi_hdc <your options> <image>"],
        )
        return fail("NPU device nodes are missing in this container: " + ", ".join(problems), evidence=evidence, fix=fix)
    fix = Fix(
        "The driver creates these nodes when it loads; their absence means it did not load or the install is broken.",
        ["ls -l /dev/davinci*", "dmesg | grep -i davinci | tail -20", "reboot"],
    )
    return fail("NPU device nodes are missing: " + ", ".join(problems), evidence=evidence, fix=fix)


@check("devices.access", "Device nodes accessible to the user", "devices", category="device_busy_permission", requires=("devices.nodes",))
def access(ctx: Context) -> Result:
    host, user = ctx.host, ctx.host.user
    missing, davinci = _node_paths(ctx)
    present = [n for n in CONTROL_NODES + SVM_NODES if host.is_device_node(n)] + davinci
    if not present:
        return skip("no device nodes to judge")
    if user.is_root:
        return ok(f"user {user.name} is root")
    denied = [n for n in present if not host.can_access(n, "rw", user)]
    if not denied:
        return ok(f"user {user.name} can open all {len(present)} device nodes")
    st = host.stat(denied[0])
    owner = f"{st.owner or st.uid}:{st.group or st.gid}" if st else "?"
    mode = st.mode_octal if st else "?"
    group = (st.group if st and st.group else "HwHiAiUser")
    groups = ", ".join(sorted(user.groups)) or "(none)"
    return fail(
        f"user {user.name} cannot open {len(denied)} device node(s), e.g. {denied[0]} (mode {mode}, {owner})",
        evidence=Evidence(
            found=f"user {user.name} (uid {user.uid}) in groups: {groups}",
            required=f"root, or membership of {group} (nodes are mode {mode})",
            source=NODES_SOURCE,
        ),
        fix=Fix(
            f"Add the user to the {group} group, then log in again (or start a shell with the new group).",
            [f"sudo usermod -aG {group} {user.name}", f"newgrp {group}"],
        ),
        details=[f"denied: {n}" for n in denied[:16]],
    )


@check("npu_smi.info", "npu-smi info", "devices", category="driver_init", requires=("driver.installed",), timeout=NPU_SMI_TIMEOUT + 5)
def npu_smi_info(ctx: Context) -> Result:
    fact = ctx.facts.npu_smi()
    if fact.path is None:
        if in_container(ctx):
            return skip("npu-smi is not mounted into this container (see container.mounts)")
        return fail(
            "npu-smi is not installed although the driver is",
            evidence=Evidence(found="npu-smi not in PATH, /usr/local/bin, /usr/local/sbin or /usr/bin", required="/usr/local/bin/npu-smi from the driver package"),
            fix=Fix("Reinstall the driver package; it installs npu-smi.", ["ls -l /usr/local/bin/npu-smi /usr/local/sbin/npu-smi"]),
        )
    if fact.untrusted:
        return skip(f"not run: {fact.untrusted}", data={"untrusted": True})
    result = fact.result
    if result is not None and result.timed_out:
        return timed_out(
            f"npu-smi info did not answer within {ctx.options.command_timeout:g} s (it was killed): the driver or a device is hung",
            evidence=Evidence(found=f"{fact.path} info: no output after {result.duration_s:.1f} s", required="an answer within a few seconds"),
            fix=Fix(
                "Look for other stuck npu-smi/dcmi callers and for driver errors in the kernel log; a hung device "
                "usually needs a reset or a reboot.",
                ["ps -eo pid,etime,cmd | grep -E 'npu-smi|dcmi' | grep -v grep", "dmesg | grep -i -E 'davinci|dcmi|hdc' | tail -20", "reboot"],
            ),
        )
    if result is not None and result.foreign and not ctx.host.is_real:
        return skip(f"the judged machine's npu-smi cannot run on this machine ({result.error}); device checks need it")
    if result is not None and result.error:
        return fail(f"npu-smi could not be started: {result.error}", evidence=Evidence(found=result.error))
    if fact.info is not None:
        info = fact.info
        names = sorted({c.name for c in info.chips})
        devices = info.logical_devices()
        summary = f"{len(devices)} device{'s' if len(devices) != 1 else ''}"
        if names:
            summary += " (" + ", ".join(names) + ")"
        summary += f", driver {info.driver_version}" if info.driver_version else ""
        data = {
            "dialect": info.dialect,
            "tool_version": info.tool_version,
            "driver_version": info.driver_version,
            "devices": [_chip_json(c) for c in devices],
            "processes": [p.__dict__ for p in info.processes],
        }
        return ok(summary, evidence=Evidence(found=summary, source=f"{fact.path} info"), data=data)
    err = fact.error
    output = result.output if result is not None else ""
    blocker = next((cid for cid in ("devices.nodes", "devices.access") if _failed(ctx, cid)), None)
    if err is not None and err.kind in ("dcmi_init", "console_log_level") and blocker is not None:
        # dcmi cannot start when the nodes are missing or closed to this user: that is the
        # cause, already reported; repeating it as a second failure would only mislead
        return skip(
            f"npu-smi fails ({err.line}) because of {blocker}, reported above",
            evidence=Evidence(found=err.line),
            data={"blocked_by": blocker},
        )
    if err is not None and err.code is not None:
        meaning = _explain_code(err.code)
        summary = f"npu-smi failed: {err.line}"
        if meaning:
            summary += f" ({meaning})"
        return fail(
            summary,
            evidence=Evidence(found=err.line, required="npu-smi info prints the device table", source=DCMI_SOURCE),
            fix=_dcmi_fix(err.code, ctx),
            kb=f"dcmi{err.code}",
            details=output.splitlines()[:20],
        )
    if result is not None and result.returncode == 0:
        # npu-smi succeeded; it is this parser that does not know the layout (a newer driver)
        return warn(
            f"npu-smi info succeeded but its output is in a layout ascend-doctor cannot read ({fact.parse_error})",
            category="other",
            evidence=Evidence(found=(output.splitlines() or ["(no output)"])[0][:200], source=f"{fact.path} info"),
            fix=Fix("Device checks that need the table are skipped; please report the output (it is safe to share).", ["npu-smi info"]),
            details=output.splitlines()[:20],
        )
    return fail(
        f"npu-smi info failed (exit {result.returncode if result else '?'}) and printed no device table",
        evidence=Evidence(found=(output.splitlines() or ["(no output)"])[0][:200]),
        fix=Fix("Run it yourself to see the whole message.", ["npu-smi info; echo exit=$?"]),
        details=output.splitlines()[:20],
    )


@check("devices.health", "NPU health", "devices", category="driver_init", requires=("npu_smi.info",))
def health(ctx: Context) -> Result:
    devices = _devices(ctx)
    if not devices:
        return skip("npu-smi listed no devices")
    bad = [c for c in devices if c.health != "OK"]
    if not bad:
        return ok(f"all {len(devices)} devices report OK")
    worst = sorted(bad, key=lambda c: ("UNKNOWN", "Critical", "Alarm", "Warning").index(c.health) if c.health in ("UNKNOWN", "Critical", "Alarm", "Warning") else 9)
    listed = ", ".join(f"NPU {c.npu_id} chip {c.chip_id}: {c.health}" for c in worst)
    first = worst[0]
    fix = Fix(
        "Read the device's health error codes; UNKNOWN means the device is absent or did not start "
        "(driver/firmware or hardware), Alarm and Critical are hardware faults to report with these codes.",
        [f"npu-smi info -t health -i {first.npu_id}", f"npu-smi info -t board -i {first.npu_id}", "dmesg | grep -i davinci | tail -20"],
    )
    evidence = Evidence(found=listed, required="Health OK on every device", source=HEALTH_SOURCE)
    if all(c.health == "Warning" for c in bad):
        return warn(f"{len(bad)} device(s) with minor alarms: {listed}", evidence=evidence, fix=fix)
    category = "driver_init" if first.health == "UNKNOWN" else "other"
    return fail(f"{len(bad)} device(s) not healthy: {listed}", evidence=evidence, fix=fix, category=category)


def job_devices(ctx: Context, devices: List[NpuChip]) -> Tuple[List[NpuChip], str]:
    """The devices a job started from the judged environment would open, and why."""
    env = ctx.host.env
    raw = env.get("ASCEND_RT_VISIBLE_DEVICES")
    visible = devices
    why = "all devices visible"
    if raw is not None:
        parsed = parse_rt_visible_devices(raw, len(devices) or None)
        visible = [devices[i] for i in parsed.selected if i < len(devices)]
        why = f"ASCEND_RT_VISIBLE_DEVICES={raw}"
    dev_id = env.get("ASCEND_DEVICE_ID") or env.get("LOCAL_RANK")
    if raw is not None:
        return visible, why
    if dev_id and dev_id.isdigit() and int(dev_id) < len(visible):
        return [visible[int(dev_id)]], f"ASCEND_DEVICE_ID={dev_id}" if env.get("ASCEND_DEVICE_ID") else f"LOCAL_RANK={dev_id}"
    return visible[:1], "no device selected: a single-device job uses device 0"


def _holder_owner(ctx: Context, pid: int) -> Optional[str]:
    """Who runs ``pid``, when it is visible from here (real host only; psutil, read-only)."""
    if not ctx.host.is_real:
        return None
    try:
        import psutil

        return psutil.Process(pid).username()
    except Exception:  # gone, another pid namespace (a container), or not permitted
        return None


@check("devices.busy", "NPUs free for this job", "devices", category="device_busy_permission", requires=("npu_smi.info",))
def busy(ctx: Context) -> Result:
    info = ctx.facts.npu_smi().info
    if info is None:
        return skip("npu-smi gave no device table")
    devices = info.logical_devices()
    if not info.processes:
        return ok("no process holds any NPU")
    wanted, why = job_devices(ctx, devices)
    keys = {(c.npu_id, c.chip_id) for c in wanted}
    holders = [p for p in info.processes if (p.npu_id, p.chip_id if p.chip_id is not None else 0) in keys]
    elsewhere = [p for p in info.processes if p not in holders]
    held_ids = sorted({(p.npu_id, p.chip_id or 0) for p in info.processes})
    idle = [i for i, c in enumerate(devices) if (c.npu_id, c.chip_id) not in held_ids]
    listed = "; ".join(f"NPU {p.npu_id}: PID {p.pid}{' ' + p.name if p.name else ''}, {p.memory_mb} MB" for p in (holders or elsewhere)[:8])
    if not holders:
        return ok(f"the job's device(s) are free; {len(held_ids)} other NPU(s) in use ({listed})", details=[why])
    commands = [f"ps -o pid,user,etime,cmd -p {','.join(str(p.pid) for p in holders)}"]
    if idle:
        commands.append(f"export ASCEND_RT_VISIBLE_DEVICES={','.join(str(i) for i in idle[:8])}")
    evidence = Evidence(found=listed, required=f"free device(s) for the job ({why})", source="npu-smi info process table")
    owners = {_holder_owner(ctx, p.pid) for p in holders}
    if owners == {ctx.host.user.name}:
        # the user's own job (a running service, this training run): a fact worth showing, not a fault
        return warn(
            f"the NPU this job would use is held by your own process ({listed}); a second job there shares its memory",
            evidence=evidence,
            fix=Fix("If that process is the job itself, nothing to do; otherwise stop it or pick idle devices.", commands),
        )
    return fail(
        f"the NPU this job would use is held by another process ({listed})",
        evidence=evidence,
        fix=Fix(
            "Stop the other process if it is stale, or run on idle devices"
            + (f" ({', '.join(str(i) for i in idle[:8])})" if idle else "")
            + ". Two processes on one NPU share its memory and one may fail to start (507033, dcmi -8020).",
            commands,
        ),
    )


def _count_applies(ctx: Context) -> Optional[str]:
    return None if ctx.options.expect_devices is not None else "no --expect-devices given"


@check("devices.count", "Expected number of NPUs", "devices", category="driver_init", requires=("npu_smi.info",), applies=_count_applies)
def count(ctx: Context) -> Result:
    expected = ctx.options.expect_devices
    info = ctx.facts.npu_smi().info
    if info is None:
        return skip("npu-smi gave no device table")
    chips, cards = len(info.chips), len(info.npu_ids)
    if expected in (chips, cards):
        return ok(f"{expected} NPUs as expected")
    return fail(
        f"found {cards} NPU card(s) / {chips} chip(s), expected {expected}",
        evidence=Evidence(found=f"NPU ids {info.npu_ids}", required=f"{expected} (--expect-devices)"),
        fix=Fix(
            "A missing NPU is usually a card that fell off the PCIe bus or did not start; check the bus and the kernel log.",
            ["lspci | grep -i -E 'd80[0-9]'", "npu-smi info -l", "dmesg | grep -i -E 'davinci|pcie' | tail -30"],
        ),
    )
