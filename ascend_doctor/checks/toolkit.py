"""CANN toolkit checks: found (either layout), built for this machine, accepted by the
driver, and carrying the operator kernels for this machine's chip.

Layouts: ascend-toolkit, <= 8.3 (https://www.hiascend.com/document/detail/zh/canncommercial/800/softwareinst/instg/instg_0064.html) and
cann-<ver>, >= 8.5 (https://www.hiascend.com/document/detail/en/canncommercial/850/softwareinst/instg/instg_0064.html).
"""
from __future__ import annotations

from typing import List

from compat_matrix.chips import family_from_npu_smi
from ..model import Evidence, Fix
from .base import Context, Result, check, fail, ok, skip

TOOLKIT_DOC = "https://www.hiascend.com/document/detail/zh/canncommercial/800/softwareinst/instg/instg_0064.html"
LAYOUT_850 = "https://www.hiascend.com/document/detail/zh/CANNCommunityEdition/850/releasenote/releasenote_0001.html"
KERNELS_DOC = "https://www.hiascend.com/document/detail/zh/CANNCommunityEdition/80RC2alpha002/softwareinst/instg/instg_0035.html"
KERNEL_SUBDIR = "/built-in/op_impl/ai_core/tbe/kernel"


@check("toolkit.installed", "CANN toolkit installed", "toolkit", category="env_path")
def installed(ctx: Context) -> Result:
    fact = ctx.facts.toolkit()
    active = fact.active
    if active is None:
        where = ", ".join(fact.searched[:6])
        return fail(
            "no CANN toolkit found",
            evidence=Evidence(found=f"searched {where}", required="ascend-toolkit/latest (<= 8.3) or cann-<version> (>= 8.5)", source=f"{TOOLKIT_DOC}; {LAYOUT_850}"),
            fix=Fix(
                "Install the CANN toolkit and the ops/kernels package for your chip (as root for /usr/local/Ascend, "
                "or as a user for ~/Ascend), then source its set_env.sh.",
                [
                    "./Ascend-cann-toolkit_<version>_linux-$(uname -m).run --install",
                    "./Ascend-cann-kernels-<chip>_<version>_linux.run --install   # CANN <= 8.3; from 8.5: Ascend-cann-<chip>-ops_<version>_linux-$(uname -m).run",
                ],
            ),
        )
    if active.info is None:
        return fail(
            f"a CANN toolkit at {active.home} has no readable install record: {active.error}",
            evidence=Evidence(found=active.error, required="<arch>-linux/ascend_toolkit_install.info with version=", source=TOOLKIT_DOC),
            fix=Fix("The toolkit install is incomplete; reinstall it.", ["./Ascend-cann-toolkit_<version>_linux-$(uname -m).run --install"]),
        )
    info = active.info
    others = [i for i in fact.installs if i is not active]
    details = [f"also found: {i.home} ({i.info.version if i.info else 'unreadable'})" for i in others]
    return ok(
        f"CANN {info.version} at {active.home} ({active.layout} layout)",
        evidence=Evidence(found=info.version, source=active.info_path),
        details=details,
        data={"version": info.version, "home": active.home, "layout": active.layout, "arch": info.arch},
    )


@check("toolkit.arch", "Toolkit built for this machine", "toolkit", category="env_path", requires=("toolkit.installed",))
def arch(ctx: Context) -> Result:
    active = ctx.facts.toolkit().active
    machine = ctx.facts.arch()
    if active is None or active.info is None:
        return skip("no toolkit install record")
    if not machine:
        return skip("cannot tell this machine's architecture")
    built = active.info.arch or (active.info_arches[0] if active.info_arches else None)
    if built == machine or machine in active.info_arches:
        return ok(f"{built} toolkit on an {machine} machine")
    return fail(
        f"the CANN toolkit is built for {built}, this machine is {machine}",
        evidence=Evidence(found=f"arch={built} in {active.info_path}", required=f"arch={machine}", source="uname -m"),
        fix=Fix(
            "Uninstall it and install the toolkit (and kernels/ops) package built for this architecture.",
            [f"./Ascend-cann-toolkit_{active.info.version}_linux-{machine}.run --install"],
        ),
    )


@check("toolkit.driver_compat", "Toolkit accepts the driver", "toolkit", category="version_mismatch", requires=("toolkit.installed", "driver.installed"))
def driver_compat(ctx: Context) -> Result:
    active = ctx.facts.toolkit().active
    drv = ctx.facts.driver()
    if active is None or active.info is None or not drv.ok:
        return skip("needs the toolkit install record and the driver version.info")
    drv_fam, cann_fam = drv.value.family, active.info.family
    # The toolkit's install info lists the driver families it accepts; newer toolkits
    # (9.x) no longer write that list, and then the driver's own list of accepted CANN
    # families is the only statement the host makes.
    if drv_fam and active.info.compatible_families:
        accepted, subject, judged = active.info.compatible_families, drv_fam, f"compatible_version in {active.info_path}"
        wanted = f"a driver of family {', '.join(accepted)}"
    elif cann_fam and drv.value.compatible_families:
        accepted, subject, judged = drv.value.compatible_families, cann_fam, f"compatible_version in {drv.path}"
        wanted = f"a CANN of family {', '.join(accepted)} (the driver's list)"
    else:
        return skip("no inner-version families recorded to compare")
    evidence = Evidence(
        found=f"driver {drv.value.version} ({drv.value.inner_version}), CANN {active.info.version} ({active.info.inner_version})",
        required=wanted,
        source=judged,
    )
    if subject in accepted:
        return ok(f"CANN {active.info.version} and driver {drv.value.version} accept each other ({subject})", evidence=evidence)
    return fail(
        f"CANN {active.info.version} and driver {drv.value.version} do not match: {subject} is not in {', '.join(accepted)}",
        evidence=evidence,
        fix=Fix(
            "Upgrade the driver and firmware to an HDK release that this CANN supports (on an installed host Huawei's "
            "order is firmware first, then driver; reboot after), or install a CANN release that supports this driver.",
            [f"ascend-doctor compat --cann {active.info.version} --suggest", "./Ascend-hdk-<chip>-npu-driver_<version>_linux-$(uname -m).run --upgrade"],
        ),
    )


def _opp_dirs(ctx: Context) -> List[str]:
    """Operator package roots the runtime may read: ASCEND_OPP_PATH, then <toolkit>/opp(_latest)."""
    dirs: List[str] = []
    env_opp = ctx.host.env.get("ASCEND_OPP_PATH")
    if env_opp:
        dirs.append(env_opp.rstrip("/"))
    active = ctx.facts.toolkit().active
    if active is not None:
        for name in ("opp_latest", "opp"):
            candidate = f"{active.home}/{name}"
            if candidate not in dirs:
                dirs.append(candidate)
    return dirs


def _chip_names(ctx: Context) -> List[str]:
    info = ctx.facts.npu_smi().info
    return sorted({c.name for c in info.chips}) if info else []


@check("toolkit.kernels", "Operator kernels for this chip", "toolkit", category="env_path", requires=("toolkit.installed",))
def kernels(ctx: Context) -> Result:
    host = ctx.host
    present: List[str] = []
    for opp in _opp_dirs(ctx):
        for name in host.listdir(opp + KERNEL_SUBDIR):
            # the toolkit alone leaves kernel/<chip>/ with nothing but ops_oam; the kernels
            # (ops) package is what fills it (and kernel/config/<chip>/)
            if name.startswith("ascend") and set(host.listdir(f"{opp}{KERNEL_SUBDIR}/{name}")) - {"ops_oam"}:
                present.append(name)
        present.extend(name for name in host.listdir(opp + KERNEL_SUBDIR + "/config") if name.startswith("ascend"))
    present = sorted(set(present))
    names = _chip_names(ctx)
    families = [f for f in (family_from_npu_smi(n) for n in names) if f is not None]
    active = ctx.facts.toolkit().active
    version = active.info.version if active and active.info else "<version>"
    if not families:
        if present:
            return ok(f"kernels installed for {', '.join(present)} (chip unknown: npu-smi gave no names)")
        return skip("chip unknown and no kernel directories to report")
    needed = sorted({f.kernel_dir for f in families})
    missing = [d for d in needed if d not in present]
    evidence = Evidence(
        found=("kernel dirs: " + ", ".join(present)) if present else "no kernel directories under the opp path",
        required=f"{KERNEL_SUBDIR.lstrip('/')}/{'|'.join(needed)} for {', '.join(names)}",
        source=KERNELS_DOC,
    )
    if not missing:
        return ok(f"kernels for {', '.join(needed)} are installed", evidence=evidence)
    fam = families[0]
    eight_five = active is not None and active.layout == "cann"
    package = (
        f"Ascend-cann-{fam.package}-ops_{version}_linux-$(uname -m).run"
        if eight_five
        else (f"Atlas-A3-cann-kernels_{version}_linux-$(uname -m).run" if fam.package == "A3" else f"Ascend-cann-kernels-{fam.package}_{version}_linux.run")
    )
    return fail(
        f"no operator kernels for {', '.join(missing)} ({fam.product}): aclnn ops will fail with "
        "'binary_info_config.json failed, please check if the opp_kernel package is installed'",
        evidence=evidence,
        fix=Fix(
            f"Install the {'ops' if eight_five else 'kernels'} package of the same CANN version for this chip.",
            [f"./{package} --install"],
        ),
    )

