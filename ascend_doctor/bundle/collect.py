"""Gather a bundle: run the checks and the compat verdict on a Host, record the files and
command outputs they read, take the newest logs, triage them, and redact everything.

Everything on the inspected machine is read through the Host (read-only); what is written
is the archive (and a scratch copy of the masked logs in a temporary directory, removed at
the end, which is what the bundle's own triage reads, so its report is the one a reader
of the bundle gets).
"""
from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
import threading
import time
from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import Any, Callable, Dict, List, Optional, Tuple

from ..inputs import os_reason
from .. import __version__
from ..checks.base import Options
from ..checks.logs import log_root, recent_log_files
from ..checks.runner import run_checks
from ..checks.stack import host_info, known_stack
from ..host import DEFAULT_READ_LIMIT, CommandResult, Host, ReadError
from ..inputs.bundle_archive import KIND, TOP_PREFIX, write_archive
from ..inputs.openable import refusal
from ..report import check_report
from ..triage.engine import triage_paths
from ..triage.knowledge import Knowledge
from ..triage.render import to_json
from ..triage.sources import InputError
from . import redact as R
from .summary import render_summary

# bounds: a bundle reads whole machines, so every kind of content has a ceiling
LOG_PROCESSES = 64  # the newest processes' plog and device logs
LOG_FILE_BYTES = 8 << 20  # per log file: its last 8 MiB (a plog rolls over at 20 MB)
LOG_TOTAL_BYTES = 64 << 20
LOG_MIN_TAIL = 4 << 10  # less budget than this left: the remaining files are listed, not cut to a sliver
RAW_FILE_BYTES = 1 << 20  # a version or install file larger than this is cut
RAW_TOTAL_BYTES = 16 << 20
EXTRA_FILE_BYTES = 16 << 20  # --logs: per file
# files the checks read that name every account on the machine: used to learn which names
# to mask, never copied
NOT_COPIED = {"/etc/passwd": "the machine's account list", "/etc/group": "the machine's group list",
              "/etc/shadow": "password hashes", "/etc/gshadow": "password hashes"}


@dataclass
class Recorded:
    files: Dict[str, bytes] = field(default_factory=dict)  # host path -> bytes read
    commands: List[CommandResult] = field(default_factory=list)


class Recorder:
    """Wraps a Host's reads and commands so that the bundle holds exactly what the checks saw."""

    def __init__(self, host: Host) -> None:
        self.host = host
        self.data = Recorded()
        self.paused = False
        self._lock = threading.Lock()
        read_bytes, run = host.read_bytes, host.run

        def recording_read(path: str, limit: int = DEFAULT_READ_LIMIT, **kw: Any) -> bytes:
            data = read_bytes(path, limit, **kw)
            if not self.paused:
                with self._lock:
                    prior = self.data.files.get(path)
                    if prior is None or len(data) > len(prior):
                        self.data.files[path] = data[:RAW_FILE_BYTES]
            return data

        def recording_run(argv, timeout, env=None, cwd=None):  # type: ignore[no-untyped-def]
            result = run(argv, timeout, env=env, cwd=cwd)
            if not self.paused:
                with self._lock:
                    self.data.commands.append(result)
            return result

        host.read_bytes = recording_read  # type: ignore[method-assign]
        host.run = recording_run  # type: ignore[method-assign]


@dataclass
class BundleResult:
    path: str
    size: int
    manifest: Dict[str, Any]
    summary_md: str
    check: Dict[str, Any]
    compat: Dict[str, Any]
    triage: Optional[Dict[str, Any]]


def build_bundle(
    host: Host,
    output: str,
    label: str,
    redact: bool = True,
    sim: Optional[str] = None,
    extra_logs: Optional[List[str]] = None,
    python: Optional[str] = None,
    command_timeout: float = 8.0,
    progress: Optional[Callable[[str], None]] = None,
) -> BundleResult:
    say = progress or (lambda msg: None)
    created = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    top = f"{TOP_PREFIX}-{time.strftime('%Y%m%d-%H%M%S', time.gmtime())}"
    rec = Recorder(host)

    say("running the checks")
    run = run_checks(host, Options(python=python, command_timeout=command_timeout))
    info = host_info(host, run.facts)
    if sim:
        info["sim"] = sim
    if not getattr(host, "trusted", True):
        info["trusted"] = False
    check_doc = check_report.to_json(run.findings, info, run.duration_s)

    say("judging the version stack")
    from compat_matrix import evaluate

    compat_doc = evaluate(known_stack(run.facts)).to_json()
    compat_doc["host"] = label

    red = _redactor(host, info, redact)
    m = _Members(red)
    say("collecting the newest logs")
    rec.paused = True
    root = _collect_logs(host, m, extra_logs)
    rec.paused = False
    _collect_raw(host, rec, m, root)

    # --------------------------------------------------------------- reports
    check_text = red.text(json.dumps(check_doc, indent=2, ensure_ascii=False), "check.json")
    compat_text = red.text(json.dumps(compat_doc, indent=2, ensure_ascii=False), "compat.json")
    check_masked = json.loads(check_text)
    compat_masked = json.loads(compat_text)
    m.add("check.json", (check_text + "\n").encode(), "report", note="ascend-doctor check --json")
    m.add("compat.json", (compat_text + "\n").encode(), "report", note="ascend-doctor compat --json (the host's stack)")

    say("triaging the logs")
    triage_doc = _triage_members(top, [(n, d) for n, d, e in m.members if e["kind"] == "log"])
    if triage_doc is not None:
        m.add("triage.json", (json.dumps(triage_doc, indent=2, ensure_ascii=False) + "\n").encode(), "report",
              note="ascend-doctor triage --json of the bundled logs")
    version_doc = {"schema": 1, "tool": {"name": "ascend-doctor", "version": __version__},
                   "python": _python_version(), "created": created}
    m.add("version.json", (json.dumps(version_doc, indent=2) + "\n").encode(), "meta")

    manifest, summary_md = _manifest(host, m, label, sim, redact, created, check_masked, compat_masked, triage_doc)
    say("writing the archive")
    size = write_archive(output, top, manifest, [(n, d) for n, d, _ in m.members])
    return BundleResult(output, size, manifest, summary_md, check_masked, compat_masked, triage_doc)


class _Members:
    """The files of the bundle so far (name, bytes, manifest entry) and what was left out, and why."""

    def __init__(self, red: "R.Redactor") -> None:
        self.red = red
        self.members: List[Tuple[str, bytes, Dict[str, Any]]] = []
        self.left_out: List[Dict[str, str]] = []

    def add(self, name: str, data: bytes, kind: str, source: Optional[str] = None, **extra: Any) -> None:
        entry: Dict[str, Any] = {"name": name, "kind": kind}
        if source:
            entry["source"] = self.red.text(source, "manifest.json")
        entry.update(extra)
        self.members.append((name, data, entry))

    def text(self, name: str, text: str, kind: str, source: Optional[str] = None, **extra: Any) -> None:
        self.add(name, self.red.text(text, name).encode("utf-8"), kind, source, **extra)

    def leave_out(self, path: str, reason: str, masked: bool = True) -> None:
        self.left_out.append({"path": self.red.text(path, "manifest.json") if masked else path, "reason": reason})


def _redactor(host: Host, info: Dict[str, Any], redact: bool) -> "R.Redactor":
    """What to mask: the environment's secrets, the user, the accounts, host names and addresses."""
    red = R.Redactor(enabled=redact)
    R.register_env(host.env, red)
    user = host.user
    red.add_user(user.name, user.home)
    for path, register in (("/etc/passwd", R.register_passwd), ("/etc/hosts", R.register_hosts_file)):
        try:
            register(host.read_text(path, 1 << 20), red)
        except ReadError:
            pass
    try:
        red.add_hostname(host.read_text("/etc/hostname", 4096).strip())
    except ReadError:
        pass
    if info.get("hostname"):
        red.add_hostname(str(info["hostname"]))
    return red


def _collect_logs(host: Host, m: _Members, extra_logs: Optional[List[str]]) -> Optional[str]:
    """The newest processes' logs (their tails, within the budget), and the files given with --logs; the log root."""
    red = m.red
    ctx = SimpleNamespace(host=host)
    root = log_root(ctx)  # type: ignore[arg-type]
    budget = LOG_TOTAL_BYTES
    if root and host.is_dir(root):
        for path, size in recent_log_files(ctx, root, processes=LOG_PROCESSES):  # type: ignore[arg-type]
            if budget < LOG_MIN_TAIL:
                m.leave_out(path, f"log budget of {LOG_TOTAL_BYTES >> 20} MiB used up")
                continue
            try:
                data = host.read_bytes(path, limit=max(size, 1) + (1 << 20))
            except ReadError as exc:
                m.leave_out(path, str(exc).split(": ", 1)[-1])
                continue
            data, cut = _tail(data, min(LOG_FILE_BYTES, budget))
            budget -= len(data)
            name = "logs/" + red.text(path.lstrip("/"), "manifest.json")
            extra = {"truncated": {"kept_bytes": len(data), "of_bytes": cut}} if cut else {}
            masked = red.text(data.decode("utf-8", "surrogateescape"), name).encode("utf-8", "surrogateescape")
            m.add(name, masked, "log", path, **extra)
    elif root:
        m.leave_out(root, "no CANN log directory there")
    for given in extra_logs or []:
        _add_extra(given, red, m.add, m.left_out)
    return root


def _collect_raw(host: Host, rec: "Recorder", m: _Members, root: Optional[str]) -> None:
    """The files and command outputs the checks read (masked, within the budget), and the environment."""
    red = m.red
    raw_budget = RAW_TOTAL_BYTES
    for path in sorted(rec.data.files):
        data = rec.data.files[path]
        if root and path.startswith(root.rstrip("/") + "/"):
            continue  # a log file the logs check read: it is under logs/
        if path in NOT_COPIED:
            m.leave_out(path, f"read, not copied: {NOT_COPIED[path]}", masked=False)
            continue
        if _is_binary(data):
            m.leave_out(path, "binary file (read only for its header)")
            continue
        if len(data) > raw_budget:
            m.leave_out(path, "raw-file budget used up")
            continue
        raw_budget -= len(data)
        m.text("raw/files/" + red.text(path.lstrip("/"), "manifest.json"), data.decode("utf-8", "replace"), "raw", path)
    for i, res in enumerate(rec.data.commands, 1):
        argv = [os.path.basename(res.argv[0])] + [_short_arg(a) for a in res.argv[1:]] if res.argv else ["?"]
        head = [f"$ {' '.join(argv)}",
                f"# exit: {'timed out' if res.timed_out else ('not found' if res.not_found else (res.error or res.returncode))}"
                f" · {res.duration_s:.2f} s"]
        body = "\n".join(head) + "\n" + res.stdout + ("\n# stderr:\n" + res.stderr if res.stderr.strip() else "")
        slug = "_".join(a.replace("/", "_") for a in argv if not a.startswith("<"))[:60].strip("_") or "command"
        m.text(f"raw/commands/{i:02d}-{slug}.txt", body, "command", " ".join(argv))
    env_lines = R.mask_env(host.env, red, "env.txt")
    m.add("env.txt", ("\n".join(env_lines) + "\n").encode("utf-8"), "env",
          note="the judged environment; secret-looking names keep only <set>")


def _manifest(host: Host, m: _Members, label: str, sim: Optional[str], redact: bool, created: str,
              check_masked: Dict[str, Any], compat_masked: Dict[str, Any],
              triage_doc: Optional[Dict[str, Any]]) -> Tuple[Dict[str, Any], str]:
    """The manifest (what is in the bundle, what was masked and left out) and SUMMARY.md, which it lists too."""
    red = m.red
    secret_env = R.secret_names(host.env) if redact else []
    manifest: Dict[str, Any] = {
        "schema": 1,
        "kind": KIND,
        "tool": {"name": "ascend-doctor", "version": __version__},
        "created": created,
        "host": {"label": red.text(label, "manifest.json"), "sim": sim, "user": check_masked["host"].get("user"),
                 "arch": check_masked["host"].get("arch"), "stack": check_masked["host"].get("stack", {})},
        "redacted": redact,
        "verdicts": {"check": check_masked["summary"]["verdict"], "compat": compat_masked.get("verdict"),
                     "triage": _triage_verdict(triage_doc)},
        "limits": {"log_processes": LOG_PROCESSES, "log_file_bytes": LOG_FILE_BYTES, "log_total_bytes": LOG_TOTAL_BYTES,
                   "raw_file_bytes": RAW_FILE_BYTES},
    }
    summary_md = render_summary(manifest, check_masked, compat_masked, triage_doc, red.kinds(), secret_env,
                                [e for _, _, e in m.members], m.left_out)
    m.add("SUMMARY.md", summary_md.encode("utf-8"), "summary", note="paste into an issue")
    manifest["files"] = [dict(e, bytes=len(d), sha256=hashlib.sha256(d).hexdigest()) for _, d, e in m.members]
    manifest["left_out"] = m.left_out
    manifest["redaction"] = {
        "enabled": redact,
        "secret_env": secret_env,
        "masked_kinds": red.kinds(),
        "masked": red.manifest(),
        "kept": "loopback and unspecified addresses, netmasks, versions, device and chip indexes, root and the Ascend system accounts",
    }
    return manifest, summary_md


def _short_arg(arg: str) -> str:
    """An argument as the command file names it: a program text passed with -c is summarised."""
    if "\n" in arg or len(arg) > 120:
        return f"<{len(arg)} characters of program text>"
    return arg


def _tail(data: bytes, keep: int) -> Tuple[bytes, int]:
    """The last ``keep`` bytes from a line start; (data, 0) when nothing is cut, else (tail, original size)."""
    if len(data) <= keep:
        return data, 0
    tail = data[-keep:]
    nl = tail.find(b"\n")
    if 0 <= nl < len(tail) - 1:
        tail = tail[nl + 1:]
    return tail, len(data)


def _is_binary(data: bytes) -> bool:
    return b"\x00" in data[:4096]


def _add_extra(given: str, red: "R.Redactor", add: Callable[..., None], left_out: List[Dict[str, str]]) -> None:
    """A console capture or log file named with --logs (on this machine, not under --root)."""
    paths: List[str] = []
    if os.path.isdir(given):
        for dirpath, dirnames, filenames in os.walk(given):
            dirnames.sort()
            paths.extend(os.path.join(dirpath, f) for f in sorted(filenames))
    else:
        paths.append(given)
    base = os.path.dirname(os.path.abspath(given)) if not os.path.isdir(given) else os.path.abspath(given)
    for path in paths[:256]:
        try:
            st = os.stat(path)
        except OSError as exc:
            left_out.append({"path": red.text(path, "manifest.json"), "reason": os_reason(exc)})
            continue
        reason = refusal(path, st)
        if reason is not None:
            left_out.append({"path": red.text(path, "manifest.json"), "reason": reason})
            continue
        try:
            with open(path, "rb") as fh:
                if st.st_size > EXTRA_FILE_BYTES:
                    fh.seek(st.st_size - EXTRA_FILE_BYTES)
                data = fh.read(EXTRA_FILE_BYTES)
        except OSError as exc:
            left_out.append({"path": red.text(path, "manifest.json"), "reason": os_reason(exc)})
            continue
        if _is_binary(data):
            left_out.append({"path": red.text(path, "manifest.json"), "reason": "binary file"})
            continue
        rel = os.path.relpath(os.path.abspath(path), base)
        name = "logs/given/" + red.text(rel, "manifest.json")
        masked = red.text(data.decode("utf-8", "surrogateescape"), name).encode("utf-8", "surrogateescape")
        extra = {"truncated": {"kept_bytes": len(data), "of_bytes": st.st_size}} if st.st_size > EXTRA_FILE_BYTES else {}
        add(name, masked, "log", os.path.abspath(path), **extra)


def _triage_members(top: str, logs: List[Tuple[str, bytes]]) -> Optional[Dict[str, Any]]:
    """Triage the masked logs as the bundle holds them (same paths, same bytes)."""
    if not logs:
        return None
    scratch = tempfile.mkdtemp(prefix="ascend-doctor-bundle-")
    try:
        for name, data in logs:
            dest = os.path.join(scratch, top, *name.split("/"))
            os.makedirs(os.path.dirname(dest), exist_ok=True)
            with open(dest, "wb") as fh:
                fh.write(data)
        try:
            report = triage_paths([os.path.join(scratch, top, "logs")], knowledge=Knowledge())
        except InputError:
            return None
        if report.stats.files == 0:
            return None
        return _strip_prefix(to_json(report), scratch.rstrip("/") + "/")
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def _strip_prefix(value: Any, prefix: str) -> Any:
    if isinstance(value, str):
        return value.replace(prefix, "")
    if isinstance(value, list):
        return [_strip_prefix(v, prefix) for v in value]
    if isinstance(value, dict):
        return {k: _strip_prefix(v, prefix) for k, v in value.items()}
    return value


def _triage_verdict(doc: Optional[Dict[str, Any]]) -> Optional[Dict[str, Any]]:
    if not doc:
        return None
    incidents = doc.get("incidents") or []
    first = incidents[0] if incidents else {}
    job = doc.get("job") or {}
    return {"incidents": len(incidents), "category": first.get("category"), "title": first.get("title"),
            "first_failing_rank": job.get("first_failing_rank")}


def _python_version() -> str:
    import platform

    return platform.python_version()
