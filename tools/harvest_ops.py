"""The op-support half of the wheel harvest (called by tools/harvest_wheels.py).

Each wheel's ``torch_npu/csrc/aten/npu_native_functions_by_codegen.yaml`` is reduced with
``tools.op_reduce.reduce_codegen`` to ``{op: (impl kinds, sections, aclnn)}``.
Storage: one file per torch_npu X.Y.Z line, ``op_support/data/wheels/<line>.json.gz``, holding
the newest build's ops in full and every other build of the line as a difference (ops added or
changed, ops removed). Where a build also has upstream branch data (``releases/<branch>``), the
wheel wins: ops only upstream are dropped, ops only in the wheel are kept, and each kind of
disagreement is counted in ``index.json`` ``wheels.contradictions``; aclnn names the wheel does
not carry are taken over from the branch data for ops both list.
"""
from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any, Dict, List, Mapping, Optional, Tuple

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from tools import op_reduce as red  # noqa: E402
from tools import op_regenerate as regen  # noqa: E402
from compat_matrix.op_support.store import DATA_DIR, INDEX_FILE, NPU_IMPLS, SCHEMA  # noqa: E402
from compat_matrix.versions import parse_version  # noqa: E402

Rec = Tuple[List[str], List[str], Optional[str]]
EXAMPLES = 6


def _vkey(v: str) -> Any:
    return parse_version(v, "torch_npu")


def _line(v: str) -> str:
    return parse_version(v, "torch_npu").base.text


def _npu(rec: Rec) -> List[str]:
    return sorted(k for k in rec[0] if k in NPU_IMPLS)


def compare_upstream(wheel_ops: Dict[str, Rec], branch_ops: Mapping[str, Rec]) -> Dict[str, Any]:
    only_up = sorted(k for k in branch_ops if k not in wheel_ops)
    only_wheel = sorted(k for k in wheel_ops if k not in branch_ops)
    differ = sorted(k for k in wheel_ops if k in branch_ops and _npu(wheel_ops[k]) != _npu(tuple(branch_ops[k])))  # type: ignore[arg-type]
    return {
        "only_in_branch_data": len(only_up), "only_in_wheel": len(only_wheel), "kernel_paths_differ": len(differ),
        "examples": {
            "only_in_branch_data": only_up[:EXAMPLES],
            "only_in_wheel": only_wheel[:EXAMPLES],
            "kernel_paths_differ": ["%s: branch %s, wheel %s" % (k, "+".join(_npu(tuple(branch_ops[k]))) or "-",  # type: ignore[arg-type]
                                                                 "+".join(_npu(wheel_ops[k])) or "-") for k in differ[:EXAMPLES]],
        },
    }


def _load_branch(branch: str) -> Dict[str, Rec]:
    import gzip

    path = DATA_DIR / "releases" / ("%s.json.gz" % branch)
    with gzip.open(path, "rt", encoding="utf-8") as fh:
        doc = json.load(fh)
    return {k: (list(v[0]), list(v[1]), v[2]) for k, v in doc["ops"].items()}


def _diff(base: Mapping[str, Rec], ops: Mapping[str, Rec]) -> Dict[str, Any]:
    add = {k: [list(v[0]), list(v[1]), v[2]] for k, v in ops.items() if k not in base or list(base[k]) != list(v)}
    rm = sorted(k for k in base if k not in ops)
    return {"add": add, "del": rm}


def _branch_of(version: str, index: Mapping[str, Any]) -> Optional[str]:
    for r in index.get("release_map", {}).get("rows", []):
        if r.get("wheel") == version:
            return r["branch"]
    return None


def write_op_data(facts: Mapping[str, Mapping[str, Any]], unreadable: Dict[str, str], data_dir: Path = DATA_DIR) -> None:
    from compat_matrix.tables import clear_cache, load_matrix
    from compat_matrix.versions import parse_version
    from tools.harvest_wheels import CODEGEN_YAML, HarvestError, reduce_wheel_ops

    clear_cache()
    m = load_matrix()
    index = json.loads((data_dir / INDEX_FILE.name).read_text(encoding="utf-8"))
    have_branch = {r["branch"] for r in index["releases"]}
    is_aten = regen.aten_name_lookup()
    ops_by: Dict[str, Dict[str, Rec]] = {}
    unread = dict(unreadable)
    for v in sorted(facts, key=_vkey):
        try:
            ops, member = reduce_wheel_ops(facts[v], is_aten)
        except (HarvestError, red.ReduceError) as exc:
            unread[v] = str(exc)
            continue
        ops_by[v] = {k: (list(r[0]), list(r[1]), r[2]) for k, r in ops.items()}
    builds: List[Dict[str, Any]] = []
    contradictions: List[Dict[str, Any]] = []
    for v, ops in ops_by.items():
        branch = _branch_of(v, index)
        if branch and branch in have_branch:
            up = _load_branch(branch)
            c = compare_upstream(ops, up)
            contradictions.append(dict(wheel=v, branch=branch, trusted="pypi: torch-npu==%s" % v, **c))
            for k, rec in ops.items():
                if rec[2] is None and k in up and up[k][2]:
                    ops[k] = (rec[0], rec[1], up[k][2])
        b = m.build(parse_version(v, "torch_npu"))
        st = m.cann_statement(parse_version(v, "torch_npu"))
        cann = b.cann.text if b is not None and b.cann is not None else ""
        builds.append({
            "wheel": v, "line": _line(v), "torch": "%d.%d" % parse_version(v, "torch_npu").series,
            "branch": branch or (b.branch if b is not None and b.branch else None),
            "release": b.release.text if b is not None and b.release is not None else "",
            "cann": cann, "cann_basis": st.kind if st is not None else "none",
            "cann_likely": st.range_text() if st is not None and st.kind == "inferred" else None,
            "source": "pypi: torch-npu==%s" % v, "member": CODEGEN_YAML,
            "wheel_file": facts[v]["file"], "sha256": facts[v]["sha256"],
            "git_version": facts[v].get("git_version"),
            "counts": red.counts(ops),
        })
    lines: Dict[str, List[str]] = {}
    for v in ops_by:
        lines.setdefault(_line(v), []).append(v)
    out_dir = data_dir / "wheels"
    out_dir.mkdir(parents=True, exist_ok=True)
    for old in out_dir.glob("*.json.gz"):
        if old.name[: -len(".json.gz")] not in lines:
            old.unlink()
    line_rows = []
    for line, versions in sorted(lines.items(), key=lambda kv: _vkey(kv[0])):
        versions = sorted(versions, key=_vkey)
        finals = [v for v in versions if not _vkey(v).is_prerelease] or versions
        base = finals[-1]
        doc = {"schema": SCHEMA, "line": line, "base": base,
               "ops": {k: [list(r[0]), list(r[1]), r[2]] for k, r in sorted(ops_by[base].items())},
               "builds": {v: _diff(ops_by[base], ops_by[v]) for v in versions if v != base}}
        regen._write_gz_json(out_dir / ("%s.json.gz" % line), doc)
        line_rows.append({"line": line, "base": base, "builds": versions, "file": "wheels/%s.json.gz" % line})
    index["wheels"] = {
        "about": ("Operator registration of every torch-npu wheel on the package index, read from the wheel's "
                  "%s by tools/harvest_wheels.py; one file per torch_npu line (the newest build in full, the "
                  "others as differences). Where a build also has branch data, the wheel wins." % CODEGEN_YAML),
        "index": "https://pypi.org/simple/torch-npu/",
        "lines": line_rows,
        "builds": sorted(builds, key=lambda r: _vkey(r["wheel"])),
        "unreadable": [{"wheel": v, "reason": why} for v, why in sorted(unread.items(), key=lambda kv: _vkey(kv[0]))],
        "contradictions": contradictions,
    }
    (data_dir / INDEX_FILE.name).write_text(json.dumps(index, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print("op data: %d builds in %d lines, %d unreadable" % (len(builds), len(line_rows), len(unread)), file=sys.stderr)
