"""``ascend-doctor bundle``: one redacted .tar.gz to attach to a bug report.

    bundle [-o FILE.tar.gz] [--root DIR --env-file F [--trust-root] | --sim S] [--logs PATH]... [--no-redact]

A --root tree's programs (npu-smi, its python3) run only with --trust-root, as for check;
without it the bundle holds what the files say. A --sim tree is built here and trusted.

Exit codes: 0 the bundle was written, 2 bad input (a bad host option, an output path that
cannot be written), 3 internal error. What the host shows (failing checks, incidents) does
not change the exit code: the bundle is the deliverable.
"""
from __future__ import annotations

import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import List, Optional, TextIO, Tuple

from ..bundle.redact import describe_kinds
from ..errors import UsageError
from .common import build_sim, check_timeout, make_host, output_format, target_python


def run_bundle(
    output: Optional[str] = None,
    root: Optional[Path] = None,
    env_file: Optional[Path] = None,
    sim: Optional[str] = None,
    logs: Optional[List[str]] = None,
    redact: bool = True,
    python: Optional[str] = None,
    timeout: float = 8.0,
    trust_root: bool = False,
    fmt: str = "text",
    json_flag: bool = False,
    stream: Optional[TextIO] = None,
) -> int:
    fmt = output_format(fmt, json_flag)
    out = stream or sys.stdout
    check_timeout(timeout)
    for given in logs or []:
        if not os.path.exists(given):
            raise UsageError(f"--logs {given}: no such file or directory")
    path = _output_path(output)
    extra = list(logs or [])
    scratch = None
    if sim:
        if root or env_file:
            raise UsageError("--sim builds its own host: do not combine it with --root or --env-file")
        scratch, root, env_file, console = _sim_host(sim)
        trust_root = True  # built here, from the scenario
        if console is not None:
            extra.append(str(console))
    try:
        host = make_host(root, env_file, trust_root=trust_root)
        python = target_python(host, python)
        label = f"simulated host {sim}" if sim else ("this machine" if host.is_real else str(root))
        from ..bundle.collect import build_bundle

        progress = _progress_line if fmt == "text" and sys.stderr.isatty() else None
        started = time.monotonic()
        result = build_bundle(host, path, label, redact=redact, sim=sim, extra_logs=extra, python=python,
                              command_timeout=timeout, progress=progress)
        if progress:
            sys.stderr.write("\r\033[K")
        seconds = time.monotonic() - started
    finally:
        if scratch:
            shutil.rmtree(scratch, ignore_errors=True)
    if fmt == "json":
        from ..bundle.summary import bundle_json

        out.write(json.dumps(bundle_json(result, seconds), indent=2) + "\n")
    elif fmt == "md":
        out.write(result.summary_md)
    else:
        out.write(_text(result, seconds))
    return 0


def _text(result, seconds: float) -> str:
    m = result.manifest
    kinds = {}
    for f in m["files"]:
        kinds[f["kind"]] = kinds.get(f["kind"], 0) + 1
    lines = [f"ascend-doctor bundle · {m['host']['label']}",
             f"  wrote {result.path} ({_size(result.size)}, {len(m['files'])} files: "
             + ", ".join(f"{n} {k}" for k, n in sorted(kinds.items())) + f") in {seconds:.2f} s"]
    if m["redacted"]:
        masked = m["redaction"]["masked_kinds"]

        lines.append("  masked   " + (describe_kinds(masked) if masked else "nothing identifying found"))
        if m["redaction"]["secret_env"]:
            lines.append("  secrets  kept only as 'set': " + ", ".join(m["redaction"]["secret_env"]))
    else:
        lines.append("  NOT redacted (--no-redact): names, addresses and secrets are as found")
    v = m["verdicts"]
    lines.append(f"  check    {v['check']}")
    lines.append(f"  compat   {v['compat']}")
    t = v.get("triage")
    if t:
        rank = f"; first failing rank {t['first_failing_rank']}" if t.get("first_failing_rank") is not None else ""
        lines.append(f"  triage   {t['incidents']} incidents; root cause [{t['category']}] {t['title']}{rank}" if t["incidents"]
                     else "  triage   no incidents in the newest logs")
    else:
        lines.append("  triage   no CANN logs found")
    for item in m["left_out"][:5]:
        lines.append(f"  left out {item['path']}: {item['reason']}")
    if len(m["left_out"]) > 5:
        lines.append(f"  left out ... {len(m['left_out']) - 5} more (manifest.json)")
    lines.append(f"Attach it to the issue, and paste its summary: tar -xzOf {result.path} --wildcards '*/SUMMARY.md'")
    return "\n".join(lines) + "\n"


def _size(n: int) -> str:
    for unit in ("B", "KB", "MB"):
        if n < 1024:
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024  # type: ignore[assignment]
    return f"{n:.1f} GB"


def _output_path(output: Optional[str]) -> str:
    name = f"ascend-doctor-bundle-{time.strftime('%Y%m%d-%H%M%S', time.gmtime())}.tar.gz"
    if output is None:
        return os.path.abspath(name)
    if output == "-":
        raise UsageError("-o -: a bundle is binary; give a file name ending in .tar.gz")
    if os.path.isdir(output):
        return os.path.abspath(os.path.join(output, name))
    parent = os.path.dirname(os.path.abspath(output))
    if not os.path.isdir(parent):
        raise UsageError(f"-o {output}: no such directory {parent}")
    if not os.access(parent, os.W_OK):
        raise UsageError(f"-o {output}: cannot write in {parent}")
    if not output.endswith((".tar.gz", ".tgz")):
        raise UsageError(f"-o {output}: the bundle is a .tar.gz; name it so (e.g. {output}.tar.gz)")
    return os.path.abspath(output)


def _sim_host(sim: str) -> Tuple[str, Path, Path, Optional[Path]]:
    """A simulated host for --sim: built, and for a runtime scenario its workload run too, so
    the bundle has the job's logs and console capture."""
    try:
        from runtime_sim.scenarios import load
        scenario = load(sim.replace("-", "_"))
    except Exception:
        root, env_file = build_sim(sim)  # raises the usual one-line error for an unknown name
        return "", root, env_file, None
    if scenario.workload is None:
        root, env_file = build_sim(sim)
        return "", root, env_file, None
    from runtime_sim.host import BuildError, run

    tmp = tempfile.mkdtemp(prefix="ascend-sim-")
    try:
        result = run(scenario, tmp)
    except (BuildError, ValueError) as exc:
        shutil.rmtree(tmp, ignore_errors=True)
        raise UsageError(f"--sim {sim}: {exc}") from None
    return tmp, Path(result.host.root), Path(result.host.env_file), Path(result.console_file)


def _progress_line(msg: str) -> None:
    """One status line on a terminal, rewritten in place."""
    sys.stderr.write(f"\r\033[K{msg} …")
    sys.stderr.flush()
