"""The scenario schema repeats the doctor's category list (runtime_sim may not import the doctor)."""
from ascend_doctor.model import CATEGORIES
from runtime_sim.scenarios.schema import CATEGORIES as SIM_CATEGORIES


def test_same_taxonomy():
    assert SIM_CATEGORIES == CATEGORIES
