"""The scenario file schema: a small, explicit validator with one-line errors.

A scenario file is YAML with three parts: ``host`` (what the builder writes),
``workload`` (what ``run`` executes on that host, optional) and ``expect`` (the ground
truth a correct doctor reports). Validation turns the raw mapping into frozen
dataclasses; any problem raises ScenarioError naming the file and the dotted field.
"""
from __future__ import annotations

import re

from dataclasses import dataclass, field
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple

# The doctor's categories (docs/triage.md), repeated because runtime_sim never imports the doctor;
# tests/runtime_sim/test_scenarios_taxonomy.py keeps the two equal.
CATEGORIES = (
    "driver_init",
    "env_path",
    "version_mismatch",
    "unsupported_op",
    "oom_capacity",
    "oom_fragmentation",
    "hccl_comm",
    "device_busy_permission",
    "aicore_exec",
    "other",
)
FAILING_STATUSES = ("fail", "timeout", "error")
OOM_VERDICTS = ("oom_capacity", "oom_fragmentation", "external")
NPU_SMI_BEHAVIOURS = ("auto", "ok", "hang", "dcmi_error", "absent")
CANN_LAYOUTS = ("ascend-toolkit", "cann")
ARCHES = ("x86_64", "aarch64")


class ScenarioError(ValueError):
    """A scenario file is wrong; the message is one line naming the file and field."""


# ---------------------------------------------------------------------- records
@dataclass(frozen=True)
class Process:
    npu: int
    pid: int
    memory_mb: int
    name: str = ""
    chip: int = 0


@dataclass(frozen=True)
class NpuSmiSpec:
    behaviour: str = "auto"  # auto: ok, or the dcmi error the judged user would get
    code: int = -8005
    location: str = "/usr/local/bin/npu-smi"
    processes: Tuple[Process, ...] = ()
    health: Tuple[Tuple[int, str], ...] = ()  # (logical device, Health) overrides


@dataclass(frozen=True)
class CannSpec:
    version: str
    layout: str
    arch: Optional[str] = None  # None: the host's arch
    kernels: bool = True
    base: str = "/usr/local/Ascend"


@dataclass(frozen=True)
class UserSpec:
    name: str = "root"
    uid: int = 0
    groups: Tuple[str, ...] = ()
    home: Optional[str] = None

    @property
    def home_dir(self) -> str:
        if self.home:
            return self.home
        return "/root" if self.name == "root" else f"/home/{self.name}"


@dataclass(frozen=True)
class ContainerSpec:
    kind: str = "docker"
    mounts: Tuple[str, ...] = ("driver", "npu_smi", "dcmi", "install_info", "devices")


@dataclass(frozen=True)
class EnvSpec:
    set_env: bool = True
    visible_devices: Optional[str] = None
    device_id: Optional[str] = None
    extra: Tuple[Tuple[str, str], ...] = ()
    drop: Tuple[str, ...] = ()


@dataclass(frozen=True)
class PythonSpec:
    torch: Optional[str] = None
    torch_npu: Optional[str] = None
    # what the host's python3 reports, whatever interpreter runs the simulation (3.10 is in
    # every torch_npu line the catalog uses)
    version: str = "3.10.12"


@dataclass(frozen=True)
class HostSpec:
    arch: str
    chip: str
    npus: int
    driver: Optional[str]
    firmware: Optional[str]
    cann: Optional[CannSpec]
    driver_for_all: bool = False
    install_complete: bool = True
    modules_loaded: bool = True
    devices: str = "all"  # all | none
    npu_smi: NpuSmiSpec = NpuSmiSpec()
    user: UserSpec = UserSpec()
    container: Optional[ContainerSpec] = None
    env: EnvSpec = EnvSpec()
    python: PythonSpec = PythonSpec()


@dataclass(frozen=True)
class ExpectedFinding:
    id: str
    category: str
    status: str = "fail"


PROFILE_LAYERS = ("dispatch", "copy", "fusion", "dynamic_shape", "slow_path", "communication")


@dataclass(frozen=True)
class ProfileExpectation:
    """What ``profile`` must report on the scenario's profile: its first finding's layer and id,
    optionally an op type that finding names, the slowest rank, and the op that ``profile compare``
    (before -> after the upgrade) must list first."""

    layer: Optional[str] = None  # None: no finding at all (a healthy run)
    finding: Optional[str] = None
    op: Optional[str] = None
    slowest_rank: Optional[int] = None
    compare_first: Optional[str] = None


@dataclass(frozen=True)
class Expectation:
    check: Tuple[ExpectedFinding, ...] = ()
    triage_category: Optional[str] = None
    first_failing_rank: Optional[int] = None
    oom_verdict: Optional[str] = None
    profile: Optional[ProfileExpectation] = None


@dataclass(frozen=True)
class WorkloadSpec:
    kind: str
    params: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Scenario:
    name: str
    summary: str
    seed: int
    host: HostSpec
    expect: Expectation
    workload: Optional[WorkloadSpec] = None
    sources: Tuple[str, ...] = ()
    path: Optional[str] = None

    @property
    def failing_ids(self) -> Dict[str, str]:
        """Check id -> expected status, for the checks a correct doctor reports as failing."""
        return {f.id: f.status for f in self.expect.check}


# ---------------------------------------------------------------- validation
class _Reader:
    """Walks a raw mapping, remembering the dotted path for error messages."""

    def __init__(self, origin: str) -> None:
        self.origin = origin

    def error(self, where: str, message: str) -> ScenarioError:
        return ScenarioError(f"{self.origin}: {where}: {message}")

    def mapping(self, value: Any, where: str, allowed: Sequence[str], required: Sequence[str] = ()) -> Dict[str, Any]:
        if not isinstance(value, dict):
            raise self.error(where or "(top level)", f"expected a mapping, got {_kind(value)}")
        for key in value:
            if key not in allowed:
                raise self.error(_join(where, str(key)), f"unknown field (allowed: {', '.join(allowed)})")
        for key in required:
            if key not in value or value[key] is None:
                raise self.error(_join(where, key), "required field is missing")
        return value

    def string(self, value: Any, where: str, choices: Sequence[str] = (), optional: bool = False) -> Optional[str]:
        if value is None and optional:
            return None
        if isinstance(value, bool) or not isinstance(value, (str, int, float)):
            raise self.error(where, f"expected a string, got {_kind(value)}")
        text = str(value)
        if isinstance(value, float):
            raise self.error(where, f"write versions as quoted strings (YAML read {value!r} as a number)")
        if choices and text not in choices:
            raise self.error(where, f"{text!r} is not one of {', '.join(choices)}")
        return text

    def integer(self, value: Any, where: str, minimum: Optional[int] = None) -> int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise self.error(where, f"expected an integer, got {_kind(value)}")
        if minimum is not None and value < minimum:
            raise self.error(where, f"must be >= {minimum}, got {value}")
        return value

    def boolean(self, value: Any, where: str) -> bool:
        if not isinstance(value, bool):
            raise self.error(where, f"expected true or false, got {_kind(value)}")
        return value

    def sequence(self, value: Any, where: str) -> List[Any]:
        if not isinstance(value, list):
            raise self.error(where, f"expected a list, got {_kind(value)}")
        return value


def _join(where: str, key: str) -> str:
    return f"{where}.{key}" if where else key


def _kind(value: Any) -> str:
    if value is None:
        return "nothing"
    return {dict: "a mapping", list: "a list", str: "a string", bool: "a boolean", int: "an integer", float: "a number"}.get(
        type(value), type(value).__name__
    )


TOP_FIELDS = ("name", "summary", "seed", "sources", "host", "workload", "expect")
HOST_FIELDS = (
    "arch", "chip", "npus", "driver", "firmware", "cann", "driver_for_all", "install_complete",
    "modules", "devices", "npu_smi", "user", "container", "env", "python",
)


def validate(raw: Any, origin: str, known: "Optional[KnownValues]" = None) -> Scenario:
    """Turn a parsed YAML document into a Scenario, or raise ScenarioError (one line)."""
    r = _Reader(origin)
    top = r.mapping(raw, "", TOP_FIELDS, required=("name", "summary", "host", "expect"))
    name = r.string(top["name"], "name")
    assert name is not None
    if not name.replace("_", "").isalnum() or not name[0].isalpha() or name.lower() != name:
        raise r.error("name", f"{name!r} must be lower_snake_case")
    summary = r.string(top["summary"], "summary") or ""
    seed = r.integer(top.get("seed", 0), "seed", minimum=0)
    sources = tuple(r.string(s, f"sources[{i}]") or "" for i, s in enumerate(r.sequence(top.get("sources", []), "sources")))
    host = _host(r, top["host"], known)
    workload = _workload(r, top.get("workload"))
    expect = _expect(r, top["expect"])
    return Scenario(name=name, summary=summary, seed=seed, host=host, expect=expect, workload=workload, sources=sources, path=origin)


@dataclass(frozen=True)
class KnownValues:
    """Names the host data knows; a scenario naming anything else is rejected early."""

    chips: Tuple[str, ...]
    drivers: Tuple[str, ...]
    firmwares: Tuple[str, ...]
    toolkits: Tuple[str, ...]
    torch_npu: Tuple[str, ...]


def _host(r: _Reader, raw: Any, known: Optional[KnownValues]) -> HostSpec:
    h = r.mapping(raw, "host", HOST_FIELDS, required=("arch", "chip", "npus"))
    arch = r.string(h["arch"], "host.arch", ARCHES) or ""
    chip = r.string(h["chip"], "host.chip", known.chips if known else ()) or ""
    npus = r.integer(h["npus"], "host.npus", minimum=1)
    driver = r.string(h.get("driver"), "host.driver", known.drivers if known else (), optional=True)
    firmware = r.string(h.get("firmware"), "host.firmware", known.firmwares if known else (), optional=True)
    cann = None
    if h.get("cann") is not None:
        c = r.mapping(h["cann"], "host.cann", ("version", "layout", "arch", "kernels", "base"), required=("version", "layout"))
        cann = CannSpec(
            version=r.string(c["version"], "host.cann.version", known.toolkits if known else ()) or "",
            layout=r.string(c["layout"], "host.cann.layout", CANN_LAYOUTS) or "",
            arch=r.string(c.get("arch"), "host.cann.arch", ARCHES, optional=True),
            kernels=r.boolean(c.get("kernels", True), "host.cann.kernels"),
            base=_abs_path(r, c.get("base", "/usr/local/Ascend"), "host.cann.base"),
        )
    devices = r.string(h.get("devices", "all"), "host.devices", ("all", "none")) or "all"
    return HostSpec(
        arch=arch,
        chip=chip,
        npus=npus,
        driver=driver,
        firmware=firmware,
        cann=cann,
        driver_for_all=r.boolean(h.get("driver_for_all", False), "host.driver_for_all"),
        install_complete=r.boolean(h.get("install_complete", True), "host.install_complete"),
        modules_loaded=r.string(h.get("modules", "loaded"), "host.modules", ("loaded", "absent")) == "loaded",
        devices=devices,
        npu_smi=_npu_smi(r, h.get("npu_smi"), npus),
        user=_user(r, h.get("user")),
        container=_container(r, h.get("container")),
        env=_env(r, h.get("env")),
        python=_python(r, h.get("python"), known),
    )


def _abs_path(r: _Reader, value: Any, where: str) -> str:
    text = r.string(value, where) or ""
    if not text.startswith("/") or ".." in text.split("/"):
        raise r.error(where, f"{text!r} must be an absolute path without '..'")
    return text.rstrip("/") or "/"


def _npu_smi(r: _Reader, raw: Any, npus: int) -> NpuSmiSpec:
    if raw is None:
        return NpuSmiSpec()
    n = r.mapping(raw, "host.npu_smi", ("behaviour", "code", "location", "processes", "health"))
    procs = []
    for i, p in enumerate(r.sequence(n.get("processes", []), "host.npu_smi.processes")):
        where = f"host.npu_smi.processes[{i}]"
        pm = r.mapping(p, where, ("npu", "chip", "pid", "name", "memory_mb"), required=("npu", "pid", "memory_mb"))
        procs.append(
            Process(
                npu=r.integer(pm["npu"], where + ".npu", minimum=0),
                chip=r.integer(pm.get("chip", 0), where + ".chip", minimum=0),
                pid=r.integer(pm["pid"], where + ".pid", minimum=1),
                name=r.string(pm.get("name", ""), where + ".name") or "",
                memory_mb=r.integer(pm["memory_mb"], where + ".memory_mb", minimum=0),
            )
        )
    health = []
    for key, value in r.mapping(n.get("health", {}), "host.npu_smi.health", [str(i) for i in range(npus)] + list(range(npus))).items():
        health.append((int(key), r.string(value, f"host.npu_smi.health.{key}", ("OK", "Warning", "Alarm", "Critical", "UNKNOWN")) or "OK"))
    location = _abs_path(r, n.get("location", "/usr/local/bin/npu-smi"), "host.npu_smi.location")
    if location not in ("/usr/local/bin/npu-smi", "/usr/local/sbin/npu-smi"):
        raise r.error("host.npu_smi.location", f"{location!r} is not one of /usr/local/bin/npu-smi, /usr/local/sbin/npu-smi")
    code = r.integer(n.get("code", -8005), "host.npu_smi.code")
    if code >= 0:
        raise r.error("host.npu_smi.code", f"dcmi error codes are negative, got {code}")
    return NpuSmiSpec(
        behaviour=r.string(n.get("behaviour", "auto"), "host.npu_smi.behaviour", NPU_SMI_BEHAVIOURS) or "auto",
        code=code,
        location=location,
        processes=tuple(procs),
        health=tuple(sorted(health)),
    )


def _user(r: _Reader, raw: Any) -> UserSpec:
    if raw is None:
        return UserSpec()
    u = r.mapping(raw, "host.user", ("name", "uid", "groups", "home"), required=("name",))
    name = r.string(u["name"], "host.user.name") or ""
    if not name or not all(c.isalnum() or c in "_-" for c in name):
        raise r.error("host.user.name", f"{name!r} is not a valid user name")
    uid = r.integer(u.get("uid", 0 if name == "root" else 1001), "host.user.uid", minimum=0)
    if (uid == 0) != (name == "root"):
        raise r.error("host.user.uid", "uid 0 is root's and root's alone")
    groups = tuple(r.string(g, f"host.user.groups[{i}]") or "" for i, g in enumerate(r.sequence(u.get("groups", []), "host.user.groups")))
    home = _abs_path(r, u["home"], "host.user.home") if u.get("home") is not None else None
    return UserSpec(name=name, uid=uid, groups=groups, home=home)


CONTAINER_MOUNTS = ("driver", "npu_smi", "dcmi", "install_info", "devices")


def _container(r: _Reader, raw: Any) -> Optional[ContainerSpec]:
    if raw is None:
        return None
    c = r.mapping(raw, "host.container", ("kind", "mounts"))
    mounts = []
    for i, m in enumerate(r.sequence(c.get("mounts", list(CONTAINER_MOUNTS)), "host.container.mounts")):
        mounts.append(r.string(m, f"host.container.mounts[{i}]", CONTAINER_MOUNTS) or "")
    return ContainerSpec(kind=r.string(c.get("kind", "docker"), "host.container.kind", ("docker", "containerd", "podman")) or "docker", mounts=tuple(mounts))


def _env(r: _Reader, raw: Any) -> EnvSpec:
    if raw is None:
        return EnvSpec()
    e = r.mapping(raw, "host.env", ("set_env", "visible_devices", "device_id", "extra", "drop"))
    extra = []
    for key, value in r.mapping(e.get("extra", {}), "host.env.extra", list(e.get("extra", {}) or {})).items():
        if not str(key).replace("_", "").isalnum():
            raise r.error(f"host.env.extra.{key}", "not a valid variable name")
        extra.append((str(key), r.string(value, f"host.env.extra.{key}") or ""))
    drop = tuple(r.string(d, f"host.env.drop[{i}]") or "" for i, d in enumerate(r.sequence(e.get("drop", []), "host.env.drop")))
    return EnvSpec(
        set_env=r.boolean(e.get("set_env", True), "host.env.set_env"),
        visible_devices=r.string(e.get("visible_devices"), "host.env.visible_devices", optional=True),
        device_id=r.string(e.get("device_id"), "host.env.device_id", optional=True),
        extra=tuple(extra),
        drop=drop,
    )


def _python(r: _Reader, raw: Any, known: Optional[KnownValues]) -> PythonSpec:
    if raw is None:
        return PythonSpec()
    p = r.mapping(raw, "host.python", ("torch", "torch_npu", "version"))
    torch_npu = r.string(p.get("torch_npu"), "host.python.torch_npu", known.torch_npu if known else (), optional=True)
    version = r.string(p.get("version"), "host.python.version", optional=True) or PythonSpec.version
    if not re.fullmatch(r"3\.\d+\.\d+", version):
        raise r.error("host.python.version", f"{version!r} is not a Python version such as 3.10.12")
    return PythonSpec(torch=r.string(p.get("torch"), "host.python.torch", optional=True), torch_npu=torch_npu, version=version)


def _workload(r: _Reader, raw: Any) -> Optional[WorkloadSpec]:
    if raw is None:
        return None
    w = r.mapping(raw, "workload", ("kind", "params"), required=("kind",))
    kind = r.string(w["kind"], "workload.kind") or ""
    raw_params = w.get("params", {})
    params = r.mapping(raw_params, "workload.params", list(raw_params.keys()) if isinstance(raw_params, dict) else [])
    return WorkloadSpec(kind=kind, params=dict(params))


def _expect(r: _Reader, raw: Any) -> Expectation:
    e = r.mapping(raw, "expect", ("check", "triage", "oom", "profile"), required=("check",))
    findings = []
    seen = set()
    for i, item in enumerate(r.sequence(e["check"], "expect.check")):
        where = f"expect.check[{i}]"
        f = r.mapping(item, where, ("id", "category", "status"), required=("id", "category"))
        fid = r.string(f["id"], where + ".id") or ""
        if "." not in fid:
            raise r.error(where + ".id", f"{fid!r} is not a check id (group.name)")
        if fid in seen:
            raise r.error(where + ".id", f"{fid!r} is listed twice")
        seen.add(fid)
        findings.append(
            ExpectedFinding(
                id=fid,
                category=r.string(f["category"], where + ".category", CATEGORIES) or "",
                status=r.string(f.get("status", "fail"), where + ".status", FAILING_STATUSES) or "fail",
            )
        )
    triage_category = first_rank = None
    if e.get("triage") is not None:
        t = r.mapping(e["triage"], "expect.triage", ("category", "first_failing_rank"), required=("category",))
        triage_category = r.string(t["category"], "expect.triage.category", CATEGORIES)
        if t.get("first_failing_rank") is not None:
            first_rank = r.integer(t["first_failing_rank"], "expect.triage.first_failing_rank", minimum=0)
    oom = None
    if e.get("oom") is not None:
        o = r.mapping(e["oom"], "expect.oom", ("verdict",), required=("verdict",))
        oom = r.string(o["verdict"], "expect.oom.verdict", OOM_VERDICTS)
    profile = None
    if e.get("profile") is not None:
        pm = r.mapping(e["profile"], "expect.profile", ("layer", "finding", "op", "slowest_rank", "compare_first"))
        layer = r.string(pm.get("layer"), "expect.profile.layer", PROFILE_LAYERS, optional=True)
        finding = r.string(pm.get("finding"), "expect.profile.finding", optional=True)
        if finding is not None and (layer is None or not finding.startswith(layer + ".")):
            raise r.error("expect.profile.finding", f"{finding!r} must start with its layer ({layer}.)")
        profile = ProfileExpectation(
            layer=layer, finding=finding,
            op=r.string(pm.get("op"), "expect.profile.op", optional=True),
            slowest_rank=r.integer(pm["slowest_rank"], "expect.profile.slowest_rank", minimum=0) if pm.get("slowest_rank") is not None else None,
            compare_first=r.string(pm.get("compare_first"), "expect.profile.compare_first", optional=True),
        )
    return Expectation(check=tuple(findings), triage_category=triage_category, first_failing_rank=first_rank, oom_verdict=oom,
                       profile=profile)
