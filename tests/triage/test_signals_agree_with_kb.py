"""Signals and the knowledge base name the same category for the same line.

In triage the KB entry's category wins whenever an entry matches, so a signal whose
category differs from the entry its own examples match would mislead everyone reading
signals.yaml (and triage runs with ``--no-kb`` would disagree with normal ones). Every
signal example (real lines, sources in signals.yaml) is read the way triage reads a
pasted line and resolved through the KB; a different category fails unless the signal
lists the entry under ``kb_refines``.
"""
from __future__ import annotations

import io
from pathlib import Path
from typing import List

import pytest

from ascend_doctor import kb
from ascend_doctor.parsers.codes import find_codes
from ascend_doctor.triage.events import Event, extract, sniff_plog
from ascend_doctor.triage.knowledge import Knowledge
from ascend_doctor.triage.reader import Counter
from ascend_doctor.triage.signals import SignalDataError, load_signals
from ascend_doctor.triage.sources import Source

SIGNALS = load_signals()
EXAMPLES = [(s, ex) for s in SIGNALS for ex in s.examples]
BASE = kb.load()
KNOWLEDGE = Knowledge(kb=BASE)


def _events(text: str) -> List[Event]:
    """The events triage makes of one pasted line; a bare event when it makes none (a
    template line without the surrounding text that makes it an error)."""
    data = (text + "\n").encode("utf-8")
    src = Source("example.log", lambda: io.BytesIO(data), origin="example")
    events = list(extract(src, io.BytesIO(data), Counter(), sniff_plog(data)))
    return events or [Event(kind="console", text=text, file="example.log", line=1, origin="example",
                            codes=find_codes(text))]


def _disagreements(sig, example) -> List[str]:
    out = []
    for ev in _events(example["text"]):
        verdict = KNOWLEDGE.resolve(ev)
        if verdict.kb_id is None or verdict.kb_id in sig.kb_refines:
            continue
        entry = BASE.entry(verdict.kb_id)
        if entry.category != sig.category:
            out.append(f"signal {sig.id} says {sig.category} but KB entry {entry.id} says {entry.category} for "
                       f"{example['source']}: make them agree, or list {entry.id} under the signal's kb_refines "
                       "with the reason")
    return out


@pytest.mark.parametrize("sig,example", EXAMPLES, ids=[f"{s.id}-{i}" for i, (s, _) in enumerate(EXAMPLES)])
def test_kb_entry_of_a_signal_example_has_the_signal_category(sig, example):
    assert _disagreements(sig, example) == []


def test_refinements_name_real_entries():
    for sig in SIGNALS:
        for entry_id in sig.kb_refines:
            assert BASE.has_entry(entry_id), (sig.id, entry_id)


def test_the_three_disagreements_found_in_review_are_settled():
    # a missing kernels package is an install problem (check's toolkit.kernels says env_path too);
    # a package without the binary the toolkit asks for is from another release; platform info
    # that cannot be read means an incomplete or wrongly sourced installation
    by_id = {s.id: s for s in SIGNALS}
    assert by_id["kernels_missing"].category == BASE.entry("env.kernels_package_missing").category == "env_path"
    assert by_id["kernel_binary_missing"].category == BASE.entry("version.kernel_binary_missing").category == "version_mismatch"
    assert by_id["platform_info"].category == BASE.entry("env.platform_info_init_failed").category == "env_path"
    assert not any(s.kb_refines for s in SIGNALS if s.id in ("kernels_missing", "kernel_binary_missing", "platform_info",
                                                             "unsupported_op", "version_mismatch"))


def test_a_disagreement_is_caught_unless_marked_as_refinement(tmp_path: Path):
    # the check must be able to fail: a signal that claims the kernels lines for version_mismatch
    kernels = next(s for s in SIGNALS if s.id == "kernels_missing")
    ex = kernels.examples[0]
    body = ("signals:\n  - id: kernels_claimed\n    role: root\n    category: version_mismatch\n    weight: 99\n"
            "    title: t\n    patterns: ['Parse dynamic kernel config fail']\n{refines}"
            f"    examples:\n      - text: {ex['text']!r}\n        source: {ex['source']}\n")
    bad = tmp_path / "bad.yaml"
    bad.write_text(body.format(refines=""), encoding="utf-8")
    (sig,) = load_signals(bad)
    (problem,) = _disagreements(sig, sig.examples[0])
    assert "KB entry env.kernels_package_missing says env_path" in problem
    marked = tmp_path / "marked.yaml"
    marked.write_text(body.format(refines="    kb_refines: [env.kernels_package_missing]\n"), encoding="utf-8")
    (sig,) = load_signals(marked)
    assert _disagreements(sig, sig.examples[0]) == []


def test_kb_refines_must_be_a_list_of_ids(tmp_path: Path):
    bad = tmp_path / "signals.yaml"
    bad.write_text("signals:\n  - id: x\n    role: root\n    category: other\n    weight: 1\n    title: t\n"
                   "    kb_refines: env.kernels_package_missing\n", encoding="utf-8")
    with pytest.raises(SignalDataError, match="kb_refines"):
        load_signals(bad)
