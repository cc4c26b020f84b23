"""PYTORCH_NPU_ALLOC_CONF: the parser of torch_npu's release branches, rule by rule.

Behaviour follows ``CachingAllocatorConfig::lexArgs / consumeToken / parse*`` of
the branch a profile was read from (see data/profiles.yaml):

* the string is cut into tokens at ``,`` ``:`` ``[`` ``]`` (each separator is a
  token of its own) and spaces are dropped;
* keys are handled in order and the first failing check raises; after each
  option the next token must be ``,``;
* integers go through ``std::stoi`` (a leading number is enough, ``12abc`` is
  12; nothing numeric raises the bare text ``stoi``) and are then cast to
  ``size_t`` (so ``-5`` becomes a huge number), doubles through ``std::stod``;
* from 7.3.0 integer options are first checked with ``isDigit``.

Errors are :class:`AllocConfError` whose text is the real message plus, where the
profile's branch appends one, the torch_npu error banner.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import List, Optional, Union

from .constants import ALIGN_ROUND_LARGE, LARGE_BUFFER, MiB, ROUNDUP_POWER2_INTERVALS
from .errors import AllocConfError, ErrorContext, format_banner
from .profiles import Profile, get_profile, message

_SIZE_MAX = (1 << 64) - 1
_INT_MIN, _INT_MAX = -(1 << 31), (1 << 31) - 1

# Key name used inside "Error, expecting <name> value" where the source differs.
_MISSING_NAME = {
    "pin_memory_expandable_segments": "m_pin_memory_expandable_segments",
    "pinned_mem_register": "m_pinned_mem_register",
    "pinned_reserve_segment_size_mb": "host reserve_segment_size_mb",
}
_BOOL_KEYS = (
    "expandable_segments",
    "pin_memory_expandable_segments",
    "pinned_mem_register",
    "multi_stream_lazy_reclaim",
    "pinned_use_background_threads",
)


def _too_long(digits: str) -> bool:
    """More digits than a 64-bit integer has (leading zeros and sign aside)."""
    return len(digits.lstrip("+-").lstrip("0")) > 20


@dataclass
class AllocatorConfig:
    """The allocator settings a PYTORCH_NPU_ALLOC_CONF string produced.

    Sizes are bytes. ``max_split_size`` is ``None`` when unlimited (the default).
    ``warnings`` holds the texts torch_npu prints with TORCH_NPU_WARN_ONCE while
    parsing (e.g. expandable segments turned off because the driver cannot
    reserve virtual addresses).
    """

    profile: Profile
    source_text: str = ""
    max_split_size: Optional[int] = None
    max_non_split_rounding: int = LARGE_BUFFER
    garbage_collection_threshold: float = 0.0
    expandable_segments: bool = False
    base_addr_aligned_size: int = ALIGN_ROUND_LARGE
    page_size_1g: bool = False
    segment_size: int = 0
    large_segment_size: int = LARGE_BUFFER
    roundup_power2_divisions: List[int] = field(
        default_factory=lambda: [0] * ROUNDUP_POWER2_INTERVALS)
    multi_stream_lazy_reclaim: bool = False
    per_process_memory_fraction: Optional[float] = None
    pin_memory_expandable_segments: bool = False
    pinned_mem_register: bool = False
    pinned_use_background_threads: bool = False
    pinned_reserve_segment_size_mb: int = 0
    warnings: List[str] = field(default_factory=list)

    @property
    def expandable_page_size(self) -> int:
        """Physical page size of large-pool expandable segments."""
        if self.page_size_1g:
            return 1 << 30
        if self.large_segment_size != LARGE_BUFFER:
            return self.large_segment_size
        return self.segment_size if self.segment_size > 0 else LARGE_BUFFER

    def divisions_for(self, size: int) -> int:
        """roundup_power2_divisions entry for a rounded size (0 = off)."""
        if size <= 0:
            return 0
        log_size = size.bit_length() - 1
        start = 20  # log2(1 MiB)
        index = log_size - start if log_size > start else 0
        return self.roundup_power2_divisions[min(index, ROUNDUP_POWER2_INTERVALS - 1)]


_STOD = re.compile(
    r"[+-]?(?:inf(?:inity)?|nan|0x[0-9a-f]+(?:\.[0-9a-f]*)?(?:p[+-]?\d+)?|"
    r"(?:\d+\.?\d*|\.\d+)(?:e[+-]?\d+)?)",
    re.IGNORECASE,
)
_STOI = re.compile(r"[+-]?\d+")


def _lex(text: str) -> List[str]:
    tokens: List[str] = []
    buf: List[str] = []
    for ch in text:
        if ch in ",:[]":
            if buf:
                tokens.append("".join(buf))
                buf = []
            tokens.append(ch)
        elif ch != " ":
            buf.append(ch)
    if buf:
        tokens.append("".join(buf))
    return tokens


def _is_digit(token: str) -> bool:
    return bool(token) and all("0" <= c <= "9" for c in token)


def _is_pow2(value: int) -> bool:
    return value > 0 and value & (value - 1) == 0


class _Parser:
    def __init__(self, text: str, profile: Profile, ctx: ErrorContext,
                 expandable_supported: bool, page_1g_supported: bool):
        self.profile = profile
        self.ctx = ctx
        self.tokens = _lex(text)
        self.cfg = AllocatorConfig(profile=profile, source_text=text)
        self.expandable_supported = expandable_supported
        self.page_1g_supported = page_1g_supported
        self.expandable_set = False

    # -- errors -------------------------------------------------------------
    def fail(self, message_id: str, option: str = "", **fields: object) -> None:
        text = message(message_id, **fields)
        spec = self.profile.banner_for(message_id, option)
        if spec:
            text += format_banner(spec, self.ctx)
        raise AllocConfError(text, message_id, option)

    def missing(self, key: str) -> None:
        self.fail("value_missing", key, name=_MISSING_NAME.get(key, key))

    def consume(self, i: int, token: str) -> None:
        if not (i < len(self.tokens) and self.tokens[i] == token):
            self.fail("expected_token", token=token)

    # -- std::sto* ----------------------------------------------------------
    def stoi(self, token: str) -> int:
        m = _STOI.match(token)
        # more digits than any int has: std::stoi's out_of_range (and no 4,300-digit int())
        if not m or _too_long(m.group(0)) or not (_INT_MIN <= int(m.group(0)) <= _INT_MAX):
            raise AllocConfError(message("stoi"), "stoi")
        return int(m.group(0)) & _SIZE_MAX  # static_cast<size_t>

    def stoull(self, token: str) -> int:
        m = _STOI.match(token)
        if not m or _too_long(m.group(0)) or abs(int(m.group(0))) > _SIZE_MAX:
            raise AllocConfError(message("stoull"), "stoull")
        return int(m.group(0)) & _SIZE_MAX

    def stod(self, token: str) -> float:
        m = _STOD.match(token)
        if not m:
            raise AllocConfError(message("stod"), "stod")
        text = m.group(0)
        body = text.lstrip("+-").lower()
        if body.startswith("0x"):
            value = float.fromhex(text)
        else:
            value = float(text)
        if value != value or value in (float("inf"), float("-inf")):  # std::stod: out_of_range
            raise AllocConfError(message("stod"), "stod")
        return value

    # -- options ------------------------------------------------------------
    def value_index(self, i: int, key: str) -> int:
        """Index of the value after ``key:`` (the key is at ``i``); the real parser's error if absent."""
        self.consume(i + 1, ":")
        i += 2
        if i >= len(self.tokens):
            self.missing(key)
        return i

    def max_split_size(self, i: int) -> int:
        key = "max_split_size_mb"
        i = self.value_index(i, key)
        tok = self.tokens[i]
        if self.profile.digit_checks and not _is_digit(tok):
            self.fail("max_split_invalid", key)
        val = self.stoi(tok)
        op = self.profile.max_split_op
        limit = self.profile.max_split_mb
        if limit == "large_segment":
            limit = self.cfg.large_segment_size // MiB
        ok = val > limit if op == ">" else val >= limit
        if not ok:
            self.fail("max_split_too_small", key, op=op, mb=limit)
        val = max(val, int(limit))
        val = min(val, _SIZE_MAX // MiB)
        self.cfg.max_split_size = (val * MiB) & _SIZE_MAX
        return i

    def garbage_collection_threshold(self, i: int) -> int:
        key = "garbage_collection_threshold"
        i = self.value_index(i, key)
        val = self.stod(self.tokens[i])
        if not val > 0:
            self.fail("gc_too_small", key)
        if not val < 1.0:
            self.fail("gc_too_big", key)
        self.cfg.garbage_collection_threshold = val
        return i

    def boolean(self, i: int, key: str) -> int:
        i = self.value_index(i, key)
        tok = self.tokens[i]
        if tok not in ("True", "False"):
            self.fail("bool_expected", key, key=key)
        value = tok == "True"
        if key == "expandable_segments":
            self.expandable_set = True
            if value and not self.expandable_supported and self.profile.expandable_probe_warning:
                self.cfg.warnings.append(self.profile.expandable_probe_warning)
                value = False
        setattr(self.cfg, key, value)
        return i

    def base_addr_aligned_kb(self, i: int) -> int:
        key = "base_addr_aligned_kb"
        i = self.value_index(i, key)
        tok = self.tokens[i]
        if self.profile.digit_checks and not _is_digit(tok):
            self.fail("base_addr_invalid", key)
        val = self.stoi(tok)
        if len(tok) != len(str(val)) or val > ALIGN_ROUND_LARGE // 1024:
            self.fail("base_addr_range", key)
        self.cfg.base_addr_aligned_size = val * 1024
        return i

    def page_size(self, i: int) -> int:
        if not i + 2 < len(self.tokens):
            self.fail("page_size_format", "page_size")
        if self.tokens[i + 1] != ":":
            self.fail("page_size_colon", "page_size")
        if self.tokens[i + 2] != "1g":
            self.fail("page_size_unsupported", "page_size", value=self.tokens[i + 2])
        if self.page_1g_supported:
            self.cfg.page_size_1g = True
        else:
            self.cfg.warnings.append(message("warn_page_1g_cann"))
        return i + 2

    def segment_size_mb(self, i: int) -> int:
        key = "segment_size_mb"
        if self.profile.segment_size_deprecated:
            self.cfg.warnings.append(message("warn_segment_size_deprecated"))
        i = self.value_index(i, key)
        tok = self.tokens[i]
        if self.profile.digit_checks and not _is_digit(tok):
            self.fail("segment_size_invalid", key)
        val = self.stoi(tok)
        if self.profile.segment_size_range_check and not 20 <= val <= 512:
            self.fail("segment_size_range", key)
        self.cfg.segment_size = (val * MiB) & _SIZE_MAX
        return i

    def large_segment_first_pass(self) -> None:
        key = "large_segment_size_mb"
        if key not in self.tokens:
            return
        i = self.tokens.index(key)
        i = self.value_index(i, key)
        tok = self.tokens[i]
        if not _is_digit(tok):
            self.fail("large_segment_invalid", key)
        val = self.stoi(tok)
        if not val > 10:
            self.fail("large_segment_too_small", key)
        self.cfg.large_segment_size = min(val, _SIZE_MAX // MiB) * MiB

    def skip_int(self, i: int, key: str) -> int:
        # large_segment_size_mb (checked in the first pass) and
        # pinned_reserve_segment_size_mb are only re-read with stoi here.
        self.consume(i + 1, ":")
        i += 2
        if i < len(self.tokens):
            val = self.stoi(self.tokens[i])
            if key == "pinned_reserve_segment_size_mb":
                self.cfg.pinned_reserve_segment_size_mb = val
        elif key == "pinned_reserve_segment_size_mb":
            self.missing(key)
        return i

    def roundup_power2_divisions(self, i: int) -> int:
        divisions = [0] * ROUNDUP_POWER2_INTERVALS
        self.consume(i + 1, ":")
        i += 1
        if not i + 1 < len(self.tokens):
            self.fail("roundup_missing", "roundup_power2_divisions")
        i += 1
        if self.tokens[i] == "[":
            first = True
            last_index = 0
            while True:
                i += 1
                if i >= len(self.tokens) or self.tokens[i] == "]":
                    break
                value_index = i
                self.consume(i + 1, ":")
                i += 2
                if i >= len(self.tokens):
                    self.fail("roundup_entry_missing", "roundup_power2_divisions")
                value = self.stoull(self.tokens[i])
                if not (value == 0 or _is_pow2(value)):
                    self.fail("roundup_divisions_pow2", "roundup_power2_divisions")
                if self.tokens[value_index] == ">":
                    for k in range(last_index + 1, ROUNDUP_POWER2_INTERVALS):
                        divisions[k] = value
                else:
                    boundary = self.stoull(self.tokens[value_index])
                    if not _is_pow2(boundary):
                        self.fail("roundup_intervals_pow2", "roundup_power2_divisions")
                    index = min(max(boundary.bit_length() - 1, 0), ROUNDUP_POWER2_INTERVALS - 1)
                    if first:
                        for k in range(0, index):
                            divisions[k] = value
                        first = False
                    divisions[index] = value
                    last_index = index
                if i + 1 < len(self.tokens) and self.tokens[i + 1] != "]":
                    self.consume(i + 1, ",")
                    i += 1
            if i >= len(self.tokens):
                # TORCH_INTERNAL_ASSERT: surfaces as RuntimeError with this text
                # after the assert header; only the stable part is modelled.
                raise AllocConfError(message("roundup_bracket"), "roundup_bracket",
                                     "roundup_power2_divisions")
        else:
            value = self.stoull(self.tokens[i])
            if not (value == 0 or _is_pow2(value)):
                self.fail("roundup_divisions_pow2", "roundup_power2_divisions")
            divisions = [value] * ROUNDUP_POWER2_INTERVALS
        self.cfg.roundup_power2_divisions = divisions
        return i

    def per_process_memory_fraction(self, i: int) -> int:
        key = "per_process_memory_fraction"
        i = self.value_index(i, key)
        val = self.stod(self.tokens[i])
        if not 0.0 <= val <= 1.0:
            self.fail("fraction_range", key)
        self.cfg.per_process_memory_fraction = val
        return i

    # -- driver -------------------------------------------------------------
    def run(self) -> AllocatorConfig:
        keys = self.profile.keys
        if "large_segment_size_mb" in keys:
            self.large_segment_first_pass()
        i = 0
        while i < len(self.tokens):
            key = self.tokens[i]
            if key not in keys:
                self.fail("unrecognized", key, key=key)
            if key == "max_split_size_mb":
                i = self.max_split_size(i)
            elif key == "garbage_collection_threshold":
                i = self.garbage_collection_threshold(i)
            elif key in _BOOL_KEYS:
                i = self.boolean(i, key)
            elif key == "base_addr_aligned_kb":
                i = self.base_addr_aligned_kb(i)
            elif key == "page_size":
                i = self.page_size(i)
            elif key == "segment_size_mb":
                i = self.segment_size_mb(i)
            elif key in ("large_segment_size_mb", "pinned_reserve_segment_size_mb"):
                i = self.skip_int(i, key)
            elif key == "roundup_power2_divisions":
                i = self.roundup_power2_divisions(i)
            elif key == "per_process_memory_fraction":
                i = self.per_process_memory_fraction(i)
            else:  # a key listed in the profile but without a parser here
                raise AssertionError("no parser for allocator key %r" % key)
            if i + 1 < len(self.tokens):
                self.consume(i + 1, ",")
                i += 1
            i += 1
        self.finish()
        return self.cfg

    def finish(self) -> None:
        cfg = self.cfg
        if (self.profile.expandable_conflict_check and cfg.expandable_segments
                and self.expandable_set
                and (cfg.max_split_size is not None or cfg.garbage_collection_threshold != 0)):
            self.fail("expandable_conflict")
        if cfg.pinned_mem_register and cfg.pin_memory_expandable_segments:
            cfg.pinned_mem_register = False
            cfg.warnings.append(message("warn_pinned_register_conflict"))
        if self.profile.segment_size_deprecated:
            if cfg.large_segment_size != LARGE_BUFFER and cfg.segment_size != 0:
                cfg.warnings.append(message("warn_segment_and_large_segment"))
            if cfg.page_size_1g and (cfg.large_segment_size != LARGE_BUFFER or cfg.segment_size != 0):
                cfg.warnings.append(message("warn_page_1g_overrides"))


def parse_alloc_conf(
    text: Optional[str],
    profile: Union[None, str, Profile] = None,
    *,
    context: Optional[ErrorContext] = None,
    expandable_supported: bool = True,
    page_1g_supported: bool = True,
) -> AllocatorConfig:
    """Parse a PYTORCH_NPU_ALLOC_CONF value as the given torch_npu release would.

    ``profile``: a profile name, torch_npu product version or branch (see
    :func:`get_profile`). ``expandable_supported=False`` models a driver whose
    virtual-address probe fails (HDK < 23.0.0): the release then warns and turns
    expandable segments off. ``page_1g_supported=False`` models CANN < 8.1.RC1 /
    driver < 25.0.RC1 for ``page_size:1g``. Raises :class:`AllocConfError`.
    """
    prof = get_profile(profile) if not isinstance(profile, Profile) else profile
    ctx = context or ErrorContext()
    return _Parser(text or "", prof, ctx, expandable_supported, page_1g_supported).run()
