"""Version grammar for the Ascend stack, with a total and correct order.

Ascend strings (CANN, driver/HDK, firmware, TorchNPU release lines) follow
``major.minor.(RCn|Tn|patch)[.n...][.alphaNNN|.betaN|-beta.N|-0day][.bNNN]``, which
``packaging`` cannot parse or orders wrongly (it puts ``8.0.RC3`` above
``8.0.0.alpha001``). Within one major.minor line the order is:
internal T builds < RC1 < RC2 < ... < patch 0 < patch 1 < ..., and a suffix
(alpha < beta < 0day) is a pre-release of the version it follows, so
``8.0.RC1 < 8.0.RC2 < 8.0.RC3 < 8.0.0.alpha001 < 8.0.0``.

PEP 440 components (torch_npu wheels, PyTorch, Python, NumPy) use ``packaging``.
Inner versions (``V100R001C15SPC012B220``) have their own small grammar.

``parse_version(text, kind)`` returns a ``Version``: hashable, ordered within its kind,
with ``.kind`` and a normalised ``.text``. Bad input raises ``VersionError`` (a
ValueError) whose one-line message lists the accepted forms.
"""
from __future__ import annotations

import re
from functools import total_ordering
from typing import Any, Dict, List, Optional, Sequence, Tuple

from packaging.version import InvalidVersion
from packaging.version import Version as Pep440Version

from compat_matrix.errors import ComponentError, VersionError

# The kinds of version this module understands, and the names people use for them.
ASCEND_KINDS = ("cann", "driver", "firmware", "torch_npu_release")
PEP440_KINDS = ("torch_npu", "torch", "python", "numpy")
KINDS = ASCEND_KINDS + PEP440_KINDS + ("inner",)

_KIND_SET = frozenset(KINDS)
_ALIASES = {
    "hdk": "driver",
    "npu_driver": "driver",
    "torch-npu": "torch_npu",
    "torchnpu": "torch_npu",
    "pytorch": "torch",
    "release": "torch_npu_release",
    "product": "torch_npu_release",
    "torchnpu_release": "torch_npu_release",
    "torch_npu_product": "torch_npu_release",
    "innerversion": "inner",
}

LABELS = {
    "cann": "CANN",
    "driver": "NPU driver (HDK)",
    "firmware": "NPU firmware",
    "torch_npu_release": "torch_npu release line",
    "torch_npu": "torch_npu",
    "torch": "PyTorch",
    "python": "Python",
    "numpy": "NumPy",
    "inner": "Ascend inner",
}

ACCEPTED = {
    "cann": ("8.0.RC1", "8.0.0", "8.3.RC1.alpha003", "9.0.0-beta.2", "6.3.RC3.1",
             "a leading 'CANN' is allowed"),
    "driver": ("24.1.rc2", "24.1.RC2", "23.0.3", "25.0.rc1.1", "24.1.rc3.b999",
               "a leading 'Ascend HDK' is allowed"),
    "firmware": ("7.1.0.11.220", "7.7.0.1.231", "6.0.rc1.2"),
    "torch_npu_release": ("6.0.rc3", "6.0.RC3", "7.2.0", "7.2.0.1", "26.1.0", "26.0.0-beta.1"),
    "torch_npu": ("2.1.0.post10", "2.4.0rc1", "2.1.0", "1.11.0.rc2"),
    "torch": ("2.4.0", "2.1.0+cpu", "2.6.0"),
    "python": ("3.10", "3.10.12", "cp310"),
    "numpy": ("1.26.4", "2.0.2"),
    "inner": ("V100R001C15SPC012B220", "V100R001C21"),
}


def canonical_kind(kind: str) -> str:
    """The canonical kind name for ``kind`` (accepts aliases such as 'hdk', 'pytorch')."""
    if kind in _KIND_SET:
        return kind
    k = str(kind).strip().lower().replace("-", "_")
    k = _ALIASES.get(k, _ALIASES.get(kind.strip().lower(), k))
    if k not in KINDS:
        raise ComponentError(kind, KINDS)
    return k


# --------------------------------------------------------------------------- decoration
# Words people paste in front of a version ("CANN 8.0.RC1", "Ascend HDK 23.0.3",
# "torch_npu==2.1.0.post10", "Python 3.10.12"): stripped before parsing.
_PREFIX_WORDS = re.compile(
    r"^(?:ascend|cann|hdk|npu|driver|firmware|toolkit|version|ver|torch[_-]?npu|pytorch|torch|"
    r"python|cpython|numpy|extension|for|release|product|innerversion|package)\b[\s:=_-]*",
    re.IGNORECASE,
)
_PKG_FILE = re.compile(r"_(\d[^_/]*?)(?:_linux[-_][\w-]+)?\.run$", re.IGNORECASE)
_WHEEL_FILE = re.compile(r"^torch[_-]npu-([^-]+)-cp\d+", re.IGNORECASE)


_PLAIN = re.compile(r"^\d[\w.\-+]*$")


def _strip_decoration(text: str) -> str:
    s = str(text).strip()
    if _PLAIN.match(s) and not s.endswith(".run"):
        return s  # the common case: nothing pasted around the version
    s = s.strip("'\"").strip()
    # install packages: Ascend-cann-toolkit_8.0.RC1_linux-aarch64.run, ...firmware_7.7.0.1.231.run
    m = _PKG_FILE.search(s)
    if m:
        return m.group(1)
    m = _WHEEL_FILE.match(s)
    if m:
        return m.group(1)
    for _ in range(6):
        new = _PREFIX_WORDS.sub("", s).strip()
        new = new.lstrip("=:").strip()
        if new == s:
            break
        s = new
    return s


# --------------------------------------------------------------------------- Ascend grammar
_LINE_RE = re.compile(r"^(?:(RC)(\d+)|(T)(\d+)|(\d+))$", re.IGNORECASE)
_STAGE_RE = re.compile(r"^(alpha|beta)(\d*)$", re.IGNORECASE)
_BUILD_RE = re.compile(r"^b(\d+)$", re.IGNORECASE)
_TOKEN_RE = re.compile(r"[^.\-]+")
_BAD_SEPARATORS = re.compile(r"[.\-]{2,}|^[.\-]|[.\-]$")

# line kinds, in order inside one major.minor
_LINE_T, _LINE_RC, _LINE_PATCH = 0, 1, 2
# pre-release stages, in order; FINAL sorts after all of them
_STAGE_RANK = {"alpha": 0, "beta": 1, "0day": 2}
_FINAL = 3


class _AscendParts(object):
    __slots__ = ("major", "minor", "line", "extras", "stage", "stage_num", "build", "suffix")

    def __init__(self) -> None:
        self.major = 0
        self.minor = 0
        self.line: Tuple[int, int] = (0, 0)
        self.extras: Tuple[int, ...] = ()
        self.stage: Optional[str] = None
        self.stage_num: Optional[int] = None
        self.build: Optional[int] = None
        self.suffix = ""


def _parse_ascend(s: str) -> Optional[_AscendParts]:
    tokens = [(m.group(0), m.start()) for m in _TOKEN_RE.finditer(s)]
    # separators must be single '.' or '-' between tokens, nothing else
    if not tokens or _BAD_SEPARATORS.search(s):
        return None
    if len(tokens) < 3 or not tokens[0][0].isdigit() or not tokens[1][0].isdigit():
        return None
    p = _AscendParts()
    p.major, p.minor = int(tokens[0][0]), int(tokens[1][0])
    m = _LINE_RE.match(tokens[2][0])
    if not m:
        return None
    if m.group(1):
        p.line = (_LINE_RC, int(m.group(2)))
    elif m.group(3):
        p.line = (_LINE_T, int(m.group(4)))
    else:
        p.line = (_LINE_PATCH, int(m.group(5)))
    extras: List[int] = []
    suffix_start: Optional[int] = None
    for tok, pos in tokens[3:]:
        low = tok.lower()
        if tok.isdigit() and tok.isascii():  # "²" is a digit to isdigit(), not to int()
            if p.stage is None and p.build is None:
                extras.append(int(tok))
            elif p.stage is not None and p.stage_num is None and p.build is None:
                p.stage_num = int(tok)  # "-beta.2"
            else:
                return None
            continue
        sm = _STAGE_RE.match(tok)
        if sm and p.stage is None and p.build is None:
            p.stage = sm.group(1).lower()
            p.stage_num = int(sm.group(2)) if sm.group(2) else None
        elif low == "0day" and p.stage is None and p.build is None:
            p.stage = "0day"
        elif _BUILD_RE.match(tok) and p.build is None:
            p.build = int(_BUILD_RE.match(tok).group(1))  # type: ignore[union-attr]
        else:
            return None
        if suffix_start is None:
            suffix_start = pos - 1  # include the separator in front
    p.extras = tuple(extras)
    if suffix_start is not None:
        p.suffix = s[suffix_start:].lower()
    return p


def _ascend_text(p: _AscendParts, lower_rc: bool = False) -> str:
    kind, n = p.line
    line = {_LINE_RC: "rc%d" if lower_rc else "RC%d", _LINE_T: "T%d", _LINE_PATCH: "%d"}[kind] % n
    out = "%d.%d.%s" % (p.major, p.minor, line)
    out += "".join(".%d" % e for e in p.extras)
    return out + p.suffix


def _ascend_key(p: _AscendParts) -> Tuple[Any, ...]:
    stage = (_STAGE_RANK[p.stage], p.stage_num or 0) if p.stage else (_FINAL, 0)
    build = -1 if p.build is None else p.build
    return (p.major, p.minor, p.line, p.extras, stage, build)


# --------------------------------------------------------------------------- inner versions
_INNER_RE = re.compile(r"^V(\d+)R(\d+)C(\d+)(?:SPC(\d+))?(?:B(\d+))?$", re.IGNORECASE)


# --------------------------------------------------------------------------- Version
@total_ordering
class Version(object):
    """One parsed version of one kind. Ordered and equal only within its kind."""

    __slots__ = ("kind", "text", "raw", "_key", "_parts", "_pep")

    def __init__(self, kind: str, text: str, raw: str, key: Any,
                 parts: Optional[_AscendParts] = None, pep: Optional[Pep440Version] = None,
                 ) -> None:
        self.kind = kind
        self.text = text
        self.raw = raw
        self._key = key
        self._parts = parts
        self._pep = pep

    # ordering -------------------------------------------------------------
    @property
    def key(self) -> Any:
        return self._key

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Version):
            return NotImplemented
        return self.kind == other.kind and self._key == other._key

    def __lt__(self, other: "Version") -> bool:
        if not isinstance(other, Version) or other.kind != self.kind:
            return NotImplemented
        return bool(self._key < other._key)

    def __hash__(self) -> int:
        return hash((self.kind, self._key))

    def __repr__(self) -> str:
        return "Version(%r, %r)" % (self.kind, self.text)

    def __str__(self) -> str:
        return self.text

    # facts -----------------------------------------------------------------
    @property
    def series(self) -> Tuple[int, int]:
        """(major, minor), e.g. (8, 0) for 8.0.RC3, (2, 1) for 2.1.0.post10, (3, 10) for Python."""
        if self._parts is not None:
            return (self._parts.major, self._parts.minor)
        if self._pep is not None:
            rel = self._pep.release + (0,)
            return (rel[0], rel[1])
        return (self._key[0], self._key[1])

    @property
    def is_prerelease(self) -> bool:
        """alpha/beta/0day/internal T builds (Ascend) or a/b/rc/dev (PEP 440)."""
        if self._parts is not None:
            return self._parts.stage is not None or self._parts.line[0] == _LINE_T
        if self._pep is not None:
            return bool(self._pep.is_prerelease or self._pep.is_devrelease)
        return False

    @property
    def line_key(self) -> Tuple[Any, ...]:
        """Ascend: (major, minor, line) -- '24.1.RC2' and its patch build '24.1.rc2.1' share it."""
        if self._parts is None:
            raise TypeError("%s versions have no Ascend line" % self.kind)
        return (self._parts.major, self._parts.minor, self._parts.line)

    @property
    def extras(self) -> Tuple[int, ...]:
        return self._parts.extras if self._parts is not None else ()

    @property
    def is_final(self) -> bool:
        """Ascend: no alpha/beta/0day stage (a bNNN build number still counts as final)."""
        if self._parts is not None:
            return self._parts.stage is None
        return not self.is_prerelease

    @property
    def pep440(self) -> Pep440Version:
        if self._pep is None:
            raise TypeError("%s versions are not PEP 440" % self.kind)
        return self._pep

    @property
    def public(self) -> "Version":
        """PEP 440 kinds: the version without its local part ('2.1.0+cpu' -> '2.1.0')."""
        if self._pep is None or self._pep.local is None:
            return self
        return _pep_version(self.kind, self._pep.public, self.raw)

    @property
    def base(self) -> "Version":
        """PEP 440 kinds: major.minor.micro only ('2.1.0.post10' -> '2.1.0')."""
        if self._pep is None:
            return self
        return _pep_version(self.kind, self._pep.base_version, self.raw)

    @property
    def family(self) -> str:
        """Inner versions: the 'V100R001C15' family used by compatible_version lists."""
        if self.kind != "inner":
            raise TypeError("only inner versions have a family")
        v, r, c = self._key[:3]
        return "V%03dR%03dC%02d" % (v, r, c)

    def to_json(self) -> str:
        return self.text


def _pep_version(kind: str, text: str, raw: str) -> Version:
    pv = Pep440Version(text)
    return Version(kind, str(pv), raw, pv, pep=pv)


_PY_CP = re.compile(r"^(?:cp|py)(\d)(\d+)$", re.IGNORECASE)
_PY_DOT = re.compile(r"^(?:py)?(\d+\.\d+(?:\.\d+)?(?:[a-z]+\d*)?)\+?$", re.IGNORECASE)
_BETA_NOTE = re.compile(r"\s*\(\s*beta\s*\)\s*$", re.IGNORECASE)


def parse_version(text: Any, kind: str) -> Version:
    """Parse ``text`` as a version of ``kind`` (see KINDS); raise VersionError if it is not one."""
    k = canonical_kind(kind)
    if isinstance(text, Version):
        if text.kind != k:
            raise VersionError(text.text, k, LABELS[k], ACCEPTED[k])
        return text
    raw = "" if text is None else str(text)
    s = _strip_decoration(raw)
    if k != "inner" and re.match(r"^[vV]\d", s):
        s = s[1:]  # "v7.2.0", as in tags and branch names
    if not s or len(s) > 80:
        raise VersionError(raw, k, LABELS[k], ACCEPTED[k])
    if k in ASCEND_KINDS:
        parts = _parse_ascend(s)
        if parts is None:
            raise VersionError(raw, k, LABELS[k], ACCEPTED[k])
        # release lines are written as in branch names (v2.1.0-6.0.rc3); the rest as in release notes
        text_out = _ascend_text(parts, lower_rc=(k == "torch_npu_release"))
        return Version(k, text_out, raw, _ascend_key(parts), parts=parts)
    if k == "inner":
        m = _INNER_RE.match(s)
        if not m:
            raise VersionError(raw, k, LABELS[k], ACCEPTED[k])
        v, r, c, spc, b = m.groups()
        key = (int(v), int(r), int(c), int(spc) if spc else 0, int(b) if b else -1)
        text_out = "V%sR%sC%s" % (v, r, c) + ("SPC%s" % spc if spc else "") + ("B%s" % b if b else "")
        return Version(k, text_out.upper(), raw, key)
    # PEP 440 kinds
    if k == "torch_npu":
        s = _BETA_NOTE.sub("", s)
    if k == "python":
        m = _PY_CP.match(s)
        if m:
            s = "%s.%s" % (m.group(1), m.group(2))
        else:
            m2 = _PY_DOT.match(s)
            if not m2:
                raise VersionError(raw, k, LABELS[k], ACCEPTED[k])
            s = m2.group(1)
    try:
        pv = Pep440Version(s)
    except InvalidVersion:
        raise VersionError(raw, k, LABELS[k], ACCEPTED[k]) from None
    if not pv.release or len(pv.release) < 2 or pv.epoch:
        raise VersionError(raw, k, LABELS[k], ACCEPTED[k])
    return Version(k, str(pv), raw, pv, pep=pv)


def try_parse_version(text: Any, kind: str) -> Optional[Version]:
    """Like parse_version, but None instead of an error."""
    try:
        return parse_version(text, kind)
    except VersionError:
        return None


def accepted_forms(kind: str) -> Tuple[str, ...]:
    return ACCEPTED[canonical_kind(kind)]


# --------------------------------------------------------------------------- specs
_X_SPEC = re.compile(r"^(\d+)\.(\d+)\.[xX]$")


class VersionSpec(object):
    """A version as the sources write it when they mean a set: '25.5.X' (the whole 25.5
    line), or one exact Ascend version, which also covers its patch builds ('24.1.RC2'
    covers '24.1.rc2.1' and '24.1.rc2.b010', not '24.1.RC3').

    'X' is read as the whole major.minor line, RC releases included: the release notes
    list '25.3.X' for a line whose only release in the data is 25.3.RC1.
    """

    __slots__ = ("kind", "text", "series", "version")

    def __init__(self, kind: str, text: str, series: Optional[Tuple[int, int]],
                 version: Optional[Version]) -> None:
        self.kind = kind
        self.text = text
        self.series = series
        self.version = version

    @property
    def is_wildcard(self) -> bool:
        return self.version is None

    def matches(self, v: Version) -> bool:
        if v.kind != self.kind:
            return False
        if self.version is None:
            return v.is_final and v.series == self.series
        want = self.version
        if want._parts is None or v._parts is None:
            return want == v
        if want == v:
            return True
        if not v.is_final or not want.is_final:
            return False
        return v.line_key == want.line_key and v.extras[: len(want.extras)] == want.extras

    def position(self, v: Version) -> int:
        """-1 if v is below everything this spec covers, 0 if covered, 1 if above."""
        if self.matches(v):
            return 0
        if self.version is None:
            return -1 if v.series < self.series else 1  # type: ignore[operator]
        return -1 if v < self.version else 1

    def sort_key(self) -> Tuple[Any, ...]:
        if self.version is None:
            s = self.series or (0, 0)
            return (s[0], s[1], (9, 0))
        return self.version.key

    def __repr__(self) -> str:
        return "VersionSpec(%r, %r)" % (self.kind, self.text)

    def __str__(self) -> str:
        return self.text


def parse_spec(text: Any, kind: str) -> VersionSpec:
    """Parse '9.0.X' / '25.5.X' style series, or an exact version, as a VersionSpec."""
    k = canonical_kind(kind)
    s = _strip_decoration(str(text))
    m = _X_SPEC.match(s)
    if m and k in ASCEND_KINDS:
        return VersionSpec(k, "%s.%s.X" % (m.group(1), m.group(2)), (int(m.group(1)), int(m.group(2))), None)
    v = parse_version(s, k)
    return VersionSpec(k, v.text, None, v)


def sort_versions(items: Sequence[Version], newest_first: bool = False) -> List[Version]:
    return sorted(items, reverse=newest_first)


def parse_many(values: Dict[str, Any]) -> Dict[str, Version]:
    """Parse a {kind: text} mapping; the first bad value raises VersionError."""
    return {canonical_kind(k): parse_version(v, k) for k, v in values.items()}
