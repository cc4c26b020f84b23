"""Versions of the software stack named in pasted text.

People paste their environment with the error: the issue templates of vLLM-Ascend and
PyTorch ask for ``collect_env.py``, others add ``pip list | grep torch``, the output of
the ``pip install`` that preceded the failure, or ``npu-smi info``. Each form names a
component and its version on one line; ``StackLine.read`` takes one line and returns the
facts it states. Formats (each from a public paste):

- collect_env: ``PyTorch version: 2.5.1`` / ``Python version: 3.10.16 (main, ...)``
  (vllm-ascend PR #175) and vLLM's column form ``PyTorch version              : 2.5.1``
  (vllm-project/vllm#22518); its package lines ``[pip3] torch-npu==2.5.1``.
- ``pip list`` rows ``torch_npu                         2.7.1rc1`` (vllm-ascend#3793),
  ``pip freeze`` ``torch==2.5.1``, ``conda list`` rows with build and channel columns.
- ``Successfully installed numpy-2.0.2 torch-npu-2.7.1.dev20250724`` (vllm-ascend#2210), and
  pip's resolver: ``torch-npu 2.7.1.dev20250724 requires torch==2.7.1, but you have torch
  2.8.0+cpu which is incompatible.`` (vllm-ascend#4081).
- ``npu-smi info``'s header ``| npu-smi 23.0.3   Version: 23.0.3 |``: the driver's
  version (vllm-ascend#1363), and the chip column of its device rows (``910B2``).
- the CANN toolkit's install info ``package_name=Ascend-cann-toolkit`` then
  ``version=8.1.RC1`` (vllm-ascend#1047), and toolkit paths in tracebacks
  (``/usr/local/Ascend/ascend-toolkit/8.0.RC3/...``).

Only the grammar of ``compat_matrix.versions`` decides whether a value is a version; the
caller checks it, so this module stays a plain reader.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, List, Optional

from ..lazyre import lazy

_COMPONENTS = {"torch": "torch", "torch-npu": "torch_npu", "torch_npu": "torch_npu", "numpy": "numpy"}
# collect_env: "PyTorch version: 2.5.1", "PyTorch version              : 2.5.1"
_COLLECT = lazy(r"^(?P<what>PyTorch|Python) version\s*:\s*(?P<version>\d[\w.+]*)")
# pip list / freeze / conda list / collect_env's [pip3] and [conda] lines: the whole line is a package row
_ROW = lazy(r"^(?:\[(?:pip3?|conda)\]\s+)?(?P<name>torch[-_]npu|torch|numpy)(?:==|\s+)(?P<version>\d[\w.+-]*)"
            r"(?:\s+[\w./:-]+){0,3}\s*$")
_INSTALLED = lazy(r"Successfully installed (?P<rest>.+)")
# pip's resolver: "torch-npu 2.7.1.dev20250724 requires torch==2.7.1, but you have torch 2.8.0+cpu which is incompatible."
_REQUIRES = lazy(r"(?<![\w-])(?P<name>torch[-_]npu|torch|numpy) (?P<version>\d[\w.+]*) requires ")
_HAVE = lazy(r"but you have (?P<name>torch[-_]npu|torch|numpy) (?P<version>\d[\w.+]*)")
_INSTALLED_ITEM = lazy(r"(?<!\S)(?P<name>torch[-_]npu|torch|numpy)-(?P<version>\d[\w.+]*)(?!\S)")
_NPU_SMI = lazy(r"npu-smi\s+\S+\s+Version:\s*(?P<version>\d[\w.]*)")
# a device row of npu-smi info: "| 2     910B2               | OK            | 97.3 ..."
_NPU_ROW = lazy(r"^\|\s*\d+\s+(?P<chip>(?:Ascend)?\s?\d{3}[A-Z]?\w*)\s+\|\s*(?:OK|Warning|Alarm|Critical)\b")
_TOOLKIT_PATH = lazy(r"/ascend-toolkit/(?P<version>\d+\.\d+\.(?:RC\d+|\d+)[\w.]*)/")
_TOOLKIT_PACKAGE = "package_name=Ascend-cann-toolkit"
# every form above holds one of these (most lines of a log hold none: they cost one search)
_NEEDLES = lazy(r"orch|numpy|ersion|npu-smi|ascend-toolkit/|package_name=")
_VERSION_KEY = lazy(r"^version=(?P<version>\d[\w.]*)\s*$")


@dataclass(frozen=True)
class StackFact:
    component: str  # torch | torch_npu | numpy | python | driver | cann | chip
    version: str
    line: int
    text: str  # the line that says so


class StackLine:
    """Reads stack facts line by line (one reader per input: the toolkit's ``version=``
    counts only on the lines after its ``package_name``)."""

    def __init__(self) -> None:
        self._toolkit_at: Optional[int] = None

    def read(self, lineno: int, text: str) -> List[StackFact]:
        line = text.strip()
        if not (_NEEDLES.search(line) or line[:1] == "|" or self._toolkit_at is not None):
            return []
        if _TOOLKIT_PACKAGE in line:
            self._toolkit_at = lineno
            return []
        out: List[StackFact] = []

        def fact(component: str, version: str) -> None:
            out.append(StackFact(component, version, lineno, line[:300]))

        def package(m: Any) -> None:  # a match with the groups name (torch / torch-npu) and version
            fact(_COMPONENTS[m.group("name").lower()], m.group("version"))

        m = _COLLECT.match(line)
        if m:
            fact("torch" if m.group("what") == "PyTorch" else "python", m.group("version"))
            return out
        m = _ROW.match(line)
        if m:
            package(m)
            return out
        m = _INSTALLED.search(line)
        if m:
            for item in _INSTALLED_ITEM.finditer(m.group("rest")):
                package(item)
            return out
        if "requires " in line:
            for rx in (_REQUIRES, _HAVE):
                m = rx.search(line)
                if m:
                    package(m)
            if out:
                return out
        if "npu-smi" in line:
            m = _NPU_SMI.search(line)
            if m:
                fact("driver", m.group("version"))
                return out
        if line.startswith("|"):
            m = _NPU_ROW.match(line)
            if m:
                fact("chip", m.group("chip").replace("Ascend", "").strip())
            return out
        if self._toolkit_at is not None:
            m = _VERSION_KEY.match(line) if lineno - self._toolkit_at <= 3 else None
            if m or lineno - self._toolkit_at > 3:
                self._toolkit_at = None
            if m:
                fact("cann", m.group("version"))
                return out
        if "ascend-toolkit/" in line:
            m = _TOOLKIT_PATH.search(line)
            if m:
                fact("cann", m.group("version"))
        return out
