"""The Python side of a simulated host: site-packages with torch / torch_npu metadata and
stand-ins, and a ``/usr/bin/python3`` that runs them.

Metadata follows the files pip installs (``<name>-<version>.dist-info/METADATA`` etc.;
the torch_npu fields and entry points as in the torch-npu 2.13.0 wheel from PyPI, whose
``[torch.backends]`` entry point makes ``import torch`` load torch_npu on torch >= 2.5).
"""
from __future__ import annotations

import os
from typing import Dict, Optional

from compat_matrix.versions import parse_version

from .plan import HostPlan
from .tree import Tree

STANDINS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "standins")
PYTHON3 = "/usr/bin/python3"

# Real undefined-symbol texts for the three ways libtorch_npu.so fails to link (see torch_npu_C.py).
TORCH_ABI_SYMBOL = "_ZN5torch10ValueErrorC1EPKcz"  # Ascend/pytorch#35
NEWER_CANN_SYMBOL = "MsprofSysCycleTime"  # triton-lang/triton-ascend#328
OLDER_CANN_SYMBOL = "_ZN3atb15CreateOperationINS_5infer14GroupTopkParamEEEiRKT_PPNS_9OperationE"  # vllm-project/vllm-ascend#117


def _standin(name: str) -> str:
    with open(os.path.join(STANDINS, name), encoding="utf-8") as fh:
        return fh.read()


def _dist_info(tree: Tree, site: str, dist: str, version: str, metadata: str, extra: Optional[Dict[str, str]] = None) -> None:
    d = f"{site}/{dist}-{version}.dist-info"
    tree.write(f"{d}/METADATA", metadata)
    tree.write(f"{d}/INSTALLER", "pip\n")
    tree.write(f"{d}/top_level.txt", dist + "\n")
    tree.write(f"{d}/WHEEL", "Wheel-Version: 1.0\nGenerator: bdist_wheel\nRoot-Is-Purelib: false\n")
    for name, text in (extra or {}).items():
        tree.write(f"{d}/{name}", text)
    tree.write(f"{d}/RECORD", "")


def write_python(tree: Tree, plan: HostPlan, env_file_rel: str) -> None:
    site = plan.site_packages
    tree.mkdir(site)
    launcher = _standin("python3_launcher.py")
    py = plan.scenario.host.python
    launcher = (
        launcher.replace("@@SITE_PACKAGES@@", site.lstrip("/"))
        .replace("@@ENV_FILE@@", env_file_rel)
        .replace("@@PYTHON_VERSION@@", py.version)
    )
    tree.write(PYTHON3, f"#!{plan.python_exe} -IS\n" + launcher, mode=0o755)
    if py.torch:
        tree.write(f"{site}/torch/__init__.py", _standin("torch_init.py"))
        tree.write(f"{site}/torch/version.py", f"__version__ = {py.torch!r}\ncuda = None\ndebug = False\n")
        _dist_info(
            tree, site, "torch", py.torch,
            "Metadata-Version: 2.1\nName: torch\nVersion: %s\n"
            "Summary: Tensors and Dynamic neural networks in Python with strong GPU acceleration\n"
            "Home-page: https://pytorch.org/\nLicense: BSD-3-Clause\nRequires-Python: >=3.8.0\n"
            "Requires-Dist: filelock\nRequires-Dist: typing-extensions\nRequires-Dist: sympy\n"
            "Requires-Dist: networkx\nRequires-Dist: jinja2\nRequires-Dist: fsspec\n\n" % py.torch,
        )
    if py.torch_npu:
        write_torch_npu(tree, plan, site, py.torch_npu)


def write_torch_npu(tree: Tree, plan: HostPlan, site: str, version: str) -> None:
    build = plan.catalog.torch_npu_builds[version]
    pkg = f"{site}/torch_npu"
    tree.write(f"{pkg}/__init__.py", _standin("torch_npu_init.py"))
    tree.write(f"{pkg}/_C.py", _standin("torch_npu_C.py"))
    tree.write(f"{pkg}/npu/__init__.py", _standin("torch_npu_npu.py"))
    tree.write(f"{pkg}/_sim_host.py", _standin("sim_host.py"))
    tree.write(f"{pkg}/version.py", f"__version__ = {version!r}\n")
    depth = len([p for p in site.split("/") if p])
    tree.write(
        f"{pkg}/_build_info.py",
        "# What this torch_npu stand-in was built against (runtime_sim host builder).\n"
        f"TORCH = {build.torch!r}\nCANN = {build.cann!r}\nSOC = {plan.chip.soc!r}\nSITE_DEPTH = {depth}\n"
        f"TORCH_ABI_SYMBOL = {TORCH_ABI_SYMBOL!r}\nNEWER_CANN_SYMBOL = {NEWER_CANN_SYMBOL!r}\n"
        f"OLDER_CANN_SYMBOL = {OLDER_CANN_SYMBOL!r}\n",
    )
    tree.placeholder_library(f"{pkg}/lib/libtorch_npu.so", plan.spec.arch, {"torch": build.torch, "cann": build.cann})
    entry_points = "[console_scripts]\ntorch_npu_run = torch_npu.distributed.run:_main\n"
    if parse_version(version, "torch_npu").series >= (2, 5):  # built for torch >= 2.5
        entry_points += "\n[torch.backends]\ntorch_npu = torch_npu:_autoload\n"
    _dist_info(
        tree, site, "torch_npu", version,
        "Metadata-Version: 2.1\nName: torch_npu\nVersion: %s\nSummary: NPU bridge for PyTorch\n"
        "Home-page: https://gitcode.com/ascend/pytorch\nLicense: BSD License\n"
        "Classifier: Programming Language :: Python :: 3 :: Only\n"
        "Requires-Dist: torch==%s.*\nRequires-Dist: numpy\nRequires-Dist: pyyaml\n\n" % (version, build.torch),
        {"entry_points.txt": entry_points},
    )
