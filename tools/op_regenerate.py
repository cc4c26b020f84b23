"""Rebuild the shipped op-support data (``compat_matrix/op_support/data/``).

Three inputs, three sub-commands; each rewrites only what it owns and then the index:

``upstream``  reduce the upstream op lists of release branches, read straight from local git
              clones of github.com/Ascend/pytorch and github.com/Ascend/op-plugin (read-only
              ``git show`` / ``git ls-tree``). Use this when a new release appears::

                  python -m tools.op_regenerate upstream \\
                      --pytorch-git ~/src/pytorch/.git --op-plugin-git ~/src/op-plugin/.git \\
                      --compatibility-md  v2.12.0-26.1.0 v2.7.1-26.1.0

              The op-plugin commit is the submodule ``third_party/op-plugin`` pinned by the
              branch; the yaml layout (per-torch-version ``v{M}r{m}/`` or unified) is detected.
              ``--compatibility-md`` also re-reads the wheel/branch/CANN table from the branch
              ``master`` ``COMPATIBILITY.en.md`` of the pytorch clone.

``reference`` rebuild from reduced files in the reduced op-support format
              (``<branch>.yaml`` with a ``meta`` block and ``ops``; ``release-map.yaml``)::

                  python -m tools.op_regenerate reference DIR

``wheels``    (not here: ``python -m tools.harvest_wheels --wheel-dir DIR`` from a checkout) reads
              the registration every published torch-npu wheel ships
              (``torch_npu/csrc/aten/npu_native_functions_by_codegen.yaml``, reduced by
              ``reduce.reduce_codegen``) into ``data/wheels/`` and the ``wheels`` section of the index,
              which the sub-commands here keep untouched.

``dispatch``  regenerate the table of PyTorch dispatch kernels per aten op (which ops are
              CompositeImplicit / CompositeExplicit / backend-only) from the installed torch::

                  python -m tools.op_regenerate dispatch

Output files are deterministic (sorted keys, gzip mtime 0), so a rebuild without new input
produces no diff.
"""
from __future__ import annotations

import argparse
import gzip
import io
import json
import re
import sys
from pathlib import Path
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, Tuple

from ascend_doctor.host import run_command
from compat_matrix.op_support.store import DATA_DIR, INDEX_FILE, SCHEMA
from compat_matrix.versions import parse_version
from tools import op_reduce as red

GIT_TIMEOUT = 60
OP_PLUGIN_REPO = "Ascend/op-plugin"
PYTORCH_REPO = "Ascend/pytorch"
NATIVE_YAML = "torch_npu/csrc/aten/npu_native_functions.yaml"
UNIFIED_YAML = "op_plugin/config/op_plugin_functions.yaml"
DISPATCH_FILE = DATA_DIR / "aten_dispatch.json.gz"
# Dispatch keys recorded per aten op, as single letters to keep the table small.
DISPATCH_KEYS = (
    ("I", "CompositeImplicitAutograd"),
    ("E", "CompositeExplicitAutograd"),
    ("N", "CompositeExplicitAutogradNonFunctional"),
    ("C", "CPU"),
    ("M", "Meta"),
    ("U", "CUDA"),
)


class RegenerateError(RuntimeError):
    pass


# --------------------------------------------------------------------------- yaml helpers


def load_yaml_keep_duplicates(text: str) -> Any:
    """Parse YAML; a key repeated inside one mapping keeps every value (as ``reduce.AnyOf``).

    Upstream op-plugin entries sometimes list ``op_api`` twice; a plain loader would keep
    only the last one and silently drop a torch version.
    """
    import yaml

    base = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

    class _Loader(base):  # type: ignore[misc, valid-type]
        pass

    def _mapping(loader: Any, node: Any, deep: bool = False) -> Dict[Any, Any]:
        out: Dict[Any, Any] = {}
        for key_node, value_node in node.value:
            key = loader.construct_object(key_node, deep=True)
            value = loader.construct_object(value_node, deep=True)
            if key in out:
                prev = out[key]
                out[key] = red.AnyOf(list(prev) + [value]) if isinstance(prev, red.AnyOf) else red.AnyOf([prev, value])
            else:
                out[key] = value
        return out

    _Loader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _mapping)
    return yaml.load(text, Loader=_Loader)


def _git(git_dir: Path, *args: str) -> str:
    done = run_command(["git", "--git-dir", str(git_dir), *args], GIT_TIMEOUT)
    if done.timed_out:
        raise RegenerateError(f"git {' '.join(args)} timed out after {GIT_TIMEOUT}s")
    if done.returncode != 0:
        raise RegenerateError(f"git {' '.join(args)} in {git_dir}: {(done.error or done.stderr).strip()}")
    if done.cut:
        raise RegenerateError(f"git {' '.join(args)}: output larger than the runner keeps ({done.cut} bytes cut)")
    return done.stdout


def _git_exists(git_dir: Path, rev: str, path: str) -> bool:
    try:
        _git(git_dir, "cat-file", "-e", f"{rev}:{path}")
        return True
    except RegenerateError:
        return False


def _commit_date(git_dir: Path, rev: str) -> str:
    return _git(git_dir, "show", "-s", "--format=%cs", rev).strip()


# --------------------------------------------------------------------------- aten names


def load_dispatch_table() -> Dict[str, str]:
    if not DISPATCH_FILE.exists():
        return {}
    with gzip.open(DISPATCH_FILE, "rt", encoding="utf-8") as fh:
        return dict(json.load(fh)["ops"])


def aten_name_lookup() -> Callable[[str], bool]:
    """Is 'name[.overload]' an aten op? From the shipped dispatch table (no torch needed)."""
    table = load_dispatch_table()
    bases = {k.split("::", 1)[1].split(".", 1)[0] for k in table}
    if not table:
        raise RegenerateError("aten dispatch table missing: run `regenerate dispatch` first (needs torch)")

    def is_aten(name: str) -> bool:
        return ("aten::" + name) in table or name.split(".", 1)[0] in bases

    return is_aten


# --------------------------------------------------------------------------- release map


def parse_compatibility_md(text: str) -> List[Dict[str, str]]:
    """Rows of the 'TorchNPU version mapping table' in Ascend/pytorch COMPATIBILITY.en.md."""
    rows: List[Dict[str, str]] = []
    in_table = False
    for line in text.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if line.strip().startswith("|") and len(cells) == 4:
            if re.match(r"^v?\d", cells[1]) and "-" in cells[1]:
                in_table = True
                branch = cells[1]
                rows.append(
                    {
                        "wheel": cells[0],
                        "branch": branch,
                        "torch": cells[2],
                        "cann": cells[3],
                        "torch_npu_release": branch.rsplit("-", 1)[1],
                    }
                )
        elif in_table and not line.strip():
            in_table = False
    if not rows:
        raise RegenerateError("COMPATIBILITY.en.md: no version mapping table found")
    return rows


def load_release_map_yaml(path: Path) -> Tuple[List[Dict[str, str]], Dict[str, str]]:
    import yaml

    text = path.read_text(encoding="utf-8")
    doc = yaml.safe_load(text)
    m = re.search(r"source:\s*github\.com/(\S+)\s+path\s+(\S+)\s+commit\s+([0-9a-f]{7,40})", text)
    source = {"repo": m.group(1), "path": m.group(2), "commit": m.group(3)} if m else {}
    return [dict((k, str(v)) for k, v in r.items()) for r in doc["releases"]], source


# --------------------------------------------------------------------------- writers


def _strip_cann(text: str) -> str:
    return re.sub(r"^\s*CANN\s*", "", text).strip()


def _write_gz_json(path: Path, doc: Any) -> None:
    raw = json.dumps(doc, sort_keys=True, separators=(",", ":")).encode("utf-8")
    buf = io.BytesIO()
    with gzip.GzipFile(filename="", mode="wb", fileobj=buf, mtime=0, compresslevel=9) as gz:
        gz.write(raw)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(buf.getvalue())


def write_release(branch: str, ops: Mapping[str, Tuple[List[str], List[str], Optional[str]]],
                  data_dir: Path = DATA_DIR) -> Path:
    path = data_dir / "releases" / f"{branch}.json.gz"
    _write_gz_json(
        path,
        {
            "schema": SCHEMA,
            "branch": branch,
            "ops": {k: [list(v[0]), list(v[1]), v[2]] for k, v in ops.items()},
        },
    )
    return path


def _release_sort_key(row: Mapping[str, Any]) -> Tuple[Any, ...]:
    # by the one version grammar: a final release sorts after its candidates (6.0.rc3 < 6.0.0)
    return (parse_version(str(row["release"]), "torch_npu_release"), parse_version(str(row["torch"]), "torch"))


def write_index(
    releases: List[Dict[str, Any]],
    release_map: List[Dict[str, str]],
    release_map_source: Mapping[str, str],
    command: str,
    data_dir: Path = DATA_DIR,
) -> None:
    index_file = data_dir / INDEX_FILE.name
    dispatch_file = data_dir / DISPATCH_FILE.name
    old: Dict[str, Any] = {}
    if index_file.exists():
        old = json.loads(index_file.read_text(encoding="utf-8"))
    merged: Dict[str, Dict[str, Any]] = {r["branch"]: r for r in old.get("releases", [])}
    for r in releases:
        merged[r["branch"]] = r
    dispatch_meta = old.get("aten_dispatch")
    if dispatch_file.exists():
        with gzip.open(dispatch_file, "rt", encoding="utf-8") as fh:
            d = json.load(fh)
        dispatch_meta = {"file": "aten_dispatch.json.gz", "torch": d["torch"], "ops": len(d["ops"]), "how": d["how"]}
    doc = {
        "schema": SCHEMA,
        "about": (
            "Aten and torch_npu custom ops registered by each torch_npu release branch, reduced from "
            "Ascend/op-plugin op_plugin_functions.yaml (at the commit the branch pins as third_party/op-plugin) "
            "and Ascend/pytorch torch_npu/csrc/aten/npu_native_functions.yaml. Rebuild with "
            "`python -m tools.op_regenerate`."
        ),
        "last_command": command,
        "impl_kinds": {
            "acl_op": "legacy ACL/TBE path (aclops; jit_compile=True or private-format input)",
            "op_api": "aclnn two-stage API path (default on A2/A3 with jit_compile=False and base-format input)",
            "dvm": "lazy-fusion path",
            "sparse": "sparse kernel",
            "internal_format_opapi": "aclnn path also accepts private formats",
            "torch_npu": "kernel inside torch_npu (npu_native_functions.yaml)",
            "tocpu": "op-plugin routes the op to the CPU on purpose (torch <= 2.0)",
            "unsupported": "op-plugin registers an error kernel (torch <= 2.0)",
        },
        "releases": sorted(merged.values(), key=_release_sort_key),
        "release_map": {"source": dict(release_map_source), "rows": release_map or old.get("release_map", {}).get("rows", [])},
        "aten_dispatch": dispatch_meta,
    }
    if not release_map and old.get("release_map"):
        doc["release_map"] = old["release_map"]
    if old.get("wheels"):
        doc["wheels"] = old["wheels"]  # written by tools/harvest_wheels.py; kept as it is
    index_file.parent.mkdir(parents=True, exist_ok=True)
    index_file.write_text(json.dumps(doc, indent=1, sort_keys=False, ensure_ascii=False) + "\n", encoding="utf-8")


def _release_row(
    branch: str,
    torch: str,
    release_map: List[Dict[str, str]],
    sources: List[Dict[str, Any]],
    counts: Mapping[str, int],
) -> Dict[str, Any]:
    row = next((r for r in release_map if r["branch"] == branch), None)
    if row is None:
        raise RegenerateError(f"branch {branch} is not in the release map; update it first (--compatibility-md)")
    return {
        "branch": branch,
        "torch": torch,
        "release": row["torch_npu_release"],
        "wheel": row["wheel"],
        "cann": _strip_cann(row["cann"]),
        "file": f"releases/{branch}.json.gz",
        "sources": sources,
        "counts": dict(counts),
    }


# --------------------------------------------------------------------------- upstream mode


def reduce_branch_from_git(
    pytorch_git: Path, op_plugin_git: Path, branch: str, is_aten: Callable[[str], bool]
) -> Tuple[str, Dict[str, Tuple[List[str], List[str], Optional[str]]], List[Dict[str, Any]]]:
    m = re.match(r"^v(\d+\.\d+)(?:\.\d+)?-", branch)
    if not m:
        raise RegenerateError(f"not a torch_npu release branch name: {branch!r} (expected v<torch>-<release>)")
    torch = m.group(1)
    head = _git(pytorch_git, "rev-parse", branch).strip()
    tree = _git(pytorch_git, "ls-tree", head, "third_party/op-plugin").split()
    if len(tree) < 3 or tree[1] != "commit":
        raise RegenerateError(f"{branch}: third_party/op-plugin is not a pinned submodule")
    plugin_commit = tree[2]
    major, minor = parse_version(torch, "torch").series
    per_version = f"op_plugin/config/v{major}r{minor}/op_plugin_functions.yaml"
    yaml_path = per_version if _git_exists(op_plugin_git, plugin_commit, per_version) else UNIFIED_YAML
    plugin_doc = load_yaml_keep_duplicates(_git(op_plugin_git, "show", f"{plugin_commit}:{yaml_path}"))
    native_doc = load_yaml_keep_duplicates(_git(pytorch_git, "show", f"{head}:{NATIVE_YAML}"))
    merged = red.merge(red.reduce_op_plugin(plugin_doc, torch, is_aten), red.reduce_native(native_doc))
    sources = [
        {
            "repo": OP_PLUGIN_REPO,
            "path": yaml_path,
            "commit": plugin_commit,
            "branch": branch.rsplit("-", 1)[1],
        },
        {"repo": PYTORCH_REPO, "path": NATIVE_YAML, "commit": head, "branch": branch},
    ]
    return torch, red.ordered(merged), sources


def cmd_upstream(args: argparse.Namespace) -> int:
    pytorch_git, plugin_git = Path(args.pytorch_git), Path(args.op_plugin_git)
    data_dir = Path(args.data_dir) if getattr(args, "data_dir", None) else DATA_DIR
    if args.compatibility_md:
        rev = args.compatibility_rev
        text = _git(pytorch_git, "show", f"{rev}:COMPATIBILITY.en.md")
        release_map = parse_compatibility_md(text)
        commit = _git(pytorch_git, "rev-parse", rev).strip()
        rm_source = {"repo": PYTORCH_REPO, "path": "COMPATIBILITY.en.md", "commit": commit}
    else:
        index_file = data_dir / INDEX_FILE.name
        idx = json.loads(index_file.read_text(encoding="utf-8")) if index_file.exists() else {}
        release_map = idx.get("release_map", {}).get("rows", [])
        rm_source = idx.get("release_map", {}).get("source", {})
    is_aten = aten_name_lookup()
    rows = []
    for branch in args.branches:
        torch, ops, sources = reduce_branch_from_git(pytorch_git, plugin_git, branch, is_aten)
        write_release(branch, ops, data_dir)
        c = red.counts(ops)
        rows.append(_release_row(branch, torch, release_map, sources, c))
        print(f"{branch}: {c['total']} ops ({c['aten']} aten, {c['npu']} npu) from {sources[0]['commit'][:12]}", file=sys.stderr)
    write_index(rows, release_map, rm_source, "upstream " + " ".join(args.branches), data_dir)
    return 0


# --------------------------------------------------------------------------- reference mode


def parse_reduced_yaml(text: str) -> Tuple[Dict[str, Any], Dict[str, Tuple[List[str], List[str], Optional[str]]]]:
    """A file in the reduced op-support format -> (meta, ops)."""
    import yaml

    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    doc = yaml.load(text, Loader=loader)
    if not isinstance(doc, dict) or "meta" not in doc or "ops" not in doc:
        raise RegenerateError("not a reduced op-support file (needs 'meta' and 'ops')")
    ops = {
        str(k): (list(v.get("impl", [])), list(v.get("src", [])), v.get("aclnn"))
        for k, v in sorted(doc["ops"].items())
    }
    return doc["meta"], ops


def cmd_reference(args: argparse.Namespace) -> int:
    ref = Path(args.directory)
    data_dir = Path(args.data_dir) if getattr(args, "data_dir", None) else DATA_DIR
    release_map, rm_source = load_release_map_yaml(ref / "release-map.yaml")
    rows = []
    for path in sorted(ref.glob("v*.yaml")):
        meta, ops = parse_reduced_yaml(path.read_text(encoding="utf-8"))
        branch = str(meta["torch_npu_branch"])
        sources = [
            {
                "repo": meta["op_plugin_repo"],
                "path": meta["op_plugin_path"],
                "commit": meta["op_plugin_commit"],
                "branch": meta.get("op_plugin_branch"),
            },
            {
                "repo": meta["torch_npu_repo"],
                "path": meta["torch_npu_path"],
                "commit": meta["torch_npu_commit"],
                "branch": branch,
            },
        ]
        write_release(branch, ops, data_dir)
        rows.append(_release_row(branch, str(meta["torch_version"]), release_map, sources, red.counts(ops)))
        print(f"{branch}: {len(ops)} ops", file=sys.stderr)
    if not rows:
        raise RegenerateError(f"no v*.yaml release files in {ref}")
    write_index(rows, release_map, rm_source, f"reference {ref.name}", data_dir)
    return 0


# --------------------------------------------------------------------------- dispatch mode


def cmd_dispatch(args: argparse.Namespace) -> int:
    try:
        import torch
    except ImportError as exc:  # pragma: no cover - depends on the machine
        raise RegenerateError("the dispatch table is read from PyTorch: pip install torch") from exc
    has = torch._C._dispatch_has_kernel_for_dispatch_key
    ops: Dict[str, str] = {}
    for name in sorted(torch._C._dispatch_get_all_op_names()):
        if not name.startswith("aten::"):
            continue
        ops[name] = "".join(letter for letter, key in DISPATCH_KEYS if has(name, key))
    how = (
        f"torch {torch.__version__}: for every aten op in torch._C._dispatch_get_all_op_names(), "
        "torch._C._dispatch_has_kernel_for_dispatch_key(op, key) for "
        + ", ".join(f"{letter}={key}" for letter, key in DISPATCH_KEYS)
    )
    _write_gz_json(DISPATCH_FILE, {"schema": SCHEMA, "torch": torch.__version__.split("+")[0], "how": how, "ops": ops})
    idx = json.loads(INDEX_FILE.read_text(encoding="utf-8")) if INDEX_FILE.exists() else None
    if idx is not None:
        idx["aten_dispatch"] = {"file": DISPATCH_FILE.name, "torch": torch.__version__.split("+")[0], "ops": len(ops), "how": how}
        INDEX_FILE.write_text(json.dumps(idx, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"{len(ops)} aten ops from torch {torch.__version__}", file=sys.stderr)
    return 0


def main(argv: Optional[Sequence[str]] = None) -> int:
    p = argparse.ArgumentParser(prog="python -m tools.op_regenerate", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--data-dir", help="write here instead of compat_matrix/op_support/data")
    sub = p.add_subparsers(dest="cmd", required=True)
    up = sub.add_parser("upstream", help="reduce release branches from git clones of Ascend/pytorch and Ascend/op-plugin")
    up.add_argument("--pytorch-git", required=True, help="git dir of a github.com/Ascend/pytorch clone")
    up.add_argument("--op-plugin-git", required=True, help="git dir of a github.com/Ascend/op-plugin clone")
    up.add_argument("--compatibility-md", action="store_true", help="re-read the release map from COMPATIBILITY.en.md")
    up.add_argument("--compatibility-rev", default="master", help="revision of COMPATIBILITY.en.md (default master)")
    up.add_argument("branches", nargs="+", help="release branches, e.g. v2.7.1-26.1.0")
    ref = sub.add_parser("reference", help="rebuild from reduced yaml files (reduced op-support format)")
    ref.add_argument("directory")
    sub.add_parser("dispatch", help="regenerate the aten dispatch-kernel table from the installed torch")
    args = p.parse_args(argv)
    handler = {"upstream": cmd_upstream, "reference": cmd_reference, "dispatch": cmd_dispatch}[args.cmd]
    try:
        return handler(args)
    except (RegenerateError, OSError, KeyError) as exc:
        print(f"regenerate: {exc}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
