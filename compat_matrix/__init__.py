"""Ascend version grammar, version-matching data and queries (no dependency on ascend_doctor).

Public API (imported lazily, so ``import compat_matrix`` stays cheap; data loads on first use):

    parse_version(text, kind)            -> Version   (kinds: cann, driver, firmware, torch_npu,
                                                       torch, python, torch_npu_release, inner)
    parse_spec(text, kind)               -> VersionSpec ('25.5.X' lines, exact versions)
    family_from_user(text)               -> '910b' | '910_93' | '310p' | ... (a name a person types)
    family_from_npu_smi(name)            -> Family or None (a name as npu-smi prints it)
    evaluate(stack)                      -> Report    (pairs with verdicts, overall verdict)
    maintained_python()                  -> (['3.8', ..., '3.14'], source URL): Python series of
                                            maintained torch_npu builds
    suggest(pinned)                      -> [SuggestedStack], newest first
    scan(pinned)                         -> ([SuggestedStack], [LeftOut]) the builds left out, and why
    upgrade_path(current, target)        -> UpgradePlan (ordered steps)
    resolve_torch_npu_release(text)      -> [Build]   (wheel / branch / release line / CANN)
    judge_driver_firmware(...), judge_toolkit_driver(...), judge_version_files(...)
                                         -> Pair      (rules the host states itself)
    load_matrix()                        -> Matrix    (all rows, with sources)

Errors are ValueError subclasses with one-line messages: VersionError, ChipError,
ComponentError, ReleaseQueryError (all CompatError).
"""
from __future__ import annotations

from typing import Any

__all__ = [
    "parse_version", "try_parse_version", "parse_spec", "Version", "VersionSpec", "KINDS",
    "family_from_user", "family_from_npu_smi", "evaluate", "maintained_python", "Report", "Pair", "VERDICTS", "COMPONENTS", "suggest",
    "SuggestedStack", "scan", "LeftOut", "upgrade_path", "UpgradePlan", "resolve_torch_npu_release", "release_map_row",
    "judge_driver_firmware", "judge_toolkit_driver", "judge_version_files", "load_matrix",
    "CompatError", "VersionError", "ChipError", "ComponentError", "ReleaseQueryError",
]

_LAZY = {
    "parse_version": "compat_matrix.versions", "try_parse_version": "compat_matrix.versions",
    "parse_spec": "compat_matrix.versions", "Version": "compat_matrix.versions",
    "VersionSpec": "compat_matrix.versions", "KINDS": "compat_matrix.versions",
    "family_from_user": "compat_matrix.chips", "family_from_npu_smi": "compat_matrix.chips",
    "evaluate": "compat_matrix.query", "maintained_python": "compat_matrix.query",
    "Report": "compat_matrix.report", "Pair": "compat_matrix.report",
    "VERDICTS": "compat_matrix.report", "COMPONENTS": "compat_matrix.report",
    "suggest": "compat_matrix.stacks", "SuggestedStack": "compat_matrix.stacks",
    "scan": "compat_matrix.stacks", "LeftOut": "compat_matrix.stacks",
    "upgrade_path": "compat_matrix.stacks", "UpgradePlan": "compat_matrix.stacks",
    "resolve_torch_npu_release": "compat_matrix.releases", "release_map_row": "compat_matrix.releases",
    "ReleaseQueryError": "compat_matrix.releases",
    "judge_driver_firmware": "compat_matrix.host_rules", "judge_toolkit_driver": "compat_matrix.host_rules",
    "judge_version_files": "compat_matrix.host_rules",
    "load_matrix": "compat_matrix.tables",
    "CompatError": "compat_matrix.errors", "VersionError": "compat_matrix.errors",
    "ChipError": "compat_matrix.errors", "ComponentError": "compat_matrix.errors",
}


def __getattr__(name: str) -> Any:
    mod = _LAZY.get(name)
    if mod is None:
        raise AttributeError("module 'compat_matrix' has no attribute %r" % name)
    import importlib

    value = getattr(importlib.import_module(mod), name)
    globals()[name] = value
    return value


def __dir__() -> Any:
    return sorted(list(globals()) + __all__)
