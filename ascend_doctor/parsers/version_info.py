"""Parsers for the key=value files an Ascend install leaves behind.

- driver  ``/usr/local/Ascend/driver/version.info``
- firmware ``/usr/local/Ascend/firmware/version.info``
- ``/etc/ascend_install.info``
- CANN ``<arch>-linux/ascend_toolkit_install.info`` (and its siblings)

Formats: driver and firmware version.info (https://github.com/Ascend/mind-cluster/blob/master/component/ascend-faultdiag/test/st_testcase/modelarts-job-testdt/ascend/environment_check/worker-0/npu_info_before.txt),
/etc/ascend_install.info (https://github.com/Ascend/ascend-docker-image/blob/master/all-in-one/ascend_install.info), toolkit install info
(https://github.com/vllm-project/vllm-ascend/issues/1047, https://github.com/Ascend/mind-cluster/blob/master/docs/en/faultdiag/user_guide/03_collecting_logs.md).
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Tuple

from ..lazyre import lazy


class ParseError(ValueError):
    """The text is not the file it should be; the message is one line."""


def looks_binary(text: str) -> bool:
    """Text decoded from bytes that were mostly not text (NULs or replacement chars)."""
    if not text:
        return False
    bad = text.count("\x00") + text.count("\ufffd")
    return bad > max(2, len(text) // 20)


def parse_key_values(text: str) -> Dict[str, str]:
    """``key=value`` lines; later keys win; lines that are not key=value are ignored."""
    out: Dict[str, str] = {}
    for line in text.splitlines():
        key, found, value = line.partition("=")
        key = key.strip()
        if found and key and all(c.isalnum() or c in "_-." for c in key):
            out[key] = value.strip()
    return out


_BRACKET = lazy(r"\[([^\]]*)\]")


def parse_bracket_list(value: str) -> List[List[str]]:
    """``[a,b],[c]`` -> ``[["a", "b"], ["c"]]`` (the *compatible_version* fields)."""
    return [[p.strip() for p in m.group(1).split(",")] for m in _BRACKET.finditer(value or "")]


_INNER = lazy(r"^(V\d+R\d+C\d+)", re.IGNORECASE)


def inner_family(inner_version: Optional[str]) -> Optional[str]:
    """``V100R001C15SPC012B220`` -> ``V100R001C15`` (the family the compatible_version lists name)."""
    if not inner_version:
        return None
    m = _INNER.match(inner_version.strip())
    return m.group(1).upper() if m else None


@dataclass(frozen=True)
class DriverVersionInfo:
    version: str
    inner_version: Optional[str]
    compatible_families: Tuple[str, ...]  # CANN inner-version families the driver accepts
    firmware_ranges: Tuple[Tuple[str, str], ...]  # inclusive [low, high] firmware versions
    package_version: Optional[str]
    fields: Dict[str, str] = field(default_factory=dict, compare=False)

    @property
    def family(self) -> Optional[str]:
        return inner_family(self.inner_version)


@dataclass(frozen=True)
class FirmwareVersionInfo:
    version: str
    package_version: Optional[str]
    driver_ranges: Tuple[Tuple[str, str], ...]  # compatible_version_drv pairs, e.g. ("23.0.rc3", "23.0.rc3.")
    fields: Dict[str, str] = field(default_factory=dict, compare=False)


@dataclass(frozen=True)
class ToolkitInstallInfo:
    package_name: Optional[str]
    version: str
    inner_version: Optional[str]
    compatible_families: Tuple[str, ...]  # driver inner-version families the toolkit accepts
    arch: Optional[str]
    os: Optional[str]
    path: Optional[str]
    fields: Dict[str, str] = field(default_factory=dict, compare=False)

    @property
    def family(self) -> Optional[str]:
        return inner_family(self.inner_version)


_VERSION_TEXT = lazy(r"^[0-9A-Za-z][0-9A-Za-z.\-_+]{0,63}$")


def _require_version(fields: Dict[str, str], key: str, what: str, text: str) -> str:
    if looks_binary(text):
        raise ParseError(f"{what} is binary, not a key=value text file")
    value = fields.get(key)
    if value is None:
        raise ParseError(f"{what} has no {key}= line")
    if not _VERSION_TEXT.match(value):
        shown = value if len(value) <= 40 else value[:37] + "..."
        raise ParseError(f"{what} has an unreadable {key}= value {shown!r}")
    return value


def _pairs(value: Optional[str]) -> Tuple[Tuple[str, str], ...]:
    out = []
    for item in parse_bracket_list(value or ""):
        if len(item) >= 2:
            out.append((item[0], item[1]))
        elif len(item) == 1 and item[0]:
            out.append((item[0], item[0]))
    return tuple(out)


def _families(value: Optional[str]) -> Tuple[str, ...]:
    return tuple(i[0].upper() for i in parse_bracket_list(value or "") if i and i[0])


def parse_driver_version_info(text: str) -> DriverVersionInfo:
    fields = parse_key_values(text)
    version = _require_version(fields, "Version", "driver version.info", text)
    return DriverVersionInfo(
        version=version,
        inner_version=fields.get("Innerversion"),
        compatible_families=_families(fields.get("compatible_version")),
        firmware_ranges=_pairs(fields.get("compatible_version_fw")),
        package_version=fields.get("package_version"),
        fields=fields,
    )


def parse_firmware_version_info(text: str) -> FirmwareVersionInfo:
    fields = parse_key_values(text)
    version = _require_version(fields, "Version", "firmware version.info", text)
    return FirmwareVersionInfo(
        version=version,
        package_version=fields.get("package_version"),
        driver_ranges=_pairs(fields.get("compatible_version_drv")),
        fields=fields,
    )


def parse_toolkit_install_info(text: str, what: str = "ascend_toolkit_install.info") -> ToolkitInstallInfo:
    fields = parse_key_values(text)
    version = _require_version(fields, "version", what, text)
    return ToolkitInstallInfo(
        package_name=fields.get("package_name"),
        version=version,
        inner_version=fields.get("innerversion"),
        compatible_families=_families(fields.get("compatible_version")),
        arch=fields.get("arch"),
        os=fields.get("os"),
        path=fields.get("path"),
        fields=fields,
    )


def parse_install_info(text: str) -> Dict[str, str]:
    """``/etc/ascend_install.info``; raises ParseError for binary junk."""
    if looks_binary(text):
        raise ParseError("/etc/ascend_install.info is binary, not a key=value text file")
    return parse_key_values(text)
