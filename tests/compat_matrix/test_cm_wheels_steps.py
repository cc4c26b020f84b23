"""The steps of compat_matrix.wheels.merge on the shipped data: direct, inherited, inferred, final rows."""
from __future__ import annotations

from compat_matrix import tables, wheels


def test_merge_without_wheel_facts_changes_nothing():
    builds = [object()]
    assert wheels.merge(None, builds, [], object) == (builds, {}, {})


def test_each_step_builds_on_the_ones_before():
    matrix = tables.load_matrix()
    statements = matrix.cann_statements
    kinds = {st.kind for st in statements.values()}
    assert {"table", "wheel", "inherited", "inferred"} <= kinds
    for v, st in statements.items():
        if st.kind == "inherited" and st.via is not None:
            # inherited from an earlier build of the same line that states its CANN itself
            assert st.via < v and wheels._line(st.via) == wheels._line(v)
            assert statements[st.via].kind in ("table", "wheel") and not st.via.pep440.is_prerelease
        if st.kind == "inferred":
            assert st.lower is not None or st.upper is not None
            for side in (st.lower, st.upper):
                if side is not None:
                    assert statements[side[0]].kind in ("table", "wheel")
    # final rows: a wheel or inherited statement gives a build without a stored CANN its CANN
    by_wheel = {b.torch_npu: b for b in matrix.builds}
    for v, st in statements.items():
        if st.kind in ("wheel", "inherited") and v in by_wheel and by_wheel[v].cann_basis == st.kind:
            assert by_wheel[v].cann == st.specs[0]
