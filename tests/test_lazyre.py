"""Regular expressions compiled on first use (ascend_doctor/lazyre.py) behave as compiled ones."""
from __future__ import annotations

import re

import pytest

from ascend_doctor.lazyre import LazyPattern, lazy

# a real line: https://github.com/Ascend/pytorch/blob/af7cebeb892bfed77d9cdf1f227470f1046f8646/docs/zh/user_guide/troubleshooting/troubleshooting_cases/initialization_error.md
LINE = ("RuntimeError: Initialize:build/CMakeFiles/torch_npu.dir/compiler_depend.ts:217 NPU function error: "
        "at_npu::native::AclSetCompileopt(aclCompileOpt::ACL_PRECISION_MODE, precision_mode), error code is 500001")
SOURCE = r"error code is (?P<code>\d+)"


def test_nothing_is_compiled_before_the_first_call():
    p = lazy(SOURCE)
    assert p._compiled is None and p.pattern == SOURCE
    assert p.search(LINE).group("code") == "500001"
    assert isinstance(p.compiled(), re.Pattern)


@pytest.mark.parametrize("method,args", [
    ("search", (LINE,)), ("match", (LINE,)), ("fullmatch", (LINE,)), ("findall", (LINE,)),
    ("sub", ("<n>", LINE)), ("subn", ("<n>", LINE)), ("split", (LINE,)),
])
def test_every_method_answers_like_the_compiled_pattern(method, args):
    eager = re.compile(SOURCE)
    lazy_p = lazy(SOURCE)
    got_first = getattr(lazy_p, method)(*args)
    got_again = getattr(lazy_p, method)(*args)  # the compiled pattern's own method now
    want = getattr(eager, method)(*args)
    for got in (got_first, got_again):
        if isinstance(want, re.Match):
            assert got.group(0) == want.group(0)
        else:
            assert got == want


def test_after_the_first_call_the_compiled_methods_are_used_directly():
    p = lazy(SOURCE, re.I)
    p.search(LINE.upper())
    assert p.search == p.compiled().search
    assert p.groupindex == {"code": 1} and p.groups == 1


def test_a_bad_pattern_fails_when_used():
    p = LazyPattern("(unclosed")
    with pytest.raises(re.error):
        p.search("x")
