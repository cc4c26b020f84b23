"""Inputs the fuzz runs (bench/fuzz_throughput.py) found to raise something other than the
surface's own input error, kept as regression tests: each must now return or raise only
that error."""
from __future__ import annotations

import pytest

from .fuzz import check, surfaces

SURFACES = {s.name: s for s in surfaces()}
BIG = "9" * 5000

FOUND = [
    # int() of a 4,301+ digit std::stoi / std::stoull / std::stod argument
    ("alloc-conf strings", "roundup_power2_divisions:" + BIG),
    ("alloc-conf strings", "max_split_size_mb:1" + BIG),
    ("alloc-conf strings", "roundup_power2_divisions:[256:1,512:" + BIG + "]"),
    ("alloc-conf strings", "garbage_collection_threshold:1" + BIG + ".5"),
    # yaml's int() of a 5,000-digit number in a scenario file
    ("runtime_sim scenario files", "name: x\nseed: " + BIG + "\n"),
    # workload.params that is not a mapping
    ("runtime_sim scenario files", "name: x\nworkload:\n  kind: train\n  params: abc\n"),
    # '²' is a digit to str.isdigit() but not to int()
    ("version strings", "2.1.0.²"),
    # quadratic backtracking on a long digit run with no '/' (npu-smi memory pairs)
    ("npu-smi tables", "| 0     910B3     | OK | 93.7  40  0 / 0 |\n| 0  0 | 0000:C1:00.0 | 0  " + "9" * 20000 + " |\n"),
]


@pytest.mark.parametrize("name, value", FOUND, ids=[f"{n}-{i}" for i, (n, _) in enumerate(FOUND)])
def test_found_input_is_handled(name, value):
    check(SURFACES[name], value)
