"""The evidence a flow reads, gathered lazily and once: the host's checks, the logs' triage
and out-of-memory analysis, and the profile (and its baseline).

Each source is the public entry point of its verb, read through the verb's JSON contract
(``triage``: category, title, root_cause, rank, fix of each incident; ``oom``: verdict,
category, title, fix, counts; ``profile``: devices, slowest_rank, findings), so the
internals of those verbs can change without touching the flows.
"""
from __future__ import annotations

import importlib
import json
from typing import Any, Callable, Dict, List, Optional, Tuple

from ..checks.base import Options
from ..checks.runner import run_checks
from ..host import Host
from ..memory.message import scan_paths
from ..memory.verdict import Inputs, analyze
from ..model import Finding
from ..triage.engine import triage_paths
from ..triage.render import render_json


class Evidence:
    def __init__(self, host: Callable[[], Host], logs: List[str], profile: List[str], baseline: List[str],
                 timeout: float = 8.0) -> None:
        self._host_factory = host
        self.logs = list(logs)
        self.profile_paths = list(profile)
        self.baseline_paths = list(baseline)
        self.timeout = timeout
        self._cache: Dict[str, Any] = {}

    def _once(self, key: str, compute: Callable[[], Any]) -> Any:
        if key not in self._cache:
            self._cache[key] = compute()
        return self._cache[key]

    # ---------------------------------------------------------------- host checks
    def host(self) -> Host:
        return self._once("host", self._host_factory)

    def check_run(self):
        """Every quick check, run once as ``ascend-doctor check`` runs them (dependencies included)."""
        return self._once("checks", lambda: run_checks(self.host(), Options(command_timeout=self.timeout)))

    def findings(self) -> Dict[str, Finding]:
        return {f.id: f for f in self.check_run().findings}

    def torch_npu_version(self) -> Optional[str]:
        facts = self.check_run().facts
        try:
            return facts.python_stack().version_of("torch_npu") if facts is not None else None
        except Exception:  # a probe that cannot run leaves the version unknown
            return None

    # ---------------------------------------------------------------- logs
    def triage(self) -> Optional[Dict[str, Any]]:
        """The triage report as its JSON contract, or None without logs."""
        if not self.logs:
            return None

        def compute() -> Dict[str, Any]:
            return json.loads(render_json(triage_paths(self.logs)))

        return self._once("triage", compute)

    def oom(self) -> Optional[Tuple[Any, Optional[Dict[str, Any]]]]:
        """(log facts, the oom verb's JSON or None when the logs hold no out-of-memory); None without logs."""
        if not self.logs:
            return None

        def compute():
            facts = scan_paths(self.logs)
            if not facts.ooms and not facts.driver_ooms:
                return facts, None
            return facts, json.loads(json.dumps(analyze(Inputs(log=facts)).to_json()))

        return self._once("oom", compute)

    # ---------------------------------------------------------------- profile
    @staticmethod
    def profile_analyzer() -> Optional[Callable[[List[str]], Dict[str, Any]]]:
        """``ascend_doctor.profile.analyze`` when that verb is installed, else None."""
        try:
            module = importlib.import_module("ascend_doctor.profile")
        except ModuleNotFoundError as exc:
            if exc.name in ("ascend_doctor.profile", "ascend_doctor"):
                return None
            raise
        fn = getattr(module, "analyze", None)
        return fn if callable(fn) else None

    def _analyze(self, key: str, paths: List[str]) -> Tuple[str, Any]:
        """("ok", doc) | ("absent", reason) | ("error", message) | ("none", reason)."""
        if not paths:
            return "none", "no profile given"

        def compute() -> Tuple[str, Any]:
            analyze = self.profile_analyzer()
            if analyze is None:
                return "absent", "the profile reader (ascend-doctor profile) is not installed in this build"
            try:
                return "ok", analyze(list(paths))
            except (OSError, ValueError) as exc:
                return "error", str(exc).splitlines()[0] if str(exc) else type(exc).__name__

        return self._once(key, compute)

    def profile(self) -> Tuple[str, Any]:
        return self._analyze("profile", self.profile_paths)

    def baseline(self) -> Tuple[str, Any]:
        return self._analyze("baseline", self.baseline_paths)
