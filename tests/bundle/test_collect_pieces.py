"""The seams of bundle/collect.py:build_bundle: the member list, what is left out and masked."""
from __future__ import annotations

from ascend_doctor.bundle import redact as R
from ascend_doctor.bundle.collect import _Members, _tail


def test_members_mask_sources_and_left_out_paths():
    red = R.Redactor(enabled=True)
    red.add_hostname("node-17.example.internal")
    m = _Members(red)
    m.text("raw/files/etc/hostname", "node-17.example.internal\n", "raw", "/home/node-17.example.internal/x")
    m.leave_out("/var/log/node-17.example.internal.log", "binary file (read only for its header)")
    m.leave_out("/etc/passwd", "read, not copied: the machine's account list", masked=False)
    (name, data, entry), = m.members
    assert b"node-17" not in data and "node-17" not in entry["source"] and entry["kind"] == "raw"
    assert "node-17" not in m.left_out[0]["path"] and m.left_out[1]["path"] == "/etc/passwd"


def test_tail_keeps_whole_lines():
    assert _tail(b"a\nbb\nccc\n", 100) == (b"a\nbb\nccc\n", 0)
    assert _tail(b"a\nbb\nccc\n", 6) == (b"ccc\n", 9)
