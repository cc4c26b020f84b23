"""What a check run knows about the judged host, for reports and bundles: where it is, its
architecture and user, and the versions of the stack that the checks already read (no new
command is run for it)."""
from __future__ import annotations

import socket
from typing import Any, Dict

from ..host import Host
from .compat_checks import stack_from_facts


def host_info(host: Host, facts) -> Dict[str, Any]:
    info: Dict[str, Any] = {
        "root": str(host.root),
        "arch": facts.arch() if facts else host.arch(),
        "container": facts.container() if facts else host.container(),
        "user": host.user.name,
    }
    if host.is_real:
        info["hostname"] = socket.gethostname()
    if facts is not None:
        stack = known_stack(facts)
        if stack:
            info["stack"] = stack
    return info


# which fact each stack component comes from: only facts the run already gathered are used
_STACK_FACTS = {"driver": ("driver",), "firmware": ("firmware",), "cann": ("toolkit",), "chip": ("npu_smi",),
                "python": ("python_stack",), "torch": ("python_stack",), "torch_npu": ("python_stack",)}


def known_stack(facts) -> Dict[str, str]:
    """{component: version} of the judged stack, from the facts the checks gathered (no new
    command is run for it: a `check --only env` reports no npu-smi chip)."""
    comps = [c for c, keys in _STACK_FACTS.items() if all(facts.known(k) for k in keys)]
    return stack_from_facts(facts, comps) if comps else {}
