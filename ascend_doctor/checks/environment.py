"""Environment checks: set_env.sh sourced, device-selection variables, the plog directory.

Variables set_env.sh exports: https://www.hiascend.com/document/detail/zh/canncommercial/800/softwareinst/instg/instg_0064.html;
device variables: https://www.hiascend.com/document/detail/zh/CANNCommunityEdition/910/maintenref/envvar/envref_07_0028.html;
log path: https://github.com/hicann/runtime/blob/681ef7610df13c8128982901142a2c869ddbb53e/docs/zh/log_ref/viewing_logs_ep.md.
"""
from __future__ import annotations

import os
import re
from typing import List, Optional

from ..host import split_path_list
from ..model import Evidence, Fix
from ..parsers.visible_devices import parse_ascend_visible_devices, parse_rt_visible_devices
from .base import Context, Result, check, fail, ok, skip, warn
from .container import in_container
from ..inputs import int_or_none as num

SET_ENV_SOURCE = "https://github.com/vllm-project/vllm-ascend/issues/6512"
RT_VISIBLE_SOURCE = "https://www.hiascend.com/document/detail/zh/CANNCommunityEdition/910/maintenref/envvar/envref_07_0028.html"
LOG_MIN_FREE = 1 << 30
LOG_PATH_SOURCE = "https://github.com/hicann/runtime/blob/681ef7610df13c8128982901142a2c869ddbb53e/docs/zh/env_vars/ASCEND_PROCESS_LOG_PATH.md"


def set_env_script(ctx: Context) -> str:
    """Where the set_env.sh for the active toolkit is (the first that exists, else the usual place)."""
    active = ctx.facts.toolkit().active
    home = active.home if active else "/usr/local/Ascend/ascend-toolkit/latest"
    parent = os.path.dirname(home)
    candidates = [f"{parent}/set_env.sh", f"{home}/set_env.sh", f"{ctx.facts.install_root()}/cann/set_env.sh"]
    for cand in candidates:
        if ctx.host.is_file(cand):
            return cand
    return candidates[0]


_TOOLKIT_SET_ENV = re.compile(r"^source /usr/local/Ascend/(?:ascend-toolkit|cann)/set_env\.sh$")


def toolkit_commands(ctx: Context, commands) -> List[str]:
    """Fix commands from the knowledge base, written for the usual install place of either
    layout (``ascend-toolkit/set_env.sh`` up to 8.3, ``cann/set_env.sh`` from 8.5), made to
    name the ``set_env.sh`` of the toolkit this machine has (once)."""
    if ctx.facts.toolkit().active is None:
        return list(commands)
    mine = f"source {set_env_script(ctx)}"
    out: List[str] = []
    for cmd in commands:
        cmd = mine if _TOOLKIT_SET_ENV.match(cmd.strip()) else cmd
        if cmd not in out:
            out.append(cmd)
    return out


def _lib_dirs_with(ctx: Context, entries: List[str], name: str) -> List[str]:
    return [d for d in entries if ctx.host.exists(d.rstrip("/") + "/" + name)]


@check("env.set_env", "set_env.sh sourced", "environment", category="env_path", requires=("toolkit.installed",))
def set_env(ctx: Context) -> Result:
    env = ctx.host.env
    host = ctx.host
    problems: List[str] = []
    home = env.get("ASCEND_TOOLKIT_HOME") or env.get("ASCEND_HOME_PATH")
    if not home:
        problems.append("ASCEND_TOOLKIT_HOME / ASCEND_HOME_PATH are not set")
    elif not host.is_dir(home):
        problems.append(f"ASCEND_HOME_PATH points to {home}, which does not exist")
    opp = env.get("ASCEND_OPP_PATH")
    if not opp:
        problems.append("ASCEND_OPP_PATH is not set")
    elif not host.is_dir(opp):
        problems.append(f"ASCEND_OPP_PATH points to {opp}, which does not exist")
    ld = split_path_list(env.get("LD_LIBRARY_PATH"))
    if not _lib_dirs_with(ctx, ld, "libascendcl.so"):
        problems.append("libascendcl.so is not in any LD_LIBRARY_PATH directory")
    driver_lib = ctx.facts.install_root() + "/driver/lib64"
    if host.is_dir(driver_lib) and not any(d.rstrip("/").startswith(driver_lib) for d in ld) and not _ld_conf_mentions(ctx, driver_lib):
        problems.append(f"the driver libraries ({driver_lib}) are not on LD_LIBRARY_PATH")
    script = set_env_script(ctx)
    evidence = Evidence(
        found="; ".join(problems) if problems else f"ASCEND_HOME_PATH={home}",
        required="ASCEND_TOOLKIT_HOME/ASCEND_HOME_PATH, ASCEND_OPP_PATH, toolkit lib64 and driver lib64 on LD_LIBRARY_PATH",
        source=SET_ENV_SOURCE,
    )
    if not problems:
        return ok(f"toolkit environment is set ({home})", evidence=evidence)
    never = not home and not opp
    summary = "set_env.sh has not been sourced in this environment" if never else "the toolkit environment is incomplete: " + problems[0]
    return fail(
        summary,
        evidence=evidence,
        fix=Fix(
            "Source the toolkit's environment script in the shell (and the service unit or container entrypoint) "
            "that starts the job; add it to ~/.bashrc to make it stick.",
            [f"source {script}", f"echo 'source {script}' >> ~/.bashrc"],
        ),
        details=problems,
    )


def _ld_conf_mentions(ctx: Context, directory: str) -> bool:
    for conf in ctx.host.glob("/etc/ld.so.conf.d", "*.conf"):
        try:
            if directory in ctx.host.read_text(conf, 1 << 16):
                return True
        except OSError:
            continue
    return False


def _visible_applies(ctx: Context) -> Optional[str]:
    env = ctx.host.env
    if not any(env.get(k) is not None for k in ("ASCEND_RT_VISIBLE_DEVICES", "ASCEND_VISIBLE_DEVICES", "ASCEND_DEVICE_ID")):
        return "no device-selection variable is set (every device is visible)"
    return None


def _device_count(ctx: Context) -> Optional[int]:
    info = ctx.facts.npu_smi().info
    if info is not None and info.chips:
        return len(info.chips)
    if in_container(ctx):
        nodes = [p for p in ctx.host.glob("/dev", "davinci*") if p[len("/dev/davinci"):].isdigit()]
        return len(nodes) or None
    return None


@check("env.visible_devices", "Device-selection variables", "environment", category="env_path", applies=_visible_applies)
def visible_devices(ctx: Context) -> Result:
    env = ctx.host.env
    count = _device_count(ctx)
    problems: List[str] = []
    notes: List[str] = []
    rt_raw = env.get("ASCEND_RT_VISIBLE_DEVICES")
    selected: Optional[List[int]] = None
    if rt_raw is not None:
        rt = parse_rt_visible_devices(rt_raw, count)
        selected = rt.selected
        for p in rt.problems:
            problems.append(f"ASCEND_RT_VISIBLE_DEVICES={rt_raw}: {p}")
        notes.append(f"the runtime will use logical device(s) {rt.selected or 'none'}")
    dev_id = env.get("ASCEND_DEVICE_ID")
    if dev_id is not None:
        limit = len(selected) if selected is not None else count
        if not dev_id.isdigit():
            problems.append(f"ASCEND_DEVICE_ID={dev_id} is not a device index")
        elif limit is not None and (num(dev_id) is None or num(dev_id) >= limit):
            within = "the ASCEND_RT_VISIBLE_DEVICES list" if selected is not None else "the visible devices"
            problems.append(f"ASCEND_DEVICE_ID={dev_id} is not an index into {within} (0..{limit - 1})")
    container_raw = env.get("ASCEND_VISIBLE_DEVICES")
    if container_raw is not None:
        cv = parse_ascend_visible_devices(container_raw)
        problems.extend(f"ASCEND_VISIBLE_DEVICES={container_raw}: {p}" for p in cv.problems)
        if in_container(ctx) and rt_raw is not None and cv.ids and count is not None:
            if any(i is None or i >= count for i in (num(t.strip()) for t in rt_raw.split(",") if t.strip().isdigit())):
                notes.append(
                    "inside a container the runtime renumbers the mapped devices from 0; "
                    "ASCEND_RT_VISIBLE_DEVICES takes those logical ids, not the host's physical ids"
                )
    evidence = Evidence(
        found=", ".join(f"{k}={env[k]}" for k in ("ASCEND_RT_VISIBLE_DEVICES", "ASCEND_VISIBLE_DEVICES", "ASCEND_DEVICE_ID") if k in env)
        + (f"; {count} device(s) visible" if count is not None else ""),
        required="ascending, unique, existing logical ids separated by commas, no spaces",
        source=RT_VISIBLE_SOURCE,
    )
    if not problems:
        return ok("; ".join(notes) or "device selection is valid", evidence=evidence)
    # what the user meant: every existing id they wrote, once, in the order the runtime needs
    written = [i for i in (num(t) for t in re.findall(r"\d+", rt_raw or "")) if i is not None]
    good = sorted(set(i for i in written if count is None or i < count))
    want = ",".join(str(i) for i in (good or range(min(count or 1, 8))))
    return fail(
        problems[0],
        evidence=evidence,
        fix=Fix(
            "List existing logical device ids in ascending order without spaces"
            + (" (inside a container they start at 0)" if in_container(ctx) else "")
            + ".",
            [f"export ASCEND_RT_VISIBLE_DEVICES={want}"],
        ),
        details=problems[1:] + notes,
    )


@check("env.log_path", "Log directory writable", "environment", category="env_path")
def log_path(ctx: Context) -> Result:
    env, host = ctx.host.env, ctx.host
    configured = env.get("ASCEND_PROCESS_LOG_PATH")
    home = host.home()
    if configured:
        path, origin = configured.rstrip("/") or "/", "ASCEND_PROCESS_LOG_PATH"
    elif home:
        path, origin = home.rstrip("/") + "/ascend/log", "default ~/ascend/log"
    else:
        return skip("no ASCEND_PROCESS_LOG_PATH and no home directory")
    existing = host.nearest_existing(path)
    writable = host.can_access(existing, "wx")
    # under --root the tree's disk is this machine's, not the judged host's: do not report it
    free = host.disk_free(existing) if host.is_real else None
    evidence = Evidence(
        found=f"{path} ({origin}); nearest existing {existing}; "
        + ("writable" if writable else "not writable")
        + (f"; {free / (1 << 30):.1f} GiB free" if free is not None else ""),
        required="a writable directory with at least 1 GiB free",
        source=LOG_PATH_SOURCE,
    )
    if not writable:
        return warn(
            f"plog files cannot be written to {path}: errors will leave no logs to diagnose",
            evidence=evidence,
            fix=Fix("Point the logs at a writable directory.", ["export ASCEND_PROCESS_LOG_PATH=$HOME/ascend/log", "mkdir -p $HOME/ascend/log"]),
        )
    if free is not None and free < LOG_MIN_FREE:
        return warn(
            f"only {free / (1 << 20):.0f} MiB free where plog files go ({existing})",
            evidence=evidence,
            fix=Fix("Free space or move the logs elsewhere.", [f"du -sh {path}/*", "export ASCEND_PROCESS_LOG_PATH=/path/with/space"]),
        )
    return ok(f"{path} is writable" + (f", {free / (1 << 30):.0f} GiB free" if free is not None else ""), evidence=evidence)
