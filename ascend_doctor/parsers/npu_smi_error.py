"""npu-smi failure text: the line that says why ``npu-smi`` failed, reduced to a code.

Apart from the table parser (``parsers/npu_smi.py``, which re-exports it) because the code
extractor (``parsers/codes.py``) reads npu-smi failure lines in any log, and a one-line
question should not pay for the table parser's records.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import List, Optional

from ..inputs import int_or_none as num
from ..lazyre import lazy

_DCMI = lazy(r"dcmi module initialize failed\.\s*ret is\s*(-?\d+)", re.IGNORECASE)
_FAILED_EXEC = lazy(r"Failed to execute npu-smi\s+(.*?)\.\s*ret is\s*(-?\d+)", re.IGNORECASE)
_CONSOLE_LOG = lazy(r"DrvMngGetConsoleLogLevel failed\.\s*\(([^)]*)\)")


@dataclass
class NpuSmiError:
    """What a failing npu-smi printed, reduced to a code and the line that carried it."""

    code: Optional[int]
    line: str
    kind: str  # dcmi_init | exec_failed | console_log_level | not_found | unparsed


def _ints(text: str) -> List[int]:
    return [v for v in (num(t, signed=True) for t in re.findall(r"-?\d+", text)) if v is not None]


def parse_npu_smi_error(text: str) -> Optional[NpuSmiError]:
    """The most telling failure line in npu-smi output, or None when nothing is recognised."""
    for pattern, kind in ((_DCMI, "dcmi_init"), (_FAILED_EXEC, "exec_failed")):
        for line in text.splitlines():
            m = pattern.search(line)
            if m:
                return NpuSmiError(code=num(m.groups()[-1], signed=True), line=line.strip(), kind=kind)
    for line in text.splitlines():
        m = _CONSOLE_LOG.search(line)
        if m:
            nums = _ints(m.group(1))
            return NpuSmiError(code=nums[-1] if nums else None, line=line.strip(), kind="console_log_level")
        if "command not found" in line or "No such file or directory" in line:
            return NpuSmiError(code=None, line=line.strip(), kind="not_found")
    return None
