"""Every version fact the host builder writes names a public source a reader can open.

A source is an https URL (GitHub files pinned to a commit) or, for a capture whose repository
could not be found, says so plainly and lists the public texts that confirm what is kept.
Internal ids of a search tool are not sources.
"""
from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from runtime_sim.host.catalog import DATA_DIR, host_catalog

UNATTRIBUTED = "public file, repository not attributable; text: "
GITHUB_FILE = re.compile(r"^https://github\.com/[^/]+/[^/]+/blob/([^/]+)/\S+")
HEX40 = re.compile(r"^[0-9a-f]{40}$")


def _data(name: str):
    return yaml.safe_load((Path(DATA_DIR) / name).read_text(encoding="utf-8"))


def _entries():
    pkgs = _data("packages.yaml")
    for kind in ("drivers", "firmwares", "toolkits"):
        for version, entry in pkgs[kind].items():
            yield "%s/%s" % (kind, version), entry
    for name, chip in _data("chips.yaml")["chips"].items():
        yield "chips/%s" % name, chip


ENTRIES = list(_entries())


@pytest.mark.parametrize("name", ["packages.yaml", "chips.yaml"])
def test_no_search_tool_ids(name):
    text = (Path(DATA_DIR) / name).read_text(encoding="utf-8")
    assert not re.search(r"index id|code-search", text, re.I)


@pytest.mark.parametrize("where,entry", ENTRIES, ids=[w for w, _ in ENTRIES])
def test_every_source_is_a_url_or_says_it_is_unattributed(where, entry):
    src = " ".join(str(entry["source"]).split())
    if src.startswith(UNATTRIBUTED):
        assert len(src) > len(UNATTRIBUTED) + 40, "%s: quote enough text to find it again" % where
        confirmed = entry.get("confirmed_by")
        assert confirmed, "%s: an unattributed capture keeps only facts another text confirms" % where
        return
    assert src.startswith("https://"), where
    m = GITHUB_FILE.match(src)
    if m:  # a file on a branch moves; the commit keeps the quoted text findable
        assert HEX40.match(m.group(1)), "%s: pin %s to a commit" % (where, src.split()[0])


# https://github.com/stephenfuyuxin/npuAdapter/blob/7639be0a0f1112e6076922494bee9c80ca1361df/Zero-DCE++NPUMig/README.md
FIRMWARE_7_5_0_1_129 = """Version=7.5.0.1.129
firmware_version=1.0
package_version=24.1.rc3
compatible_version_drv=[23.0.0,23.0.0.],[24.0,24.0.],[24.1,24.1.]
"""


def test_firmware_7_5_is_the_published_file_not_a_composition():
    fw = host_catalog().firmwares["7.5.0.1.129"]
    assert fw.text() == FIRMWARE_7_5_0_1_129
    assert "composed" not in _data("packages.yaml")["firmwares"]["7.5.0.1.129"]


def test_unattributed_driver_keeps_only_the_confirmed_firmware_range():
    # the PyPTO troubleshooting pages print this driver's version.info with [7.0.0,8.9.9] only
    drv = host_catalog().drivers["25.3.rc1"]
    assert drv.get("compatible_version_fw") == "[7.0.0,8.9.9]"
    assert drv.get("Innerversion") == "V100R001C23SPC002B212"
