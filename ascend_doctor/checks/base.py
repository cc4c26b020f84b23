"""The check protocol.

A check is data plus one function: an id that never changes, a title, the group it is
shown under, the tier it belongs to, the checks it needs to have passed, an
applicability test (returns a skip reason, never a false failure), a timeout, and
``run(ctx) -> Result``. Area modules (driver, devices, toolkit, ...) declare their
checks with the ``check`` decorator; ``registry()`` lists them in report order.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Optional, Tuple

from ..facts import Facts
from ..host import Host
from ..model import Evidence, Fix, Status
from . import AREA_MODULES, load_all

GROUPS = (
    ("container", "Container"),
    ("driver", "Driver and firmware"),
    ("devices", "NPU devices"),
    ("toolkit", "CANN toolkit"),
    ("environment", "Environment"),
    ("python", "Python stack"),
    ("runtime", "Runtime (deep)"),
    ("logs", "Logs"),
)

# The check whose summary stands for its whole group when every check there passed.
GROUP_HEADLINE = {
    "container": "container.detected",
    "driver": "driver.installed",
    "devices": "npu_smi.info",
    "toolkit": "toolkit.installed",
    "environment": "env.set_env",
    "python": "python.packages",
    "runtime": "runtime.small_op",
    "logs": "logs.recent_errors",
}


@dataclass
class Options:
    tier: str = "quick"  # quick | deep
    expect_devices: Optional[int] = None
    python: Optional[str] = None
    command_timeout: float = 8.0  # seconds a command such as npu-smi may take
    npu_smi_file: Optional[str] = None  # a saved `npu-smi info` output, read instead of running it


@dataclass
class Context:
    host: Host
    facts: Facts
    options: Options
    results: Dict[str, "Result"] = field(default_factory=dict)  # earlier checks' results, by id


@dataclass
class Result:
    status: Status
    summary: str
    category: Optional[str] = None
    evidence: Evidence = field(default_factory=Evidence)
    fix: Fix = field(default_factory=Fix)
    kb: Optional[str] = None
    details: List[str] = field(default_factory=list)
    data: Dict[str, Any] = field(default_factory=dict)


def ok(summary: str, **kw: Any) -> Result:
    return Result(Status.OK, summary, **kw)


def warn(summary: str, **kw: Any) -> Result:
    return Result(Status.WARN, summary, **kw)


def fail(summary: str, **kw: Any) -> Result:
    return Result(Status.FAIL, summary, **kw)


def skip(summary: str, **kw: Any) -> Result:
    return Result(Status.SKIP, summary, **kw)


def timed_out(summary: str, **kw: Any) -> Result:
    return Result(Status.TIMEOUT, summary, **kw)


@dataclass(frozen=True)
class Check:
    id: str
    title: str
    group: str
    run: Callable[[Context], Result]
    category: Optional[str] = None  # default category of its failures
    tier: str = "quick"
    requires: Tuple[str, ...] = ()  # ids that must have run and not failed
    applies: Optional[Callable[[Context], Optional[str]]] = None  # returns a skip reason
    timeout: float = 5.0
    order: int = 0
    module: str = ""  # the area module that declares it (report order does not depend on import order)


_REGISTRY: Dict[str, Check] = {}
_counter = [0]


def check(
    id: str,
    title: str,
    group: str,
    category: Optional[str] = None,
    tier: str = "quick",
    requires: Tuple[str, ...] = (),
    applies: Optional[Callable[[Context], Optional[str]]] = None,
    timeout: float = 5.0,
) -> Callable[[Callable[[Context], Result]], Callable[[Context], Result]]:
    """Register ``fn`` as a check. Report order is group order, then declaration order."""

    def register(fn: Callable[[Context], Result]) -> Callable[[Context], Result]:
        if id in _REGISTRY:
            raise ValueError(f"duplicate check id {id}")
        if group not in dict(GROUPS):
            raise ValueError(f"check {id}: unknown group {group}")
        _counter[0] += 1
        _REGISTRY[id] = Check(id, title, group, fn, category, tier, requires, applies, timeout, _counter[0], fn.__module__.rsplit(".", 1)[-1])
        return fn

    return register


def registry() -> List[Check]:
    """All checks, loading the area modules on first use, in report order."""
    load_all()
    group_rank = {name: i for i, (name, _) in enumerate(GROUPS)}
    module_rank = {name: i for i, name in enumerate(AREA_MODULES)}
    # a check runs after those it requires: within a group, by the area modules' order
    # (whoever imported one of them first), then by declaration
    return sorted(_REGISTRY.values(), key=lambda c: (group_rank[c.group], module_rank.get(c.module, 99), c.order))


def group_title(group: str) -> str:
    return dict(GROUPS).get(group, group)
