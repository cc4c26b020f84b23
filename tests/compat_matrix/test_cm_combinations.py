"""At least 40 combinations from the official tables, each answered as the tables say."""
from __future__ import annotations

import pytest

from compat_matrix.query import evaluate

from cm_testdata import load_test_data

CASES = load_test_data("known_combinations.yaml")["cases"]


def test_there_are_enough_cases():
    assert len(CASES) >= 40
    assert sum(1 for c in CASES if "incompatible" in str(c.get("pairs")) or c.get("verdict") == "incompatible") >= 15
    assert all(c["url"].startswith("https://") for c in CASES)


@pytest.mark.parametrize("case", CASES, ids=[c["id"] for c in CASES])
def test_known_combination(case):
    rep = evaluate(case["stack"])
    for key, want in (case.get("pairs") or {}).items():
        a, b = key.split("~")
        pair = rep.pair(a, b)
        assert pair is not None, "%s: no %s pair" % (case["id"], key)
        assert pair.verdict == want, "%s %s: %s (%s)" % (case["id"], key, pair.verdict, pair.reason)
        assert pair.reason and pair.found
        if want != "unknown":
            assert pair.source and pair.source.startswith("https://")
    if "verdict" in case:
        assert rep.verdict == case["verdict"], "%s: %s" % (
            case["id"], [(p.a, p.b, p.verdict, p.reason) for p in rep.pairs])
