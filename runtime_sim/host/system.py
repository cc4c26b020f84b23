"""System files of a simulated host: accounts, device nodes, /proc, container markers.

Device nodes are regular files standing in for character devices (the Host reads
their mode and owner with stat; ascend_doctor/host.py). Mode 0660, or 0666 when the
driver was installed for all users, owner and group HwHiAiUser (driver installer,
https://github.com/verylucky01/driver/blob/master/scripts/package/driver/common/scripts/install.sh).
"""
from __future__ import annotations

import hashlib

from .plan import CONTROL_NODES, EXTRA_NODES_910B, HW_USER, HostPlan
from .tree import Tree

MODULE_SIZES = (16384, 24576, 32768, 65536, 98304, 131072, 262144, 1286144)


def write_accounts(tree: Tree, plan: HostPlan) -> None:
    users = [("root", 0, 0, "/root", "/bin/bash")]
    users.append((HW_USER, plan.hw.uid, plan.hw.gid, plan.hw.home, "/bin/bash"))
    if plan.user.name != "root":
        users.append((plan.user.name, plan.user.uid, plan.user.gid, plan.user.home, "/bin/bash"))
    passwd = "".join(f"{n}:x:{uid}:{gid}::{home}:{shell}\n" for n, uid, gid, home, shell in users)
    tree.write("/etc/passwd", passwd)
    members = {name: [] for name in plan.group_ids}
    for group in plan.user.groups:
        members.setdefault(group, []).append(plan.user.name)
    lines = [f"{name}:x:{gid}:{','.join(members.get(name, []))}\n" for name, gid in sorted(plan.group_ids.items(), key=lambda kv: kv[1])]
    tree.write("/etc/group", "".join(lines))
    for account in (plan.hw, plan.user):
        if account.uid == 0:
            tree.mkdir(account.home, 0o700)
            continue
        tree.mkdir(account.home, 0o750 if plan.builder_is_root else 0o777)
        if plan.builder_is_root:
            tree.chown(account.home, account.uid, account.gid)
    if plan.user.uid == 0:
        tree.mkdir("/root", 0o700)


def write_device_nodes(tree: Tree, plan: HostPlan) -> None:
    tree.mkdir("/dev")
    if not plan.has_nodes:
        return
    names = [f"davinci{d.logic_id}" for d in plan.devices] + list(CONTROL_NODES)
    if plan.chip.family == "910b":
        names += list(EXTRA_NODES_910B)
    for name in names:
        path = f"/dev/{name}"
        tree.write(path, b"", mode=plan.node_mode)
        if plan.builder_is_root:
            tree.chown(path, plan.hw.uid, plan.hw.gid)


def write_proc(tree: Tree, plan: HostPlan) -> None:
    tree.write("/proc/sys/kernel/arch", plan.spec.arch + "\n")
    modules = ""
    if plan.spec.modules_loaded and plan.driver is not None and plan.driver.modules:
        names = plan.catalog.module_sets[plan.driver.modules]
        for i, name in enumerate(names):
            size = MODULE_SIZES[(i * 7 + len(name)) % len(MODULE_SIZES)]
            users = "drv_pcie_host," if name not in ("drv_pcie_host", "drv_seclib_host") and i % 3 == 0 else "-"
            modules += f"{name} {size} {1 if users != '-' else 0} {users} Live 0x0000000000000000 (OE)\n"
    # Everyday modules every Linux host lists; a host without the driver still has these.
    for name, size in (("overlay", 151552), ("nf_conntrack", 176128), ("xfs", 1556480)):
        modules += f"{name} {size} 1 - Live 0x0000000000000000\n"
    tree.write("/proc/modules", modules)
    container = plan.spec.container
    if container is not None:
        digest = hashlib.sha256(plan.scenario.name.encode()).hexdigest()
        scope = {"docker": "/docker/", "containerd": "/kubepods/besteffort/pod", "podman": "/libpod_parent/libpod-"}[container.kind]
        cgroup = "".join(f"{n}:{c}:{scope}{digest}\n" for n, c in ((12, "devices"), (11, "memory"), (4, "cpu,cpuacct")))
        tree.write("/proc/1/cgroup", cgroup)
        if container.kind == "docker":
            tree.write("/.dockerenv", "")
        elif container.kind == "podman":
            tree.write("/run/.containerenv", "")
    else:
        tree.write("/proc/1/cgroup", "0::/init.scope\n")
