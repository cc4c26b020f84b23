"""Every source of compat_matrix/data renders to a URL that can be opened.

A row read at a commit renders as a GitHub permalink (``/blob/<commit>/path``); the commit is
also its own JSON field. ``url@commit`` (the old rendering) is not a URL.
"""
from __future__ import annotations

import json
import re
from urllib.parse import urlsplit

import pytest
from typer.testing import CliRunner

from ascend_doctor.cli import app
from compat_matrix import evaluate
from compat_matrix.tables import permalink, raw_data

HEX40 = re.compile(r"^[0-9a-f]{40}$")
# every host the data cites; a new one should be a deliberate addition
HOSTS = {"github.com", "gitcode.com", "www.hiascend.com", "hiascend.com", "pypi.org"}


def _sources():
    return sorted(raw_data("sources")["sources"].items())


@pytest.mark.parametrize("sid,row", _sources(), ids=[s for s, _ in _sources()])
def test_every_source_renders_a_plausible_url(matrix, sid, row):
    url = matrix.source_url(sid)
    parts = urlsplit(url)
    assert parts.scheme == "https" and parts.netloc in HOSTS, url
    assert "@" not in url and " " not in url, url
    assert parts.path and not parts.path.endswith("//"), url
    commit = row.get("commit")
    if commit is None:
        assert url == row["url"]
        return
    assert HEX40.match(commit), "%s: give the full 40-hex commit, not %r" % (sid, commit)
    assert parts.netloc == "github.com", "%s: a commit is only rendered into GitHub URLs" % sid
    segs = parts.path.strip("/").split("/")
    assert segs[2] in ("blob", "tree") and segs[3] == commit, url
    # the path after the ref is the one the source names
    assert segs[4:] == urlsplit(row["url"]).path.strip("/").split("/")[4:], url
    assert parts.fragment == urlsplit(row["url"]).fragment


@pytest.mark.parametrize("url,commit,want", [
    ("https://github.com/Ascend/pytorch/blob/master/COMPATIBILITY.en.md", "9e73e708ab9350d203475609f36f8a43f6a0c2ab",
     "https://github.com/Ascend/pytorch/blob/9e73e708ab9350d203475609f36f8a43f6a0c2ab/COMPATIBILITY.en.md"),
    ("https://github.com/Ascend/pytorch/blob/master/COMPATIBILITY.en.md#pytorch-and-python-versions", "abc1234",
     "https://github.com/Ascend/pytorch/blob/abc1234/COMPATIBILITY.en.md#pytorch-and-python-versions"),
    ("https://github.com/Ascend/ascend-deployer/tree/master/downloader/software", "0fbb89f",
     "https://github.com/Ascend/ascend-deployer/tree/0fbb89f/downloader/software"),
    ("https://github.com/Ascend/pytorch", "d99d6cd", "https://github.com/Ascend/pytorch/tree/d99d6cd"),
    ("https://github.com/vllm-project/vllm-ascend/issues/1047", "d99d6cd",
     "https://github.com/vllm-project/vllm-ascend/issues/1047"),
    ("https://gitcode.com/cann/release-management/blob/master/9.0.1/release-notes.md", "d99d6cd",
     "https://gitcode.com/cann/release-management/blob/master/9.0.1/release-notes.md"),
    ("https://github.com/Ascend/pytorch/blob/master/README.md", None,
     "https://github.com/Ascend/pytorch/blob/master/README.md"),
])
def test_permalink(url, commit, want):
    assert permalink(url, commit) == want


def test_compat_json_carries_the_permalink_and_the_commit():
    runner = CliRunner()
    res = runner.invoke(app, ["compat", "--torch", "2.1.0", "--torch-npu", "2.4.0.post2", "--json"])
    pair = json.loads(res.stdout)["pairs"][0]
    assert pair["source"] == ("https://github.com/Ascend/pytorch/blob/9e73e708ab9350d203475609f36f8a43f6a0c2ab/"
                              "COMPATIBILITY.en.md")
    assert pair["source_commit"] == "9e73e708ab9350d203475609f36f8a43f6a0c2ab" and pair["source_id"] == "pt_compat"
    # a page without a commit has none
    p = evaluate({"torch": "2.13.0", "python": "3.11"}).pair("python", "torch")
    assert p.source == "https://pypi.org/simple/torch-npu/" and p.source_commit is None
    assert p.to_json()["source_commit"] is None
