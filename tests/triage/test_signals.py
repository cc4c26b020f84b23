"""Every signal's example lines (with their sources in data/signals.yaml) are read as that signal."""
from __future__ import annotations

import pytest

from ascend_doctor.parsers.codes import find_codes
from ascend_doctor.triage.signals import load_signals, classify
from ascend_doctor.model import CATEGORIES

SIGNALS = load_signals()
EXAMPLES = [(s.id, ex) for s in SIGNALS for ex in s.examples]


def test_every_signal_has_an_example_with_a_source():
    for sig in SIGNALS:
        assert sig.examples, sig.id
        for ex in sig.examples:
            assert ex["source"].startswith("https://"), sig.id
        assert sig.category in CATEGORIES and sig.fix_text


@pytest.mark.parametrize("sid,example", EXAMPLES, ids=[f"{sid}-{i}" for i, (sid, _) in enumerate(EXAMPLES)])
def test_example_is_classified_as_its_signal(sid, example):
    text = example["text"]
    got = classify(text, [c.value for c in find_codes(text)])
    assert got.id == sid, (example["source"], got.id)
