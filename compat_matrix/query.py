"""Judge a stack: a verdict for every pair of components the data can speak to.

``evaluate({"torch": "2.1.0", "torch_npu": "2.4.0.post2"})`` returns a Report whose pairs
say compatible / not_recommended / incompatible / unknown, with what was found, what is
required and the source row. Rules of evidence:

* A pair the tables state is answered from them (the source is the row's).
* A version no table knows is `unknown`, with the reason and whatever nearby facts exist
  (builds of the same PyTorch line, pins of downstream projects) - never a guess as fact.
* `not_recommended`: the pair works by the data but a source advises against it
  (pre-release or beta builds, a driver between the lines the CANN notes list, ...).
"""
from __future__ import annotations

from typing import Any, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple

from compat_matrix import chips as chips_mod
from compat_matrix import host_rules
from compat_matrix.errors import ComponentError
from compat_matrix.report import (COMPATIBLE, COMPONENTS, INCOMPATIBLE, LABELS, NOT_RECOMMENDED,
                                  UNKNOWN, Pair, Report)
from compat_matrix.tables import HDK_RELATIONS, NOTE_RELATIONS, Build, HdkStatement, Matrix, load_matrix
from compat_matrix.versions import Version, VersionSpec, parse_version

_COMPONENT_ALIASES = {
    "torch-npu": "torch_npu", "torchnpu": "torch_npu", "pytorch": "torch", "hdk": "driver",
    "npu_driver": "driver", "npu-driver": "driver", "fw": "firmware", "py": "python",
    "soc": "chip", "npu": "chip",
}


def canonical_component(name: str) -> str:
    k = str(name).strip().lower()
    k = _COMPONENT_ALIASES.get(k, k).replace("-", "_")
    if k not in COMPONENTS:
        raise ComponentError(name, COMPONENTS)
    return k


class Stack(object):
    """A parsed stack: component -> Version (chip -> family id). Unknown keys are refused."""

    def __init__(self, values: Mapping[str, Any]) -> None:
        self.versions: Dict[str, Version] = {}
        self.chip: Optional[str] = None
        self.chip_text: Optional[str] = None
        for key, value in values.items():
            comp = canonical_component(key)
            if value is None or (isinstance(value, str) and not value.strip()):
                continue
            if comp == "chip":
                self.chip = chips_mod.family_from_user(str(value))
                self.chip_text = str(value).strip()
            else:
                self.versions[comp] = parse_version(value, comp)

    def get(self, comp: str) -> Optional[Version]:
        return self.versions.get(comp)

    def as_strings(self) -> Dict[str, str]:
        out = {}
        for comp in COMPONENTS:
            if comp == "chip" and self.chip:
                out["chip"] = self.chip
            elif comp in self.versions:
                out[comp] = self.versions[comp].text
        return out


# --------------------------------------------------------------------------- helpers
def _py_series(v: Version) -> str:
    return "%d.%d" % v.series


def _py_range(pys: Sequence[str]) -> str:
    if not pys:
        return "none"
    if len(pys) == 1:
        return pys[0]
    return "%s-%s" % (pys[0], pys[-1])


def _cite(m: Matrix, sid: Optional[str]) -> Optional[str]:
    return m.source_url(sid) if sid else None


def _fmt_versions(items: Iterable[Any], limit: int = 6) -> str:
    items = [str(i) for i in items]
    if len(items) > limit:
        return ", ".join(items[:limit]) + ", ... (%d in all)" % len(items)
    return ", ".join(items)


def _supported_cann(m: Matrix, b: Build) -> Tuple[List[VersionSpec], Optional[str]]:
    """The CANN specs a build goes with: its own pairing, then the release line's wider set."""
    specs: List[VersionSpec] = []
    if b.cann is not None:
        specs.append(b.cann)
    if b.cann_basis in ("wheel", "inherited"):
        # the statement lists every CANN it names (paired one first), with its own source
        specs.extend(s for s in b.cann_also if s.text not in {x.text for x in specs})
        return specs, b.source
    line = m.release_line(b)
    src = None
    if line is not None and line.supports:
        specs.extend(s for s in line.supports if s.text not in {x.text for x in specs})
        src = line.supports_source
    return specs, src


def _pins_for(m: Matrix, torch_npu: Optional[Version] = None, cann: Optional[Version] = None) -> List[str]:
    """Downstream pins of exactly this torch_npu (and CANN, if given), as short phrases."""
    out = []
    for p in m.pins:
        if torch_npu is not None:
            pv = _safe(p.torch_npu, "torch_npu")
            if pv is None or pv.public != torch_npu.public:
                continue
        if cann is not None:
            pc = _safe(p.cann, "cann")
            if pc is None or pc != cann:
                continue
        label = p.project + (" " + p.version if p.version else "")
        if torch_npu is None:
            label += " (torch_npu %s)" % p.torch_npu
        if cann is None and p.cann:
            label += " (CANN %s)" % p.cann
        out.append(label)
    return out


def _safe(text: Optional[str], kind: str) -> Optional[Version]:
    if not text:
        return None
    try:
        return parse_version(text, kind)
    except ValueError:
        return None


def _status_phrase(m: Matrix, b: Build) -> str:
    if b.status == "prerelease":
        return "a pre-release build"
    if b.status == "beta":
        return "a beta build (TorchNPU %s)" % (b.release.text if b.release else "?")
    if b.status == "hotfix":
        return "a hotfix build (TorchNPU %s)" % (b.release.text if b.release else
                                                  "hotfix of " + (b.hotfix_of.text if b.hotfix_of else "?"))
    if b.status == "unverified":
        return "a published build"
    if b.status == "published":
        return "a build on the package index that no stored table lists"
    return "the TorchNPU %s build" % (b.release.text if b.release else "?")


def _ga_builds_for(m: Matrix, torch: Version, cann: Optional[Version] = None) -> List[Build]:
    out = []
    for b in m.builds_for_torch(torch):
        if not b.is_ga:
            continue
        if cann is not None and (b.cann is None or not b.cann.matches(cann)):
            continue
        out.append(b)
    return sorted(out, key=lambda b: b.torch_npu, reverse=True)


# --------------------------------------------------------------------------- pair judges
def judge_torch_npu_torch(m: Matrix, tn: Version, torch: Version) -> Pair:
    b = m.build(tn)
    found = "torch_npu %s with torch %s" % (tn.text, torch.text)
    if b is not None:
        need = b.torch
        if torch.public == need:
            return Pair("torch", "torch_npu", COMPATIBLE, found, "torch %s" % need.text,
                        _cite(m, b.source), "torch_npu %s is built for PyTorch %s" % (tn.text, need.text),
                        b.source)
        return Pair("torch", "torch_npu", INCOMPATIBLE, found, "torch %s" % need.text, _cite(m, b.source),
                    "torch_npu %s is built for PyTorch %s and pins torch==%s; it does not load with "
                    "torch %s" % (tn.text, need.text, need.text, torch.text), b.source)
    # not in the tables: every torch_npu wheel pins the PyTorch named by its first three numbers
    need = tn.base
    need_t = parse_version(need.text, "torch")
    verdict = COMPATIBLE if torch.public.base == need_t else INCOMPATIBLE
    return Pair("torch", "torch_npu", verdict, found, "torch %s" % need_t.text, _cite(m, "wheel_metadata"),
                "torch_npu %s is in no table; by the wheel naming rule (Requires-Dist torch==X.Y.Z) it "
                "needs PyTorch %s" % (tn.text, need_t.text), "wheel_metadata")


def judge_torch_npu_cann(m: Matrix, tn: Version, cann_in: Version) -> Pair:
    cann = m.commercial_cann(cann_in)
    shown = cann_in.text if cann == cann_in else "%s (community name of %s)" % (cann_in.text, cann.text)
    found = "torch_npu %s with CANN %s" % (tn.text, shown)
    b = m.build(tn)
    if b is None:
        same_line = _ga_builds_for(m, parse_version(tn.base.text, "torch"))
        hint = ""
        if same_line:
            hint = "; GA builds for PyTorch %s: %s" % (tn.base.text, _fmt_versions(
                "%s (CANN %s)" % (x.torch_npu.text, x.cann.text if x.cann else "?") for x in same_line))
        pins = _pins_for(m, tn, cann)
        if pins:
            hint += "; pinned together by " + _fmt_versions(pins)
        for x in same_line:
            if x.cann is not None and x.cann.matches(cann):
                return Pair("cann", "torch_npu", UNKNOWN, found, "torch_npu %s" % x.torch_npu.text,
                            _cite(m, x.source),
                            "torch_npu %s is in no table; the build made for CANN %s is %s%s"
                            % (tn.text, cann.text, x.torch_npu.text, hint), x.source)
        return Pair("cann", "torch_npu", UNKNOWN, found, None, None,
                    "torch_npu %s is in no table%s" % (tn.text, hint), None)
    if b.cann is None:
        pins = _pins_for(m, tn)
        extra = ("; pinned by " + _fmt_versions(pins)) if pins else ""
        st = m.cann_statement(tn)
        if st is not None and st.kind == "inferred":
            # an inference from the neighbours: at best not_recommended, never compatible
            likely = st.range_text()
            if st.in_range(cann):
                return Pair("cann", "torch_npu", NOT_RECOMMENDED, found, "likely " + likely, None,
                            "inferred, not stated: %s; CANN %s is inside that range, but no source pairs them%s"
                            % (st.text, cann.text, extra), None)
            return Pair("cann", "torch_npu", UNKNOWN, found, "likely " + likely, None,
                        "inferred, not stated: %s; CANN %s is outside that range%s" % (st.text, cann.text, extra), None)
        return Pair("cann", "torch_npu", UNKNOWN, found, None, _cite(m, b.source),
                    "torch_npu %s is %s (%s), but no source names the CANN release it was made for%s"
                    % (tn.text, _status_phrase(m, b), b.note or "", extra), b.source)
    if b.cann_basis in ("wheel", "inherited"):
        return _judge_stated(m, b, tn, cann, found)
    specs, wide_src = _supported_cann(m, b)
    paired = b.cann
    required = "CANN %s" % paired.text
    others = [s.text for s in specs[1:]]
    if others:
        required += " (its release line also supports %s)" % ", ".join(others)
    line = m.release_line(b)
    if paired.matches(cann):
        verdict, sid = COMPATIBLE, b.source
        reason = "torch_npu %s is %s, made for CANN %s" % (tn.text, _status_phrase(m, b), paired.text)
    elif any(s.matches(cann) for s in specs[1:]):
        verdict, sid = COMPATIBLE, wide_src
        made = [x.torch_npu.text for x in _ga_builds_for(m, b.torch, cann)]
        reason = ("torch_npu %s is made for CANN %s; the release notes of TorchNPU %s also support "
                  "CANN %s" % (tn.text, paired.text, line.release.text if line else "?", cann.text))
        if made:
            reason += " (the build made for it is %s)" % ", ".join(made)
    else:
        known = m.is_known_cann(cann)
        made_for_cann = sorted({x.torch_npu.text for x in m.builds
                                if x.is_ga and x.cann is not None and x.cann.matches(cann)})
        if known:
            reason = ("torch_npu %s goes with CANN %s, not %s" % (tn.text, _fmt_specs(specs), cann.text))
            same_torch = [x.torch_npu.text for x in _ga_builds_for(m, b.torch, cann)]
            if same_torch:
                reason += "; for CANN %s install torch_npu %s" % (cann.text, ", ".join(same_torch))
            elif made_for_cann:
                reason += "; CANN %s is paired with torch_npu %s" % (cann.text, _fmt_versions(made_for_cann))
            return Pair("cann", "torch_npu", INCOMPATIBLE, found, required, _cite(m, b.source), reason, b.source)
        pins = _pins_for(m, tn, cann)
        reason = ("CANN %s appears in no torch_npu table; torch_npu %s is made for CANN %s"
                  % (cann.text, tn.text, _fmt_specs(specs)))
        if pins:
            reason += "; pinned together by " + _fmt_versions(pins) + " (downstream, not a vendor statement)"
        return Pair("cann", "torch_npu", UNKNOWN, found, required, _cite(m, b.source), reason, b.source)
    if b.status in ("prerelease", "beta"):
        ga = [x.torch_npu.text for x in _ga_builds_for(m, b.torch, cann)]
        verdict = NOT_RECOMMENDED
        reason += "; it is %s%s" % (_status_phrase(m, b),
                                    ", use the GA build %s" % ", ".join(ga) if ga else ", with no GA build for this CANN")
    return Pair("cann", "torch_npu", verdict, found, required, _cite(m, sid), reason, sid)


def _judge_stated(m: Matrix, b: Build, tn: Version, cann: Version, found: str) -> Pair:
    """torch_npu <-> CANN for a build whose CANN comes from its wheel or is inherited from its line."""
    specs, sid = _supported_cann(m, b)
    required = "CANN %s" % _fmt_specs(specs)
    statement = b.cann_note or ""
    if any(s.matches(cann) for s in specs):
        verdict = COMPATIBLE
        reason = statement
        if b.status == "prerelease":
            verdict = NOT_RECOMMENDED
            reason += "; it is a pre-release build"
        return Pair("cann", "torch_npu", verdict, found, required, _cite(m, sid), reason, sid)
    exact = [s.version for s in specs if s.version is not None]
    if exact and all(cann > v for v in exact) or not m.is_known_cann(cann):
        return Pair("cann", "torch_npu", UNKNOWN, found, required, _cite(m, sid),
                    "%s; nothing names CANN %s for it, and no source says whether it works" % (statement, cann.text), sid)
    reason = "%s; nothing names CANN %s for it" % (statement, cann.text)
    if exact and all(cann < v for v in exact):
        reason += ", which is older than every CANN named for this build"
    made = sorted({x.torch_npu.text for x in m.builds if x.is_ga and x.cann is not None and x.cann.matches(cann)
                   and x.torch == b.torch}, key=lambda t: parse_version(t, "torch_npu"))
    if made:
        reason += "; for CANN %s install torch_npu %s" % (cann.text, ", ".join(made))
    return Pair("cann", "torch_npu", INCOMPATIBLE, found, required, _cite(m, sid), reason, sid)


def _fmt_specs(specs: Sequence[VersionSpec]) -> str:
    return ", ".join(s.text for s in specs)


def judge_torch_npu_python(m: Matrix, tn: Version, py: Version) -> Pair:
    series = _py_series(py)
    found = "torch_npu %s on Python %s" % (tn.text, py.text)
    b = m.build(tn)
    if b is None:
        same = [x for x in m.builds_for_torch(parse_version(tn.base.text, "torch")) if x.python]
        hint = ""
        if same:
            ok = sorted({x.torch_npu.text for x in same if series in x.python})
            hint = ("; builds of the same PyTorch line with a Python %s wheel: %s" % (series, _fmt_versions(ok))
                    if ok else "; no build of the same PyTorch line ships Python %s" % series)
        return Pair("python", "torch_npu", UNKNOWN, found, None, None,
                    "torch_npu %s is in no table%s" % (tn.text, hint), None)
    if b.python is None:
        ga = [x for x in _ga_builds_for(m, b.torch) if x.python and (x.release == b.line or x.release == b.hotfix_of)]
        hint = ""
        if ga:
            hint = "; the GA build %s of the same line ships Python %s" % (ga[0].torch_npu.text, _py_range(ga[0].python))
        return Pair("python", "torch_npu", UNKNOWN, found, None, _cite(m, b.source),
                    "torch_npu %s is %s, not on PyPI, and its Python list is not published%s"
                    % (tn.text, _status_phrase(m, b), hint), b.source)
    required = "Python %s" % _py_range(b.python)
    if b.python_min is not None:
        required += " (at least %s)" % b.python_min.text
    how = "wheels on PyPI" if b.on_pypi else "the release notes"
    sid = b.python_source or b.source
    if series not in b.python:
        reason = "torch_npu %s has no Python %s build (%s: %s)" % (tn.text, series, how, _py_range(b.python))
        if b.on_pypi:
            reason += "; pip will not find a wheel for this interpreter"
        return Pair("python", "torch_npu", INCOMPATIBLE, found, required, _cite(m, sid), reason, sid)
    if b.python_min is not None and len(py.pep440.release) >= 3 and py < b.python_min:
        return Pair("python", "torch_npu", INCOMPATIBLE, found, required, _cite(m, sid),
                    "torch_npu %s needs Python %s or later" % (tn.text, b.python_min.text), sid)
    if b.python_x86_64 is not None and series not in b.python_x86_64:
        return Pair("python", "torch_npu", NOT_RECOMMENDED, found, required, _cite(m, sid),
                    "torch_npu %s ships Python %s wheels for aarch64 only (x86_64: %s)"
                    % (tn.text, series, _py_range(b.python_x86_64)), sid)
    reason = "torch_npu %s ships Python %s (%s: %s)" % (tn.text, series, how, _py_range(b.python))
    if b.python_min is not None and len(py.pep440.release) < 3:
        reason += "; %s means %s or later" % (series, b.python_min.text)
    return Pair("python", "torch_npu", COMPATIBLE, found, required, _cite(m, sid), reason, sid)


def judge_torch_python(m: Matrix, torch: Version, py: Version, with_torch_npu: bool) -> Pair:
    series = _py_series(py)
    found = "torch %s on Python %s" % (torch.text, py.text)
    row = m.torch_python_row(torch)
    if row is None:
        return Pair("python", "torch", UNKNOWN, found, None, None,
                    "PyTorch %s is not in the PyTorch/Python table" % torch.text, None)
    required = "Python %s" % _py_range(row.upstream)
    if series not in row.upstream:
        return Pair("python", "torch", INCOMPATIBLE, found, required, _cite(m, row.source),
                    "PyTorch %s has no Python %s wheel (PyPI: %s)" % (torch.text, series, _py_range(row.upstream)),
                    row.source)
    if row.python_min is not None and len(py.pep440.release) >= 3 and py < row.python_min:
        return Pair("python", "torch", INCOMPATIBLE, found, required + " (at least %s)" % row.python_min.text,
                    _cite(m, row.ascend_source or row.source),
                    "the Ascend tables need Python %s or later for PyTorch %s" % (row.python_min.text, torch.text),
                    row.ascend_source or row.source)
    if with_torch_npu:
        return Pair("python", "torch", COMPATIBLE, found, required, _cite(m, row.source),
                    "PyTorch %s ships Python %s wheels" % (torch.text, series), row.source)
    # Without a torch_npu version the question is whether any torch_npu build for this PyTorch
    # runs on this Python. The verdict follows the best build that does: a GA build, or a
    # final build on PyPI no CANN table lists, is compatible (its wheel tags answer the Python
    # question; which CANN it needs is the cann ~ torch_npu question, judged there); only
    # pre-release or beta builds is not_recommended (a source advises against them); none at
    # all is incompatible.
    builds = [b for b in m.builds_for_torch(torch) if b.python]
    ga_ok = sorted({b.torch_npu.text for b in builds if b.is_ga and series in b.python})
    if ga_ok:
        return Pair("python", "torch", COMPATIBLE, found, required, _cite(m, "pypi_torch_npu"),
                    "PyTorch %s ships Python %s, and so do torch_npu %s" % (torch.text, series, _fmt_versions(ga_ok)),
                    "pypi_torch_npu")
    published = [b for b in builds if b.status == "unverified" and series in b.python]
    if published:
        names = sorted({b.torch_npu.text for b in published})
        pys = sorted({p for b in published for p in b.python}, key=lambda t: parse_version(t, "python"))
        return Pair("python", "torch", COMPATIBLE, found, "Python %s (published torch_npu wheels)" % _py_range(pys),
                    _cite(m, "pypi_torch_npu"),
                    "PyTorch %s ships Python %s, and so does torch_npu %s on PyPI (no source names the CANN "
                    "release %s made for)" % (torch.text, series, _fmt_versions(names),
                                              "it was" if len(names) == 1 else "they were"), "pypi_torch_npu")
    any_ok = sorted({b.torch_npu.text for b in builds if series in b.python})
    if any_ok:
        return Pair("python", "torch", NOT_RECOMMENDED, found, required, _cite(m, "pypi_torch_npu"),
                    "only pre-release or beta torch_npu builds for PyTorch %s ship Python %s: %s"
                    % (torch.text, series, _fmt_versions(any_ok)), "pypi_torch_npu")
    if builds:
        ranges = sorted({_py_range(b.python or ()) for b in builds})
        return Pair("python", "torch", INCOMPATIBLE, found,
                    "Python %s (torch_npu builds for PyTorch %s)" % (" or ".join(ranges), torch.text),
                    _cite(m, "pypi_torch_npu"),
                    "PyTorch %s itself ships Python %s, but no torch_npu build for it does (builds: %s)"
                    % (torch.text, series, " / ".join(ranges)), "pypi_torch_npu")
    return Pair("python", "torch", UNKNOWN, found, required, _cite(m, row.source),
                "PyTorch %s ships Python %s wheels, but no torch_npu build for PyTorch %s is known"
                % (torch.text, series, torch.text), row.source)


# statuses of the final builds a user is pointed at today (not end-of-life, not pre-release/beta)
MAINTAINED_STATUSES = ("active", "hotfix", "published", "unverified")


def maintained_python(matrix: Optional[Matrix] = None) -> Tuple[List[str], Optional[str]]:
    """The Python series ('3.8', ..., '3.14') that at least one maintained final torch_npu
    build ships a wheel for, oldest first, and the URL of the source (the package index).
    This is the one Python range every verb uses for an interpreter judged on its own."""
    m = matrix or load_matrix()
    series = {p for b in m.builds if b.status in MAINTAINED_STATUSES and b.python for p in b.python}
    return sorted(series, key=lambda s: parse_version(s, "python")), _cite(m, "pypi_torch_npu")


def judge_torch_cann(m: Matrix, torch: Version, cann_in: Version) -> Pair:
    cann = m.commercial_cann(cann_in)
    found = "torch %s with CANN %s" % (torch.text, cann_in.text)
    builds = [b for b in m.builds_for_torch(torch) if b.cann is not None]
    if not builds:
        published = sorted({b.torch_npu.text for b in m.builds_for_torch(torch) if b.on_pypi})
        if published:
            return Pair("cann", "torch", UNKNOWN, found, None, _cite(m, "pypi_torch_npu"),
                        "torch_npu %s for PyTorch %s %s on PyPI, but no source names the CANN release %s made for"
                        % (_fmt_versions(published), torch.text, "is" if len(published) == 1 else "are",
                           "it was" if len(published) == 1 else "they were"), "pypi_torch_npu")
        return Pair("cann", "torch", UNKNOWN, found, None, None,
                    "no torch_npu build for PyTorch %s is in the tables" % torch.text, None)
    exact = [b for b in builds if b.cann.matches(cann)]
    wide = []
    for b in builds:
        specs, src = _supported_cann(m, b)
        if b not in exact and any(s.matches(cann) for s in specs[1:]):
            wide.append((b, src))
    ga_exact = sorted([b for b in exact if b.is_ga], key=lambda b: b.torch_npu, reverse=True)
    if ga_exact:
        b = ga_exact[0]
        return Pair("cann", "torch", COMPATIBLE, found, "torch_npu %s" % b.torch_npu.text, _cite(m, b.source),
                    "torch_npu %s is made for PyTorch %s and CANN %s" % (b.torch_npu.text, torch.text, cann.text),
                    b.source)
    ga_wide = sorted([(b, s) for b, s in wide if b.is_ga], key=lambda x: x[0].torch_npu, reverse=True)
    if ga_wide:
        b, src = ga_wide[0]
        return Pair("cann", "torch", COMPATIBLE, found, "torch_npu %s" % b.torch_npu.text, _cite(m, src),
                    "torch_npu %s (made for CANN %s) supports CANN %s by its release notes"
                    % (b.torch_npu.text, b.cann.text, cann.text), src)
    # a final build whose CANN is only inferred from its neighbours: say so, never compatible
    for b in sorted(m.builds_for_torch(torch), key=lambda b: b.torch_npu, reverse=True):
        st = m.cann_statement(b.torch_npu) if b.cann is None and not b.torch_npu.pep440.is_prerelease else None
        if st is None or st.kind != "inferred":
            continue
        verdict = NOT_RECOMMENDED if st.in_range(cann) else UNKNOWN
        return Pair("cann", "torch", verdict, found, "torch_npu %s (likely %s)" % (b.torch_npu.text, st.range_text()),
                    None, "inferred, not stated: %s; CANN %s is %s that range" % (
                        st.text, cann.text, "inside" if verdict == NOT_RECOMMENDED else "outside"), None)
    other = sorted(exact, key=lambda b: b.torch_npu, reverse=True) + [b for b, _ in wide]
    if other:
        b = other[0]
        return Pair("cann", "torch", NOT_RECOMMENDED, found, "torch_npu %s" % b.torch_npu.text, _cite(m, b.source),
                    "only %s pairs PyTorch %s with CANN %s: torch_npu %s"
                    % (_status_phrase(m, b), torch.text, cann.text, b.torch_npu.text), b.source)
    cann_list = sorted({b.cann.text for b in builds if b.is_ga})
    if m.is_known_cann(cann):
        torches = sorted({b.torch.text for b in m.builds if b.is_ga and b.cann is not None and b.cann.matches(cann)})
        return Pair("cann", "torch", INCOMPATIBLE, found, "CANN %s" % ", ".join(cann_list), _cite(m, "pt_compat"),
                    "no torch_npu build for PyTorch %s supports CANN %s (its builds pair with %s); CANN %s is "
                    "paired with PyTorch %s" % (torch.text, cann.text, ", ".join(cann_list), cann.text,
                                                ", ".join(torches) or "nothing"), "pt_compat")
    return Pair("cann", "torch", UNKNOWN, found, "CANN %s" % ", ".join(cann_list), None,
                "CANN %s appears in no torch_npu table; the builds for PyTorch %s pair with %s"
                % (cann.text, torch.text, ", ".join(cann_list)), None)


_RELATION_WORDS = {
    "mapping": "is the HDK the CANN %s release notes name as its match",
    "compatible": "is in the compatibility list of the CANN %s release notes",
    "release_bundle": "was validated with CANN %s in a product release",
    "tested": "is what the Ascend quick-install pairs with CANN %s",
    "required_by_installer": "is what ascend-deployer requires for CANN %s",
    "shipped_by_installer": "was shipped with CANN %s by the old ascend-deployer",
}


def hdk_statements(m: Matrix, cann: Version, chip: Optional[str]) -> List[HdkStatement]:
    """The CANN <-> HDK statements that apply to this CANN (and chip)."""
    return [st for st in m.hdk if st.cann.matches(cann) and chips_mod.in_scope(chip, st.chips)]


def recommended_hdk(m: Matrix, cann: Version, chip: Optional[str]) -> List[HdkStatement]:
    """Positive statements for this CANN, strongest relation first."""
    sts = [st for st in hdk_statements(m, m.commercial_cann(cann), chip) if st.relation != "incompatible"]
    return sorted(sts, key=lambda st: HDK_RELATIONS.index(st.relation))


def _hdk_required(sts: Sequence[HdkStatement]) -> Optional[str]:
    if not sts:
        return None
    parts = []
    for rel in HDK_RELATIONS:
        if rel == "incompatible":
            continue
        specs = []
        for st in sts:
            if st.relation == rel:
                for h in st.hdk:
                    if h.text not in specs:
                        specs.append(h.text)
        if specs:
            parts.append("%s: %s" % (rel.replace("_", " "), ", ".join(specs)))
    return "HDK " + "; ".join(parts)


def judge_cann_driver(m: Matrix, cann_in: Version, driver: Version, chip: Optional[str]) -> Pair:
    cann = m.commercial_cann(cann_in)
    found = "CANN %s with driver %s" % (cann_in.text, driver.text)
    chip_txt = (" on %s" % chip) if chip else ""
    sts = hdk_statements(m, cann, chip)
    positive = [st for st in sts if st.relation != "incompatible"]
    required = _hdk_required(positive)
    neg = [st for st in sts if st.relation == "incompatible" and st.covers_driver(driver)]
    if neg:
        st = neg[0]
        return Pair("cann", "driver", INCOMPATIBLE, found, required, _cite(m, st.source),
                    "the CANN %s release notes mark HDK %s as not compatible%s"
                    % (st.cann.text, ", ".join(h.text for h in st.hdk), chip_txt), st.source)
    pos = sorted([st for st in positive if st.covers_driver(driver)], key=lambda s: HDK_RELATIONS.index(s.relation))
    if pos:
        st = pos[0]
        where = ""
        if "all" not in st.chips and st.chips != ("non_950",):
            where = " (for %s)" % ", ".join(st.chips)
        reason = "driver %s %s%s" % (driver.text, _RELATION_WORDS[st.relation] % cann.text, where)
        return Pair("cann", "driver", COMPATIBLE, found, required, _cite(m, st.source), reason, st.source)
    if not sts:
        return Pair("cann", "driver", UNKNOWN, found, None, None,
                    "no source in the data says which HDK goes with CANN %s%s" % (cann.text, chip_txt), None)
    notes = [st for st in positive if st.relation in NOTE_RELATIONS]
    basis = notes or positive
    specs = [h for st in basis for h in st.hdk]
    pos_list = [h.position(driver) for h in specs]
    listed = ", ".join(sorted({h.text for h in specs}, key=lambda t: t))
    sid = basis[0].source
    if all(p < 0 for p in pos_list):
        if notes:
            return Pair("cann", "driver", INCOMPATIBLE, found, required, _cite(m, sid),
                        "driver %s is older than every HDK the CANN %s release notes list (%s)"
                        % (driver.text, cann.text, listed), sid)
        # only single tested/installer pairings: older than them is not covered, not refused
        return Pair("cann", "driver", UNKNOWN, found, required, _cite(m, sid),
                    "driver %s is older than every HDK any source pairs with CANN %s (%s), and no release-note "
                    "table for this CANN is in the data" % (driver.text, cann.text, listed), sid)
    if all(p > 0 for p in pos_list):
        return Pair("cann", "driver", UNKNOWN, found, required, _cite(m, sid),
                    "driver %s is newer than every HDK the sources pair with CANN %s (%s); newer drivers "
                    "usually keep older CANN working, but no source states it" % (driver.text, cann.text, listed), sid)
    if notes:
        return Pair("cann", "driver", NOT_RECOMMENDED, found, required, _cite(m, sid),
                    "driver %s falls between the HDK lines the CANN %s release notes list (%s) without being "
                    "one of them" % (driver.text, cann.text, listed), sid)
    return Pair("cann", "driver", UNKNOWN, found, required, _cite(m, sid),
                "driver %s is not one the sources pair with CANN %s (%s)" % (driver.text, cann.text, listed), sid)


def judge_driver_firmware_data(m: Matrix, driver: Version, firmware: Version, chip: Optional[str] = None) -> Pair:
    """driver <-> firmware from the data (published version.info rules, tested pairs)."""
    found = "driver %s with firmware %s" % (driver.text, firmware.text)
    fw_text = firmware.text
    drv_text = driver.text.lower()
    rule = next((r for r in m.drivers if r.driver is not None and r.driver == driver), None)
    fw_rule = next((r for r in m.firmwares if r.firmware == firmware), None)
    if rule is not None or fw_rule is not None:
        pair = host_rules.judge_driver_firmware(
            drv_text if rule is None else rule.driver.raw,
            fw_text,
            rule.compatible_version_fw if rule else None,
            fw_rule.compatible_version_drv if fw_rule else None)
        sid = rule.source if rule is not None else fw_rule.source  # type: ignore[union-attr]
        pair.found = found
        pair.source = _cite(m, sid)
        pair.source_id = sid
        pair.reason += " (as published for %s)" % ("driver " + rule.driver.text if rule else "firmware " + fw_text)
        return pair
    tested = [st for st in m.hdk if st.relation == "tested" and st.firmware is not None and st.covers_driver(driver)
              and chips_mod.in_scope(chip, st.chips)]
    for st in tested:
        if st.firmware == firmware:
            return Pair("driver", "firmware", COMPATIBLE, found, "firmware %s" % firmware.text, _cite(m, st.source),
                        "the Ascend quick-install installs driver %s with firmware %s (on %s)"
                        % (driver.text, firmware.text, ", ".join(st.chips)), st.source)
    if tested:
        fws = sorted({st.firmware.text for st in tested if st.firmware is not None})
        return Pair("driver", "firmware", UNKNOWN, found, "firmware %s (as tested)" % ", ".join(fws),
                    _cite(m, tested[0].source),
                    "the data knows driver %s only with firmware %s; the driver's own "
                    "compatible_version_fw decides (run `ascend-doctor check` on the host)" % (driver.text, ", ".join(fws)),
                    tested[0].source)
    return Pair("driver", "firmware", UNKNOWN, found, None, None,
                "only the host's driver/firmware version.info files state which pairs work; run "
                "`ascend-doctor check` on the host", None)


# --------------------------------------------------------------------------- evaluate
def evaluate(stack: Mapping[str, Any], matrix: Optional[Matrix] = None) -> Report:
    """Judge every pair of the given components the data can speak to.

    ``stack``: any subset of {chip, driver, firmware, cann, torch, torch_npu, python} mapped to
    version strings (or Versions). Raises VersionError / ChipError / ComponentError (all
    ValueError) for bad input.
    """
    st = Stack(stack)
    m = matrix or load_matrix()
    rep = Report(stack=st.as_strings())
    v = st.versions
    tn, torch, cann, py = v.get("torch_npu"), v.get("torch"), v.get("cann"), v.get("python")
    drv, fw = v.get("driver"), v.get("firmware")
    notes = rep.notes
    if tn is not None:
        _build_notes(m, tn, notes)
        if torch is not None:
            rep.pairs.append(judge_torch_npu_torch(m, tn, torch))
        if cann is not None:
            rep.pairs.append(judge_torch_npu_cann(m, tn, cann))
        if py is not None:
            rep.pairs.append(judge_torch_npu_python(m, tn, py))
    if torch is not None and py is not None:
        rep.pairs.append(judge_torch_python(m, torch, py, with_torch_npu=tn is not None))
    if torch is not None and cann is not None and tn is None:
        rep.pairs.append(judge_torch_cann(m, torch, cann))
    if cann is not None:
        if m.commercial_cann(cann) != cann:
            notes.append("CANN %s is the community name of the commercial release %s; judged as %s"
                         % (cann.text, m.commercial_cann(cann).text, m.commercial_cann(cann).text))
        if drv is not None:
            rep.pairs.append(judge_cann_driver(m, cann, drv, st.chip))
    if drv is not None and fw is not None:
        rep.pairs.append(judge_driver_firmware_data(m, drv, fw, st.chip))
    for p in rep.pairs:
        if p.source_id and p.source_commit is None and p.source_id in m.sources:
            p.source_commit = m.source_commit(p.source_id)
    if not rep.pairs:
        given = ", ".join(LABELS[c] for c in st.as_strings()) or "nothing"
        notes.append("no pair to judge: %s given; the data relates torch_npu to torch/CANN/Python, "
                     "torch to Python/CANN, CANN to the driver and the driver to the firmware" % given)
    return rep


def requirements(m: Matrix, tn: Version) -> Optional[str]:
    """One line: what a torch_npu build needs (torch, CANN, Python), from the tables."""
    b = m.build(tn)
    if b is None:
        return None
    parts = ["torch %s" % b.torch.text]
    if b.cann is not None:
        specs, _ = _supported_cann(m, b)
        cann = "CANN %s" % b.cann.text
        if len(specs) > 1:
            cann += " (%s %s)" % ("its release line also supports" if b.cann_basis == "table" else "the statement also names",
                                  ", ".join(s.text for s in specs[1:]))
        parts.append(cann)
    else:
        st = m.cann_statement(tn)
        if st is not None and st.kind == "inferred":
            parts.append("a CANN release no source names (likely %s, inferred from the nearest builds)" % st.range_text())
        else:
            parts.append("a CANN release no stored source names")
    if b.python:
        parts.append("Python %s" % _py_range(b.python))
    where = ", ".join(x for x in (("TorchNPU " + b.release.text) if b.release else None,
                                   ("branch " + b.branch) if b.branch else None) if x)
    line = "torch_npu %s%s needs %s" % (tn.text, " (%s)" % where if where else "", "; ".join(parts))
    if b.cann_basis == "wheel":
        line += " [CANN from the wheel's own METADATA]"
    elif b.cann_basis == "inherited":
        line += " [CANN inherited from the %s line]" % ".".join(str(x) for x in tn.pep440.release[:3])
    return line


def _build_notes(m: Matrix, tn: Version, notes: List[str]) -> None:
    b = m.build(tn)
    if b is None:
        return
    req = requirements(m, tn)
    if req:
        notes.append(req)
    if not b.on_pypi:
        notes.append("torch_npu %s is not on PyPI: `pip install torch-npu==%s` cannot work (%s)"
                     % (tn.text, tn.text, "gitee release download" if b.is_ga else "built only by a release tag"))
    if b.status == "eol":
        notes.append("TorchNPU %s (torch_npu %s) is past its maintenance period"
                     % (b.release.text if b.release else "?", tn.text))
    if b.status == "hotfix":
        notes.append("torch_npu %s is a hotfix build (TorchNPU %s) of the %s line"
                     % (tn.text, b.release.text if b.release else "5.0.1.x",
                        b.hotfix_of.text if b.hotfix_of else "?"))
    if b.contradiction:
        c = m.contradictions.get(b.contradiction)
        if c is not None:
            notes.append("sources disagree on %s: the tool trusts %s because %s" % (c.topic, c.trusted, c.why))
