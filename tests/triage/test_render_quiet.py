"""Quiet text output: ranks that only timed out on the failing one fold into one entry; -v shows each."""
from __future__ import annotations

import re

from ascend_doctor.triage.engine import triage_paths
from ascend_doctor.triage.render import render_text
from runtime_sim.host import run


def test_hccl_effects_fold_and_verbose_unfolds(tmp_path):
    result = run("hccl_timeout", tmp_path / "job")
    report = triage_paths([str(result.log_dir), str(result.console_file)])
    effects = [i for i in report.incidents if i.caused_by is not None]
    assert len(effects) == 7

    quiet = render_text(report)
    assert quiet.count("(caused by #1)") == 1
    assert re.search(r"^2-8\. \[hccl_comm\] .*\(caused by #1\)$", quiet, re.M)
    assert "the same on 7 processes" in quiet
    for rank in (0, 1, 2, 4, 5, 6, 7):
        assert re.search(rf"^     rank {rank} · pid \d+ · device {rank}\b", quiet, re.M)
    assert "rank 3" in quiet.splitlines()[1]  # the first failing rank leads the report

    loud = render_text(report, verbose=1)
    assert loud.count("(caused by #1)") == 7
    assert len(loud.splitlines()) > len(quiet.splitlines())
