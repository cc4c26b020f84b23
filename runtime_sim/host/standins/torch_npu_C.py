# runtime_sim stand-in for torch_npu's C extension: importing it does what the dynamic
# loader does for the real libtorch_npu.so on this host, with the real error texts.
#
#   torch built for another version   -> undefined symbol in libtorch_npu.so
#                                        (Ascend/pytorch#35)
#   libhccl.so / libascendcl.so absent -> "libhccl.so: cannot open shared object file"
#                                        (CANN missing or set_env.sh not sourced; checked
#                                        with the torch-npu 2.13.0 wheel from PyPI)
#   driver libascend_hal.so absent     -> "libascend_hal.so: cannot open shared object file"
#                                        (DeepLink-org/dlinfer#47)
#   CANN older than the build's line   -> undefined symbol (vllm-project/vllm-ascend#117)
#   CANN of a newer major release      -> undefined symbol: MsprofSysCycleTime
#                                        (triton-lang/triton-ascend#328)
import os

import torch
from torch_npu import _build_info as build
from torch_npu import _sim_host as host

_LIB = os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib", "libtorch_npu.so")
NEEDED = ("libhccl.so", "libascendcl.so", "libascend_hal.so")


def _shown(path):
    """The library path as a user of the simulated host sees it."""
    base = host.root()
    return path[len(base):] if path.startswith(base + os.sep) else path


def _cann_key(text):
    head = text.split(".")
    major, minor = int(head[0]), int(head[1])
    third = head[2] if len(head) > 2 else "0"
    if third.upper().startswith("RC"):
        return (major, minor, 0, int(third[2:] or 0))
    return (major, minor, 1, int("".join(c for c in third if c.isdigit()) or 0))


def _load():
    if torch.__version__.split("+")[0] != build.TORCH:
        raise ImportError("%s: undefined symbol: %s" % (_shown(_LIB), build.TORCH_ABI_SYMBOL))
    found = {}
    for soname in NEEDED:
        path = host.find_library(soname)
        if path is None:
            raise ImportError("%s: cannot open shared object file: No such file or directory" % soname)
        found[soname] = path
    installed = host.library_tag(found["libascendcl.so"], "cann")
    if installed:
        have, want = _cann_key(installed), _cann_key(build.CANN)
        if have[0] > want[0]:
            raise ImportError("%s: undefined symbol: %s" % (_shown(_LIB), build.NEWER_CANN_SYMBOL))
        if have[:2] < want[:2]:
            raise ImportError("%s: undefined symbol: %s" % (_shown(_LIB), build.OLDER_CANN_SYMBOL))


_load()
