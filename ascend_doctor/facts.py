"""Facts about the judged machine, gathered once and shared by every check and verb.

Each fact is computed on first use and cached; the slow ones (npu-smi, the target
Python) can be started early in background threads by ``prefetch``. Facts never
judge: they read, parse and record what went wrong while reading.
"""
from __future__ import annotations

import re
import threading
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, Generic, List, Optional, Tuple, TypeVar

from .host import CommandResult, Host, ReadError
from .inputs import InputError, load_json
from .inputs.openable import named_input
from .parsers.npu_smi import NpuSmiError, NpuSmiInfo, parse_npu_smi_error, parse_npu_smi_info
from .parsers.version_info import (
    DriverVersionInfo,
    FirmwareVersionInfo,
    ParseError,
    ToolkitInstallInfo,
    parse_driver_version_info,
    parse_firmware_version_info,
    parse_install_info,
    parse_toolkit_install_info,
)
from .probes import probe_source
from .probes.static_stack import read_static_stack

T = TypeVar("T")


def open_input_file(name: str, option: str):
    """A file the user named (``--npu-smi``), opened by the one safe rule; a one-line
    InputError (exit 2) otherwise."""
    return named_input(name, option)


DEFAULT_INSTALL_ROOT = "/usr/local/Ascend"
INSTALL_INFO = "/etc/ascend_install.info"
NPU_SMI_TIMEOUT = 8.0
PYTHON_TIMEOUT = 15.0
RUNTIME_TIMEOUT = 90.0


@dataclass
class FileFact(Generic[T]):
    """A parsed file: its value, or why there is none."""

    path: str
    value: Optional[T] = None
    missing: bool = False
    error: Optional[str] = None

    @property
    def ok(self) -> bool:
        return self.value is not None


@dataclass
class NpuSmiFact:
    path: Optional[str]  # where npu-smi was found, None when absent
    result: Optional[CommandResult]
    info: Optional[NpuSmiInfo] = None
    error: Optional[NpuSmiError] = None
    parse_error: Optional[str] = None
    untrusted: Optional[str] = None  # why the tree's npu-smi was not run (no --trust-root)
    saved: Optional[str] = None  # the saved `npu-smi info` output read instead (--npu-smi FILE)


@dataclass
class ToolkitInstall:
    home: str  # the toolkit home as a user would write it (…/ascend-toolkit/latest, …/cann-8.5.0)
    layout: str  # ascend-toolkit | cann
    info_path: Optional[str]
    info: Optional[ToolkitInstallInfo]
    error: Optional[str] = None
    info_arches: Tuple[str, ...] = ()  # the <arch>-linux dirs that hold an install info


@dataclass
class ToolkitFact:
    installs: List[ToolkitInstall] = field(default_factory=list)
    searched: List[str] = field(default_factory=list)
    from_env: Optional[str] = None  # ASCEND_TOOLKIT_HOME / ASCEND_HOME_PATH of the judged env

    @property
    def active(self) -> Optional[ToolkitInstall]:
        """The install the judged environment uses: the one its env points at, else the first found."""
        if self.from_env:
            for inst in self.installs:
                if inst.home == self.from_env:
                    return inst
        return self.installs[0] if self.installs else None


@dataclass
class PythonFact:
    interpreter: Optional[str]  # as given / found
    result: Optional[CommandResult]
    python: Optional[str] = None
    packages: Dict[str, Dict[str, Any]] = field(default_factory=dict)
    error: Optional[str] = None
    static: bool = False  # read from the tree's dist-info metadata; the interpreter did not run
    searched: List[str] = field(default_factory=list)  # site directories read (static)

    def version_of(self, package: str) -> Optional[str]:
        entry = self.packages.get(package)
        return entry.get("version") if entry else None


class Facts:
    """Lazily gathered, cached facts about one Host."""

    def __init__(self, host: Host, python: Optional[str] = None, command_timeout: float = NPU_SMI_TIMEOUT,
                 npu_smi_file: Optional[str] = None) -> None:
        self.host = host
        self.python = python
        self.npu_smi_file = npu_smi_file  # a saved `npu-smi info` output (a path here, not under the root)
        self.command_timeout = command_timeout  # for npu-smi; the Python probes get their own
        self._cache: Dict[str, Any] = {}
        self._locks: Dict[str, threading.Lock] = {}
        self._guard = threading.Lock()

    def _cached(self, key: str, compute: Callable[[], T]) -> T:
        with self._guard:
            lock = self._locks.setdefault(key, threading.Lock())
        with lock:
            if key not in self._cache:
                self._cache[key] = compute()
            return self._cache[key]

    def known(self, key: str) -> bool:
        """Whether the fact ``key`` (driver, npu_smi, python_stack, ...) has been gathered."""
        return key in self._cache

    def prefetch(self, keys: List[str]) -> None:
        """Start slow facts in background threads so checks find them ready."""
        for key in keys:
            fn = getattr(self, key)
            threading.Thread(target=fn, name=f"fact-{key}", daemon=True).start()

    # ------------------------------------------------------------ files
    def install_info(self) -> FileFact[Dict[str, str]]:
        return self._cached("install_info", lambda: self._read(INSTALL_INFO, parse_install_info))

    def install_root(self) -> str:
        """Where the driver was installed (Driver_Install_Path_Param), default /usr/local/Ascend."""
        info = self.install_info().value or {}
        root = info.get("Driver_Install_Path_Param", "").strip()
        return root.rstrip("/") if root.startswith("/") else DEFAULT_INSTALL_ROOT

    def driver(self) -> FileFact[DriverVersionInfo]:
        return self._cached(
            "driver", lambda: self._read(f"{self.install_root()}/driver/version.info", parse_driver_version_info)
        )

    def firmware(self) -> FileFact[FirmwareVersionInfo]:
        return self._cached(
            "firmware", lambda: self._read(f"{self.install_root()}/firmware/version.info", parse_firmware_version_info)
        )

    def _read(self, path: str, parse: Callable[[str], T]) -> FileFact[T]:
        if not self.host.exists(path):
            return FileFact(path, missing=True)
        try:
            return FileFact(path, value=parse(self.host.read_text(path)))
        except (ReadError, ParseError) as exc:
            return FileFact(path, error=str(exc))

    # ---------------------------------------------------------- system
    def container(self) -> Optional[str]:
        return self._cached("container", self.host.container)

    def arch(self) -> Optional[str]:
        return self._cached("arch", self.host.arch)

    def modules(self):
        return self._cached("modules", self.host.modules)

    # --------------------------------------------------------- npu-smi
    def npu_smi(self) -> NpuSmiFact:
        return self._cached("npu_smi", self._run_npu_smi)

    def _run_npu_smi(self) -> NpuSmiFact:
        if self.npu_smi_file:
            return self._saved_npu_smi(self.npu_smi_file)
        path = self.host.which("npu-smi")
        if path is None:
            return NpuSmiFact(path=None, result=None)
        result = self.host.run([path, "info"], timeout=self.command_timeout)
        fact = NpuSmiFact(path=path, result=result)
        if result.untrusted:
            fact.untrusted = (f"{path} belongs to the tree under --root and is not run here; give --trust-root "
                              "to run it, or --npu-smi FILE with a saved `npu-smi info` output")
            return fact
        if result.timed_out or result.error:
            return fact
        text = result.stdout + "\n" + result.stderr
        try:
            fact.info = parse_npu_smi_info(result.stdout)
        except ValueError as exc:
            fact.parse_error = str(exc)
        if fact.info is None or result.returncode != 0:
            fact.error = parse_npu_smi_error(text)
        return fact

    def _saved_npu_smi(self, name: str) -> NpuSmiFact:
        """``npu-smi info`` output saved to a file (``--npu-smi FILE``), parsed like a live run."""
        with open_input_file(name, "--npu-smi") as fh:
            raw = fh.read(4 << 20)
        text = raw.decode("utf-8", errors="replace")
        result = CommandResult(["npu-smi", "info"], 0, text, "", 0.0)
        fact = NpuSmiFact(path=name, result=result, saved=name)
        try:
            fact.info = parse_npu_smi_info(text)
        except ValueError as exc:
            fact.parse_error = str(exc)
        if fact.info is None:
            fact.error = parse_npu_smi_error(text)
        return fact

    # --------------------------------------------------------- toolkit
    def toolkit(self) -> ToolkitFact:
        return self._cached("toolkit", self._find_toolkit)

    def _find_toolkit(self) -> ToolkitFact:
        env = self.host.env
        fact = ToolkitFact()
        env_home = env.get("ASCEND_TOOLKIT_HOME") or env.get("ASCEND_HOME_PATH")
        if env_home:
            fact.from_env = env_home.rstrip("/")
        bases = [self.install_root()]
        home = self.host.home()
        if home:
            bases.append(home.rstrip("/") + "/Ascend")
        candidates: List[str] = []
        if fact.from_env:
            candidates.append(fact.from_env)
        for base in bases:
            candidates.append(f"{base}/ascend-toolkit/latest")
            candidates.append(f"{base}/cann")
            versioned = [p for p in self.host.glob(base, "cann-*") if self.host.is_dir(p)]
            candidates.extend(sorted(versioned, reverse=True))
        seen_real = set()
        for cand in candidates:
            if cand in fact.searched:
                continue
            fact.searched.append(cand)
            if not self.host.is_dir(cand):
                continue
            real = self.host.realpath(cand)
            if real in seen_real:
                continue
            seen_real.add(real)
            install = self._read_toolkit(cand)
            if install is not None:
                fact.installs.append(install)
        return fact

    def _read_toolkit(self, home: str) -> Optional[ToolkitInstall]:
        real = self.host.realpath(home)
        layout = "cann" if re.search(r"/cann(-[^/]+)?$", real) or "/cann-" in real else "ascend-toolkit"
        arch_dirs = [p for p in self.host.glob(home, "*-linux") if self.host.is_file(p + "/ascend_toolkit_install.info")]
        arches = tuple(sorted(p.rsplit("/", 1)[1][: -len("-linux")] for p in arch_dirs))
        if not arch_dirs:
            if self.host.is_dir(home + "/lib64") or self.host.exists(home + "/set_env.sh"):
                return ToolkitInstall(home, layout, None, None, error="no <arch>-linux/ascend_toolkit_install.info", info_arches=())
            return None
        machine = self.arch()
        chosen = next((p for p in arch_dirs if machine and p.endswith(f"/{machine}-linux")), arch_dirs[0])
        info_path = chosen + "/ascend_toolkit_install.info"
        try:
            info = parse_toolkit_install_info(self.host.read_text(info_path))
            return ToolkitInstall(home, layout, info_path, info, info_arches=arches)
        except (ReadError, ParseError) as exc:
            return ToolkitInstall(home, layout, info_path, None, error=str(exc), info_arches=arches)

    # ---------------------------------------------------------- python
    def python_stack(self) -> PythonFact:
        return self._cached("python_stack", self._probe_python)

    def python_interpreter(self) -> Optional[str]:
        if self.python:
            return self.python
        return self.host.which("python3") or self.host.which("python")

    def _probe_python(self) -> PythonFact:
        interp = self.python_interpreter()
        if not self.host.trusted:
            return self._static_python(interp)
        if interp is None:
            return PythonFact(None, None, error="no python3 or python on the judged PATH")
        result = self._run_python(interp, probe_source("stack"), PYTHON_TIMEOUT)
        fact = PythonFact(interp, result)
        payload = _last_json(result.stdout) if result.ok else None
        if payload is None:
            fact.error = result.error or _first_line(result.output) or "the interpreter printed nothing"
            if result.timed_out:
                fact.error = f"no answer within {PYTHON_TIMEOUT:.0f} s"
            return fact
        fact.python = payload.get("python")
        fact.packages = payload.get("packages") or {}
        return fact

    def _static_python(self, interp: Optional[str]) -> PythonFact:
        """The stack of an untrusted tree, from its dist-info metadata (nothing runs)."""
        stack = read_static_stack(self.host, interp)
        fact = PythonFact(interp, None, python=stack.python, packages=dict(stack.packages), static=True,
                          searched=stack.searched)
        if not stack.searched and interp is None:
            fact.error = "no python3 or python on the judged PATH and no site-packages in the tree"
        return fact

    def runtime_probe(self) -> Tuple[Optional[Dict[str, Any]], Optional[CommandResult]]:
        """Deep tier: import torch_npu and touch NPU 0 in the target interpreter."""

        def compute():
            import shutil
            import tempfile

            interp = self.python_interpreter()
            if interp is None or not self.host.trusted:
                return None, None
            # Importing torch_npu and touching the device makes CANN write plog and trace
            # files (and op caches in the working directory). They go to a scratch directory
            # that is removed afterwards, so the probe leaves nothing in the user's
            # ~/ascend/log for this or a later run to report.
            scratch = tempfile.mkdtemp(prefix="ascend-doctor-probe-")
            try:
                env = self.host.command_env()
                env.update(ASCEND_PROCESS_LOG_PATH=scratch + "/log", ASCEND_WORK_PATH=scratch)
                result = self._run_python(interp, probe_source("runtime"), RUNTIME_TIMEOUT, env=env, cwd=scratch)
            finally:
                shutil.rmtree(scratch, ignore_errors=True)
            return _last_json(result.stdout), result

        return self._cached("runtime_probe", compute)

    def _run_python(self, interp: str, source: str, timeout: float, env=None, cwd: Optional[str] = None) -> CommandResult:
        """The target interpreter runs ``source`` without writing into the judged machine:
        ``-B`` and PYTHONDONTWRITEBYTECODE (no ``__pycache__`` in its site-packages), caches
        and the working directory in a private temporary directory removed afterwards."""
        import shutil
        import tempfile

        scratch = tempfile.mkdtemp(prefix="ascend-doctor-py-")
        try:
            env = dict(env) if env is not None else self.host.command_env()
            env.update(PYTHONDONTWRITEBYTECODE="1", PYTHONPYCACHEPREFIX=scratch + "/pycache",
                       XDG_CACHE_HOME=scratch + "/cache", MPLCONFIGDIR=scratch + "/mpl")
            return self.host.run([interp, "-B", "-c", source], timeout=timeout, env=env, cwd=cwd or scratch)
        finally:
            shutil.rmtree(scratch, ignore_errors=True)


def _last_json(text: str) -> Optional[Dict[str, Any]]:
    for line in reversed(text.strip().splitlines()):
        line = line.strip()
        if line.startswith("{"):
            try:
                value = load_json(line, what="probe output")  # a child's output: depth and numbers bounded
            except InputError:
                return None
            return value if isinstance(value, dict) else None
    return None


def _first_line(text: str) -> str:
    for line in text.splitlines():
        if line.strip():
            return line.strip()[:300]
    return ""

