"""The CANN toolkit of a simulated host, in the layout of its release.

≤ 8.3: ``<base>/ascend-toolkit/<ver>`` with a ``latest`` link and ``ascend-toolkit/set_env.sh``;
≥ 8.5: ``<base>/cann-<ver>`` with a ``cann`` link and ``cann-<ver>/set_env.sh`` (the old
``ascend-toolkit/latest`` path kept as a compatibility link). Version files per
the CANN install guides (https://www.hiascend.com/document/detail/zh/canncommercial/800/softwareinst/instg/instg_0064.html,
https://www.hiascend.com/document/detail/en/canncommercial/850/softwareinst/instg/instg_0064.html); the variables
set_env.sh exports (order of LD_LIBRARY_PATH entries as printed on real 8.x and 8.5 hosts,
vllm-project/vllm-ascend#6512 and #6842).
"""
from __future__ import annotations

from typing import List, Optional, Tuple

from .plan import HostPlan
from .tree import Tree

KERNEL_ROOT = "opp/built-in/op_impl/ai_core/tbe"
# A few real op directory names under kernel/<chip>/ (CANN opp trees in public paths).
KERNEL_OPS = ("ops_legacy/bias_add", "add", "matmul_v3", "flash_attention_score")


def real_dir(plan: HostPlan) -> Optional[str]:
    cann = plan.spec.cann
    if cann is None:
        return None
    if cann.layout == "cann":
        return f"{cann.base}/cann-{cann.version}"
    return f"{cann.base}/ascend-toolkit/{cann.version}"


def toolkit_home(plan: HostPlan) -> Optional[str]:
    """The home set_env.sh exports: ``…/ascend-toolkit/latest`` (≤ 8.3) or ``…/cann-<ver>`` (≥ 8.5)."""
    cann = plan.spec.cann
    if cann is None:
        return None
    if cann.layout == "cann":
        return f"{cann.base}/cann-{cann.version}"
    return f"{cann.base}/ascend-toolkit/latest"


def set_env_script_path(plan: HostPlan) -> Optional[str]:
    cann = plan.spec.cann
    if cann is None:
        return None
    if cann.layout == "cann":
        return f"{cann.base}/cann-{cann.version}/set_env.sh"
    return f"{cann.base}/ascend-toolkit/set_env.sh"


def toolkit_arch(plan: HostPlan) -> str:
    cann = plan.spec.cann
    return (cann.arch if cann and cann.arch else None) or plan.spec.arch


def set_env_variables(plan: HostPlan) -> List[Tuple[str, str, str]]:
    """(name, value, how) for each variable set_env.sh sets; how is "set" or "prepend"."""
    t = toolkit_home(plan)
    if t is None:
        return []
    arch = toolkit_arch(plan)
    driver = f"{plan.install_base}/driver/lib64"
    driver_dirs = [driver, f"{driver}/common", f"{driver}/driver"]
    toolkit_dirs = [
        f"{t}/lib64",
        f"{t}/lib64/plugin/opskernel",
        f"{t}/lib64/plugin/nnengine",
        f"{t}/{KERNEL_ROOT}/op_tiling/lib/linux/{arch}",
        f"{t}/tools/aml/lib64",
        f"{t}/tools/aml/lib64/plugin",
    ]
    if plan.spec.cann is not None and plan.spec.cann.layout == "cann":
        ld = toolkit_dirs + driver_dirs
    else:
        ld = toolkit_dirs[4:] + toolkit_dirs[:4] + driver_dirs
    return [
        ("ASCEND_TOOLKIT_HOME", t, "set"),
        ("ASCEND_HOME_PATH", t, "set"),
        ("ASCEND_OPP_PATH", f"{t}/opp", "set"),
        ("ASCEND_AICPU_PATH", t, "set"),
        ("TOOLCHAIN_HOME", f"{t}/toolkit", "set"),
        ("LD_LIBRARY_PATH", ":".join(ld), "prepend"),
        ("PYTHONPATH", f"{t}/python/site-packages:{t}/{KERNEL_ROOT}", "prepend"),
        ("PATH", f"{t}/bin:{t}/compiler/ccec_compiler/bin:{t}/tools/ccec_compiler/bin", "prepend"),
    ]


def set_env_text(plan: HostPlan) -> str:
    cann = plan.spec.cann
    assert cann is not None
    lines = [
        "#!/bin/sh",
        f"# Environment for CANN {cann.version} ({toolkit_arch(plan)}). Use: source this file.",
    ]
    for name, value, how in set_env_variables(plan):
        if how == "prepend":
            lines.append(f'export {name}={value}${{{name}:+:${{{name}}}}}')
        else:
            lines.append(f"export {name}={value}")
    return "\n".join(lines) + "\n"


def install_info_text(plan: HostPlan, rdir: str, arch: str) -> str:
    tk = plan.toolkit
    assert tk is not None
    lines = ["package_name=Ascend-cann-toolkit", f"version={tk.version}", f"innerversion={tk.innerversion}"]
    if tk.compatible_version:
        lines.append(f"compatible_version={tk.compatible_version}")
    lines += [f"arch={arch}", "os=linux", f"path={rdir}/{arch}-linux" if tk.path_has_arch else f"path={rdir}"]
    return "\n".join(lines) + "\n"


def write_toolkit(tree: Tree, plan: HostPlan) -> None:
    cann = plan.spec.cann
    tk = plan.toolkit
    rdir = real_dir(plan)
    if cann is None or tk is None or rdir is None:
        return
    arch = toolkit_arch(plan)
    tags = {"cann": tk.version, "arch": arch}
    tree.write(f"{rdir}/{arch}-linux/ascend_toolkit_install.info", install_info_text(plan, rdir, arch), mode=0o444)
    for lib in ("libascendcl.so", "libhccl.so", "libruntime.so", "libge_runner.so", "libopapi.so"):
        tree.placeholder_library(f"{rdir}/lib64/{lib}", arch, tags)
    tree.placeholder_library(f"{rdir}/{arch}-linux/lib64/libascendcl.so", arch, tags)
    tree.placeholder_library(f"{rdir}/runtime/lib64/libruntime.so", arch, tags)
    for sub in (
        "lib64/plugin/opskernel",
        "lib64/plugin/nnengine",
        f"{KERNEL_ROOT}/op_tiling/lib/linux/{arch}",
        "tools/aml/lib64/plugin",
        "python/site-packages",
        "bin",
        "compiler/ccec_compiler/bin",
        "toolkit",
    ):
        tree.mkdir(f"{rdir}/{sub}")
    kernel_dir = plan.chip.kernel_dir
    # Without the kernels/ops package, kernel/<chip>/ still exists and holds only ops_oam,
    # and every aclnn op fails with 561103 (public benchmark notes of a CANN 8.5.0 toolkit-only
    # image on a 910B3; the repository could not be attributed).
    tree.mkdir(f"{rdir}/{KERNEL_ROOT}/kernel/{kernel_dir}/ops_oam")
    if cann.kernels:
        for op in KERNEL_OPS:
            tree.write(f"{rdir}/{KERNEL_ROOT}/kernel/{kernel_dir}/{op}/{op.rsplit('/', 1)[-1]}.json", "{}\n")
        tree.write(f"{rdir}/{KERNEL_ROOT}/kernel/config/{kernel_dir}/binary_info_config.json", "{}\n")
        if cann.layout == "cann":
            ops_info = "\n".join([
                f"package_name=Ascend-cann-{plan.chip.ops_package}-ops", f"version={tk.version}",
                f"arch={arch}", "os=linux", f"path={rdir}",
            ]) + "\n"
            tree.write(f"{rdir}/{arch}-linux/ascend_ops_install.info", ops_info, mode=0o444)
        elif tk.component_version:
            tree.write(f"{rdir}/opp_kernel/version.info", f"Version={tk.component_version}\nversion_dir={tk.version}\n", mode=0o444)
    if tk.component_version:
        tree.write(f"{rdir}/toolkit/version.info", f"Version={tk.component_version}\nversion_dir={tk.version}\n", mode=0o444)
    if cann.layout == "cann":
        tree.write(f"{rdir}/set_env.sh", set_env_text(plan), mode=0o755)
        tree.symlink(f"{cann.base}/cann", f"cann-{cann.version}")
        tree.symlink(f"{cann.base}/ascend-toolkit/latest", f"../cann-{cann.version}")
    else:
        tree.symlink(f"{cann.base}/ascend-toolkit/latest", cann.version)
        tree.write(f"{cann.base}/ascend-toolkit/set_env.sh", set_env_text(plan), mode=0o755)
