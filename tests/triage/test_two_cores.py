"""A large tree is read on two cores (triage/engine.py): the report must be the same as reading it
on one, and a helper that fails must cost nothing but time."""
from __future__ import annotations

import json

import pytest

from ascend_doctor.triage import engine
from ascend_doctor.triage.render import to_json
from runtime_sim import scenarios
from runtime_sim.host import run as run_scenario


def _report(paths, monkeypatch, parallel: bool):
    monkeypatch.setattr(engine, "PARALLEL_MIN_BYTES", 0 if parallel else 1 << 62)
    doc = to_json(engine.triage_paths([str(p) for p in paths]))
    doc["stats"].pop("seconds")
    return json.dumps(doc, sort_keys=True)


@pytest.fixture(scope="module")
def job(tmp_path_factory):
    result = run_scenario(scenarios.load("hccl_timeout"), tmp_path_factory.mktemp("job") / "host")
    return [result.log_dir, result.console_file]


def test_two_cores_give_the_same_report(job, monkeypatch):
    mine, theirs = engine._split_for_two_cores(engine.walk_inputs([str(p) for p in job]).sources)
    assert not theirs  # a 7 MB tree is read by one process
    monkeypatch.setattr(engine, "PARALLEL_MIN_BYTES", 0)
    mine, theirs = engine._split_for_two_cores(engine.walk_inputs([str(p) for p in job]).sources)
    assert mine and theirs
    assert _report(job, monkeypatch, parallel=True) == _report(job, monkeypatch, parallel=False)


def test_a_failing_helper_costs_only_time(job, monkeypatch):
    single = _report(job, monkeypatch, parallel=False)

    def broken(sources, knowledge, conn):
        raise RuntimeError("helper died")

    monkeypatch.setattr(engine, "_helper_main", broken)
    assert _report(job, monkeypatch, parallel=True) == single
