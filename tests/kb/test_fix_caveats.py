"""Fix commands work on the releases people run: a switch that exists only in unreleased
builds is never given as a command, and where the text mentions it, it says which builds.

TORCH_NPU_FALLBACK_CPU_DISABLE is read only by torch_npu master since 2026-08-20 and by no
release branch up to v2.12.0-26.1.0 (https://github.com/Ascend/pytorch
commit f2e1583e).
"""
from __future__ import annotations

from ascend_doctor import kb

UNRELEASED_SWITCHES = ("TORCH_NPU_FALLBACK_CPU_DISABLE",)


def _fixes():
    for entry in kb.load().entries:
        if entry.fix is not None:
            yield f"kb {entry.id}", entry.fix.text, list(entry.fix.commands)


def test_unreleased_switches_are_never_fix_commands():
    for where, _, commands in _fixes():
        for cmd in commands:
            assert not any(s in cmd for s in UNRELEASED_SWITCHES), (where, cmd)


def test_where_the_text_mentions_one_it_names_the_builds_that_have_it():
    mentioned = []
    for where, text, _ in _fixes():
        if any(s in text for s in UNRELEASED_SWITCHES):
            mentioned.append(where)
            assert "master" in text and "2026-08-20" in text and "diagnostic" in text, where
    # the CPU-fallback advice keeps the switch as a diagnostic hint, in both places that give it
    assert set(mentioned) == {"kb op.cpu_fallback", "kb class.cpu_fallback"}
