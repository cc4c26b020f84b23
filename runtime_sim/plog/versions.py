"""Ordering of CANN and torch_npu release strings, enough to pick output shapes.

Kept local: runtime_sim must not depend on the doctor, and the shapes only need
"is this release older than that one".

CANN: ``7.0.RC1``, ``7.0.RC1.alpha003``, ``8.0.RC2``, ``8.0.0``, ``8.3.RC1``, ``8.5.0``,
``9.1.0``, ``9.2.0-beta.2``; an RC sorts before the final release of the same line.
torch_npu: wheel versions (``2.1.0.post10``) map to an Ascend Extension release line
(``6.0.0``, ``7.3.0``, ``26.0.0``) through ``release_line`` below; release lines compare
like CANN versions (``6.0.rc3`` < ``6.0.0``).
"""
from __future__ import annotations

import re
from typing import Tuple

_REL = re.compile(r"^\s*(?:CANN\s+)?(\d+)\.(\d+)(?:\.(RC|rc)?(\d+))?([.\-+].*)?\s*$")

VersionKey = Tuple[int, int, int, int]


def release_key(text: str) -> VersionKey:
    """(major, minor, final?, number): ``8.0.RC2`` -> (8, 0, 0, 2); ``8.0.0`` -> (8, 0, 1, 0)."""
    m = _REL.match(str(text))
    if not m:
        raise ValueError(f"not a CANN / Ascend Extension release: {text!r}")
    major, minor, rc, num = int(m.group(1)), int(m.group(2)), m.group(3), m.group(4)
    if num is None:
        return (major, minor, 1, 0)
    return (major, minor, 0 if rc else 1, int(num))


def release_at_least(text: str, floor: str) -> bool:
    return release_key(text) >= release_key(floor)


# Wheel -> Ascend Extension release line, from the saved release map
# (Ascend/pytorch COMPATIBILITY.en.md, https://github.com/Ascend/pytorch/blob/b48e64812a56717e36110acd4f8f3cb748cbed9d/COMPATIBILITY.en.md).
_WHEEL_LINES = {
    "2.12.0": "26.1.0", "2.11.0": "26.1.0", "2.10.0.post4": "26.1.0", "2.9.0.post6": "26.1.0",
    "2.7.1.post8": "26.1.0", "2.9.0.post2": "26.0.0", "2.8.0.post4": "26.0.0",
    "2.7.1.post4": "26.0.0", "2.9.0": "7.3.0", "2.8.0.post2": "7.3.0", "2.7.1.post2": "7.3.0",
    "2.6.0.post5": "7.3.0", "2.8.0": "7.2.0", "2.7.1": "7.2.0", "2.6.0.post3": "7.2.0",
    "2.1.0.post17": "7.2.0", "2.6.0": "7.1.0", "2.5.1.post1": "7.1.0", "2.1.0.post13": "7.1.0",
    "2.5.1": "7.0.0", "2.4.0.post4": "7.0.0", "2.3.1.post6": "7.0.0", "2.1.0.post12": "7.0.0",
    "2.4.0.post2": "6.0.0", "2.3.1.post4": "6.0.0", "2.1.0.post10": "6.0.0", "2.4.0": "6.0.rc3",
    "2.3.1.post2": "6.0.rc3", "2.1.0.post8": "6.0.rc3", "2.3.1": "6.0.rc2",
    "2.2.0.post2": "6.0.rc2", "2.1.0.post6": "6.0.rc2", "2.2.0": "6.0.rc1",
    "2.1.0.post4": "6.0.rc1", "2.1.0": "5.0.0", "2.0.1.post1": "5.0.0", "2.1.0.rc1": "5.0.rc3",
    "2.0.1": "5.0.rc3",
}


def release_line(torch_npu: str) -> str:
    """The Ascend Extension release line of a torch_npu wheel version or line itself.

    ``2.1.0.post10`` -> ``6.0.0``; ``7.3.0`` -> ``7.3.0``; an unknown wheel of a known
    torch minor falls back to the newest line listed for it (better than guessing old).
    """
    text = str(torch_npu).strip()
    if text in _WHEEL_LINES:
        return _WHEEL_LINES[text]
    try:
        key = release_key(text)
    except ValueError:
        key = None
    if key is not None and key[0] >= 5 and not text.startswith("2."):
        return text
    m = re.match(r"^(\d+\.\d+)\.", text)
    if m:
        same_minor = [line for wheel, line in _WHEEL_LINES.items() if wheel.startswith(m.group(1))]
        if same_minor:
            return max(same_minor, key=release_key)
    raise ValueError(f"unknown torch_npu version {torch_npu!r}")
