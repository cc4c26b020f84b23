# runtime_sim stand-in for torch_npu.npu: device discovery and set-up on the simulated host.
#
# is_available()/device_count() never raise (as in torch_npu 2.x); the first use of a
# device raises the RuntimeError torch_npu prints, in its current template
# (Ascend/pytorch#67 for 507033, gpustack/gpustack#3352 for
# 207004 with an ASCEND_RT_VISIBLE_DEVICES the runtime rejects).
import os
import time

from torch_npu import _sim_host as host

CONTROL_NODES = ("/dev/davinci_manager", "/dev/devmm_svm", "/dev/hisi_hdc")
HINTS = {
    107001: "Invalid device ID.\n        Check whether the device ID is valid.",
    207004: "The device is unavailable.\n        Check whether the device is running properly.",
    507033: "Failed to start the device. \n        Rectify the fault based on the error information in the ascend log.",
}

_initialized = False
_current = 0


def _acl_error(func, line, call, code, device):
    stamp = time.strftime("%Y-%m-%d-%H:%M:%S", time.localtime())
    return RuntimeError(
        "%s:build/CMakeFiles/torch_npu.dir/compiler_depend.ts:%d NPU function error: %s, error code is %d\n"
        "[ERROR] %s (PID:%d, Device:%d, RankID:-1) ERR00100 PTA call acl api failed\n"
        "[Error]: %s" % (func, line, call, code, stamp, os.getpid(), device, HINTS[code])
    )


def _state():
    """(visible device ids or None, whether the control nodes can be opened)."""
    physical = host.physical_devices()
    visible = host.visible_devices(len(physical))
    usable = bool(physical) and all(host.can_open(p) for p in CONTROL_NODES)
    if usable and visible:
        usable = all(host.can_open("/dev/davinci%d" % physical[i]) for i in visible)
    return visible, usable


def device_count():
    visible, usable = _state()
    return len(visible) if (visible and usable) else 0


def is_available():
    return device_count() > 0


def _lazy_init(index=None):
    global _initialized
    visible, usable = _state()
    if visible is None:
        raise _acl_error("init", 292, "aclrtGetDeviceCount(&device_count)", 207004, -1)
    if not usable:
        raise _acl_error("Initialize", 146, "c10_npu::SetDevice(device_id_)", 507033, -1)
    target = _current if index is None else index
    if target >= len(visible):
        raise _acl_error("Initialize", 146, "c10_npu::SetDevice(device_id_)", 107001, -1)
    _initialized = True
    return target


def set_device(device):
    global _current
    index = device if isinstance(device, int) else int(str(device).rpartition(":")[2] or 0)
    _current = _lazy_init(index)


def current_device():
    _lazy_init()
    return _current


def synchronize(device=None):
    _lazy_init()


def get_device_name(device=None):
    from torch_npu import _build_info

    _lazy_init()
    return _build_info.SOC


def _to_device(index):
    return _lazy_init(index if index is not None else _current)


def _launch(index):
    _lazy_init(index)
