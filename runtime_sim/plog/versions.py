"""torch_npu wheel versions -> the Ascend Extension release line they belong to.

The wheel -> release-line map is compat_matrix's (its builds table, from the Ascend/pytorch
release map), so the simulator and the doctor read one table. Versions are read and ordered by
the one grammar, ``compat_matrix.versions`` (release lines as kind ``torch_npu_release``, wheels
as kind ``torch_npu``): an RC sorts before the final release of its line (``6.0.rc3`` < ``6.0.0``).
"""
from __future__ import annotations

from typing import Optional

from compat_matrix.tables import load_matrix
from compat_matrix.versions import VersionError, try_parse_version


def release_line(torch_npu: str) -> str:
    """The Ascend Extension release line of a torch_npu wheel version or line itself.

    ``2.1.0.post10`` -> ``6.0.0``; ``7.3.0`` -> ``7.3.0``; an unknown wheel of a known
    torch minor falls back to the newest line listed for it (better than guessing old).
    """
    text = str(torch_npu).strip()
    line = try_parse_version(text, "torch_npu_release")
    if line is not None and line.series[0] >= 5:
        return text  # release lines start at 5.0; wheels are 1.x / 2.x
    wheel = try_parse_version(text, "torch_npu")
    if wheel is None:
        raise VersionError(text, "torch_npu", "torch_npu wheel or Ascend Extension release line",
                           ("2.1.0.post10", "7.3.0", "6.0.rc3"))
    builds = [b for b in load_matrix().builds if b.release is not None]
    exact = [b.release for b in builds if b.torch_npu == wheel]
    same_minor = [b.release for b in builds if b.is_ga and b.torch_npu.series == wheel.series]
    found: Optional[object] = max(exact or same_minor, default=None)
    if found is None:
        raise VersionError(text, "torch_npu", "a torch_npu wheel of a known torch minor", ("2.1.0.post10", "2.7.1"))
    return str(found)
