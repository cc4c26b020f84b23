"""Device-selection variables, read the way the runtime and the container runtime read them.

``ASCEND_RT_VISIBLE_DEVICES`` (runtime): comma-separated *logical* ids in ascending order;
parsing stops at the first invalid character or id, so ``1, 2,3`` selects only ``1`` and
``1,3,8`` on an 8-device machine selects ``1,3``
(hiascend envref_07_0028, https://www.hiascend.com/document/detail/zh/CANNCommunityEdition/910/maintenref/envvar/envref_07_0028.html).

``ASCEND_VISIBLE_DEVICES`` (Ascend Docker Runtime): *physical* ids as ``0``, ``1,3``, ``0-2``,
``0-2,4`` or names such as ``Ascend910-1``; ``void`` or empty mounts nothing
(https://github.com/Ascend/mind-cluster/blob/master/docs/en/scheduling/usage/containerization/02_usage_on_the_docker_client.md).
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import List, Optional

from ..inputs import LIMITS
from ..inputs import int_or_none as num


def _short(text: str) -> str:
    return text if len(text) <= 24 else f"{text[:12]}…({len(text)} characters)"


@dataclass
class RtVisible:
    raw: str
    selected: List[int] = field(default_factory=list)  # what the runtime will use
    problems: List[str] = field(default_factory=list)

    @property
    def clean(self) -> bool:
        return not self.problems


def parse_rt_visible_devices(raw: str, device_count: Optional[int]) -> RtVisible:
    """Selected logical ids, stopping where the runtime stops, with what was wrong."""
    out = RtVisible(raw=raw)
    text = raw
    pos = 0
    previous = -1
    while pos < len(text):
        m = re.match(r"\d+", text[pos:])
        if not m:
            bad = text[pos]
            shown = "a space" if bad == " " else repr(bad)
            out.problems.append(f"{shown} at position {pos + 1}: the runtime stops reading there")
            break
        value = num(m.group(0))
        if value is None:
            out.problems.append(f"an id of {len(m.group(0))} digits at position {pos + 1}: no such device; the runtime stops reading there")
            break
        if value <= previous:
            kind = "repeated" if value == previous else "out of ascending order"
            out.problems.append(f"id {value} is {kind}: the runtime stops reading there")
            break
        if device_count is not None and value >= device_count:
            out.problems.append(f"id {value} does not exist (devices are 0..{device_count - 1}): the runtime stops reading there")
            break
        out.selected.append(value)
        previous = value
        pos += len(m.group(0))
        if pos < len(text):
            if text[pos] != ",":
                continue  # the next loop reports the bad character
            pos += 1
            if pos == len(text):
                out.problems.append("trailing comma")
    if not raw.strip():
        out.problems.append("empty value")
    return out


@dataclass
class ContainerVisible:
    raw: str
    ids: List[int] = field(default_factory=list)
    names: List[str] = field(default_factory=list)
    void: bool = False
    problems: List[str] = field(default_factory=list)


def parse_ascend_visible_devices(raw: str) -> ContainerVisible:
    out = ContainerVisible(raw=raw)
    value = raw.strip()
    if value in ("", "void"):
        out.void = True
        return out
    for item in value.split(","):
        item = item.strip()
        rng = re.fullmatch(r"(\d+)-(\d+)", item)
        if item.isdigit():
            value = num(item)
            if value is None or value >= LIMITS.device_ids:
                out.problems.append(f"id {_short(item)} is larger than any device id")
            else:
                out.ids.append(value)
        elif rng:
            lo, hi = num(rng.group(1)), num(rng.group(2))
            if lo is None or hi is None or hi >= LIMITS.device_ids:
                # a range is expanded only within real device ids: 0-300000000 must not become a list
                out.problems.append(f"range {_short(item)} goes past any device id (at most {LIMITS.device_ids - 1})")
                continue
            if lo > hi:
                out.problems.append(f"range {item} runs backwards")
            out.ids.extend(range(lo, hi + 1))
        elif re.fullmatch(r"[A-Za-z][A-Za-z0-9]*-\d+", item):
            out.names.append(item)
        else:
            out.problems.append(f"{item!r} is neither an id, a range nor a name like Ascend910-1")
    if out.ids and out.names:
        out.problems.append("names and bare ids cannot be mixed")
    return out
