"""The software stack of a simulated process and the output shapes it implies.

``Stack(cann="8.3.RC1", torch_npu="2.1.0.post17", torch="2.1.0")`` answers questions
like "which error-block shape does this CANN print", "does this torch_npu print the
ERR banner", "is the OOM a RuntimeError or a torch.OutOfMemoryError". The rules are in
``data/torch_npu_texts.yaml`` with their evidence.
"""
from __future__ import annotations

import functools
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Dict

from runtime_sim.plog.error_block import shape_for_cann
from compat_matrix.versions import parse_version
from runtime_sim.plog.versions import release_line

_DATA = Path(__file__).with_name("data") / "torch_npu_texts.yaml"


@functools.lru_cache(maxsize=1)
def texts() -> Dict[str, Any]:
    import yaml  # lazy

    with open(_DATA, encoding="utf-8") as fh:
        return yaml.safe_load(fh)


def _line(text: str):
    return parse_version(text, "torch_npu_release")


@dataclass(frozen=True)
class Stack:
    """CANN, torch_npu (wheel or release line) and PyTorch versions of one process."""

    cann: str = "8.3.RC1"
    torch_npu: str = "2.1.0.post17"
    torch: str = ""

    def __post_init__(self) -> None:
        parse_version(self.cann, "cann")  # fail early on a bad version string
        release_line(self.torch_npu)

    @property
    def line(self) -> str:
        """Ascend Extension release line, e.g. ``7.2.0``."""
        return release_line(self.torch_npu)

    @property
    def torch_version(self) -> str:
        if self.torch:
            return self.torch
        text = str(self.torch_npu)
        if text.startswith(("1.", "2.")):
            return parse_version(text, "torch_npu").base.text
        return "2.1.0"

    @property
    def block_shape(self) -> str:
        return shape_for_cann(self.cann)

    @functools.cached_property
    def rules(self) -> Dict[str, Any]:
        """The merged text rules that apply to this torch_npu release line."""
        line = _line(self.line)
        merged: Dict[str, Any] = {}
        for rule in texts()["rules"]:
            since = rule["since"]
            if since == "0" or _line(since) <= line:
                merged.update({k: v for k, v in rule.items() if k not in ("since", "evidence")})
        return merged

    @property
    def dated_warnings(self) -> bool:
        floor = parse_version(texts()["dated_warnings_from_torch"], "torch").series
        return parse_version(self.torch_version, "torch").series >= floor

    @property
    def oom_exception(self) -> str:
        """torch.OutOfMemoryError from 26.0.0, RuntimeError before (NPUCachingAllocator.cpp by release line)."""
        return ("torch.OutOfMemoryError" if _line(self.line) >= _line("26.0.0")
                else "RuntimeError")

    @property
    def compact_output_supported(self) -> bool:
        return _line(self.line) >= _line("7.1.0")
