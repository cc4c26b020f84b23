"""Build a simulated host from a scenario, and run a scenario's workload on it."""
from __future__ import annotations

import json
import shutil
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Dict, List, Union

from runtime_sim.scenarios import Scenario, ScenarioError, load

from .driver import write_driver
from .environment import env_file_text
from .plan import HostPlan, make_plan
from .python_stack import write_python
from .system import write_accounts, write_device_nodes, write_proc
from .toolkit import write_toolkit
from .tree import Tree, TreeError

ENV_FILE = "user.env"
CONSOLE_FILE = "console.log"
MARKER = ".runtime_sim.json"


class BuildError(Exception):
    """The host cannot be built where asked; the message is one line."""


@dataclass
class BuiltHost:
    root: Path  # read it as '/': ascend-doctor check --root ROOT --env-file ENV_FILE
    env_file: Path
    scenario: Scenario
    seconds: float
    plan: HostPlan

    @property
    def log_dir(self) -> Path:
        """Where the user's CANN logs go (~/ascend/log of the host user), on this machine."""
        return self.root / self.plan.user.home.lstrip("/") / "ascend" / "log"

    @property
    def console_file(self) -> Path:
        return self.root / CONSOLE_FILE

    @property
    def profile_dir(self) -> Path:
        """Where a profiled workload writes the profiler's output (~/work/profile of the host user)."""
        return self.root / self.plan.user.home.lstrip("/") / "work" / "profile"

    def check_argv(self) -> List[str]:
        """The doctor command line that judges this host."""
        return ["ascend-doctor", "check", "--root", str(self.root), "--env-file", str(self.env_file)]


@dataclass
class RunResult:
    host: BuiltHost
    workload: Any  # what runtime_sim.workloads.run returned
    console_file: Path
    log_dir: Path


def build(scenario: Union[str, Scenario], dest: Union[str, Path]) -> BuiltHost:
    """Write the scenario's host under ``dest`` (created; must be empty or a previous build)."""
    started = time.perf_counter()
    if isinstance(scenario, str):
        scenario = load(scenario)
    root = _prepare(Path(dest))
    plan = make_plan(scenario)
    tree = Tree(root)
    try:
        write_accounts(tree, plan)
        write_device_nodes(tree, plan)
        write_proc(tree, plan)
        write_driver(tree, plan)
        write_toolkit(tree, plan)
        write_python(tree, plan, ENV_FILE)
        env_file = tree.write("/" + ENV_FILE, env_file_text(plan))
        tree.write("/" + MARKER, json.dumps({"scenario": scenario.name, "seed": scenario.seed, "by": "runtime_sim"}) + "\n")
    except TreeError as exc:
        raise BuildError(f"{scenario.name}: {exc}") from None
    return BuiltHost(root=root, env_file=env_file, scenario=scenario, seconds=time.perf_counter() - started, plan=plan)


def _prepare(dest: Path) -> Path:
    if dest.exists() and not dest.is_dir():
        raise BuildError(f"{dest}: exists and is not a directory")
    if dest.is_dir() and any(dest.iterdir()):
        if not (dest / MARKER).is_file():
            raise BuildError(f"{dest}: not empty and not a previous runtime_sim build; give an empty or new directory")
        for child in dest.iterdir():  # a previous build: replace it, touching nothing else
            if child.is_dir() and not child.is_symlink():
                shutil.rmtree(child)
            else:
                child.unlink()
    try:
        dest.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise BuildError(f"{dest}: cannot create: {exc.strerror or exc}") from None
    return dest.resolve()


def run(scenario: Union[str, Scenario], dest: Union[str, Path]) -> RunResult:
    """Build the host, then run the scenario's workload on it (logs in ~/ascend/log, console capture)."""
    host = build(scenario, dest)
    spec = host.scenario.workload
    if spec is None:
        raise ScenarioError(f"{host.scenario.name}: has no workload (a host-only scenario); use build")
    from runtime_sim import workloads  # the simulated runtime: only scenarios with a workload need it
    host.log_dir.mkdir(parents=True, exist_ok=True)
    accepted = workloads.describe(spec.kind)
    params = host_facts(host.plan, accepted)
    if "profile_dir" in accepted:
        params["profile_dir"] = str(host.profile_dir)
    params.update(spec.params)
    try:
        result = workloads.run(spec.kind, params, host.log_dir, host.scenario.seed)
    except ValueError as exc:  # WorkloadError: one line naming the bad field
        raise BuildError(f"{host.scenario.name}: {exc}") from None
    console = _console_text(result)
    host.console_file.write_text(console, encoding="utf-8")
    return RunResult(host=host, workload=result, console_file=host.console_file, log_dir=host.log_dir)


def host_facts(plan: HostPlan, accepted: Dict[str, Any]) -> Dict[str, Any]:
    """The workload parameters that describe the host it runs on, so logs and console match it."""
    spec = plan.spec
    facts: Dict[str, Any] = {
        "devices": plan.logical_count,
        "soc": plan.chip.soc,
        "pname": "python3",
        "script": f"{plan.user.home}/work/train.py",
    }
    if plan.chip.hbm_mb:
        facts["hbm_gib"] = plan.chip.hbm_mb // 1024
    if spec.cann is not None:
        facts["cann"] = spec.cann.version
    if spec.python.torch_npu:
        facts["torch_npu"] = spec.python.torch_npu
    if spec.python.torch:
        facts["torch"] = spec.python.torch
    return {k: v for k, v in facts.items() if k in accepted}


def _console_text(result: Any) -> str:
    for attr in ("console", "console_text", "stdout"):
        value = getattr(result, attr, None)
        if isinstance(value, str):
            return value
    if isinstance(result, dict):
        for key in ("console", "console_text"):
            if isinstance(result.get(key), str):
                return result[key]
    return ""


def describe(host: BuiltHost) -> str:
    """A few lines saying what was built and how to judge it."""
    plan = host.plan
    spec = host.scenario.host
    parts = [f"{spec.npus} x {spec.chip} ({spec.arch})"]
    parts.append(f"driver {spec.driver}" if spec.driver else "no driver")
    parts.append(f"CANN {spec.cann.version} ({spec.cann.layout} layout)" if spec.cann else "no CANN")
    if spec.python.torch_npu:
        parts.append(f"torch {spec.python.torch} + torch_npu {spec.python.torch_npu}")
    if spec.container:
        parts.append(f"in a {spec.container.kind} container")
    return "\n".join(
        [
            f"built {host.scenario.name} in {host.seconds * 1000:.0f} ms: " + ", ".join(parts),
            f"  root      {host.root}",
            f"  env file  {host.env_file}  (user {plan.user.name})",
            "  judge it  " + " ".join(host.check_argv()),
        ]
    )
