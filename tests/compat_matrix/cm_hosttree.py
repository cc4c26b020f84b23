"""A small host tree for `compat --root` / `check --root` tests of the version-matrix code.

File bodies are the real samples of data/host_version_files.yaml (URLs there); the toolkit
install info follows the same real format with the version swapped where a case needs it.
The target interpreter is a stub that answers the stack probe with fixed versions, so the
result does not depend on the Python running the tests.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Dict, Optional

from cm_testdata import load_test_data

SAMPLES = {s["id"]: s for s in load_test_data("host_version_files.yaml")["samples"]}
TOOLKIT_8_2 = SAMPLES["guangfa_25_0_rc1_1_cann_8_2"]["toolkit"]

# Excerpt (header and NPU 0) of a real 8 x 910B3 host, driver 25.2.0:
# https://github.com/vllm-project/vllm-ascend/issues/6512 (collect_env output). Only the chip
# name matters here; its driver differs from the version files above, which is fine for these tests.
NPU_SMI_910B3 = """+------------------------------------------------------------------------------------------------+
| npu-smi 25.2.0                   Version: 25.2.0                                               |
+---------------------------+---------------+----------------------------------------------------+
| NPU   Name                | Health        | Power(W)    Temp(C)           Hugepages-Usage(page)|
| Chip                      | Bus-Id        | AICore(%)   Memory-Usage(MB)  HBM-Usage(MB)        |
+===========================+===============+====================================================+
| 0     910B3               | OK            | 97.9        34                0    / 0             |
| 0                         | 0000:C1:00.0  | 0           0    / 0          3408 / 65536         |
+===========================+===============+====================================================+
"""


def _write(path: Path, text: str, mode: Optional[int] = None) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    if mode is not None:
        path.chmod(mode)


def build(root: Path, cann: str = "8.2.RC1", sample: str = "guangfa_25_0_rc1_1_cann_8_2",
          python: str = "3.11.6", packages: Optional[Dict[str, str]] = None, toolkit_families: bool = True) -> Path:
    """Write the tree; returns the env file."""
    s = SAMPLES[sample]
    ascend = root / "usr/local/Ascend"
    _write(root / "proc/sys/kernel/arch", "aarch64\n")
    _write(ascend / "driver/version.info", s["driver"])
    _write(ascend / "firmware/version.info", s["firmware"])
    toolkit = TOOLKIT_8_2.replace("version=8.2.RC1", "version=" + cann).replace("/8.2.RC1/", "/%s/" % cann)
    if not toolkit_families:
        toolkit = "\n".join(l for l in toolkit.splitlines() if not l.startswith("compatible_version")) + "\n"
    tk = ascend / "ascend-toolkit" / cann
    _write(tk / "aarch64-linux/ascend_toolkit_install.info", toolkit)
    (ascend / "ascend-toolkit/latest").symlink_to(cann)
    _write(root / "usr/local/bin/npu-smi", "#!/bin/sh\ncat <<'EOF'\n" + NPU_SMI_910B3 + "EOF\n", 0o755)
    pk = packages if packages is not None else {"torch": "2.1.0", "torch_npu": "2.1.0.post13"}
    answer = {"python": python, "implementation": "cpython", "executable": "/usr/bin/python3",
              "packages": {k: {"version": v, "location": "/usr/lib/python3/site-packages"} for k, v in pk.items()}}
    _write(root / "usr/bin/python3", "#!/bin/sh\necho '%s'\n" % json.dumps(answer), 0o755)
    home = "/usr/local/Ascend/ascend-toolkit/latest"
    env = {"USER": "root", "HOME": "/root", "PATH": "/usr/local/bin:/usr/bin:/bin", "ASCEND_TOOLKIT_HOME": home,
           "ASCEND_HOME_PATH": home}
    env_file = root / "env.txt"
    _write(env_file, "".join("%s=%s\n" % kv for kv in env.items()))
    return env_file
