"""The seams of commands/oom.py:_run: the text and logs, the snapshot of another device, the notes, the output."""
from __future__ import annotations

import io
import json
import pickle

import pytest

from ascend_doctor.commands import oom
from ascend_doctor.errors import UsageError

from .conftest import load_yaml, trace_failure

# https://github.com/xingchensong/TouchNet/issues/100 (NPU 3)
TOUCHNET = next(m for m in load_yaml("messages.yaml")["messages"] if "TouchNet" in m["source"])


def test_log_facts_from_text_stdin_and_files(tmp_path):
    assert oom._log_facts(None, [], None) is None
    from_text = oom._log_facts(TOUCHNET["text"], [], None)
    assert len(from_text.ooms) == 1
    from_stdin = oom._log_facts("-", [], io.BytesIO(TOUCHNET["text"].encode()))
    assert from_stdin.first_oom.record.device == 3
    log = tmp_path / "train.log"
    log.write_text("step 1\n" + TOUCHNET["text"] + "\n", encoding="utf-8")
    merged = oom._log_facts(TOUCHNET["text"], [str(log)], None)
    assert len(merged.ooms) == 2 and str(log) in merged.files


@pytest.mark.parametrize("text,message", [("  ", "the text is empty"), ("hello", "no out-of-memory message")])
def test_log_facts_refuses_text_without_a_message(text, message):
    with pytest.raises(UsageError, match=message):
        oom._log_facts(text, [], None)


def test_release_names_the_bad_value():
    assert oom._release(None) is None
    with pytest.raises(UsageError):
        oom._release("banana")


def test_snapshot_of_another_device_is_read_with_a_note(tmp_path):
    f = trace_failure("training_varlen")
    path = tmp_path / "snap.pickle"
    path.write_bytes(pickle.dumps(f.snapshot))
    notes = []
    snap = oom._snapshot(str(path), None, 7, None, notes)  # the message's device 7 is not in the snapshot
    assert snap.device != 7 and notes and "no segments of device 7" in notes[0]
    from ascend_doctor.memory import MemoryInputError

    with pytest.raises(MemoryInputError):  # asked for with --device: no fallback
        oom._snapshot(str(path), 7, 7, None, [])


def test_skipped_note_shows_two_and_counts_the_rest():
    assert oom._skipped_note([("a", "binary")]) == "skipped 1 input: a (binary)"
    assert oom._skipped_note([("a", "x"), ("b", "y"), ("c", "z")]) == "skipped 3 inputs: a (x); b (y) and 1 more"


def test_render_each_format():
    from ascend_doctor.memory.message import scan_text
    from ascend_doctor.memory.model import Inputs
    from ascend_doctor.memory.verdict import analyze

    diag = analyze(Inputs(log=scan_text(TOUCHNET["text"])))
    outs = {}
    for fmt in ("text", "json", "md"):
        buf = io.StringIO()
        oom._render(diag, fmt, buf)
        outs[fmt] = buf.getvalue()
    assert json.loads(outs["json"])["schema"] == 1
    assert outs["md"].startswith("#") and outs["text"] != outs["md"]
