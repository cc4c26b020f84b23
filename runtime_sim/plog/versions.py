"""torch_npu wheel versions -> the Ascend Extension release line they belong to.

Versions are read and ordered by the one grammar, ``compat_matrix.versions`` (CANN as kind
``cann``, release lines as kind ``torch_npu_release``, wheels as kind ``torch_npu``): an RC
sorts before the final release of its line (``8.0.RC3`` < ``8.0.0``, ``6.0.rc3`` < ``6.0.0``).
"""
from __future__ import annotations

from compat_matrix.versions import VersionError, parse_version, try_parse_version


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
    line = try_parse_version(text, "torch_npu_release")
    if line is not None and line.series[0] >= 5:
        return text  # release lines start at 5.0; wheels are 1.x / 2.x
    wheel = try_parse_version(text, "torch_npu")
    if wheel is not None:
        same_minor = [ln for w, ln in _WHEEL_LINES.items() if parse_version(w, "torch_npu").series == wheel.series]
        if same_minor:
            return max(same_minor, key=lambda ln: parse_version(ln, "torch_npu_release"))
    raise VersionError(text, "torch_npu", "torch_npu wheel or Ascend Extension release line",
                       ("2.1.0.post10", "7.3.0", "6.0.rc3"))
