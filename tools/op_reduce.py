"""Reduce upstream op lists to ``{op key: (impl kinds, yaml sections, aclnn name)}``.

Pure functions over already-parsed YAML (no I/O). Inputs are the two upstream files a
torch_npu release is built from:

- Ascend/op-plugin ``op_plugin/config/op_plugin_functions.yaml`` (unified layout, 6.0.rc3+:
  ``all_version`` plus per-entry version specs) or ``op_plugin/config/v{M}r{m}/op_plugin_functions.yaml``
  (per-torch-version layout, up to 6.0.rc2: ``impl_ns: acl_op, op_api``);
- Ascend/pytorch ``torch_npu/csrc/aten/npu_native_functions.yaml`` (kernels inside torch_npu).

Keys follow ``OpOverload.name()``: ``aten::<name>[.<overload>]`` or ``npu::<name>`` for
torch_npu's own custom ops, so a recorded op can be looked up directly.
"""
from __future__ import annotations

from typing import Any, Callable, Dict, Iterable, List, Mapping, Optional, Set, Tuple

from compat_matrix.versions import VersionError, parse_version

# Order in which impl kinds are listed (stable output, matches the reference files).
IMPL_ORDER = (
    "acl_op",
    "op_api",
    "dvm",
    "sparse",
    "internal_format_opapi",
    "torch_npu",
    "tocpu",
    "unsupported",
)
_PLUGIN_IMPL_KEYS = ("acl_op", "op_api", "dvm", "sparse", "internal_format_opapi")
# op-plugin sections whose entries are aten ops; 'custom' entries are torch_npu's own ops.
_ATEN_SECTIONS = ("official", "quant", "autograd", "tocpu", "unsupported")

Entry = Dict[str, Any]  # {"impl": set, "src": set, "aclnn": Optional[str]}


class ReduceError(ValueError):
    """The upstream file does not have a shape this reducer knows."""


class AnyOf(list):
    """A key given twice in one upstream entry (it happens: ``op_api`` twice); either spec counts."""


def torch_minor(version: str) -> Tuple[int, int]:
    """'2.7.1' / 'v2.7' / '2.12' -> (2, 7) / (2, 12)."""
    try:
        return parse_version(version, "torch").series
    except VersionError:
        raise ReduceError(f"not a torch version: {version!r}") from None


def _vtuple(token: str) -> Tuple[int, int]:
    return torch_minor(token.strip())


def version_spec_matches(spec: Any, torch: Tuple[int, int], all_versions: List[str]) -> bool:
    """Does an op-plugin version spec include this torch minor version?

    Forms seen upstream: ``all_version``; ``[v2.1, newest]``; ``[v2.1, v2.6]`` (inclusive);
    ``v2.1``; ``v2.1, v2.2``; and ``version: v1.11, v2.0`` in the tocpu/unsupported sections.
    """
    if spec is None:
        return False
    if isinstance(spec, AnyOf):
        return any(version_spec_matches(s, torch, all_versions) for s in spec)
    if isinstance(spec, bool):
        return spec
    if isinstance(spec, (list, tuple)):
        items = [str(s).strip() for s in spec]
        if len(items) == 2 and items[1] == "newest":
            return torch >= _vtuple(items[0])
        if len(items) == 2 and all(i.startswith("v") for i in items):
            return _vtuple(items[0]) <= torch <= _vtuple(items[1])
        return any(_vtuple(i) == torch for i in items if i.startswith("v"))
    text = str(spec).strip()
    if text == "all_version":
        return any(_vtuple(v) == torch for v in all_versions)
    return any(_vtuple(t) == torch for t in text.split(",") if t.strip().startswith("v"))


def op_key_name(func: str) -> str:
    """'add.Tensor(Tensor self, ...) -> Tensor' -> 'add.Tensor'."""
    return func.split("(", 1)[0].strip()


def _aclnn(entry: Mapping[str, Any]) -> Optional[str]:
    gen = entry.get("gen_opapi")
    if isinstance(gen, Mapping):
        exec_name = gen.get("exec")
        if isinstance(exec_name, str) and exec_name.strip():
            # 'exec' can carry arguments ('aclnnFoo, self, out'); the API name comes first.
            return exec_name.split(",")[0].strip()
    return None


def _add(out: Dict[str, Entry], key: str, impls: Iterable[str], src: str, aclnn: Optional[str]) -> None:
    e = out.setdefault(key, {"impl": set(), "src": set(), "aclnn": None})
    e["impl"].update(impls)
    e["src"].add(src)
    if aclnn and not e["aclnn"]:
        e["aclnn"] = aclnn


def reduce_op_plugin(
    doc: Mapping[str, Any],
    torch: str,
    is_aten: Callable[[str], bool],
) -> Dict[str, Entry]:
    """Reduce a parsed ``op_plugin_functions.yaml`` to the ops registered for one torch version.

    ``is_aten(name)`` decides the namespace of ``symint`` entries (they can be either kind);
    pass a lookup into PyTorch's aten op names.
    """
    if not isinstance(doc, Mapping):
        raise ReduceError("op_plugin_functions.yaml: top level is not a mapping")
    tv = torch_minor(torch)
    unified = "all_version" in doc
    all_versions = [str(v) for v in (doc.get("all_version") or [])]
    out: Dict[str, Entry] = {}
    for section, entries in doc.items():
        if section == "all_version" or not isinstance(entries, list):
            continue
        for entry in entries:
            if isinstance(entry, str) and section in ("tocpu", "unsupported"):
                entry = {"func": entry}  # per-version layout lists bare names here
            if not isinstance(entry, Mapping) or "func" not in entry:
                continue
            name = op_key_name(str(entry["func"]))
            if section in ("tocpu", "unsupported"):
                spec = entry.get("version", "all_version") if unified else True
                if version_spec_matches(spec, tv, all_versions):
                    _add(out, "aten::" + name, [section], section, None)
                continue
            if unified:
                impls = [k for k in _PLUGIN_IMPL_KEYS if version_spec_matches(entry.get(k), tv, all_versions)]
            else:
                impls = [s.strip() for s in str(entry.get("impl_ns", "")).split(",") if s.strip()]
                impls += [k for k in ("dvm", "sparse", "internal_format_opapi") if entry.get(k)]
            if not impls:
                continue
            if section == "custom":
                ns = "npu"
            elif section == "symint":
                ns = "aten" if is_aten(name) else "npu"
            elif section in _ATEN_SECTIONS:
                ns = "aten"
            else:
                raise ReduceError(f"op_plugin_functions.yaml: unknown section {section!r}")
            _add(out, f"{ns}::{name}", impls, section, _aclnn(entry))
    return out


def reduce_native(doc: Mapping[str, Any]) -> Dict[str, Entry]:
    """Reduce torch_npu's ``npu_native_functions.yaml`` (kernels that live in torch_npu)."""
    if not isinstance(doc, Mapping):
        raise ReduceError("npu_native_functions.yaml: top level is not a mapping")
    out: Dict[str, Entry] = {}
    for section in ("supported", "symint", "autograd", "tocpu", "custom"):
        for item in doc.get(section) or []:
            if isinstance(item, Mapping):
                func = str(item.get("func", ""))
                extra = ["op_api"] if item.get("op_api") is True else []
            else:
                func, extra = str(item), []
            if not func:
                continue
            name = op_key_name(func)
            ns = "npu" if section == "custom" else "aten"
            impls = ["tocpu"] if section == "tocpu" else ["torch_npu"] + extra
            _add(out, f"{ns}::{name}", impls, "native_" + section, None)
    return out


def merge(*parts: Mapping[str, Entry]) -> Dict[str, Entry]:
    out: Dict[str, Entry] = {}
    for part in parts:
        for key, e in part.items():
            for src in e["src"]:
                _add(out, key, e["impl"], src, e["aclnn"])
    return out


def ordered(entries: Mapping[str, Entry]) -> Dict[str, Tuple[List[str], List[str], Optional[str]]]:
    """Stable, sorted form: key -> (impl kinds in IMPL_ORDER, sorted sections, aclnn)."""
    rank = {k: i for i, k in enumerate(IMPL_ORDER)}
    out: Dict[str, Tuple[List[str], List[str], Optional[str]]] = {}
    for key in sorted(entries):
        e = entries[key]
        impl = sorted(e["impl"], key=lambda k: (rank.get(k, len(rank)), k))
        out[key] = (impl, sorted(e["src"]), e["aclnn"])
    return out


def counts(entries: Mapping[str, Tuple[List[str], List[str], Optional[str]]]) -> Dict[str, int]:
    """The per-file counts of the reference index (aten/npu totals and NPU path classes)."""
    c: Dict[str, int] = {"total": len(entries), "aten": 0, "npu": 0}
    for key, (impl, _src, _aclnn) in entries.items():
        ns = key.split("::", 1)[0]
        c[ns] = c.get(ns, 0) + 1
        if ns != "aten":
            continue
        kinds: Set[str] = set(impl)
        if "tocpu" in kinds:
            cls = "aten_tocpu"
        elif "unsupported" in kinds:
            cls = "aten_unsupported"
        elif "torch_npu" in kinds:
            cls = "aten_torch_npu_native"
        elif {"acl_op", "op_api"} <= kinds:
            cls = "aten_both"
        elif "acl_op" in kinds:
            cls = "aten_acl_op_only"
        elif "op_api" in kinds:
            cls = "aten_op_api_only"
        else:
            cls = "aten_other"
        c[cls] = c.get(cls, 0) + 1
    return c


# Sections of a wheel's npu_native_functions_by_codegen.yaml (the registration the wheel was
# generated from: torch_npu's own kernels and op-plugin's entries, merged for one PyTorch).
CODEGEN_SECTIONS = ("supported", "custom", "symint", "autograd", "quant", "tocpu", "unsupported")


def reduce_codegen(doc: Mapping[str, Any], is_aten: Callable[[str], bool]) -> Dict[str, Entry]:
    """Reduce a wheel's ``torch_npu/csrc/aten/npu_native_functions_by_codegen.yaml``.

    Entries are either a bare name (a kernel inside torch_npu), or a mapping with ``func`` and
    ``impl_ns: acl_op, op_api`` (op-plugin kernels) plus flags such as ``op_api: true`` or
    ``internal_format_opapi: true``. A mapping without ``impl_ns`` is torch_npu's own kernel.
    ``custom`` entries are torch_npu ops (``npu::``); ``symint`` and ``autograd`` entries are
    aten or npu by name (``is_aten``). The section becomes the entry's ``src`` ("codegen_<section>").
    """
    if not isinstance(doc, Mapping):
        raise ReduceError("npu_native_functions_by_codegen.yaml: top level is not a mapping")
    known = set(CODEGEN_SECTIONS) | {"backend", "cpp_namespace"}
    unknown = [k for k, v in doc.items() if isinstance(v, list) and k not in known]
    if unknown:
        raise ReduceError(f"npu_native_functions_by_codegen.yaml: unknown section(s) {', '.join(map(str, unknown))}")
    out: Dict[str, Entry] = {}
    for section in CODEGEN_SECTIONS:
        for item in doc.get(section) or []:
            if isinstance(item, Mapping):
                func = str(item.get("func", ""))
                impls = [s.strip() for s in str(item.get("impl_ns") or "").split(",") if s.strip()]
                # flags: 'op_api: true', 'internal_format_opapi: true', 'sparse: op_api' (the
                # namespace of the sparse kernel), 'dvm: ...'
                flags = [k for k in _PLUGIN_IMPL_KEYS if item.get(k) not in (None, False, "")]
                if section in ("tocpu", "unsupported"):
                    impls = [section]
                elif "(" not in func:
                    impls = ["torch_npu"]  # a bare name: torch_npu's own kernel (npu_native_functions.yaml)
                impls += [f for f in flags if f not in impls]
                if not impls:
                    impls = ["torch_npu"]
                aclnn = _aclnn(item)
            else:
                func, aclnn = str(item), None
                impls = [section] if section in ("tocpu", "unsupported") else ["torch_npu"]
            if not func:
                continue
            name = op_key_name(func)
            if section == "custom":
                ns = "npu"
            elif section in ("symint", "autograd"):
                ns = "aten" if is_aten(name) else "npu"
            else:
                ns = "aten"
            _add(out, f"{ns}::{name}", impls, "codegen_" + section, aclnn)
    if not out:
        raise ReduceError("npu_native_functions_by_codegen.yaml: no op entries")
    return out
