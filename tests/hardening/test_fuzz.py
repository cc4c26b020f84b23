"""Property-based tests (hypothesis) of every parser and loader: for mutated real samples
and for arbitrary text or bytes, each returns or raises only its own input error, and its
peak memory stays within a bound proportional to the input.

Example counts are bounded so that CI stays fast (FUZZ_EXAMPLES, default 40 per surface and
strategy); bench/fuzz_throughput.py runs the same surfaces longer and reports inputs per
second and the time of a doubled input (linearity).
"""
from __future__ import annotations

import os
import tracemalloc

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from .fuzz import EDITS, check, mutate, surfaces

EXAMPLES = int(os.environ.get("FUZZ_EXAMPLES", "40"))
SETTINGS = settings(max_examples=EXAMPLES, deadline=None, derandomize=True, database=None,
                    suppress_health_check=list(HealthCheck))
SURFACES = {s.name: s for s in surfaces()}
_SEEDS = {}


def seeds(name):
    if name not in _SEEDS:
        _SEEDS[name] = SURFACES[name].seeds()
    return _SEEDS[name]


edit = st.tuples(st.floats(0, 1), st.sampled_from(EDITS), st.text(max_size=24), st.integers(0, 100))


@pytest.mark.parametrize("name", sorted(SURFACES))
@SETTINGS
@given(data=st.data())
def test_mutated_real_samples(name, data):
    surface = SURFACES[name]
    seed = data.draw(st.sampled_from(seeds(name)))
    edits = data.draw(st.lists(edit, max_size=4))
    value = mutate(seed, edits)
    tracemalloc.start()
    try:
        check(surface, value)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    # memory bounded: a small multiple of the input, plus a constant for tables and caches
    assert peak < 64 * len(value) + (48 << 20), (name, len(value), peak)


@pytest.mark.parametrize("name", sorted(SURFACES))
@SETTINGS
@given(text=st.text(max_size=400), raw=st.binary(max_size=400))
def test_arbitrary_input(name, text, raw):
    surface = SURFACES[name]
    check(surface, raw if surface.binary else text)
