"""Every runtime_sim scenario with a workload, triaged in-process against its ground truth.

The workload runs into tmp (``runtime_sim.host.run``: its plog tree and console capture);
triage reads both, as a user would hand them over. The first incident must carry the
scenario's ``expect.triage.category`` and, for multi-rank failures, the first failing
rank. The same holds with the signals alone (no knowledge base), so a KB change cannot
hide a triage regression. Extra checks use the workload's own facts where it has them.
"""
from __future__ import annotations

import pytest

from ascend_doctor.triage.engine import triage_paths
from ascend_doctor.triage.knowledge import Knowledge
from runtime_sim.host import run
from runtime_sim.scenarios import load_all

SCENARIOS = [s for s in load_all() if s.workload is not None]
KNOWLEDGE = {"with-kb": Knowledge()}


def test_the_catalog_has_runtime_scenarios_with_ground_truth():
    assert len(SCENARIOS) >= 8
    assert all(s.expect.triage_category for s in SCENARIOS)
    assert any(s.expect.first_failing_rank is not None for s in SCENARIOS)


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    base = tmp_path_factory.mktemp("scenarios")
    return {s.name: run(s, base / s.name) for s in SCENARIOS}


@pytest.mark.parametrize("mode", sorted(KNOWLEDGE))
@pytest.mark.parametrize("scenario", SCENARIOS, ids=[s.name for s in SCENARIOS])
def test_first_incident_matches_ground_truth(scenario, mode, runs):
    result = runs[scenario.name]
    report = triage_paths([str(result.log_dir), str(result.console_file)], knowledge=KNOWLEDGE[mode])
    assert report.incidents, f"{scenario.name}: no incident"
    first = report.incidents[0]
    got = (first.verdict.category, first.display_title, first.headline.text[:160])
    assert first.verdict.category == scenario.expect.triage_category, got
    if scenario.expect.first_failing_rank is not None:
        assert first.rank == scenario.expect.first_failing_rank, got
        assert report.job.first_rank == scenario.expect.first_failing_rank
    if first.role != "advisory":
        # a real failure heads the report, and no harmless line became an incident of its own
        assert all("can be ignored" not in i.headline.text for i in report.incidents)
    facts = result.workload.facts
    if facts.get("fallback_ops"):
        titles = {i.display_title for i in report.incidents if i.role == "advisory"}
        assert titles == {f"{op} runs on the CPU" for op in facts["fallback_ops"]}
    if scenario.expect.oom_verdict:
        ooms = [i for i in report.incidents if i.verdict.category.startswith("oom_")]
        assert len(ooms) == 1, [i.headline.file for i in ooms]  # console and plog tell one failure
