"""Reading node reports: `check --json` output, bundles (their check.json), or directories of them.

Every input is bounded (a report larger than 16 MiB is not a check report) and opened by
the one rule every verb uses (``ascend_doctor.inputs.openable``: no FIFOs, devices or /proc).
"""
from __future__ import annotations

import json
import os
import stat
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Tuple

from ..inputs import os_message, os_reason
from ..inputs.bundle_archive import is_bundle, read_member
from ..inputs.openable import refusal

MAX_REPORT_BYTES = 16 << 20
MAX_FILES = 100000
FAILING = ("fail", "timeout", "error")
_BUNDLE_SUFFIXES = (".tar.gz", ".tgz")


@dataclass
class NodeReport:
    path: str
    name: str = ""
    hostname: Optional[str] = None
    stack: Dict[str, str] = field(default_factory=dict)
    devices: Optional[int] = None
    unhealthy: List[str] = field(default_factory=list)  # "npu 3 chip 0: Warning"
    failing: List[Dict[str, str]] = field(default_factory=list)  # id, status, summary
    warnings: List[Dict[str, str]] = field(default_factory=list)
    verdict: str = "ok"
    kind: str = "check"  # check | bundle


@dataclass
class Skipped:
    path: str
    reason: str


class FleetInputError(Exception):
    """A path given on the command line does not exist (one line)."""


def collect_paths(paths: List[str]) -> Tuple[List[str], List[Skipped]]:
    """Report files under the given paths: *.json and bundle archives; directories are walked."""
    files: List[str] = []
    skipped: List[Skipped] = []
    for given in paths:
        try:
            st = os.stat(given)
        except OSError as exc:
            raise FleetInputError(os_message(given, exc)) from None
        if stat.S_ISDIR(st.st_mode):
            for dirpath, dirnames, filenames in os.walk(given):
                dirnames.sort()
                for name in sorted(filenames):
                    if name.endswith(".json") or name.endswith(_BUNDLE_SUFFIXES):
                        files.append(os.path.join(dirpath, name))
                if len(files) > MAX_FILES:
                    raise FleetInputError(f"{given}: more than {MAX_FILES} report files")
            continue
        reason = refusal(given, st)
        if reason is not None:
            skipped.append(Skipped(given, reason))
            continue
        files.append(given)
    return files, skipped


def load_report(path: str) -> Tuple[Optional[NodeReport], Optional[str]]:
    """(report, None) or (None, why it is not a node report)."""
    try:
        st = os.stat(path)
    except OSError as exc:
        return None, os_reason(exc)
    reason = refusal(path, st)
    if reason is not None:
        return None, reason
    kind = "check"
    if path.endswith(_BUNDLE_SUFFIXES):
        if not is_bundle(path):
            return None, "an archive that is not an ascend-doctor bundle"
        data = read_member(path, "check.json", MAX_REPORT_BYTES)
        if data is None:
            return None, "a bundle without check.json"
        kind = "bundle"
    else:
        if st.st_size > MAX_REPORT_BYTES:
            return None, f"larger than {MAX_REPORT_BYTES >> 20} MiB: not a check report"
        try:
            with open(path, "rb") as fh:
                data = fh.read(MAX_REPORT_BYTES + 1)
        except OSError as exc:
            return None, os_reason(exc)
    try:
        doc = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        return None, f"not JSON ({str(exc).splitlines()[0][:80]})"
    return from_check_json(doc, path, kind)


def from_check_json(doc: Any, path: str, kind: str = "check") -> Tuple[Optional[NodeReport], Optional[str]]:
    if not isinstance(doc, dict) or not isinstance(doc.get("findings"), list) or not isinstance(doc.get("host"), dict):
        return None, "not the JSON of `ascend-doctor check --json` (no host and findings)"
    if doc.get("schema") != 1:
        return None, f"check report schema {doc.get('schema')!r}; this ascend-doctor reads schema 1"
    host = doc["host"]
    node = NodeReport(path=path, kind=kind)
    hostname = host.get("hostname")
    node.hostname = str(hostname) if isinstance(hostname, str) and hostname else None
    stack = host.get("stack")
    if isinstance(stack, dict):
        node.stack = {str(k): str(v) for k, v in stack.items() if isinstance(v, (str, int, float))}
    for f in doc["findings"]:
        if not isinstance(f, dict):
            continue
        status = f.get("status")
        entry = {"id": str(f.get("id")), "status": str(status), "summary": str(f.get("summary") or "")[:300]}
        if status in FAILING:
            node.failing.append(entry)
        elif status == "warn":
            node.warnings.append(entry)
        data = f.get("data") if isinstance(f.get("data"), dict) else {}
        if f.get("id") == "npu_smi.info" and isinstance(data.get("devices"), list):
            npus = set()
            for d in data["devices"]:
                if not isinstance(d, dict):
                    continue
                npus.add(d.get("npu"))
                health = d.get("health")
                if health and str(health).upper() != "OK":
                    node.unhealthy.append(f"npu {d.get('npu')} chip {d.get('chip')}: {health}")
            node.devices = len(npus)
    summary = doc.get("summary") if isinstance(doc.get("summary"), dict) else {}
    node.verdict = str(summary.get("verdict") or ("fail" if node.failing else "warn" if node.warnings else "ok"))
    return node, None


def name_nodes(nodes: List[NodeReport]) -> None:
    """Each node's display name: its host name when every report has a distinct one, else the
    shortest part of its path that tells it from the others (reports/node7/check.json -> node7)."""
    names = [n.hostname for n in nodes]
    if all(names) and len(set(names)) == len(names):
        for n in nodes:
            n.name = str(n.hostname)
        return
    split = []
    for n in nodes:
        p = os.path.abspath(n.path)
        for suffix in (".tar.gz", ".tgz", ".json"):
            if p.endswith(suffix):
                p = p[: -len(suffix)]
                break
        split.append(p.strip("/").split("/"))
    lead = _common_len(split)
    trail = _common_len([list(reversed(s[lead:])) for s in split])
    for n, parts in zip(nodes, split):
        core = parts[lead: len(parts) - trail] or parts[-1:]
        n.name = "/".join(core)
    seen: Dict[str, int] = {}
    for n in nodes:  # still equal (the same file given twice): number them
        seen[n.name] = seen.get(n.name, 0) + 1
        if seen[n.name] > 1:
            n.name = f"{n.name}#{seen[n.name]}"


def _common_len(seqs: List[List[str]]) -> int:
    if len(seqs) < 2:
        return max(0, len(seqs[0]) - 1) if seqs else 0
    n = 0
    shortest = min(len(s) for s in seqs)
    while n < shortest - 1 and all(s[n] == seqs[0][n] for s in seqs):
        n += 1
    return n
