"""Version grammar: parsing, normal forms, a total order per grammar, and bad input."""
from __future__ import annotations

import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from packaging.version import InvalidVersion
from packaging.version import Version as Pep440

from compat_matrix.errors import ComponentError, VersionError
from compat_matrix.versions import KINDS, canonical_kind, parse_spec, parse_version, try_parse_version

from cm_testdata import load_test_data

EXAMPLES = load_test_data("version_examples.yaml")["grammars"]


def test_every_kind_has_examples():
    assert set(EXAMPLES) == set(KINDS)


@pytest.mark.parametrize("kind", sorted(EXAMPLES))
def test_order_of_each_grammar(kind):
    for seq in EXAMPLES[kind]["ordered"]:
        parsed = [parse_version(s, kind) for s in seq]
        # strictly increasing, in the order the sources release them
        for a, b in zip(parsed, parsed[1:]):
            assert a < b, "%s: %s should sort before %s" % (kind, a.text, b.text)
        shuffled = list(reversed(parsed))
        assert [v.text for v in sorted(shuffled)] == [v.text for v in parsed]


def test_issue_example_alpha_after_rc():
    seq = ["8.0.RC1", "8.0.RC2", "8.0.RC3", "8.0.0.alpha001", "8.0.0"]
    parsed = [parse_version(s, "cann") for s in seq]
    assert parsed == sorted(parsed)
    # packaging gets this pair the wrong way round, which is why the grammar exists
    assert Pep440("8.0rc3") > Pep440("8.0.0a1")


@pytest.mark.parametrize("text", ["8.0.RC2.alpha003", "8.1.RC1.beta1", "6.3.RC3.1", "7.0.T10",
                                  "24.1.rc2.1", "24.1.rc2.b010", "26.2.0-0day"])
def test_strings_packaging_rejects_are_parsed(text):
    with pytest.raises(InvalidVersion):
        Pep440(text)
    kind = {"24": "driver", "26": "torch_npu_release"}.get(text.split(".")[0], "cann")
    assert parse_version(text, kind).text


@pytest.mark.parametrize("kind", sorted(EXAMPLES))
def test_equal_spellings(kind):
    for a, b in EXAMPLES[kind].get("equal", []):
        va, vb = parse_version(a, kind), parse_version(b, kind)
        assert va == vb and hash(va) == hash(vb)


@pytest.mark.parametrize("kind", sorted(EXAMPLES))
def test_normal_forms(kind):
    for raw, text in (EXAMPLES[kind].get("normal") or {}).items():
        assert parse_version(raw, kind).text == text


@pytest.mark.parametrize("kind", sorted(EXAMPLES))
def test_rejects_with_one_line_listing_accepted_forms(kind):
    for bad in EXAMPLES[kind]["reject"]:
        with pytest.raises(VersionError) as exc:
            parse_version(bad, kind)
        msg = str(exc.value)
        assert "\n" not in msg and "accepted forms:" in msg
        assert isinstance(exc.value, ValueError)
        assert try_parse_version(bad, kind) is None


def test_banana_message_for_cann():
    with pytest.raises(ValueError) as exc:
        parse_version("banana", "cann")
    assert str(exc.value) == ("not a CANN version: 'banana'; accepted forms: 8.0.RC1, 8.0.0, "
                              "8.3.RC1.alpha003, 9.0.0-beta.2, 6.3.RC3.1, a leading 'CANN' is allowed")


def test_kinds_do_not_compare_across():
    cann, drv = parse_version("8.0.0", "cann"), parse_version("8.0.0", "driver")
    assert cann != drv
    with pytest.raises(TypeError):
        _ = cann < drv


def test_kind_aliases_and_unknown_kind():
    assert canonical_kind("HDK") == "driver"
    assert canonical_kind("pytorch") == "torch"
    assert canonical_kind("torch-npu") == "torch_npu"
    with pytest.raises(ComponentError):
        parse_version("1.0.0", "tensorflow")


def test_version_facts():
    v = parse_version("2.1.0.post10", "torch_npu")
    assert v.base.text == "2.1.0" and v.series == (2, 1) and not v.is_prerelease
    assert parse_version("2.1.0+cpu", "torch").public.text == "2.1.0"
    assert parse_version("8.0.RC2.alpha003", "cann").is_prerelease
    assert parse_version("7.0.T10", "cann").is_prerelease
    assert parse_version("V100R001C15SPC012B220", "inner").family == "V100R001C15"
    assert parse_version("Python 3.10.12", "python").series == (3, 10)


def test_specs():
    line = parse_spec("25.5.X", "driver")
    assert line.is_wildcard
    assert line.matches(parse_version("25.5.1", "driver"))
    assert line.matches(parse_version("25.5.rc1", "driver"))
    assert not line.matches(parse_version("25.6.0", "driver"))
    assert line.position(parse_version("24.1.0", "driver")) == -1
    assert line.position(parse_version("26.0.rc1", "driver")) == 1
    exact = parse_spec("24.1.RC2", "driver")
    assert exact.matches(parse_version("24.1.rc2.1", "driver"))
    assert exact.matches(parse_version("24.1.rc2.b010", "driver"))
    assert not exact.matches(parse_version("24.1.rc3", "driver"))
    # a pre-release is not the release
    assert not parse_spec("8.0.0", "cann").matches(parse_version("8.0.0.alpha001", "cann"))
    assert not parse_spec("9.0.X", "cann").matches(parse_version("9.0.0-beta.2", "cann"))


_ascend = st.builds(
    lambda major, minor, line, extras, stage: "%d.%d.%s%s%s" % (
        major, minor, line, "".join(".%d" % e for e in extras), stage),
    st.integers(0, 30), st.integers(0, 9),
    st.one_of(st.integers(0, 20).map(str), st.integers(1, 9).map(lambda n: "RC%d" % n),
              st.integers(1, 20).map(lambda n: "T%d" % n)),
    st.lists(st.integers(0, 300), max_size=2),
    st.sampled_from(["", ".alpha001", ".alpha3", ".beta1", "-beta.2", "-0day", ".b010"]),
)


@settings(max_examples=200, deadline=None)
@given(st.lists(_ascend, min_size=2, max_size=6))
def test_ascend_order_is_total_and_round_trips(texts):
    vs = [parse_version(t, "cann") for t in texts]
    for v in vs:
        assert parse_version(v.text, "cann") == v  # the normal form parses to the same version
    for a, b in itertools.combinations(vs, 2):
        assert (a < b) + (a == b) + (a > b) == 1
    assert sorted(sorted(vs), reverse=True) == sorted(vs, reverse=True)


# The forms the callers that used to order versions by hand rely on (runtime_sim, op-support,
# opcheck skew, the Python checks), each a string seen in a real source.
@pytest.mark.parametrize("text,kind,series", [
    ("2.13.0+cpu", "torch", (2, 13)),      # torch.__version__ of the CPU wheel on PyPI
    ("2.10.0a0+git", "torch", (2, 10)),    # a PyTorch source build's __version__
    ("v2.7", "torch", (2, 7)),             # op-plugin op_plugin_functions.yaml version specs
    ("2.1.0.post17", "torch_npu", (2, 1)),  # torch-npu on PyPI
    ("3.11.7", "python", (3, 11)),
])
def test_series_of_caller_forms(text, kind, series):
    assert parse_version(text, kind).series == series


def test_hotfix_lines_and_stages_keep_their_release_line():
    # Ascend/pytorch tags: 5.0.rc3.3 is a hotfix of the 5.0.rc3 line, 7.2.0.1 of 7.2.0
    line = lambda t: parse_version(t, "torch_npu_release")  # noqa: E731
    assert line("5.0.rc3") < line("5.0.rc3.3") < line("5.0.0") and line("7.2.0") < line("7.2.0.1") < line("7.3.0")
    # a beta is a pre-release of its version but shares its line (CANN 9.2.0-beta.2)
    beta, final = parse_version("9.2.0-beta.2", "cann"), parse_version("9.2.0", "cann")
    assert beta < final and beta.line_key == final.line_key
    assert parse_version("2.1.0.post10", "torch_npu").base.text == "2.1.0"
    assert parse_version("2.13.0+cpu", "torch").base.public.text == "2.13.0"
