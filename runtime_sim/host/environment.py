"""The environment of the host user's shell, written as a ``KEY=VALUE`` env file.

It is what ``env`` would print in the shell that starts the job: the login basics, the
toolkit variables when set_env.sh has been sourced, and the device-selection variables.
Paths in it are paths on the simulated host.
"""
from __future__ import annotations

from typing import Dict, List, Tuple

from .plan import HostPlan
from .toolkit import set_env_variables

BASE_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"


def user_environment(plan: HostPlan) -> List[Tuple[str, str]]:
    spec = plan.spec.env
    env: Dict[str, str] = {
        "USER": plan.user.name,
        "LOGNAME": plan.user.name,
        "HOME": plan.user.home,
        "SHELL": "/bin/bash",
        "LANG": "C.UTF-8",
        "PATH": BASE_PATH,
    }
    if spec.set_env:
        for name, value, how in set_env_variables(plan):
            if how == "prepend" and env.get(name):
                env[name] = f"{value}:{env[name]}"
            else:
                env[name] = value
    if spec.visible_devices is not None:
        env["ASCEND_RT_VISIBLE_DEVICES"] = spec.visible_devices
    if spec.device_id is not None:
        env["ASCEND_DEVICE_ID"] = spec.device_id
    for key, value in spec.extra:
        env[key] = value
    for key in spec.drop:
        env.pop(key, None)
    return list(env.items())


def env_file_text(plan: HostPlan) -> str:
    lines = [f"# Environment of {plan.user.name}'s shell on the simulated host '{plan.scenario.name}'"]
    for key, value in user_environment(plan):
        quoted = f'"{value}"' if any(c in value for c in " #'") else value
        lines.append(f"{key}={quoted}")
    return "\n".join(lines) + "\n"
