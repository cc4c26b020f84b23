"""resolve_torch_npu_release(): the forms an opcheck version argument can take."""
from __future__ import annotations

import pytest

from compat_matrix import resolve_torch_npu_release
from compat_matrix.releases import ReleaseQueryError, release_map_row


def _wheels(text, **kw):
    return [b.torch_npu.text for b in resolve_torch_npu_release(text, **kw)]


def test_wheel_version():
    (b,) = resolve_torch_npu_release("2.1.0.post10")
    assert b.branch == "v2.1.0-6.0.0" and b.cann.text == "8.0.0" and b.torch.text == "2.1.0"
    assert _wheels("torch_npu==2.4.0rc1") == ["2.4.0rc1"]


def test_release_line_and_branch():
    assert _wheels("7.2.0") == ["2.8.0", "2.7.1", "2.6.0.post3", "2.1.0.post17"]
    assert _wheels("v2.1.0-7.2.0")[0] == "2.1.0.post17"  # GA first, then the 7.2.0.1 hotfix
    assert _wheels("6.0.RC3") == _wheels("6.0.rc3") == ["2.4.0", "2.3.1.post2", "2.1.0.post8"]


def test_cann_version():
    assert _wheels("8.3.RC1") == ["2.8.0", "2.7.1", "2.6.0.post3", "2.1.0.post17"]
    assert _wheels("CANN 8.0.RC1") == ["2.2.0", "2.1.0.post3", "1.11.0.post11"]
    # 7.0.0 is a release line first; as a CANN it means the 5.0.0 builds
    assert "2.5.1" in _wheels("7.0.0")
    assert _wheels("CANN 7.0.0") == _wheels("7.0.0", kind="cann") == ["2.1.0", "2.0.1.post1", "1.11.0.post8"]
    assert _wheels("8.0.RC2.alpha002") == ["2.3.1rc1"]  # only a pre-release goes with an alpha


def test_known_form_without_match_is_empty():
    assert resolve_torch_npu_release("2.99.0") == []
    assert resolve_torch_npu_release("CANN 9.9.0") == []


@pytest.mark.parametrize("bad", ["banana", "", "v2.1.0-", "CANN banana"])
def test_bad_text(bad):
    with pytest.raises(ReleaseQueryError) as info:
        resolve_torch_npu_release(bad)
    assert isinstance(info.value, ValueError) and "\n" not in str(info.value)
    assert "accepted forms" in str(info.value)


def test_release_map_row_shape():
    row = release_map_row(resolve_torch_npu_release("2.1.0.post17")[0])
    assert row == {"wheel": "2.1.0.post17", "branch": "v2.1.0-7.2.0", "torch": "2.1.0", "cann": "CANN 8.3.RC1",
                   "torch_npu_release": "7.2.0", "status": "active", "on_pypi": True, "source": "pt_compat"}
