"""Container checks: is this a container, and does it carry what the NPU runtime needs.

The mounts a manual ``docker run`` needs are listed in the vllm-ascend installation guide
(https://github.com/vllm-project/vllm-ascend/blob/main/docs/source/installation.md).
"""
from __future__ import annotations

from typing import List, Optional, Tuple

from ..model import Evidence, Fix
from .base import Context, Result, check, fail, ok, skip, warn

MOUNTS_SOURCE = "https://github.com/vllm-project/vllm-ascend/blob/main/docs/source/installation.md"

# (path on the host and in the container, kind, fatal when missing)
REQUIRED_MOUNTS: Tuple[Tuple[str, str, bool], ...] = (
    ("/usr/local/Ascend/driver/lib64", "dir", True),
    ("/usr/local/Ascend/driver/version.info", "file", False),
    ("/etc/ascend_install.info", "file", False),
    ("/usr/local/dcmi", "dir", False),
    ("/usr/local/bin/npu-smi", "file", False),
)


def ascend_traces(ctx: Context) -> List[str]:
    """Signs that this machine is meant to use an Ascend NPU at all."""
    host = ctx.host
    traces = []
    if host.exists("/usr/local/Ascend"):
        traces.append("/usr/local/Ascend exists")
    if host.glob("/dev", "davinci*"):
        traces.append("/dev/davinci* nodes exist")
    names = sorted(k for k in host.env if k.startswith("ASCEND_"))
    if names:
        traces.append("environment sets " + ", ".join(names[:3]))
    return traces


def in_container(ctx: Context) -> Optional[str]:
    return ctx.facts.container()


@check("container.detected", "Container", "container")
def detected(ctx: Context) -> Result:
    why = in_container(ctx)
    if why is None:
        return skip("not running in a container")
    return ok(f"running in a container ({why})", evidence=Evidence(found=why))


def _mount_applies(ctx: Context) -> Optional[str]:
    if in_container(ctx) is None:
        return "not running in a container"
    if not ascend_traces(ctx):
        return "no Ascend files, devices or variables in this container"
    return None


@check("container.mounts", "Driver files mounted into the container", "container", category="driver_init", applies=_mount_applies)
def mounts(ctx: Context) -> Result:
    host = ctx.host
    missing_fatal, missing_other = [], []
    for path, kind, fatal in REQUIRED_MOUNTS:
        present = host.is_dir(path) if kind == "dir" else host.exists(path)
        if path.endswith("npu-smi") and not present:
            present = host.exists("/usr/local/sbin/npu-smi")
        if not present:
            (missing_fatal if fatal else missing_other).append(path)
    missing = missing_fatal + missing_other
    if not missing:
        return ok("driver libraries, version files, dcmi and npu-smi are mounted")
    flags = " ".join(f"-v {p}:{p}:ro" if not p.endswith("lib64") else f"-v {p}:{p}" for p in missing)
    fix = Fix(
        "Restart the container with the host's driver files mounted (paths are the same on both sides), "
        "or start it with the Ascend Docker Runtime, which mounts them for you.",
        [f"docker run {flags} <your other options> <image>"],
    )
    evidence = Evidence(
        found="missing in the container: " + ", ".join(missing),
        required=", ".join(p for p, _, _ in REQUIRED_MOUNTS),
        source=MOUNTS_SOURCE,
    )
    if missing_fatal:
        return fail(
            "the host's driver libraries are not mounted: the NPU runtime cannot start in this container",
            evidence=evidence,
            fix=fix,
        )
    return warn(
        "some driver files are not mounted: " + ", ".join(missing) + " (version queries and npu-smi will not work)",
        evidence=evidence,
        fix=fix,
    )
