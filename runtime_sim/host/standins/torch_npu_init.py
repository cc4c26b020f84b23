# runtime_sim stand-in for the `torch_npu` package of a simulated host (not the real one).
#
# Import order follows torch_npu 2.13's __init__: switch torch's backend auto-loading
# off, import torch, load the C extension (here torch_npu._C, which fails exactly as the
# dynamic loader does on that host), register the `npu` device module, restore the switch.
import os

ORG_AUTOLOAD = os.getenv("TORCH_DEVICE_BACKEND_AUTOLOAD", "1")
os.environ["TORCH_DEVICE_BACKEND_AUTOLOAD"] = "0"

import torch  # noqa: E402

import torch_npu._C  # noqa: E402,F401  (raises ImportError when the libraries do not resolve)
from torch_npu import npu  # noqa: E402
from torch_npu.version import __version__  # noqa: E402,F401

torch._register_device_module("npu", npu)


def _tensor_npu(self, device=None, non_blocking=False):
    index = device if isinstance(device, int) else (0 if device is None else torch.device(device).index or 0)
    return self.to(torch.device("npu", index))


torch.Tensor.npu = _tensor_npu


def _autoload():
    # Entry point torch calls on `import torch`; restores the switch for child processes.
    os.environ["TORCH_DEVICE_BACKEND_AUTOLOAD"] = ORG_AUTOLOAD


_autoload()
