"""Exceptions of the simulated runtime.

``AclError`` is what an ACL call returns (a numeric aclError); the messages the
runtime recorded stay in the process until torch_npu takes them. ``NpuError`` is what
a Python user sees: ``console`` is the text their terminal showed, exactly.
"""
from __future__ import annotations

from typing import Dict, Optional


class AclError(Exception):
    """An ACL call failed with ``code``; ``api`` is the ACL function name."""

    def __init__(self, code: int, api: str, detail: str = "", fault: Optional[str] = None) -> None:
        super().__init__("%s failed, error code is %d%s" % (api, code,
                                                            ": " + detail if detail else ""))
        self.code = code
        self.api = api
        self.detail = detail
        self.fault = fault


class NpuError(RuntimeError):
    """A failure as the Python process reports it.

    ``console`` holds the exception text as printed (``RuntimeError: ...`` and the lines
    after it); ``exc_type`` is the Python class (``RuntimeError``,
    ``torch.OutOfMemoryError``); ``code`` the ACL / HCCL / aclnn number if there is one;
    ``category`` what actually went wrong (for the scenario's ground truth).
    """

    def __init__(self, console: str, exc_type: str = "RuntimeError", code: Optional[int] = None,
                 category: str = "other", facts: Optional[Dict[str, object]] = None) -> None:
        super().__init__(console)
        self.console = console
        self.exc_type = exc_type
        self.code = code
        self.category = category
        self.facts: Dict[str, object] = dict(facts or {})

    def __str__(self) -> str:
        return self.console
