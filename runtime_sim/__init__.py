"""A simulated Ascend host and runtime that reproduces real failures.

Never imports ascend_doctor: the doctor has to find every fault from the outside.
"""


def build(scenario, dest):
    """Build a simulated host for a scenario name or Scenario (see runtime_sim.host.build)."""
    from runtime_sim.host import build as _build

    return _build(scenario, dest)
