"""The closed sets of values opcheck takes: recording mode, exit policy, simulated chip.

One definition each: the command line shows them as choices (typer takes these Enums), the
recorder, the report and the replay accept exactly these values. The module imports nothing
but ``enum`` so the command line can read it without loading the rest of opcheck.
"""
from __future__ import annotations

from enum import Enum
from typing import Tuple, Type


class Mode(str, Enum):
    """How ``opcheck record`` runs the program: real CPU tensors, FakeTensor (shapes and
    dtypes, no storage) or the meta device."""

    EAGER = "eager"
    FAKE = "fake"
    META = "meta"


class FailOn(str, Enum):
    """When ``opcheck compare`` exits 1: an op the model uses fails on the target
    (``unsupported``), also runs on the CPU there (``fallback``), or changes at all (``change``)."""

    UNSUPPORTED = "unsupported"
    FALLBACK = "fallback"
    CHANGE = "change"


class Soc(str, Enum):
    """SoC versions (what ``torch_npu.npu.get_device_name()`` and CANN's soc_version call a
    chip) the ``--replay`` host can carry: the names torch_npu accepts, as its SoC table spells
    them (it stops with "Unsupported soc version" on any other):
    https://github.com/Ascend/pytorch/blob/00acf37e34d402018d5fc5ad1249d524193690a7/torch_npu/csrc/core/npu/NpuVariables.cpp"""

    ASCEND910PREMIUMA = "Ascend910PremiumA"
    ASCEND910PROA = "Ascend910ProA"
    ASCEND910A = "Ascend910A"
    ASCEND910PROB = "Ascend910ProB"
    ASCEND910B = "Ascend910B"
    ASCEND310P1 = "Ascend310P1"
    ASCEND310P2 = "Ascend310P2"
    ASCEND310P3 = "Ascend310P3"
    ASCEND310P4 = "Ascend310P4"
    ASCEND910B1 = "Ascend910B1"
    ASCEND910B2 = "Ascend910B2"
    ASCEND910B2C = "Ascend910B2C"
    ASCEND910B3 = "Ascend910B3"
    ASCEND910B4 = "Ascend910B4"
    ASCEND910B4_1 = "Ascend910B4-1"
    ASCEND310B1 = "Ascend310B1"
    ASCEND310B2 = "Ascend310B2"
    ASCEND310B3 = "Ascend310B3"
    ASCEND310B4 = "Ascend310B4"
    ASCEND910_9391 = "Ascend910_9391"
    ASCEND910_9392 = "Ascend910_9392"
    ASCEND910_9381 = "Ascend910_9381"
    ASCEND910_9382 = "Ascend910_9382"
    ASCEND910_9372 = "Ascend910_9372"
    ASCEND910_9361 = "Ascend910_9361"


DEFAULT_SOC = Soc.ASCEND910B2


def values(enum: Type[Enum]) -> Tuple[str, ...]:
    return tuple(str(m.value) for m in enum)  # type: ignore[attr-defined]


def choose(enum: Type[Enum], value: str, option: str) -> str:
    """``value`` as a member's value, or ValueError with a one-line message naming the choices."""
    if isinstance(value, enum):
        return str(value.value)  # type: ignore[attr-defined]
    for m in enum:
        if value == m.value:
            return str(m.value)
    raise ValueError(f"{option} {value}: choose one of {', '.join(values(enum))}")
