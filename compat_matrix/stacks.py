"""Complete supported stacks for what is pinned, and the upgrade path between two stacks.

``suggest({"torch": "2.4.0"})`` lists every stack (torch, torch_npu, CANN, Pythons, HDK and,
where the data has it, firmware) that the sources support with those pins, newest first.
``upgrade_path(current, target)`` picks the stack closest to ``current`` that satisfies
``target`` and lists the moves in install order: firmware/driver, CANN, Python, torch, torch_npu.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Dict, List, Mapping, Optional, Tuple

from compat_matrix import query
from compat_matrix.report import COMPATIBLE, INCOMPATIBLE, LABELS, UNKNOWN, Report, worst
from compat_matrix.tables import Build, HdkStatement, Matrix, load_matrix
from compat_matrix.versions import Version, VersionSpec, parse_version


@dataclass
class SuggestedStack:
    """One complete stack. ``components`` holds one version per component (the driver and
    firmware are the recommended ones; ``drivers`` lists every HDK the sources allow)."""

    components: Dict[str, str]
    python: List[str]
    drivers: List[str]
    release: Optional[str]
    branch: Optional[str]
    status: str
    # "built_for": the build made for this CANN; "supported": by its release notes;
    # "unpaired": published, but no source names its CANN (no "cann" in components)
    pairing: str
    sources: List[str]
    notes: List[str] = field(default_factory=list)
    verdict: str = COMPATIBLE  # the overall verdict of the stack (never incompatible)

    def to_json(self) -> Dict[str, Any]:
        return {"components": dict(self.components), "python": list(self.python),
                "drivers": list(self.drivers), "release": self.release, "branch": self.branch,
                "status": self.status, "pairing": self.pairing, "sources": list(self.sources),
                "notes": list(self.notes), "verdict": self.verdict}


def _hdk_choice(m: Matrix, cann: Version, chip: Optional[str]) -> Tuple[Optional[HdkStatement], Optional[str], List[str]]:
    """(statement, driver version to recommend, every HDK the sources allow) for a CANN.

    The recommendation is a concrete version from the strongest statement that names one
    (a '25.5.X' line names none), preferring versions inside the release notes' own list."""
    sts = query.recommended_hdk(m, cann, chip)
    allowed: List[str] = []
    for st in sts:
        for h in st.hdk:
            if h.text not in allowed:
                allowed.append(h.text)
    note_specs = [h for st in sts if st.relation in ("mapping", "compatible") for h in st.hdk]
    best: Tuple[Any, ...] = ()
    for rank, st in enumerate(sts):
        candidates = [st.driver] if st.driver is not None else [h.version for h in st.hdk if h.version is not None]
        for drv in candidates:
            inside = not note_specs or any(h.matches(drv) for h in note_specs)
            key = (0 if inside else 1, rank)
            if not best or key < best[0] or (key == best[0] and drv > best[2]):
                best = (key, st, drv)
    if not best:
        return (sts[0] if sts else None), None, allowed
    return best[1], best[2].text, allowed


@dataclass
class LeftOut:
    """A build of the pinned PyTorch / torch_npu that is not a suggested stack, and why."""

    build: Build
    reason: str
    non_ga_filter: bool  # listed once pre-release / unverified builds are included

    def to_json(self) -> Dict[str, Any]:
        b = self.build
        return {"torch_npu": b.torch_npu.text, "torch": b.torch.text, "status": b.status,
                "on_pypi": b.on_pypi, "python": list(b.python) if b.python else None,
                "cann": b.cann.text if b.cann is not None else None,
                "release": b.release.text if b.release else None,
                "reason": self.reason, "listed_with_all_builds": self.non_ga_filter}


class _Pins(object):
    """The pinned components of a suggest query, parsed once."""

    def __init__(self, m: Matrix, pinned: Mapping[str, Any]) -> None:
        self.stack = query.Stack(pinned)
        v = self.stack.versions
        self.tn, self.torch, self.py = v.get("torch_npu"), v.get("torch"), v.get("python")
        self.drv, self.fw = v.get("driver"), v.get("firmware")
        cann = v.get("cann")
        self.cann = m.commercial_cann(cann) if cann is not None else None
        self.chip = self.stack.chip


def suggest(pinned: Mapping[str, Any], include_prerelease: bool = False, limit: Optional[int] = None,
            matrix: Optional[Matrix] = None, include_unverified: bool = False) -> List[SuggestedStack]:
    """Complete stacks that satisfy every pinned component, newest first.

    Only GA builds unless ``include_prerelease`` (pre-release, beta and hotfix tags) or
    ``include_unverified`` (builds published on PyPI that no CANN table lists; their stacks
    have no CANN and the verdict ``unknown``), or the pinned torch_npu is not GA. A pinned
    CANN also admits builds whose release notes support it (pairing 'supported')."""
    stacks, _ = scan(pinned, include_prerelease, include_unverified, matrix)
    return stacks[:limit] if limit else stacks


def scan(pinned: Mapping[str, Any], include_prerelease: bool = False, include_unverified: bool = False,
         matrix: Optional[Matrix] = None) -> Tuple[List[SuggestedStack], List["LeftOut"]]:
    """(stacks, the builds of the pinned torch / torch_npu left out and why); stacks newest first."""
    m = matrix or load_matrix()
    pins = _Pins(m, pinned)
    out: List[SuggestedStack] = []
    left_out: List[LeftOut] = []
    # the builds left out are worth naming only for a pinned PyTorch line or wheel
    explain = pins.tn is not None or pins.torch is not None
    for b in m.builds:
        if pins.tn is not None and b.torch_npu != pins.tn.public:
            continue
        if pins.torch is not None and b.torch != pins.torch.public:
            continue
        stack, why = _consider(m, b, pins, include_prerelease, include_unverified)
        if stack is not None:
            out.append(stack)
        elif why is not None and explain:
            reason, shown = why
            if shown:  # exact, not guessed: would it make a stack with every non-GA build included?
                again, why_again = _consider(m, b, pins, True, True)
                shown = again is not None
                if why_again is not None:
                    reason = _merge_reasons(reason, why_again[0])
            left_out.append(LeftOut(b, reason, shown))
    named = [s for s in out if "cann" in s.components]
    unnamed = [s for s in out if "cann" not in s.components]
    named.sort(key=lambda s: (_cann_key(s), 1 if s.pairing == "built_for" else 0,
                              parse_version(s.components["torch"], "torch"),
                              parse_version(s.components["torch_npu"], "torch_npu")), reverse=True)
    # no source names their CANN: after every stack that has one, newest build first
    unnamed.sort(key=lambda s: (parse_version(s.components["torch"], "torch"),
                                parse_version(s.components["torch_npu"], "torch_npu")), reverse=True)
    return named + unnamed, left_out


def _merge_reasons(first: str, second: str) -> str:
    """``first; second`` without repeating a clause (or a clause another one extends)."""
    parts: List[str] = []
    for part in (first + "; " + second).split("; "):
        if any(p.startswith(part) for p in parts):
            continue
        parts = [p for p in parts if not part.startswith(p)] + [part]
    return "; ".join(parts)


_Why = Optional[Tuple[str, bool]]  # (reason, would be listed with non-GA builds included)
_UNPAIRED = "no source names the CANN release it was made for"


def _unpaired(m: Matrix, b: Build) -> str:
    """_UNPAIRED, with the likely range when the neighbours give one (an inference, said as such)."""
    st = m.cann_statement(b.torch_npu)
    if st is not None and st.kind == "inferred" and st.range is not None:
        return _UNPAIRED + " (likely %s, inferred from the nearest builds that name one)" % st.range_text()
    return _UNPAIRED


def _consider(m: Matrix, b: Build, pins: _Pins, include_prerelease: bool,
              include_unverified: bool) -> Tuple[Optional[SuggestedStack], _Why]:
    """The stack ``b`` makes with the pins, or None and why not."""
    if b.python is None:
        return None, ("its Python list is not published (%s)" % (b.note or "tag-only build"), False)
    py_ok = list(b.python)
    if pins.py is not None:
        series = "%d.%d" % pins.py.series
        if series not in py_ok:
            return None, ("no Python %s wheel (it ships %s)" % (series, query._py_range(b.python)), False)
        py_ok = [series]
    if not b.is_ga and pins.tn is None:
        if b.status == "unverified" and not include_unverified:
            return None, (_unpaired(m, b), True)
        if b.status != "unverified" and not include_prerelease:
            return None, ("a %s build, not GA" % b.status + ("; " + _UNPAIRED if b.cann is None else ""), True)
    if b.cann is None:
        return _without_cann(m, b, pins, py_ok, include_unverified)
    specs, wide_src = query._supported_cann(m, b)
    if pins.cann is not None:
        if b.cann.matches(pins.cann):
            cann_v, pairing, sid = pins.cann, "built_for", b.source
        elif any(s.matches(pins.cann) for s in specs[1:]):
            cann_v, pairing, sid = pins.cann, "supported", wide_src or b.source
        else:
            return None, ("made for CANN %s, not %s" % (query._fmt_specs(specs), pins.cann.text), False)
    else:
        if b.cann.version is None:
            return None, ("paired with the CANN line %s, no single release to name" % b.cann.text, False)
        cann_v, pairing, sid = b.cann.version, "built_for", b.source
    best, best_driver, allowed = _hdk_choice(m, cann_v, pins.chip)
    comps: Dict[str, str] = {"cann": cann_v.text, "torch": b.torch.text, "torch_npu": b.torch_npu.text}
    sources = [s for s in (m.source_url(sid), m.source_url(b.python_source)) if s]
    notes: List[str] = []
    if pins.chip:
        comps["chip"] = pins.chip
    if pins.drv is not None:
        pair = query.judge_cann_driver(m, cann_v, pins.drv, pins.chip)
        if pair.verdict == INCOMPATIBLE:
            return None, ("its CANN %s does not take driver %s" % (cann_v.text, pins.drv.text), False)
        comps["driver"] = pins.drv.text
        if pair.verdict != COMPATIBLE:
            notes.append("driver: " + pair.reason)
    else:
        if best_driver:
            comps["driver"] = best_driver
            if best is not None:
                sources.append(m.source_url(best.source) or "")
        else:
            notes.append("no single HDK version to name for CANN %s; allowed: %s"
                         % (cann_v.text, ", ".join(allowed) or "none known"))
    if pins.fw is not None:
        comps["firmware"] = pins.fw.text
    elif pins.drv is None and best is not None and best.firmware is not None and best_driver is not None:
        comps["firmware"] = best.firmware.text  # tested together with that driver
    if pins.py is not None:
        comps["python"] = pins.py.text
    if not b.on_pypi:
        notes.append("torch_npu %s is not on PyPI" % b.torch_npu.text)
    if pairing == "supported":
        made = [x.torch_npu.text for x in query._ga_builds_for(m, b.torch, cann_v)]
        notes.append("torch_npu %s is made for CANN %s; its release notes support CANN %s"
                     % (b.torch_npu.text, b.cann.text, cann_v.text)
                     + (" (the build made for it: %s)" % ", ".join(made) if made else ""))
    return _checked(m, b, comps, py_ok, allowed, pairing, sources, notes)


def _without_cann(m: Matrix, b: Build, pins: _Pins, py_ok: List[str],
                  include_unverified: bool) -> Tuple[Optional[SuggestedStack], _Why]:
    """A build no source pairs with a CANN release: a stack without CANN, verdict unknown."""
    if not include_unverified and pins.tn is None:
        return None, (_unpaired(m, b), True)
    if pins.cann is not None:
        return None, ("%s, so nothing pairs it with CANN %s" % (_UNPAIRED, pins.cann.text), False)
    comps: Dict[str, str] = {"torch": b.torch.text, "torch_npu": b.torch_npu.text}
    notes = [_unpaired(m, b)]
    if pins.chip:
        comps["chip"] = pins.chip
    if pins.drv is not None:
        comps["driver"] = pins.drv.text
        notes.append("driver: with no CANN named, nothing says which driver it needs")
    if pins.fw is not None:
        comps["firmware"] = pins.fw.text
    if pins.py is not None:
        comps["python"] = pins.py.text
    if not b.on_pypi:
        notes.append("torch_npu %s is not on PyPI" % b.torch_npu.text)
    sources = [s for s in (m.source_url(b.source), m.source_url(b.python_source)) if s]
    return _checked(m, b, comps, py_ok, [], "unpaired", sources, notes, floor=UNKNOWN)


def _checked(m: Matrix, b: Build, comps: Dict[str, str], py_ok: List[str], allowed: List[str], pairing: str,
             sources: List[str], notes: List[str],
             floor: str = COMPATIBLE) -> Tuple[Optional[SuggestedStack], _Why]:
    """The stack, unless it contradicts itself somewhere the data can judge."""
    check = dict(comps)
    if "python" not in check:
        check["python"] = py_ok[-1]
    rep = query.evaluate(check, matrix=m)
    bad = [p for p in rep.pairs if p.verdict == INCOMPATIBLE]
    if bad:
        return None, (bad[0].reason, False)
    return SuggestedStack(components=comps, python=py_ok, drivers=allowed,
                          release=b.release.text if b.release else None, branch=b.branch,
                          status=b.status, pairing=pairing,
                          sources=[s for s in dict.fromkeys(sources) if s], notes=notes,
                          verdict=worst([rep.verdict, floor])), None


def _cann_key(s: SuggestedStack) -> Version:
    return parse_version(s.components["cann"], "cann")


# --------------------------------------------------------------------------- upgrade path
@dataclass
class Step:
    component: str
    current: Optional[str]
    target: str
    reason: str
    commands: List[str]
    source: Optional[str] = None

    def to_json(self) -> Dict[str, Any]:
        return {"component": self.component, "from": self.current, "to": self.target,
                "reason": self.reason, "commands": list(self.commands), "source": self.source}


@dataclass
class UpgradePlan:
    current: Dict[str, str]
    target: Dict[str, str]
    steps: List[Step]
    before: Report
    after: Report
    notes: List[str] = field(default_factory=list)

    def to_json(self) -> Dict[str, Any]:
        return {"schema": 1, "current": dict(self.current), "target": dict(self.target),
                "steps": [s.to_json() for s in self.steps],
                "verdict_before": self.before.verdict, "verdict_after": self.after.verdict,
                "notes": list(self.notes)}


# install order (brief + hiascend install guide): driver/firmware, then CANN, then the Python stack
_ORDER = ("firmware", "driver", "cann", "python", "torch", "torch_npu")
# upgrade in place: firmware before driver; first install: driver before firmware (hdk_install_order)
_ORDER_FRESH = ("driver", "firmware", "cann", "python", "torch", "torch_npu")


def upgrade_path(current: Mapping[str, Any], target: Mapping[str, Any],
                 matrix: Optional[Matrix] = None) -> UpgradePlan:
    """The moves from ``current`` to a supported stack that has every component of ``target``.

    Components of ``current`` that ``target`` does not name are kept when a supported stack
    allows it (driver/firmware first, as they need a reboot, then Python, then torch).
    Raises ValueError when no supported stack satisfies ``target``."""
    m = matrix or load_matrix()
    cur = query.Stack(current)
    tgt = query.Stack(target)
    base: Dict[str, Any] = {k: val.text for k, val in tgt.versions.items()}
    chip = tgt.chip or cur.chip
    if chip:
        base["chip"] = chip
    # candidates: stacks that keep the current driver/firmware, and stacks that move them
    candidates = list(suggest(base, include_prerelease=True, matrix=m))
    if cur.get("driver") is not None:
        keep = dict(base)
        for comp in ("driver", "firmware"):
            if comp not in keep and cur.get(comp) is not None:
                keep[comp] = cur.get(comp).text  # type: ignore[union-attr]
        candidates = list(suggest(keep, include_prerelease=True, matrix=m)) + candidates
    if not candidates:
        raise ValueError("no supported stack has %s" % ", ".join(
            "%s %s" % (LABELS[k], val) for k, val in tgt.as_strings().items()))
    # fewest and cheapest moves; then GA, the build made for its CANN, newest
    ranked = sorted(enumerate(candidates), key=lambda ic: (_VERDICT_RANK.get(ic[1].verdict, 3),
                                                            _cost(cur, ic[1]), _status_rank(ic[1]),
                                                            0 if ic[1].pairing == "built_for" else 1, ic[0]))
    chosen = ranked[0][1]
    tcomp = dict(chosen.components)
    if "python" not in tcomp:
        cur_py = cur.get("python")
        if cur_py is not None and "%d.%d" % cur_py.series in chosen.python:
            tcomp["python"] = cur_py.text
        else:
            tcomp["python"] = chosen.python[-1]
    fresh = cur.get("driver") is None
    moves_driver = "driver" in tcomp and (cur.get("driver") is None or not _same("driver", cur.get("driver"), tcomp["driver"]))
    if moves_driver and "firmware" not in tcomp:
        tcomp["firmware"] = "firmware of HDK %s" % tcomp["driver"]
    steps: List[Step] = []
    for comp in (_ORDER_FRESH if fresh else _ORDER):
        want = tcomp.get(comp)
        have = cur.get(comp)
        if want is None:
            continue
        if have is not None and not want.startswith("firmware of") and _same(comp, have, want):
            continue
        steps.append(_step(m, comp, have.text if have is not None else None, want, tcomp, chip, fresh))
    cur_strings = cur.as_strings()
    before = query.evaluate(cur_strings, matrix=m) if cur_strings else Report(stack={})
    after = query.evaluate({k: val for k, val in tcomp.items() if not val.startswith("firmware of")}, matrix=m)
    notes = list(chosen.notes)
    if any(s.component in ("driver", "firmware") for s in steps):
        notes.append("reboot after installing the driver and firmware, before installing CANN")
    return UpgradePlan(current=cur_strings, target=tcomp, steps=steps, before=before, after=after, notes=notes)


_VERDICT_RANK = {COMPATIBLE: 0, "unknown": 1, "not_recommended": 2}
# what a move costs: driver/firmware need root and a reboot, CANN a reinstall, Python a new env
_MOVE_COST = {"driver": 8, "firmware": 8, "cann": 4, "python": 3, "torch": 2, "torch_npu": 1}


def _cost(cur: "query.Stack", stack: SuggestedStack) -> int:
    cost = 0
    for comp, weight in _MOVE_COST.items():
        have = cur.get(comp)
        if have is None:
            continue
        if comp == "python":
            if "%d.%d" % have.series not in stack.python:
                cost += weight
            continue
        want = stack.components.get(comp)
        if want is None:
            cost += weight if comp in ("driver", "firmware") else 0
        elif not _same(comp, have, want):
            cost += weight
    return cost


def _status_rank(stack: SuggestedStack) -> int:
    return {"active": 0, "eol": 1, "hotfix": 2, "beta": 3, "prerelease": 4}.get(stack.status, 5)


def _same(comp: str, have: Version, want: str) -> bool:
    w = parse_version(want, comp)
    if comp == "python":
        return have.series == w.series
    if comp == "torch":
        return have.public == w.public
    if comp in ("driver", "cann"):
        return VersionSpec(comp, w.text, None, w).matches(have)
    return have == w


def _chip_pkg(chip: Optional[str]) -> str:
    return {"910b": "910b", "310p": "310p", "910_93": "A3", "910": "910", "310b": "310b"}.get(chip or "", "<chip>")


def _step(m: Matrix, comp: str, have: Optional[str], want: str, tcomp: Mapping[str, str],
          chip: Optional[str], fresh: bool) -> Step:
    pkg = _chip_pkg(chip)
    verb = "install" if have is None else "move"
    if comp == "firmware":
        order = "after the driver on a first install" if fresh else "firmware before driver when upgrading"
        if want.startswith("firmware of"):
            return Step(comp, have, want, "%s the NPU firmware shipped with HDK %s (%s)" % (verb, tcomp.get("driver"), order),
                        ["./Ascend-hdk-%s-npu-firmware_<version in HDK %s>.run --full" % (pkg, tcomp.get("driver"))],
                        m.source_url("hdk_install_order"))
        return Step(comp, have, want, "%s the NPU firmware %s (%s)" % (verb, want, order),
                    ["./Ascend-hdk-%s-npu-firmware_%s.run --full" % (pkg, want)], m.source_url("hdk_install_order"))
    if comp == "driver":
        return Step(comp, have, want, "%s the NPU driver to %s so that CANN %s is supported" % (verb, want, tcomp.get("cann")),
                    ["./Ascend-hdk-%s-npu-driver_%s_linux-$(uname -m).run --full --install-for-all"
                     % (pkg, want.lower())], m.source_url("hdk_install_order"))
    if comp == "cann":
        cv = parse_version(want, "cann")
        new_layout = cv >= parse_version("8.5.0", "cann")
        ops = ("./Ascend-cann-%s-ops_%s_linux-$(uname -m).run --install" % (pkg, want) if new_layout else
               "./Ascend-cann-kernels-%s_%s_linux-$(uname -m).run --install" % (pkg, want))
        env = ("source /usr/local/Ascend/cann/set_env.sh" if new_layout else
               "source /usr/local/Ascend/ascend-toolkit/set_env.sh")
        cmds = ["./Ascend-cann-toolkit_%s_linux-$(uname -m).run --install" % want, ops, env]
        reason = "%s CANN to %s (toolkit, then operator package)" % (verb, want)
        if have is not None and new_layout and parse_version(have, "cann") > cv:
            reason += "; from 8.5.0 on a downgrade is uninstall then install"
        return Step(comp, have, want, reason, cmds, m.source_url("cann_850_rn"))
    if comp == "python":
        return Step(comp, have, want, "use a Python %s environment: torch_npu %s ships wheels for %s"
                    % (want, tcomp.get("torch_npu"), want),
                    ["python%s -m venv ~/venv-ascend && . ~/venv-ascend/bin/activate" % want], None)
    if comp == "torch":
        return Step(comp, have, want, "%s PyTorch to %s, the version torch_npu %s is built for"
                    % (verb, want, tcomp.get("torch_npu")),
                    ["pip install torch==%s" % want], m.source_url("wheel_metadata"))
    # torch_npu
    b = m.build(parse_version(want, "torch_npu"))
    if b is not None and not b.on_pypi:
        cmd = ["# torch_npu %s is not on PyPI: install the wheel from the %s release" % (want, b.branch or "?")]
    else:
        cmd = ["pip install torch-npu==%s" % want]
    return Step(comp, have, want, "%s torch_npu to %s (CANN %s, torch %s)" % (verb, want, tcomp.get("cann"), tcomp.get("torch")),
                cmd, m.source_url(b.source) if b is not None else None)
