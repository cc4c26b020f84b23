"""Each hostile or broken input of issue #10 ends with the right exit code and a one-line
message (or the right finding), no traceback, and a bounded peak memory (VmHWM of the
child, under an address-space limit). Seconds are reported by bench/hostile_inputs.py, not
asserted here."""
from __future__ import annotations

import pytest

from .hostile import CASES
from .runner import run_case

MAX_RSS_MB = 200


@pytest.mark.parametrize("name", sorted(CASES))
def test_hostile_input(tmp_path, name):
    case = CASES[name](tmp_path)
    out = run_case(case, timeout=120)
    assert out.code in case.codes, (out.code, out.output[-2000:])
    assert "Traceback" not in out.output and "internal error" not in out.output, out.output[-2000:]
    assert case.expect in out.output, out.output[-2000:]
    if out.code == 2 and case.program == "doctor":
        assert len(out.stderr.strip().splitlines()) == 1, out.stderr
    assert out.max_rss_mb < MAX_RSS_MB, f"{name}: {out.max_rss_mb:.0f} MB"
