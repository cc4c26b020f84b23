"""version.info / install.info parsers on real files (sources in hosttree.py and below)."""
from __future__ import annotations

import pytest

from ascend_doctor.parsers.version_info import (
    ParseError,
    inner_family,
    parse_driver_version_info,
    parse_firmware_version_info,
    parse_install_info,
    parse_toolkit_install_info,
)

from . import hosttree as ht

# CANN 8.5.0 layout, from https://github.com/Ascend/mind-cluster/blob/master/docs/en/faultdiag/user_guide/03_collecting_logs.md
TOOLKIT_8_5 = """package_name=Ascend-cann-toolkit
version=8.5.0
innerversion=V100R001C25SPC001B212
compatible_version=[V100R001C15],[V100R001C18],[V100R001C19],[V100R001C20],[V100R001C21],[V100R001C23]
arch=aarch64
os=linux
path=/usr/local/Ascend/cann-8.5.0/aarch64-linux
"""


def test_driver_version_info() -> None:
    d = parse_driver_version_info(ht.DRIVER_23_0_7)
    assert d.version == "23.0.7" and d.package_version == "23.0.7"
    assert d.family == "V100R001C15"
    assert d.compatible_families == ("V100R001C29", "V100R001C30", "V100R001C13", "V100R001C15")
    assert d.firmware_ranges == (("7.0.0", "7.1.99"),)


def test_firmware_version_info() -> None:
    f = parse_firmware_version_info(ht.FIRMWARE_7_1)
    assert f.version == "7.1.0.11.220"
    assert f.driver_ranges == (("23.0.rc3", "23.0.rc3."), ("23.0.0", "23.0.0."))


def test_toolkit_install_info_both_layouts() -> None:
    t = parse_toolkit_install_info(ht.TOOLKIT_8_1.format(arch="aarch64"))
    assert (t.version, t.arch, t.family) == ("8.1.RC1", "aarch64", "V100R001C21")
    assert "V100R001C15" in t.compatible_families
    t85 = parse_toolkit_install_info(TOOLKIT_8_5)
    assert (t85.version, t85.path) == ("8.5.0", "/usr/local/Ascend/cann-8.5.0/aarch64-linux")


def test_install_info() -> None:
    info = parse_install_info(ht.INSTALL_INFO)
    assert info["Driver_Install_Path_Param"] == "/usr/local/Ascend" and info["Driver_Install_For_All"] == "no"


@pytest.mark.parametrize(
    "text, message",
    [
        ("", "no Version= line"),
        ("hello world\nthis is not it\n", "no Version= line"),
        ("Version=\x00\x01garbage\n", "unreadable Version"),
        ("\x00\x01\x02\x03" * 50, "binary"),
        ("Version=23.0.7 ; rm -rf / && echo this is much too long to be a version\n", "unreadable Version"),
    ],
)
def test_bad_driver_file(text: str, message: str) -> None:
    with pytest.raises(ParseError, match=message):
        parse_driver_version_info(text)


def test_inner_family() -> None:
    assert inner_family("V100R001C15SPC012B220") == "V100R001C15"
    assert inner_family("V100R001C23B888") == "V100R001C23"
    assert inner_family("7.0.T10") is None
