"""Check the KB's numeric tables against the headers shipped in a torch-npu wheel.

    python -m ascend_doctor.kb.verify_headers torch_npu-2.14.0-....whl [more wheels]

torch-npu wheels carry CANN's public headers (rt_error_codes.h, acl_base*.h,
ge_error_codes.h), HCCL's hccl_types.h and torch_npu's own NPUErrorCodes.h and
_error_code.py. For every (name, value) pair found there this reports whether the KB
has the same code under the same name (or an alias), a different name, or not at all,
and which KB codes none of the headers mention. Exit status 1 when a header value
contradicts the KB (same name, other code). Reads the zip only; nothing is installed.
"""
from __future__ import annotations

import re
import sys
import zipfile
from typing import Dict, List, Set, Tuple

from ascend_doctor import kb

_HEADERS = ("rt_error_codes.h", "acl_base.h", "acl_base_rt.h", "ge_error_codes.h", "hccl_types.h")
_PAIR = re.compile(r"\b((?:ACL_ERROR_|ACL_RT_SUCCESS|HCCL_E_|HCCL_SUCCESS)[A-Z0-9_]*)\s*(?:=\s*|\s+)\(?(-?\d+)U?\)?\s*[;,/]")
_NPU_TEXT = re.compile(r"^\s*\{(\d{6}),", re.M)
_ERR_TYPE = re.compile(r"^\s*[A-Z_]+\s*=\s*\((\d+),\s*\"([^\"]+)\"\)", re.M)


def header_pairs(wheel: str) -> Tuple[Dict[Tuple[str, int], List[str]], Set[int], Dict[int, str]]:
    """(name, value) -> header files; codes with torch_npu text; ERR type id -> printed text."""
    pairs: Dict[Tuple[str, int], List[str]] = {}
    texts: Set[int] = set()
    err_types: Dict[int, str] = {}
    with zipfile.ZipFile(wheel) as zf:
        for name in zf.namelist():
            base = name.rsplit("/", 1)[-1]
            if base in _HEADERS:
                body = zf.read(name).decode("utf-8", "replace")
                for m in _PAIR.finditer(body):
                    pairs.setdefault((m.group(1), int(m.group(2))), []).append(base)
            elif base == "NPUErrorCodes.h":
                texts.update(int(v) for v in _NPU_TEXT.findall(zf.read(name).decode("utf-8", "replace")))
            elif name.endswith("torch_npu/utils/_error_code.py"):
                for num, text in _ERR_TYPE.findall(zf.read(name).decode("utf-8", "replace")):
                    err_types[int(num)] = text
    return pairs, texts, err_types


def verify(wheel: str) -> int:
    tables = kb.load().tables
    by_name: Dict[str, Set[int]] = {}
    kb_numeric: Dict[int, str] = {}
    for info in tables.all():
        if info.family in ("acl", "runtime_passthrough", "ge_passthrough", "hccl_result"):
            value = int(info.code)
            for name in (info.name,) + info.aliases:
                by_name.setdefault(name, set()).add(value)
            kb_numeric.setdefault(value if info.family != "hccl_result" else -1000 - value, info.name)
    pairs, texts, err_types = header_pairs(wheel)
    confirmed = conflicts = unknown = 0
    seen_values: Set[int] = set()
    for (name, value), files in sorted(pairs.items()):
        family_value = -1000 - value if name.startswith("HCCL") else value
        seen_values.add(family_value)
        known = by_name.get(name)
        if known and value in known:
            confirmed += 1
        elif known:
            conflicts += 1
            print(f"CONFLICT {name}: header {value} ({', '.join(sorted(set(files)))}), KB {sorted(known)}")
        elif family_value in kb_numeric:
            print(f"RENAMED  {value}: header calls it {name}, KB {kb_numeric[family_value]}")
        else:
            unknown += 1
            print(f"MISSING  {name} = {value} ({', '.join(sorted(set(files)))}) is not in the KB")
    not_in_headers = sorted(v for v in kb_numeric if v not in seen_values and v > 0)
    text_missing = sorted(v for v in texts if v not in kb_numeric)
    errs = {int(i.key[5:]) for i in tables.all() if i.family == "torch_npu"}
    err_missing = sorted(t for t in err_types if t not in errs and t != 0)
    print(
        f"{wheel}: {confirmed} confirmed, {conflicts} conflicting, {unknown} unknown to the KB; "
        f"{len(not_in_headers)} KB codes absent from these headers; "
        f"{len(texts)} codes with torch_npu text ({len(text_missing)} unknown); "
        f"{len(err_types)} ERR types ({len(err_missing)} unknown)"
    )
    for value in text_missing:
        print(f"MISSING  {value} has a torch_npu text but is not in the KB")
    for value in err_missing:
        print(f"MISSING  ERR type {value:03d} ({err_types[value]}) is not in the KB")
    return 1 if conflicts else 0


def main(argv: List[str]) -> int:
    if not argv or any(a in ("-h", "--help") for a in argv):
        print(__doc__.strip())
        return 0 if argv else 2
    status = 0
    for wheel in argv:
        try:
            status |= verify(wheel)
        except (OSError, zipfile.BadZipFile) as exc:
            print(f"{wheel}: cannot read the wheel: {exc}", file=sys.stderr)
            status |= 2
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
