"""Judge the compatibility rules an Ascend host states in its own version files.

Pure functions on text and values (no file access): ``check`` reads the files through
its Host and passes their contents here.

* driver <-> firmware: ``compatible_version_fw=[lo,hi],...`` in driver/version.info and
  ``compatible_version_drv=[X,X.],...`` in firmware/version.info, judged the way the
  driver's own tooling does (npu-smi "Compatibility"; source id ``dcmi_compat``).
* toolkit <-> driver: the toolkit's ``compatible_version=[V100R001Cxx],...`` must list the
  inner family of the driver's ``Innerversion``.
"""
from __future__ import annotations

import re
from typing import Dict, Iterable, List, Optional, Sequence, Tuple

from compat_matrix.errors import CompatError
from compat_matrix.report import COMPATIBLE, INCOMPATIBLE, UNKNOWN, Pair
from compat_matrix.versions import parse_version, try_parse_version

# A firmware below this (string order) is refused whatever the lists say.
MIN_FIRMWARE_PREFIX = "6.4."

_RANGE_ITEM = re.compile(r"\[\s*([^\[\],]+?)\s*,\s*([^\[\],]+?)\s*\]")
_FAMILY_ITEM = re.compile(r"\[\s*(V\d+R\d+C\d+)[^\]]*\]", re.IGNORECASE)
_SOURCE_DCMI = "dcmi_compat"


class HostRuleError(CompatError):
    """A compatible_version* value that cannot be read."""


def parse_key_values(text: str) -> Dict[str, str]:
    """``key=value`` lines of a version.info / install.info file (first occurrence wins)."""
    out: Dict[str, str] = {}
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith("#") or "=" not in line:
            continue
        key, _, value = line.partition("=")
        key = key.strip()
        if key and key not in out:
            out[key] = value.strip().strip('"')
    return out


def parse_ranges(value: str) -> List[Tuple[str, str]]:
    """'[7.0.0,7.1.99],[6.4.0,6.4.99]' -> [('7.0.0', '7.1.99'), ('6.4.0', '6.4.99')]."""
    items = _RANGE_ITEM.findall(value or "")
    if not items:
        raise HostRuleError("cannot read a version range list from %r" % (value,))
    return [(lo, hi) for lo, hi in items]


def parse_families(value: str) -> List[str]:
    """'[V100R001C15],[V100R001C18]' -> ['V100R001C15', 'V100R001C18'] (upper case)."""
    items = _FAMILY_ITEM.findall(value or "")
    if not items:
        raise HostRuleError("cannot read an inner-version family list from %r" % (value,))
    return [i.upper() for i in items]


def range_accepts(version: str, lo: str, hi: str) -> bool:
    """Whether [lo, hi] accepts ``version``, as the driver tooling decides it: the first
    max(len(lo), len(hi)) characters of the version lie between lo and hi in string order.
    So [24.1,24.1.] takes every '24.1.*', and [7.0.0,7.1.99] takes 7.1.0.11.220."""
    width = max(len(lo), len(hi))
    head = version.strip().lower()[:width]
    return lo.lower() <= head <= hi.lower()


def first_accepting(version: str, ranges: Iterable[Tuple[str, str]]) -> Optional[Tuple[str, str]]:
    for lo, hi in ranges:
        if range_accepts(version, lo, hi):
            return (lo, hi)
    return None


def _major(version: str) -> int:
    v = try_parse_version(version, "driver")
    return v.series[0] if v is not None else 0


def _fmt_ranges(ranges: Sequence[Tuple[str, str]]) -> str:
    return ",".join("[%s,%s]" % r for r in ranges)


def judge_driver_firmware(driver: str, firmware: str,
                          driver_fw_ranges: Optional[Sequence[Tuple[str, str]]] = None,
                          firmware_drv_ranges: Optional[Sequence[Tuple[str, str]]] = None,
                          source: Optional[str] = None) -> Pair:
    """Judge one driver/firmware pair from the lists their version.info files state.

    driver_fw_ranges: the driver's compatible_version_fw; firmware_drv_ranges: the
    firmware's compatible_version_drv (either may be unknown). ``source`` is the URL or path
    quoted as evidence (default: how the driver tooling judges it).
    """
    found = "driver %s with firmware %s" % (driver, firmware)
    src = source
    fw = firmware.strip()
    if fw.lower() < MIN_FIRMWARE_PREFIX:
        if _major(driver) < 23 and driver_fw_ranges and first_accepting(fw, driver_fw_ranges):
            # a driver older than the 23.0 line, whose tooling predates the lists and the 6.4
            # floor, names this firmware itself: the files alone cannot settle it
            return Pair("driver", "firmware", UNKNOWN, found, "firmware 6.4 or later", src,
                        "driver %s lists firmware %s, but drivers whose tooling has the 6.4 floor refuse it"
                        % (driver, fw), _SOURCE_DCMI)
        return Pair("driver", "firmware", INCOMPATIBLE, found, "firmware 6.4 or later", src,
                    "firmware %s is older than 6.4, which current drivers refuse whatever their "
                    "lists say" % fw, _SOURCE_DCMI)
    if driver_fw_ranges:
        hit = first_accepting(fw, driver_fw_ranges)
        if hit:
            return Pair("driver", "firmware", COMPATIBLE, found,
                        "firmware in %s" % _fmt_ranges(driver_fw_ranges), src,
                        "the driver's compatible_version_fw range [%s,%s] accepts firmware %s"
                        % (hit[0], hit[1], fw), _SOURCE_DCMI)
    if firmware_drv_ranges:
        hit = first_accepting(driver, firmware_drv_ranges)
        if hit:
            return Pair("driver", "firmware", COMPATIBLE, found,
                        "driver in %s" % _fmt_ranges(firmware_drv_ranges), src,
                        "the firmware's compatible_version_drv entry [%s,%s] accepts driver %s"
                        % (hit[0], hit[1], driver), _SOURCE_DCMI)
    if driver_fw_ranges and firmware_drv_ranges:
        return Pair("driver", "firmware", INCOMPATIBLE, found,
                    "firmware in %s, or a driver in %s" % (_fmt_ranges(driver_fw_ranges),
                                                          _fmt_ranges(firmware_drv_ranges)),
                    src, "neither side accepts the other: the driver takes firmware %s and the "
                    "firmware takes drivers %s" % (_fmt_ranges(driver_fw_ranges),
                                                   _fmt_ranges(firmware_drv_ranges)), _SOURCE_DCMI)
    if driver_fw_ranges:
        # the firmware's list lives in its version.info (and in flash); without it the
        # tooling would still try it, so this is not proof of a mismatch
        return Pair("driver", "firmware", UNKNOWN, found,
                    "firmware in %s" % _fmt_ranges(driver_fw_ranges), src,
                    "the driver's compatible_version_fw %s does not take firmware %s, and the "
                    "firmware's compatible_version_drv is not known" %
                    (_fmt_ranges(driver_fw_ranges), fw), _SOURCE_DCMI)
    if firmware_drv_ranges:
        return Pair("driver", "firmware", UNKNOWN, found,
                    "driver in %s" % _fmt_ranges(firmware_drv_ranges), src,
                    "the firmware's compatible_version_drv %s does not take driver %s, and the "
                    "driver's compatible_version_fw is not known" %
                    (_fmt_ranges(firmware_drv_ranges), driver), _SOURCE_DCMI)
    return Pair("driver", "firmware", UNKNOWN, found, None, src,
                "neither compatible_version_fw nor compatible_version_drv is known", None)


def judge_toolkit_driver(toolkit_compatible_version: Sequence[str], driver_innerversion: str,
                         toolkit_version: Optional[str] = None, driver_version: Optional[str] = None,
                         source: Optional[str] = None) -> Pair:
    """Judge CANN toolkit <-> driver by inner-version family: the toolkit's
    compatible_version list must name the family (V100R001Cxx) of the driver's Innerversion.

    Passing is necessary, not sufficient: the toolkit lists are wider than the release notes.
    """
    inner = parse_version(driver_innerversion, "inner")
    families = [f.upper() for f in toolkit_compatible_version]
    for f in families:
        parse_version(f, "inner")  # reject garbage early, with the accepted forms
    drv = driver_version or inner.text
    tk = "CANN %s" % toolkit_version if toolkit_version else "the CANN toolkit"
    found = "%s with driver %s (family %s)" % (tk, drv, inner.family)
    required = "driver family in " + ",".join("[%s]" % f for f in families)
    if inner.family in families:
        return Pair("cann", "driver", COMPATIBLE, found, required, source,
                    "%s lists the driver's inner family %s in its compatible_version"
                    % (tk, inner.family), None)
    return Pair("cann", "driver", INCOMPATIBLE, found, required, source,
                "%s does not list the driver's inner family %s in its compatible_version "
                "(it lists %s)" % (tk, inner.family, ", ".join(families)), None)


def judge_version_files(driver_info: Optional[str] = None, firmware_info: Optional[str] = None,
                        toolkit_info: Optional[str] = None) -> List[Pair]:
    """Convenience for ``check``: the contents of driver/version.info,
    firmware/version.info and ascend_toolkit_install.info in, the pairs they decide out.
    A file that is None is skipped; a field that is missing yields no pair."""
    pairs: List[Pair] = []
    drv = parse_key_values(driver_info) if driver_info else {}
    fw = parse_key_values(firmware_info) if firmware_info else {}
    tk = parse_key_values(toolkit_info) if toolkit_info else {}
    if drv.get("Version") and fw.get("Version"):
        drv_ranges = parse_ranges(drv["compatible_version_fw"]) if drv.get("compatible_version_fw") else None
        fw_ranges = parse_ranges(fw["compatible_version_drv"]) if fw.get("compatible_version_drv") else None
        pairs.append(judge_driver_firmware(drv["Version"], fw["Version"], drv_ranges, fw_ranges,
                                           source="driver/version.info, firmware/version.info"))
    if tk.get("compatible_version") and drv.get("Innerversion"):
        pairs.append(judge_toolkit_driver(parse_families(tk["compatible_version"]), drv["Innerversion"],
                                          tk.get("version"), drv.get("Version"),
                                          source="ascend_toolkit_install.info, driver/version.info"))
    return pairs
