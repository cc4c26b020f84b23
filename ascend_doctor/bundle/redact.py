"""Consistent masking of what identifies a person, a machine or a credential.

One ``Redactor`` serves a whole bundle, so the same value gets the same mask in every
file (rank 3's address is ``192.0.2.4`` in its plog, in the HCCL lines of the other ranks
and in the triage report alike) and cross-rank reasoning still works on the masked copy.
Masks keep the shape of what they replace where a parser may depend on it: an IPv4
address becomes an address from the documentation ranges (RFC 5737), an IPv6 address one
under ``2001:db8::/32`` (RFC 3849), a MAC address a locally administered one. Names become
``host-N``, ``user-N``, ``serial-N``; secret values ``<secret-N>``.

What is masked:
- values given up front: hostnames, user names and their home directories, the values of
  environment variables whose names look secret (``*TOKEN*``, ``*KEY*``, ``*SECRET*``,
  ``*PASSWORD*``, ``*CREDENTIAL*``, ...);
- patterns: IPv4, IPv6 and MAC addresses, ``user:password@`` in URLs, tokens with a
  well-known prefix (``hf_``, ``ghp_``, ``AKIA``), and the values of ``Serial Number``,
  ``Board ID``, ``Chip ID``, ``Die ID`` fields as npu-smi prints them (a short value only in
  that field; a long one everywhere).

What is kept: loopback and unspecified addresses, netmasks, versions (``7.7.0.1.231`` is
not an address), device and chip indexes (``chipId:3`` is a position, not an identity),
``root`` and the system accounts the Ascend packages create (``HwHiAiUser``).

The manifest lists, per mask, its kind, how often it was applied and in which files; it
never holds the original value.
"""
from __future__ import annotations

import ipaddress
import re
from typing import Any, Callable, Dict, Iterable, List, Optional, Tuple

# environment variable names whose values are secrets (matched as substrings, any case)
SECRET_NAME_PARTS = ("TOKEN", "KEY", "SECRET", "PASSWORD", "PASSWD", "PASSPHRASE", "CREDENTIAL", "AUTH",
                     "COOKIE", "PRIVATE", "SIGNATURE", "SESSION")
# accounts that identify nobody: kept
SYSTEM_USERS = frozenset({"root", "HwHiAiUser", "HwDmUser", "HwBaseUser", "nobody", "daemon", "bin", "sys",
                          "sync", "games", "man", "lp", "mail", "news", "uucp", "proxy", "www-data", "backup",
                          "list", "irc", "gnats", "systemd-network", "systemd-resolve", "messagebus", "sshd",
                          "_apt", "admin", "user", "test"})
_MIN_NAME = 3  # shorter names would mask ordinary words

# Address patterns start at a separator (".", ":" or "-"), a literal the regex engine can jump
# to, instead of at a digit or hex character, which nearly every position of a log line is;
# the few characters before the separator are taken by hand (``_sub_left``), and the
# boundaries are checked on the whole match. This keeps the scan several times faster.
_IPV4_TAIL = re.compile(r"\.\d{1,3}\.\d{1,3}\.\d{1,3}")
# IPv6: the full form (eight groups) by pattern; a compressed one ("::") from its "::" outward
_IPV6_FULL_TAIL = re.compile(r":[0-9A-Fa-f]{1,4}(?::[0-9A-Fa-f]{1,4}){6}(?:%\w+)?")
_IPV6_CHARS = frozenset("0123456789abcdefABCDEF:")
_HEX = frozenset("0123456789abcdefABCDEF")
_DIGITS = frozenset("0123456789")
_MAC_TAILS = (re.compile(r":[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}"),
              re.compile(r"-[0-9A-Fa-f]{2}-[0-9A-Fa-f]{2}-[0-9A-Fa-f]{2}-[0-9A-Fa-f]{2}-[0-9A-Fa-f]{2}"))
_URL_CREDS = re.compile(r"://([^/\s:@]+:[^/\s@]+)@")
_TOKENS = re.compile(r"(?:hf_|gh[pousr]_|github_pat_|AKIA|xox[abpr]-|sk-)[A-Za-z0-9_-]{10,}")
_TOKEN_SHAPE = re.compile(r"hf_[A-Za-z0-9]{20,}|gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,}|AKIA[0-9A-Z]{16}|"
                          r"xox[abpr]-[A-Za-z0-9-]{10,}|sk-[A-Za-z0-9]{20,}")
_ID_KEYS = ("Serial", "SERIAL", "serial", "SN", "Board ID", "Chip ID", "Die ID", "Elabel", "UUID", "board id", "chip id", "die id", "uuid", "elabel", "BOARD ID", "CHIP ID")
_TOKEN_PREFIXES = ("hf_", "gh", "AKIA", "xox", "sk-")  # a cheap test before the token pattern runs
_ID_FIELD = re.compile(r"(?im)^([ \t]*(?:Serial Number|SN|Board ID|Chip ID|Die ID|VDie ID|NDie ID|Elabel|UUID)[ \t]*[:=][ \t]*)"
                       r"([^\r\n]*?)[ \t]*$")


def looks_secret(name: str) -> bool:
    upper = name.upper()
    return any(part in upper for part in SECRET_NAME_PARTS)


class Redactor:
    """Masks identifiers consistently across every text it is given (see the module doc)."""

    def __init__(self, enabled: bool = True) -> None:
        self.enabled = enabled
        self._masks: Dict[Tuple[str, str], str] = {}  # (kind, normalised original) -> mask
        self._counts: Dict[str, Dict[str, int]] = {}  # mask -> {file: count}
        self._kind_of: Dict[str, str] = {}  # mask -> kind
        self._n: Dict[str, int] = {}
        self._literals: Dict[str, str] = {}  # original -> kind
        self._literal_re: Optional["re.Pattern[str]"] = None
        self._ci_literals: Dict[str, str] = {}  # hostnames: case-insensitive
        self._ci_re: Optional["re.Pattern[str]"] = None
        self._where = ""

    # ------------------------------------------------------------- known values
    def add_secret(self, value: str) -> None:
        if value and len(value) >= 4:
            self._add_literal(value, "secret")

    def add_hostname(self, name: str) -> None:
        name = (name or "").strip().rstrip(".")
        if len(name) < _MIN_NAME or name.lower() in ("localhost", "localhost.localdomain", "ip6-localhost"):
            return
        try:
            ipaddress.ip_address(name)
            return  # an address is masked by its pattern
        except ValueError:
            pass
        self._ci_literals[name.lower()] = "hostname"
        short = name.split(".", 1)[0]
        if short != name and len(short) >= _MIN_NAME:
            self._ci_literals[short.lower()] = "hostname"
        self._ci_re = None

    def add_user(self, name: str, home: Optional[str] = None) -> None:
        name = (name or "").strip()
        if len(name) < _MIN_NAME or name in SYSTEM_USERS or name.isdigit():
            return
        self._add_literal(name, "user")
        if home and home.startswith("/") and home.rstrip("/") not in ("/", "/root") and name not in home.split("/"):
            self._add_literal(home.rstrip("/"), "home")

    def add_serial(self, value: str) -> None:
        if len(value) >= 6:
            self._add_literal(value, "serial")

    def _add_literal(self, value: str, kind: str) -> None:
        if kind == "secret" or value not in self._literals:
            self._literals[value] = kind
        self._literal_re = None

    # ------------------------------------------------------------------ masking
    def mask_for(self, kind: str, original: str) -> str:
        key = (kind, original.lower() if kind in ("hostname", "mac", "ipv6") else original)
        mask = self._masks.get(key)
        if mask is None:
            n = self._n[kind] = self._n.get(kind, 0) + 1
            mask = _make_mask(kind, n, original)
            self._masks[key] = mask
            self._kind_of[mask] = kind
        return mask

    def _count(self, mask: str) -> None:
        per_file = self._counts.setdefault(mask, {})
        per_file[self._where] = per_file.get(self._where, 0) + 1

    def text(self, text: str, where: str) -> str:
        """``text`` with every identifier masked; ``where`` is the file named in the manifest."""
        if not self.enabled or not text:
            return text
        self._where = where
        # field values first: a serial found here is then masked wherever else it appears
        if any(key in text for key in _ID_KEYS):
            for m in _ID_FIELD.finditer(text):
                value = m.group(2).strip()
                if len(value) >= 6 and value.upper() not in ("NA", "N/A"):
                    self.add_serial(value)
            text = _ID_FIELD.sub(self._field, text)
        pattern = self._compiled()
        if pattern is not None:
            text = pattern.sub(self._literal, text)
        if self._ci_literals:
            text = self._hostnames(text)
        if any(prefix in text for prefix in _TOKEN_PREFIXES):
            text = _TOKENS.sub(self._token, text)
        text = _URL_CREDS.sub(lambda m: "://" + self._apply("credentials", m.group(1)) + "@", text)
        for tail in _MAC_TAILS:
            text = _sub_left(text, tail, _HEX, 2, 2, self._mac)
        if ":" in text:
            text = _sub_left(text, _IPV6_FULL_TAIL, _HEX, 1, 4, self._ipv6)
            if "::" in text:
                text = self._compressed_ipv6(text)
        text = _sub_left(text, _IPV4_TAIL, _DIGITS, 1, 3, self._ipv4)
        return text

    def note(self, kind: str, original: str, where: str) -> str:
        """Count a value removed by other means (a secret variable shown as ``<set>``)."""
        self._where = where
        return self._apply(kind, original)

    def _apply(self, kind: str, original: str) -> str:
        mask = self.mask_for(kind, original)
        self._count(mask)
        return mask

    def _field(self, m: "re.Match[str]") -> str:
        value = m.group(2).strip()
        if not value or value.upper() in ("NA", "N/A", "-") or value.startswith(("serial-", "<")):
            return m.group(0)
        return m.group(1) + self._apply("serial", value)

    def _literal(self, m: "re.Match[str]") -> str:
        original = m.group(0)
        kind = self._literals[original]
        if kind in ("user", "serial") and (_word_before(m, "_") or _word_after(m, "_")):
            return original  # part of a longer word: "alice" in "malice"
        return self._apply(kind, original)

    def _hostnames(self, text: str) -> str:
        """Host names, in any case. ASCII text (nearly every log) is searched with str.find on
        its lower-case copy, much faster than a case-blind regex; other text by the regex."""
        if not text.isascii():
            ci = self._compiled_ci()
            return ci.sub(self._hostname, text) if ci is not None else text
        low = text.lower()
        spans: List[Tuple[int, int]] = []
        for name in sorted(self._ci_literals, key=len, reverse=True):
            i = low.find(name)
            while i >= 0:
                end = i + len(name)
                if not any(a < end and i < b for a, b in spans):
                    spans.append((i, end))
                i = low.find(name, end)
        if not spans:
            return text
        out: List[str] = []
        pos = 0
        for a, b in sorted(spans):
            span = _Span(text, a, b)
            rep = self._hostname(span)
            if rep != span.group():
                out.append(text[pos:a])
                out.append(rep)
                pos = b
        out.append(text[pos:])
        return "".join(out)

    def _hostname(self, m: "re.Match[str]") -> str:
        if _word_before(m, "_-") or _word_after(m, "_-"):
            return m.group(0)
        return self._apply("hostname", m.group(0))

    def _token(self, m: "re.Match[str]") -> str:
        value = m.group(0)
        if not _TOKEN_SHAPE.fullmatch(value) or _word_before(m, "-"):
            return value
        return self._apply("secret", value)

    def _mac(self, m: "re.Match[str]") -> str:
        value = m.group(0)
        if _word_before(m, ":-") or _word_after(m, ":-"):
            return value
        if value.lower().replace("-", ":") in ("00:00:00:00:00:00", "ff:ff:ff:ff:ff:ff"):
            return value
        return self._apply("mac", value.lower().replace("-", ":"))

    def _compressed_ipv6(self, text: str) -> str:
        out: List[str] = []
        pos = 0
        i = text.find("::")
        n = len(text)
        while i >= 0:
            a = i
            while a > 0 and text[a - 1] in _IPV6_CHARS:
                a -= 1
            b = i + 2
            while b < n and text[b] in _IPV6_CHARS:
                b += 1
            if b < n and text[b] == "%":
                b += 1
                while b < n and (text[b].isalnum() or text[b] == "_"):
                    b += 1
            if a >= pos:
                value = text[a:b]
                masked = self._ipv6_value(value, text[a - 1] if a else "", text[b] if b < n else "", text[b + 1:b + 2])
                if masked != value:
                    out.append(text[pos:a])
                    out.append(masked)
                    pos = b
            i = text.find("::", max(b, i + 2))
        out.append(text[pos:])
        return "".join(out)

    def _ipv6(self, m: "re.Match[str]") -> str:
        s = m.string
        return self._ipv6_value(m.group(0), s[m.start() - 1] if m.start() else "", s[m.end()] if m.end() < len(s) else "",
                                s[m.end() + 1:m.end() + 2])

    def _ipv6_value(self, value: str, before: str, after: str, after2: str = "") -> str:
        if before and (before.isalnum() or before in ":._") or after and (after.isalnum() or after in ":_"):
            return value
        if after == "." and after2.isdigit():
            return value  # ::ffff:10.0.0.1: the IPv4 part is masked as IPv4
        bare = value.split("%", 1)[0]
        if bare.count(":") < 2 or not any(c not in ":0" for c in bare):
            return value
        try:
            addr = ipaddress.IPv6Address(bare)
        except ValueError:
            return value
        if addr.is_loopback or addr.is_unspecified or (bare.count(":") < 7 and "::" not in bare):
            return value
        return self._apply("ipv6", str(addr))

    def _ipv4(self, m: "re.Match[str]") -> str:
        value = m.group(0)
        text, start, end = m.string, m.start(), m.end()
        if start and (text[start - 1].isdigit() or text[start - 1] == "."):
            return value
        if end < len(text) and (text[end].isalnum() or (text[end] == "." and text[end + 1:end + 2].isdigit())):
            return value
        if any(int(octet) > 255 or (len(octet) > 1 and octet[0] == "0") for octet in value.split(".")):
            return value
        if value in ("0.0.0.0", "127.0.0.1", "255.255.255.255") or value.startswith("255."):
            return value
        return self._apply("ipv4", value)

    def _compiled(self) -> Optional["re.Pattern[str]"]:
        if self._literal_re is None and self._literals:
            words = sorted(self._literals, key=len, reverse=True)
            self._literal_re = re.compile("|".join(re.escape(w) for w in words))
        return self._literal_re

    def _compiled_ci(self) -> Optional["re.Pattern[str]"]:
        if self._ci_re is None and self._ci_literals:
            words = sorted(self._ci_literals, key=len, reverse=True)
            self._ci_re = re.compile("|".join(re.escape(w) for w in words), re.IGNORECASE)
        return self._ci_re

    # ----------------------------------------------------------------- manifest
    def manifest(self) -> List[Dict[str, object]]:
        """Per mask: kind, count and the files it was applied in (never the original)."""
        out = []
        for mask, per_file in self._counts.items():
            out.append({"kind": self._kind_of[mask], "mask": mask, "count": sum(per_file.values()),
                        "files": sorted(per_file)})
        out.sort(key=lambda e: (str(e["kind"]), _natural(str(e["mask"]))))
        return out

    def kinds(self) -> Dict[str, int]:
        """Distinct values masked, per kind."""
        out: Dict[str, int] = {}
        for mask in self._counts:
            kind = self._kind_of[mask]
            out[kind] = out.get(kind, 0) + 1
        return out


class _Span:
    """The part of re.Match the callbacks use, for a match widened to the left by hand."""

    __slots__ = ("string", "_start", "_end")

    def __init__(self, string: str, start: int, end: int) -> None:
        self.string, self._start, self._end = string, start, end

    def group(self, index: int = 0) -> str:
        return self.string[self._start:self._end]

    def start(self) -> int:
        return self._start

    def end(self) -> int:
        return self._end


def _sub_left(text: str, tail: "re.Pattern[str]", left: frozenset, least: int, most: int,
              repl: "Callable[[Any], str]") -> str:
    """Like ``tail.sub(repl, text)`` for matches that begin with ``least`` to ``most``
    characters of ``left`` before where ``tail`` matches."""
    out: List[str] = []
    pos = 0
    for m in tail.finditer(text):
        s = a = m.start()
        while a > 0 and s - a < most and text[a - 1] in left:
            a -= 1
        if s - a < least or a < pos:
            continue
        span = _Span(text, a, m.end())
        value = span.group()
        rep = repl(span)
        if rep != value:
            out.append(text[pos:a])
            out.append(rep)
            pos = m.end()
    if not out:
        return text
    out.append(text[pos:])
    return "".join(out)


def _word_before(m: "re.Match[str]", extra: str = "") -> bool:
    i = m.start()
    return i > 0 and (m.string[i - 1].isalnum() or m.string[i - 1] in extra)


def _word_after(m: "re.Match[str]", extra: str = "") -> bool:
    i = m.end()
    return i < len(m.string) and (m.string[i].isalnum() or m.string[i] in extra)


def _natural(s: str) -> Tuple[object, ...]:
    return tuple(int(t) if t.isdigit() else t for t in re.split(r"(\d+)", s))


def _make_mask(kind: str, n: int, original: str) -> str:
    if kind == "ipv4":
        # the three documentation networks (RFC 5737), then 198.18.0.0/15 (RFC 2544)
        nets = ("192.0.2.", "198.51.100.", "203.0.113.")
        if n <= 3 * 254:
            return nets[(n - 1) // 254] + str((n - 1) % 254 + 1)
        k = n - 3 * 254
        return f"198.{18 + k // 65536 % 2}.{k // 256 % 256}.{k % 256}"
    if kind == "ipv6":
        return f"2001:db8::{n:x}"
    if kind == "mac":
        return "02:00:00:%02x:%02x:%02x" % ((n >> 16) & 255, (n >> 8) & 255, n & 255)
    if kind == "hostname":
        return f"host-{n}"
    if kind == "user":
        return f"user-{n}"
    if kind == "home":
        return f"/home/home-{n}"
    if kind == "serial":
        return f"serial-{n}"
    if kind == "credentials":
        return f"<credentials-{n}>"
    return f"<secret-{n}>"


def mask_env(env: Dict[str, str], redactor: Redactor, where: str = "env.txt") -> List[str]:
    """``KEY=VALUE`` lines of an environment: a secret-looking name keeps only ``set``."""
    lines = []
    for key in sorted(env):
        value = env[key]
        if redactor.enabled and looks_secret(key):
            if value:
                redactor.note("secret", value, where)
            lines.append(f"{key}=<set>" if value else f"{key}=")
        else:
            lines.append(f"{key}={redactor.text(value, where)}")
    return lines


def secret_names(env: Dict[str, str]) -> List[str]:
    return sorted(k for k, v in env.items() if looks_secret(k) and v)


def register_env(env: Dict[str, str], redactor: Redactor) -> None:
    """Learn the identifying values an environment holds (secrets, user, host name, home)."""
    for key, value in env.items():
        if looks_secret(key) and value:
            redactor.add_secret(value)
    for key in ("USER", "LOGNAME", "SUDO_USER"):
        if env.get(key):
            redactor.add_user(env[key], env.get("HOME") if key == "USER" else None)
    for key in ("HOSTNAME", "HOST", "NODE_NAME", "KUBERNETES_NODE_NAME"):
        if env.get(key):
            redactor.add_hostname(env[key])


def register_passwd(text: str, redactor: Redactor) -> None:
    """People's accounts from an /etc/passwd (uid 1000 and up, system accounts aside)."""
    for line in text.splitlines():
        row = line.split(":")
        if len(row) < 6 or line.startswith("#"):
            continue
        try:
            uid = int(row[2])
        except ValueError:
            continue
        if 1000 <= uid < 60000:
            redactor.add_user(row[0], row[5])


def register_hosts_file(text: str, redactor: Redactor) -> None:
    """Names an /etc/hosts gives to addresses other than loopback."""
    for line in text.splitlines():
        fields = line.split("#", 1)[0].split()
        if len(fields) < 2:
            continue
        try:
            addr = ipaddress.ip_address(fields[0])
        except ValueError:
            continue
        if addr.is_loopback or addr.is_multicast or addr.is_unspecified:
            continue
        for name in fields[1:]:
            redactor.add_hostname(name)


KIND_LABELS = {"ipv4": ("IPv4 address", "IPv4 addresses"), "ipv6": ("IPv6 address", "IPv6 addresses"),
               "mac": ("MAC address", "MAC addresses"), "hostname": ("host name", "host names"),
               "user": ("user name", "user names"), "home": ("home directory", "home directories"),
               "serial": ("serial number or id", "serial numbers and ids"), "secret": ("secret", "secrets"),
               "credentials": ("URL credential", "URL credentials")}


def describe_kinds(kinds: Dict[str, int]) -> str:
    """'3 IPv4 addresses, 1 host name, ...' (distinct values masked, per kind)."""
    order = list(KIND_LABELS)
    parts = []
    for kind in sorted(kinds, key=lambda k: order.index(k) if k in order else len(order)):
        one, many = KIND_LABELS.get(kind, (kind, kind))
        parts.append(f"{kinds[kind]} {one if kinds[kind] == 1 else many}")
    return ", ".join(parts)


def all_masks(entries: Iterable[Dict[str, object]]) -> List[str]:
    return [str(e["mask"]) for e in entries]
