"""Version profiles: which keys, texts and numbers a torch_npu release line uses.

The data lives in ``data/profiles.yaml`` (each profile names the release branch it
was read from). ``get_profile`` accepts a profile name ("7.2.0"), a torch_npu
product version ("7.2.0", "6.0.rc2", "26.0.1"), a release branch
("v2.1.0-7.2.0") or "cuda"; product versions between profiles map to the newest
profile at or below them.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Dict, List, Optional, Tuple

from compat_matrix.versions import Version, try_parse_version

_DATA = Path(__file__).with_name("data") / "profiles.yaml"


class UnknownProfileError(ValueError):
    """The requested version has no allocator profile."""


@dataclass(frozen=True)
class Profile:
    name: str
    flavor: str
    source: str
    pad_bytes: int
    oom_template: str
    oom_exception: str
    stats_scalars: Tuple[str, ...]
    requested_bytes: bool
    keys: Tuple[str, ...]
    digit_checks: bool
    max_split_op: str
    max_split_mb: object  # int, or the string "large_segment"
    expandable_conflict_check: bool
    expandable_probe_warning: Optional[str]
    segment_size_range_check: bool
    segment_size_deprecated: bool
    banners: Dict[str, str] = field(default_factory=dict)

    def banner_for(self, message_id: str, key: str = "") -> Optional[str]:
        """The ``SUB:CODE`` banner of a message, most specific entry first."""
        if key and "%s.%s" % (message_id, key) in self.banners:
            return self.banners["%s.%s" % (message_id, key)]
        return self.banners.get(message_id)


@lru_cache(maxsize=1)
def _load() -> dict:
    import yaml  # lazy: only simulator users pay for it

    with open(_DATA, "r", encoding="utf-8") as fh:
        return yaml.safe_load(fh)


def messages() -> Dict[str, str]:
    """Message id -> text template (real texts, see profiles.yaml)."""
    return dict(_load()["messages"])


def message(message_id: str, **fields: object) -> str:
    return _load()["messages"][message_id].format(**fields)


@lru_cache(maxsize=None)
def _resolved() -> Dict[str, Profile]:
    raw = {p["name"]: p for p in _load()["profiles"]}
    out: Dict[str, Profile] = {}

    def merged(name: str) -> dict:
        entry = raw[name]
        if "base" not in entry:
            data = dict(entry)
            data["banners"] = dict(entry.get("banners") or {})
            return data
        data = merged(entry["base"])
        for key, value in entry.items():
            if key == "banners":
                data["banners"] = dict(data["banners"], **(value or {}))
            elif key != "base":
                data[key] = value
        return data

    for name in raw:
        d = merged(name)
        out[name] = Profile(
            name=name,
            flavor=d.get("flavor", "npu"),
            source=d["source"],
            pad_bytes=int(d["pad_bytes"]),
            oom_template=d["oom_template"],
            oom_exception=d["oom_exception"],
            stats_scalars=tuple(d["stats_scalars"]),
            requested_bytes=bool(d["requested_bytes"]),
            keys=tuple(d["keys"]),
            digit_checks=bool(d["digit_checks"]),
            max_split_op=d["max_split_min"]["op"],
            max_split_mb=d["max_split_min"]["mb"],
            expandable_conflict_check=bool(d["expandable_conflict_check"]),
            expandable_probe_warning=d.get("expandable_probe_warning"),
            segment_size_range_check=bool(d.get("segment_size_range_check", False)),
            segment_size_deprecated=bool(d.get("segment_size_deprecated", False)),
            banners=d["banners"],
        )
    return out


def profile_names() -> List[str]:
    """Profile names, oldest first (as listed in the data file)."""
    return list(_resolved())


def default_profile() -> Profile:
    return _resolved()[_load()["default_profile"]]


_BRANCH = re.compile(r"^v?\d+\.\d+(?:\.\d+)?-(?P<product>\d+\.\d+\..+)$")


def _product(version: str) -> Optional[Version]:
    """A torch_npu product version ('7.2.0', '6.0.rc2', '26.0.1') by the one version grammar."""
    return try_parse_version(version, "torch_npu_release")


def get_profile(version: Optional[str] = None) -> Profile:
    """Profile for a name, product version or branch; ``None`` -> the default."""
    if version is None or version == "":
        return default_profile()
    if isinstance(version, Profile):
        return version
    profiles = _resolved()
    text = str(version).strip()
    if text in profiles:
        return profiles[text]
    branch = _BRANCH.match(text)
    if branch:
        text = branch.group("product")
    wanted = _product(text)
    if wanted is None:
        raise UnknownProfileError(
            "unknown allocator profile %r (expected one of: %s, a torch_npu product "
            "version such as 7.2.0 or a branch such as v2.1.0-7.2.0)"
            % (str(version), ", ".join(profiles))
        )
    best: Optional[Profile] = None
    best_key: Optional[Version] = None
    for prof in profiles.values():
        key = _product(prof.name)
        if key is None or key > wanted:
            continue
        if best_key is None or key > best_key:
            best, best_key = prof, key
    if best is None:
        raise UnknownProfileError(
            "torch_npu %s predates the simulated allocator profiles (oldest: %s)"
            % (str(version), profile_names()[0])
        )
    return best
