"""The scenario file schema: a small, explicit validator with one-line errors.

A scenario file is YAML with three parts: ``host`` (what the builder writes),
``workload`` (what ``run`` executes on that host, optional) and ``expect`` (the ground
truth a correct doctor reports). Validation turns the raw mapping into frozen
dataclasses; any problem raises ScenarioError naming the file and the dotted field.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Dict, Mapping, Optional, Tuple

from compat_matrix.schema import Field, Record, check, problem

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


# ---------------------------------------------------------------- the schema
def _abs_path(value: str) -> Optional[str]:
    if not value.startswith("/") or ".." in value.split("/"):
        return f"{value!r} must be an absolute path without '..'"
    return None


def _check_id(value: str) -> Optional[str]:
    return None if "." in value else f"{value!r} is not a check id (group.name)"


def _negative(value: int) -> Optional[str]:
    return None if value < 0 else f"dcmi error codes are negative, got {value}"


def _text(doc: str = "", **kw: Any) -> Field:
    """A string field; YAML numbers such as ``0`` are read as text, ``8.2`` (a version without quotes) is refused."""
    return Field("str", doc=doc, text=True, **kw)


def _texts(doc: str = "", **kw: Any) -> Field:
    return Field("list", doc=doc, item=_text(**kw))


HEALTH_VALUES = ("OK", "Warning", "Alarm", "Critical", "UNKNOWN")
CONTAINER_MOUNTS = ("driver", "npu_smi", "dcmi", "install_info", "devices")
CONTAINER_KINDS = ("docker", "containerd", "podman")
NPU_SMI_LOCATIONS = ("/usr/local/bin/npu-smi", "/usr/local/sbin/npu-smi")

CANN = Record("host.cann", {
    "version": _text("the CANN toolkit release (a name the host data knows)", required=True),
    "layout": _text("where the toolkit is installed: ascend-toolkit/latest (8.x) or cann (9.x)", required=True,
                    choices=CANN_LAYOUTS),
    "arch": _text("the toolkit's architecture (a wrong one is a finding); default: the host's", choices=ARCHES),
    "kernels": Field("bool", doc="the operator kernels package is installed", default=True),
    "base": _text("install prefix", default="/usr/local/Ascend", test=_abs_path),
}, doc="The CANN toolkit on the host; absent: no toolkit.")
PROCESS = Record("host.npu_smi.processes[]", {
    "npu": Field("int", required=True, minimum=0, doc="the NPU id npu-smi prints"),
    "chip": Field("int", minimum=0, default=0, doc="the chip on that NPU"),
    "pid": Field("int", required=True, minimum=1, doc="the holding process"),
    "name": _text("its process name", default=""),
    "memory_mb": Field("int", required=True, minimum=0, doc="device memory it holds, MB"),
}, doc="A process npu-smi lists as holding a device.")
NPU_SMI = Record("host.npu_smi", {
    "behaviour": _text("auto: a table, or the dcmi error the judged user would get; ok, hang, dcmi_error, absent",
                       choices=NPU_SMI_BEHAVIOURS, default="auto"),
    "code": Field("int", test=_negative, default=-8005, doc="the dcmi error code (negative) printed when it fails"),
    "location": _text("where npu-smi is installed", choices=NPU_SMI_LOCATIONS, test=_abs_path,
                      default="/usr/local/bin/npu-smi"),
    "processes": Field("list", item=Field("record", record=PROCESS), doc="processes holding devices"),
    "health": Field("map", key=Field("any"), item=_text(choices=HEALTH_VALUES),
                    doc="Health of a logical device (key: 0 .. npus-1) other than OK"),
}, doc="What npu-smi does on the host.")
USER = Record("host.user", {
    "name": _text("the user the doctor runs as", required=True, pattern=r"[A-Za-z0-9_-]+", hint="is not a valid user name"),
    "uid": Field("int", minimum=0, doc="0 for root (and only root); default 0 for root, else 1001"),
    "groups": _texts("supplementary groups (HwHiAiUser gives access to the device nodes)"),
    "home": _text("home directory; default /root or /home/NAME", test=_abs_path),
}, doc="The judged user; absent: root.")
CONTAINER = Record("host.container", {
    "kind": _text("the container runtime", choices=CONTAINER_KINDS, default="docker"),
    "mounts": _texts("what the container was given from the host; default: all", choices=CONTAINER_MOUNTS),
}, doc="The judged environment is a container; absent: bare metal.")
ENV = Record("host.env", {
    "set_env": Field("bool", default=True, doc="the CANN set_env.sh was sourced"),
    "visible_devices": _text("ASCEND_RT_VISIBLE_DEVICES"),
    "device_id": _text("ASCEND_DEVICE_ID"),
    "extra": Field("map", key=_text(pattern=r"[A-Za-z0-9_]+", hint="is not a valid variable name"), item=_text(),
                   doc="further variables, NAME: value"),
    "drop": _texts("variables to remove from the environment set_env.sh gives"),
}, doc="The judged process's environment.")
PYTHON = Record("host.python", {
    "torch": _text("the installed torch version; absent: not installed"),
    "torch_npu": _text("the installed torch_npu version (a name the host data knows); absent: not installed"),
    "version": _text("what the host's python3 reports", pattern=r"3\.\d+\.\d+",
                     hint="is not a Python version such as 3.10.12", default="3.10.12"),
}, doc="The Python stack of the judged environment.")
HOST = Record("host", {
    "arch": _text("the machine's architecture", required=True, choices=ARCHES),
    "chip": _text("the Ascend chip (a name the host data knows)", required=True),
    "npus": Field("int", required=True, minimum=1, doc="number of NPUs"),
    "driver": _text("the driver version (known to the host data); absent: no driver"),
    "firmware": _text("the firmware version (known to the host data)"),
    "cann": Field("record", record=CANN),
    "driver_for_all": Field("bool", default=False, doc="the driver was installed with --install-for-all"),
    "install_complete": Field("bool", default=True, doc="the driver install finished (false: a broken install)"),
    "modules": _text("the driver's kernel modules", choices=("loaded", "absent"), default="loaded"),
    "devices": _text("whether the /dev/davinci* nodes exist", choices=("all", "none"), default="all"),
    "npu_smi": Field("record", record=NPU_SMI),
    "user": Field("record", record=USER),
    "container": Field("record", record=CONTAINER),
    "env": Field("record", record=ENV),
    "python": Field("record", record=PYTHON),
}, doc="The simulated machine the builder writes.")
WORKLOAD = Record("workload", {
    "kind": _text("what `run` executes (a workload of runtime_sim.workloads)", required=True),
    "params": Field("map", doc="the workload's parameters"),
}, doc="What `python -m runtime_sim run` executes on the host; absent: nothing runs.")
FINDING = Record("expect.check[]", {
    "id": _text("a check id (group.name)", required=True, test=_check_id),
    "category": _text("the finding's category", required=True, choices=CATEGORIES),
    "status": _text("the status a correct doctor reports", choices=FAILING_STATUSES, default="fail"),
}, doc="A check a correct doctor reports as failing.")
TRIAGE = Record("expect.triage", {
    "category": _text("the category of the first failure", required=True, choices=CATEGORIES),
    "first_failing_rank": Field("int", minimum=0, doc="the rank that failed first (multi-rank jobs)"),
}, doc="What `triage` must say about the workload's logs.")
OOM = Record("expect.oom", {
    "verdict": _text("the verdict `oom` must give", required=True, choices=OOM_VERDICTS),
}, doc="What `oom` must say.")
PROFILE = Record("expect.profile", {
    "layer": _text("the layer of profile's first finding; absent: no finding at all", choices=PROFILE_LAYERS),
    "finding": _text("that finding's id (starts with its layer)"),
    "op": _text("an op type the finding names"),
    "slowest_rank": Field("int", minimum=0, doc="the slowest rank"),
    "compare_first": _text("the op `profile compare` (before -> after) must list first"),
}, doc="What `profile` must report on the scenario's profile.")
EXPECT = Record("expect", {
    "check": Field("list", required=True, item=Field("record", record=FINDING), doc="the failing checks"),
    "triage": Field("record", record=TRIAGE),
    "oom": Field("record", record=OOM),
    "profile": Field("record", record=PROFILE),
}, doc="The ground truth a correct doctor reports.")
SCENARIO = Record("scenario", {
    "name": _text("the scenario's name: the file name without .yaml", required=True, pattern=r"[a-z][a-z0-9_]*",
                  hint="must be lower_snake_case"),
    "summary": _text("one line: what is wrong on this host", required=True),
    "seed": Field("int", minimum=0, default=0, doc="seed of everything random in the simulation"),
    "sources": _texts("public URLs the scenario's facts come from"),
    "host": Field("record", required=True, record=HOST),
    "workload": Field("record", record=WORKLOAD),
    "expect": Field("record", required=True, record=EXPECT),
}, doc="A runtime_sim scenario file (runtime_sim/scenarios/*.yaml): a host, a workload, and the truth.")

# kept for callers that list the fields
TOP_FIELDS = tuple(SCENARIO.fields)
HOST_FIELDS = tuple(HOST.fields)


# ---------------------------------------------------------------- validation
def validate(raw: Any, origin: str, known: "Optional[KnownValues]" = None) -> Scenario:
    """Turn a parsed YAML document into a Scenario, or raise ScenarioError (one line)."""
    check(raw, SCENARIO, origin, error=ScenarioError)
    if known is not None:
        _known(raw["host"], origin, known)
    host = _host(raw["host"], origin)
    return Scenario(name=str(raw["name"]), summary=str(raw["summary"]), seed=SCENARIO.get(raw, "seed"), host=host,
                    expect=_expect(raw["expect"], origin), workload=_workload(raw.get("workload")),
                    sources=tuple(str(s) for s in raw.get("sources") or ()), path=origin)


@dataclass(frozen=True)
class KnownValues:
    """Names the host data knows; a scenario naming anything else is rejected early."""

    chips: Tuple[str, ...]
    drivers: Tuple[str, ...]
    firmwares: Tuple[str, ...]
    toolkits: Tuple[str, ...]
    torch_npu: Tuple[str, ...]


def _known(h: Dict[str, Any], origin: str, known: KnownValues) -> None:
    """The names of the host data: not part of the schema, which is the same for every host data."""
    pairs = [("host.chip", h.get("chip"), known.chips), ("host.driver", h.get("driver"), known.drivers),
             ("host.firmware", h.get("firmware"), known.firmwares),
             ("host.cann.version", (h.get("cann") or {}).get("version"), known.toolkits),
             ("host.python.torch_npu", (h.get("python") or {}).get("torch_npu"), known.torch_npu)]
    for where, value, names in pairs:
        if value is not None and str(value) not in names:
            raise problem(origin, where, f"{str(value)!r} is not one of {', '.join(names)}", ScenarioError)


def _opt_str(value: Any) -> Optional[str]:
    return None if value is None else str(value)


def _host(h: Dict[str, Any], origin: str) -> HostSpec:
    c = h.get("cann")
    cann = None if c is None else CannSpec(
        version=str(c["version"]), layout=str(c["layout"]), arch=_opt_str(c.get("arch")),
        kernels=CANN.get(c, "kernels"), base=_norm_path(CANN.get(c, "base")))
    npus = h["npus"]
    return HostSpec(
        arch=str(h["arch"]),
        chip=str(h["chip"]),
        npus=npus,
        driver=_opt_str(h.get("driver")),
        firmware=_opt_str(h.get("firmware")),
        cann=cann,
        driver_for_all=HOST.get(h, "driver_for_all"),
        install_complete=HOST.get(h, "install_complete"),
        modules_loaded=HOST.get(h, "modules") == "loaded",
        devices=HOST.get(h, "devices"),
        npu_smi=_npu_smi(h.get("npu_smi"), npus, origin),
        user=_user(h.get("user"), origin),
        container=_container(h.get("container")),
        env=_env(h.get("env")),
        python=_python(h.get("python")),
    )


def _norm_path(text: str) -> str:
    return text.rstrip("/") or "/"


def _npu_smi(n: Any, npus: int, origin: str) -> NpuSmiSpec:
    if n is None:
        return NpuSmiSpec()
    procs = tuple(Process(npu=p["npu"], chip=PROCESS.get(p, "chip"), pid=p["pid"], name=str(PROCESS.get(p, "name")),
                          memory_mb=p["memory_mb"]) for p in n.get("processes") or ())
    health = []
    for key, value in (n.get("health") or {}).items():
        if str(key) not in [str(i) for i in range(npus)]:
            allowed = ", ".join(str(i) for i in range(npus))
            raise problem(origin, f"host.npu_smi.health.{key}", f"unknown field (allowed: {allowed})", ScenarioError)
        health.append((int(key), str(value)))
    return NpuSmiSpec(behaviour=NPU_SMI.get(n, "behaviour"), code=NPU_SMI.get(n, "code"),
                      location=_norm_path(NPU_SMI.get(n, "location")), processes=procs, health=tuple(sorted(health)))


def _user(u: Any, origin: str) -> UserSpec:
    if u is None:
        return UserSpec()
    name = str(u["name"])
    uid = u.get("uid", 0 if name == "root" else 1001)
    if (uid == 0) != (name == "root"):
        raise problem(origin, "host.user.uid", "uid 0 is root's and root's alone", ScenarioError)
    home = u.get("home")
    return UserSpec(name=name, uid=uid, groups=tuple(str(g) for g in u.get("groups") or ()),
                    home=_norm_path(home) if home is not None else None)


def _container(c: Any) -> Optional[ContainerSpec]:
    if c is None:
        return None
    mounts = c.get("mounts")
    return ContainerSpec(kind=CONTAINER.get(c, "kind"),
                         mounts=tuple(str(m) for m in mounts) if mounts is not None else CONTAINER_MOUNTS)


def _env(e: Any) -> EnvSpec:
    if e is None:
        return EnvSpec()
    return EnvSpec(
        set_env=ENV.get(e, "set_env"),
        visible_devices=_opt_str(e.get("visible_devices")),
        device_id=_opt_str(e.get("device_id")),
        extra=tuple((str(k), str(v)) for k, v in (e.get("extra") or {}).items()),
        drop=tuple(str(d) for d in e.get("drop") or ()),
    )


def _python(p: Any) -> PythonSpec:
    if p is None:
        return PythonSpec()
    return PythonSpec(torch=_opt_str(p.get("torch")), torch_npu=_opt_str(p.get("torch_npu")),
                      version=str(PYTHON.get(p, "version")))


def _workload(w: Any) -> Optional[WorkloadSpec]:
    if w is None:
        return None
    return WorkloadSpec(kind=str(w["kind"]), params=dict(w.get("params") or {}))


def _expect(e: Dict[str, Any], origin: str) -> Expectation:
    findings = []
    seen = set()
    for i, f in enumerate(e["check"]):
        fid = str(f["id"])
        if fid in seen:
            raise problem(origin, f"expect.check[{i}].id", f"{fid!r} is listed twice", ScenarioError)
        seen.add(fid)
        findings.append(ExpectedFinding(id=fid, category=str(f["category"]), status=FINDING.get(f, "status")))
    t, o, pm = e.get("triage"), e.get("oom"), e.get("profile")
    profile = None
    if pm is not None:
        layer, finding = _opt_str(pm.get("layer")), _opt_str(pm.get("finding"))
        if finding is not None and (layer is None or not finding.startswith(layer + ".")):
            raise problem(origin, "expect.profile.finding", f"{finding!r} must start with its layer ({layer}.)", ScenarioError)
        profile = ProfileExpectation(layer=layer, finding=finding, op=_opt_str(pm.get("op")),
                                     slowest_rank=pm.get("slowest_rank"), compare_first=_opt_str(pm.get("compare_first")))
    return Expectation(check=tuple(findings), triage_category=str(t["category"]) if t is not None else None,
                       first_failing_rank=t.get("first_failing_rank") if t is not None else None,
                       oom_verdict=str(o["verdict"]) if o is not None else None, profile=profile)
