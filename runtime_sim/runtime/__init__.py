"""A simulated ACL runtime and the torch_npu layer above it.

Public API::

    Machine, DeviceSpec                 the NPUs of the simulated host (and their faults)
    Stack(cann, torch_npu, torch)       versions that pick every output shape
    SimProcess(log_root, pid, ...)      a host process: env, logs, clock, error recorder
    AclRuntime(process, machine)        init / set_device / contexts / streams / events / launch /
                                        synchronize / malloc, on a simulated clock
    TorchNpu(process, machine, alloc)   the same calls as torch_npu makes them, failures
                                        raised as NpuError with the exact console text
    AclError, NpuError, SimClock
"""
from __future__ import annotations

from runtime_sim.runtime.acl import AclRuntime, Context, Event, Fault, Stream
from runtime_sim.runtime.clock import SimClock
from runtime_sim.runtime.errors import AclError, NpuError
from runtime_sim.runtime.machine import DeviceSpec, Machine
from runtime_sim.runtime.process import SimProcess
from runtime_sim.runtime.profile import Stack
from runtime_sim.runtime.torch_npu import TorchNpu

__all__ = ["AclError", "AclRuntime", "Context", "DeviceSpec", "Event", "Fault", "Machine", "NpuError",
           "SimClock", "SimProcess", "Stack", "Stream", "TorchNpu"]
