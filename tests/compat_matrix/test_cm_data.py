"""Integrity of the shipped data: sources, parsable versions, no duplicates, no unmarked
contradiction, and the audit's corrections applied."""
from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest
import yaml

from compat_matrix import chips
from compat_matrix.tables import (BUILD_STATUSES, DATA_FILES, HDK_RELATIONS, clear_cache, load_matrix,
                                  raw_data)
from compat_matrix.versions import parse_version

REPO = Path(__file__).resolve().parents[2]


def _rows():
    """(file, row) for every data row that must name a source."""
    for r in raw_data("torch_npu")["builds"]:
        yield "torch_npu", r
    rel = raw_data("releases")
    for key in ("releases", "contradicted_pairings", "cann_editions"):
        for r in rel.get(key) or ():
            yield "releases", r
    for r in raw_data("torch_npu").get("wheel_glibc") or ():
        yield "torch_npu", r
    for r in raw_data("torch_python")["torch"]:
        yield "torch_python", r
    for r in raw_data("cann_hdk")["statements"]:
        yield "cann_hdk", r
    for r in raw_data("downstream")["pins"]:
        yield "downstream", r
    hr = raw_data("host_rules")
    for key in ("drivers", "firmwares", "toolkits"):
        for r in hr[key]:
            yield "host_rules", r


def test_every_file_loads_and_every_version_parses():
    clear_cache()
    m = load_matrix()  # raises DataError on any unparsable version or bad status
    assert len(m.builds) > 100 and len(m.hdk) > 50 and len(m.releases) > 30
    for name in DATA_FILES:
        assert raw_data(name)["schema"] == 1


def test_every_row_has_a_known_source():
    sources = raw_data("sources")["sources"]
    for s in sources.values():
        assert s["url"].startswith("https://")
    n = 0
    for fname, row in _rows():
        n += 1
        assert row.get("source") in sources, "%s row without a known source: %r" % (fname, row)
        for key in ("python_source", "supports_source", "ascend_source"):
            if row.get(key) is not None:
                assert row[key] in sources, "%s: unknown %s in %r" % (fname, key, row)
    assert n > 300
    for c in raw_data("contradictions")["contradictions"]:
        assert c["trusted"] in sources
        for claim in c["claims"]:
            assert claim["source"] in sources


def test_contradiction_ids_resolve():
    ids = {c["id"] for c in raw_data("contradictions")["contradictions"]}
    assert len(ids) == len(raw_data("contradictions")["contradictions"])
    for fname, row in _rows():
        if row.get("contradiction"):
            assert row["contradiction"] in ids, "%s: %r" % (fname, row)


def test_no_duplicate_rows(matrix):
    dup = [k for k, n in Counter(b.torch_npu for b in matrix.builds).items() if n > 1]
    assert not dup, "torch_npu builds listed twice: %s" % dup
    dup = [k for k, n in Counter(r.release for r in matrix.releases).items() if n > 1]
    assert not dup
    key = lambda s: (s.cann.text, tuple(h.text for h in s.hdk), s.relation, s.chips, s.source,
                     s.driver, s.firmware)
    dup = [k for k, n in Counter(key(s) for s in matrix.hdk).items() if n > 1]
    assert not dup, dup
    dup = [k for k, n in Counter(r.torch for r in matrix.torch_python).items() if n > 1]
    assert not dup
    pins = Counter((p.project, p.version, p.torch_npu, p.cann) for p in matrix.pins)
    assert not [k for k, n in pins.items() if n > 1]
    drivers = Counter((d.driver, d.source) for d in matrix.drivers)
    assert not [k for k, n in drivers.items() if n > 1]


def test_statuses_relations_chips_are_known(matrix):
    for b in matrix.builds:
        assert b.status in BUILD_STATUSES
        if b.python:
            pys = [parse_version(p, "python") for p in b.python]
            assert pys == sorted(pys), b.torch_npu
        if b.torch_npu.series[0] == 1 or b.torch_npu.base.text == "2.0.1":
            assert not b.on_pypi, "%s was never on PyPI" % b.torch_npu
        if b.status == "unverified":
            assert b.cann is None and b.on_pypi
    family_ok = set(chips.family_ids()) | {chips.SCOPE_ALL, chips.SCOPE_NON_950}
    for s in matrix.hdk:
        assert s.relation in HDK_RELATIONS
        assert set(s.chips) <= family_ok, s


def _line_release(matrix, b):
    return matrix.release(b.hotfix_of) if b.hotfix_of is not None else (
        matrix.release(b.release) if b.release is not None else None)


def test_no_unmarked_contradiction_between_builds_and_releases(matrix):
    for b in matrix.builds:
        if b.release is None or b.cann is None:
            continue
        rel = matrix.release(b.release)
        assert rel is not None, "build %s names an unknown release %s" % (b.torch_npu, b.release)
        if rel.cann is not None and rel.cann.text != b.cann.text:
            assert b.contradiction, "build %s: CANN %s but release %s says %s" % (
                b.torch_npu, b.cann, rel.release, rel.cann)
        line = _line_release(matrix, b)
        if b.branch and line is not None and b.status != "beta":
            want = "v%s-%s" % (b.torch.text, line.release.text)
            old_style = "%s.tr5" % line.release.text  # the 2.0.x releases used tr5 branch names
            assert b.branch in (want, old_style) or b.contradiction, "%s: branch %s, expected %s" % (b.torch_npu, b.branch, want)
    # a release line with two CANN pairings must say why, on both sides
    by_rel = {r.release: r for r in matrix.releases}
    for other in matrix.contradicted_releases:
        rel = by_rel[parse_version(other["release"], "torch_npu_release")]
        assert other.get("contradiction") and rel.contradiction == other["contradiction"]


def test_no_unmarked_contradiction_between_hdk_statements(matrix):
    neg = [s for s in matrix.hdk if s.relation == "incompatible"]
    pos = [s for s in matrix.hdk if s.relation != "incompatible"]
    for n in neg:
        for p in pos:
            overlap_cann = n.cann.matches(p.cann.version) if p.cann.version else n.cann.text == p.cann.text
            if not overlap_cann or not (set(n.chips) & set(p.chips) or "all" in n.chips + p.chips):
                continue
            for h in p.hdk:
                if h.version is not None and any(x.matches(h.version) for x in n.hdk):
                    assert n.contradiction and p.contradiction, "HDK %s both allowed and refused for CANN %s" % (h, p.cann)


def test_no_unmarked_contradiction_with_downstream_pins(matrix):
    from compat_matrix.query import _supported_cann

    for p in matrix.pins:
        tn = parse_version(p.torch_npu, "torch_npu") if p.torch_npu else None
        b = matrix.build(tn) if tn is not None else None
        if b is None or b.cann is None or not p.cann:
            continue
        cann = parse_version(p.cann, "cann")
        specs, _ = _supported_cann(matrix, b)
        if not any(s.matches(cann) for s in specs):
            assert p.contradiction, "%s %s pins torch_npu %s with CANN %s; the tables say %s" % (
                p.project, p.version, p.torch_npu, p.cann, ", ".join(s.text for s in specs))
        if p.branch and b.branch and p.branch != b.branch:
            assert p.contradiction, "%s pins %s on branch %s, the tables say %s" % (p.project, p.torch_npu, p.branch, b.branch)
        if p.torch:
            assert parse_version(p.torch, "torch") == b.torch or p.contradiction


def _release_map_rows():
    """The op-support release map shipped in compat_matrix/op_support/data/index.json."""
    import json

    index = REPO / "compat_matrix" / "op_support" / "data" / "index.json"
    return (json.loads(index.read_text(encoding="utf-8")).get("release_map") or {}).get("rows")


def test_release_map_of_op_support_agrees():
    """The op-support release map (another helper's data) must agree with the builds here,
    except where a contradiction entry explains the difference."""
    rows = _release_map_rows()
    m = load_matrix()
    assert len(rows) > 50
    for r in rows:
        wheel = parse_version(r["wheel"], "torch_npu")
        b = m.build(wheel)
        assert b is not None, r
        same = (b.branch == r["branch"] and b.torch.text == r["torch"] and b.cann is not None
                and b.cann.text == r["cann"].replace("CANN ", ""))
        assert same or b.contradiction, "release map disagrees without a contradiction id: %r" % r


# The audit's corrections (see the header of compat_matrix/data/torch_npu.yaml), one line each.
AUDIT = [
    ("2.12.0", "3.10", "3.13", "9.1.0", "active"),
    ("2.11.0", "3.10", "3.13", "9.1.0", "active"),
    ("2.9.0", "3.10", "3.12", "8.5.0", "active"),
    ("2.8.0.post2", "3.9", "3.12", "8.5.0", "active"),
    ("2.7.1.post2", "3.9", "3.12", "8.5.0", "active"),
    ("2.6.0.post5", "3.9", "3.12", "8.5.0", "active"),
    ("2.8.0", "3.9", "3.11", "8.3.RC1", "active"),
    ("2.7.1", "3.9", "3.11", "8.3.RC1", "active"),
    ("2.3.1", "3.8", "3.10", "8.0.RC2", "eol"),
    ("2.1.0.post6", "3.8", "3.10", "8.0.RC2", "eol"),
    ("2.1.0", "3.8", "3.10", "7.0.0", "eol"),
    ("2.1.0.rc1", "3.8", "3.10", "7.0.RC1", "eol"),
    ("2.1.0.post3", "3.8", "3.10", "8.0.RC1", "eol"),
    ("1.11.0.post3", "3.7", "3.9", "6.3.RC3.1", "eol"),
    ("1.11.0.rc2", "3.7", "3.9", "6.0.1", "eol"),
    ("2.0.1.rc1", "3.8", "3.9", "6.3.RC2", "eol"),
    ("1.5.0.post2", "3.7", "3.7", "5.0.2", "eol"),
    ("2.3.1rc1", "3.8", "3.10", "8.0.RC2.alpha002", "prerelease"),
    ("2.9.0rc1", "3.10", "3.11", "8.3.RC1.alpha003", "prerelease"),
    ("2.10.0rc2", "3.10", "3.12", "8.5.0", "prerelease"),
    ("2.10.0", "3.10", "3.13", "9.0.0", "active"),
]


@pytest.mark.parametrize("wheel,lo,hi,cann,status", AUDIT)
def test_audit_corrections_applied(matrix, wheel, lo, hi, cann, status):
    b = matrix.build(parse_version(wheel, "torch_npu"))
    assert b is not None
    assert (b.python[0], b.python[-1]) == (lo, hi)
    assert b.cann.text == cann and b.status == status


def test_audit_corrections_other_rows(matrix):
    assert matrix.build(parse_version("1.5.0.post3", "torch_npu")).torch.text == "1.5.0"
    post4 = matrix.build(parse_version("2.1.0.post4", "torch_npu"))
    assert post4.status == "hotfix" and not post4.on_pypi and post4.cann.text == "7.0.X"
    for v in ("2.1.0.post11", "2.3.1.post5", "2.4.0.post3"):
        b = matrix.build(parse_version(v, "torch_npu"))
        assert b.status == "hotfix" and b.release.text == "6.0.0.1" and not b.on_pypi
    for v in ("2.7.1.post5", "2.9.0.post3"):
        assert matrix.build(parse_version(v, "torch_npu")).status == "beta"
    atlas350 = [s for s in matrix.hdk if s.source == "mindcluster_2600" and "atlas350" in s.chips]
    assert [h.text for s in atlas350 for h in s.hdk] == ["25.7.RC1"]
    # 9.2.0 notes extend older CANN to the newer HDK lines
    ext = [s for s in matrix.hdk if s.source == "cann_920_rn" and s.cann.text == "9.0.X"]
    assert {h.text for s in ext for h in s.hdk} >= {"26.1.1", "26.2.RC1"}
    # post-snapshot PyPI releases: no stored table row; the wheels state (or their line gives) the CANN
    basis = {v: matrix.build(parse_version(v, "torch_npu")) for v in ("2.13.0", "2.14.0", "2.9.1", "2.12.0.post3")}
    assert basis["2.13.0"].status == "unverified" and basis["2.13.0"].cann is None
    assert basis["2.13.0"].cann_basis == "inferred"
    assert (basis["2.14.0"].cann_basis, basis["2.14.0"].cann.text) == ("wheel", "9.1.0")
    assert (basis["2.9.1"].cann_basis, basis["2.9.1"].cann.text) == ("wheel", "9.0.0")
    assert (basis["2.12.0.post3"].cann_basis, basis["2.12.0.post3"].cann.text) == ("inherited", "9.1.0")
    assert all(b.status == "published" for v, b in basis.items() if v != "2.13.0")
