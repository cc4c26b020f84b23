"""Build small Ascend host trees for `check --root` tests, from real file formats.

Every file body below is a real published sample or follows one field for field:
- driver version.info, firmware version.info: Ascend/mind-cluster
  component/ascend-faultdiag/test/st_testcase/modelarts-job-testdt/ascend/environment_check/worker-0/npu_info_before.txt
- 25.x driver template values: verylucky01/driver scripts/package/custom/driver/common/conf/itf_ver.conf
- /etc/ascend_install.info: Ascend/ascend-docker-image all-in-one/ascend_install.info (+ Driver_Install_Status,
  verylucky01/driver install scripts)
- ascend_toolkit_install.info: vllm-project/vllm-ascend#1047 (8.1.RC1), #6512 (8.3.RC2)
- npu-smi output: tests/check/data/npu_smi/ (see SOURCES.md there)
- /proc/modules line format: the kernel's /proc/modules; names from verylucky01/driver deal_ko.sh
This is deliberately independent of runtime_sim: the checks are tested against the real
formats directly, and the simulator is validated separately.
"""
from __future__ import annotations

import os
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, List, Optional

DATA = Path(__file__).parent / "data"

DRIVER_23_0_7 = """Version=23.0.7
ascendhal_version=7.35.19
aicpu_version=1.0
tdt_version=1.0
log_version=1.0
prof_version=2.0
dvppkernels_version=1.1
tsfw_version=1.0
Innerversion=V100R001C15SPC012B220
compatible_version=[V100R001C29],[V100R001C30],[V100R001C13],[V100R001C15]
compatible_version_fw=[7.0.0,7.1.99]
package_version=23.0.7
"""

FIRMWARE_7_1 = """Version=7.1.0.11.220
firmware_version=1.0
package_version=23.0.7
compatible_version_drv=[23.0.rc3,23.0.rc3.],[23.0.0,23.0.0.]
"""

DRIVER_25_2_0 = """Version=25.2.0
ascendhal_version=7.35.23
aicpu_version=1.0
tdt_version=1.0
log_version=1.0
prof_version=2.0
dvppkernels_version=1.1
tsfw_version=1.0
Innerversion=V100R001C23B888
compatible_version=[V100R001C15],[V100R001C18],[V100R001C19],[V100R001C20],[V100R001C21],[V100R001C23]
compatible_version_fw=[7.0.0,8.9.9]
package_version=25.2.0
"""

FIRMWARE_7_7 = """Version=7.7.0.1.231
firmware_version=1.0
package_version=25.2.0
compatible_version_drv=[25.2.0,25.2.0.]
"""

INSTALL_INFO = """UserName=HwHiAiUser
UserGroup=HwHiAiUser
Driver_Install_Type=run
Driver_Install_Path_Param=/usr/local/Ascend
Driver_Install_For_All=no
Firmware_Install_Type=run
Firmware_Install_Path_Param=/usr/local/Ascend
Aicpu_Kernels_Install_Type=full
Aicpu_Kernels_Install_Path_Param=/usr/local/Ascend
Driver_Install_Status=complete
"""

TOOLKIT_8_1 = """package_name=Ascend-cann-toolkit
version=8.1.RC1
innerversion=V100R001C21SPC001B238
compatible_version=[V100R001C15],[V100R001C18],[V100R001C19],[V100R001C20],[V100R001C21]
arch={arch}
os=linux
path=/usr/local/Ascend/ascend-toolkit/8.1.RC1/{arch}-linux
"""

TOOLKIT_8_3 = """package_name=Ascend-cann-toolkit
version=8.3.RC2
innerversion=V100R001C23SPC002B210
compatible_version=[V100R001C15],[V100R001C18],[V100R001C19],[V100R001C20],[V100R001C21],[V100R001C23]
arch={arch}
os=linux
path=/usr/local/Ascend/ascend-toolkit/8.3.RC2/{arch}-linux
"""

MODULES = """drv_pcie_host 16384 0 - Live 0x0000000000000000 (OE)
drv_pcie_hdc_host 45056 2 - Live 0x0000000000000000 (OE)
drv_devmm_host 311296 8 - Live 0x0000000000000000 (OE)
ascend_event_sched_host 20480 1 - Live 0x0000000000000000 (OE)
ext4 737280 2 - Live 0x0000000000000000
"""


@dataclass
class HostSpec:
    arch: str = "x86_64"
    driver: Optional[str] = DRIVER_23_0_7
    firmware: Optional[str] = FIRMWARE_7_1
    install_info: Optional[str] = INSTALL_INFO
    npu_smi: Optional[str] = "a2_910b3_driver23.0.7_busy.txt"  # file in data/npu_smi, or a shell body
    npu_smi_script: Optional[str] = None  # raw shell body instead of printing a sample
    davinci: int = 8
    control_nodes: bool = True
    node_mode: int = 0o660
    modules: Optional[str] = MODULES
    toolkit: Optional[str] = TOOLKIT_8_1
    toolkit_version: str = "8.1.RC1"
    toolkit_arch: Optional[str] = None  # defaults to arch
    kernel_dirs: List[str] = field(default_factory=lambda: ["ascend910b"])
    container: bool = False
    user: str = "aiuser"
    user_in_group: bool = True
    sourced: bool = True
    env: Dict[str, str] = field(default_factory=lambda: {"ASCEND_RT_VISIBLE_DEVICES": "4,5,6,7"})
    python_packages: Dict[str, str] = field(default_factory=lambda: {"torch": "2.1.0", "torch_npu": "2.1.0.post10"})
    python: bool = True
    python_version: str = "3.10.12"  # what the stand-in reports, whatever runs the tests


def _write(path: Path, text: str, mode: Optional[int] = None) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    if mode is not None:
        path.chmod(mode)


def build(root: Path, spec: HostSpec) -> Path:
    """Write the tree under ``root``; returns the env file for ``--env-file``."""
    ascend = root / "usr/local/Ascend"
    am_root = os.getuid() == 0
    hw_uid = 1000 if am_root else os.getuid()
    hw_gid = 1000 if am_root else os.getgid()
    user_uid = 1001 if hw_uid != 1001 else 1002
    members = spec.user if spec.user_in_group else ""
    _write(root / "etc/passwd", f"root:x:0:0:root:/root:/bin/bash\nHwHiAiUser:x:{hw_uid}:{hw_gid}::/home/HwHiAiUser:/bin/bash\n{spec.user}:x:{user_uid}:{user_uid}::/home/{spec.user}:/bin/bash\n")
    _write(root / "etc/group", f"root:x:0:\nHwHiAiUser:x:{hw_gid}:{members}\n{spec.user}:x:{user_uid}:\n")
    _write(root / "proc/sys/kernel/arch", spec.arch + "\n")
    (root / f"home/{spec.user}/ascend/log").mkdir(parents=True, exist_ok=True)
    if am_root:
        os.chown(root / f"home/{spec.user}", user_uid, user_uid)
        os.chown(root / f"home/{spec.user}/ascend", user_uid, user_uid)
        os.chown(root / f"home/{spec.user}/ascend/log", user_uid, user_uid)
    else:
        (root / f"home/{spec.user}/ascend/log").chmod(0o777)
    if spec.modules is not None:
        _write(root / "proc/modules", spec.modules)
    if spec.container:
        _write(root / ".dockerenv", "")
    if spec.install_info is not None:
        _write(root / "etc/ascend_install.info", spec.install_info)
    if spec.driver is not None:
        _write(ascend / "driver/version.info", spec.driver)
        for sub in ("lib64/common", "lib64/driver"):
            (ascend / "driver" / sub).mkdir(parents=True, exist_ok=True)
        _write(ascend / "driver/lib64/driver/libascend_hal.so", "")
        (root / "usr/local/dcmi").mkdir(parents=True, exist_ok=True)
    if spec.firmware is not None:
        _write(ascend / "firmware/version.info", spec.firmware)
    nodes = [f"davinci{i}" for i in range(spec.davinci)]
    if spec.control_nodes:
        nodes += ["davinci_manager", "devmm_svm", "hisi_hdc"]
    for name in nodes:
        node = root / "dev" / name
        _write(node, "", spec.node_mode)
        if am_root:
            os.chown(node, hw_uid, hw_gid)
    if spec.npu_smi_script is not None:
        _write(root / "usr/local/bin/npu-smi", "#!/bin/sh\n" + spec.npu_smi_script + "\n", 0o755)
    elif spec.npu_smi is not None:
        sample = (DATA / "npu_smi" / spec.npu_smi).resolve()
        _write(root / "usr/local/bin/npu-smi", f"#!/bin/sh\ncat '{sample}'\n", 0o755)
    home = "/usr/local/Ascend/ascend-toolkit/latest"
    if spec.toolkit is not None:
        tk = ascend / "ascend-toolkit" / spec.toolkit_version
        tk_arch = spec.toolkit_arch or spec.arch
        _write(tk / f"{tk_arch}-linux/ascend_toolkit_install.info", spec.toolkit.format(arch=tk_arch))
        _write(tk / "lib64/libascendcl.so", "")
        for kd in spec.kernel_dirs:
            # what the kernels package puts there: op binaries (the toolkit alone leaves only ops_oam)
            _write(tk / "opp/built-in/op_impl/ai_core/tbe/kernel" / kd / "add" / "Add_1.json", "{}\n")
        (ascend / "ascend-toolkit/latest").symlink_to(spec.toolkit_version)
        _write(ascend / "ascend-toolkit/set_env.sh", f"export ASCEND_TOOLKIT_HOME={home}\n")
    env = {"USER": spec.user, "HOME": f"/home/{spec.user}", "PATH": "/usr/local/bin:/usr/bin:/bin"}
    if spec.sourced:
        env.update(
            ASCEND_TOOLKIT_HOME=home,
            ASCEND_HOME_PATH=home,
            ASCEND_OPP_PATH=f"{home}/opp",
            ASCEND_AICPU_PATH=home,
            LD_LIBRARY_PATH=f"/usr/local/Ascend/driver/lib64:/usr/local/Ascend/driver/lib64/common:/usr/local/Ascend/driver/lib64/driver:{home}/lib64:{home}/lib64/plugin/opskernel",
        )
    env.update(spec.env)
    if spec.python:
        site = root / "usr/lib/python3/dist-packages"
        for name, version in spec.python_packages.items():
            _write(site / f"{name}-{version}.dist-info/METADATA", f"Metadata-Version: 2.1\nName: {name.replace('_', '-')}\nVersion: {version}\n")
        version = tuple(int(p) for p in spec.python_version.split("."))
        runner = (
            f"import sys; sys.version_info = {version + ('final', 0)!r}; sys.path.insert(0, sys.argv[1]); "
            "src = sys.argv[2]; sys.argv = ['-c']; exec(compile(src, '<probe>', 'exec'))"
        )
        _write(root / "usr/bin/python3", f'#!/bin/sh\nfor last; do :; done\nexec {sys.executable} -S -c "{runner}" "{site}" "$last"\n', 0o755)
    env_file = root / "env.txt"
    _write(env_file, "".join(f"{k}={v}\n" for k, v in env.items()))
    return env_file
