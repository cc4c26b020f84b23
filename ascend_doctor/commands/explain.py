"""``ascend-doctor explain CODE|TEXT``: what an error code or a pasted error means and what to do.

A single code in any spelling (``507035``, ``EZ9999``, ``ERR00100``, ``0x26``,
``0x7020014``, ``-8005``, ``hccl:7``, a symbolic name) is decoded from the tables and
tied to the knowledge-base entries that name it; anything else is treated as pasted
text (one line or a whole block, ``-`` reads it from stdin) and matched against the
entries, with every code found in it decoded as well.

Exit codes: 0 explained, 1 not in the knowledge base, 2 usage error (empty input, bad
format), 3 the knowledge base itself could not be loaded.
"""
from __future__ import annotations

import re
import sys
from typing import Any, Dict, List, Optional, TextIO

from ascend_doctor import __version__, kb
from ascend_doctor.kb.codes import canonical_keys
from ascend_doctor.report.console import escape, make_console

FORMATS = ("text", "json", "md")
_ENTRY_ID = re.compile(r"^[a-z0-9_]+(?:\.[a-z0-9_]+)+$")
MAX_MATCHES = 5
MAX_QUERY = 1 << 20  # a pasted block longer than 1 MiB is cut; explain is for excerpts


def run_explain(
    query: str,
    fmt: str = "text",
    out: Optional[TextIO] = None,
    err: Optional[TextIO] = None,
    stdin: Optional[TextIO] = None,
    base: Any = None,
) -> int:
    """Explain ``query`` and print the result in ``fmt`` (text, json or md); returns the exit code."""
    out = out or sys.stdout
    err = err or sys.stderr
    if fmt not in FORMATS:
        err.write(f"ascend-doctor explain: --format {fmt}: choose one of {', '.join(FORMATS)}\n")
        return 2
    if query is not None and query.strip() == "-":
        query = (stdin or sys.stdin).read(MAX_QUERY)
    query = (query or "").strip()
    if not query:
        err.write(
            "ascend-doctor explain: give an error code (507035, EZ9999, ERR00100, 0x26, -8005, hccl:7) "
            "or paste an error line; - reads it from stdin\n"
        )
        return 2
    query = query[:MAX_QUERY]
    if base is None:
        try:
            base = kb.load()
        except kb.KBError as exc:
            err.write(f"ascend-doctor explain: the knowledge base is broken: {exc}\n")
            return 3
    result = explain(base, query)
    if fmt == "json":
        out.write(to_json(result))
    elif fmt == "md":
        out.write(render_md(result))
    else:
        render_text(result, out)
    if not result["found"]:
        err.write(f"ascend-doctor explain: {result['not_found']}\n")
        return 1
    return 0


# ------------------------------------------------------------------ analysis
def is_code_query(query: str) -> bool:
    if "\n" in query or len(query) > 64 or len(query.split()) > 2:
        return False
    return bool(canonical_keys(query))


def explain(base: Any, query: str) -> Dict[str, Any]:
    """The explanation as plain data (the JSON output; the renderers read it too)."""
    result: Dict[str, Any] = {
        "schema": 1,
        "tool": {"name": "ascend-doctor", "version": __version__},
        "query": query if len(query) <= 2000 else query[:2000] + "...",
        "kind": "code" if is_code_query(query) else "text",
        "found": False,
        "codes": [],
        "matches": [],
        "not_found": None,
    }
    tokens = query.split()
    if 1 < len(tokens) <= 16 and all(is_code_query(t) for t in tokens):  # several codes: each explained
        result["kind"] = "code"
        for token in tokens:
            _explain_code(base, token, result)
    elif _ENTRY_ID.match(query) and base.has_entry(query):  # a pointer the other verbs print: "explain env.x"
        result["kind"] = "entry"
        result["matches"].append(_entry_json(base, base.entry(query), None))
    elif result["kind"] == "code":
        _explain_code(base, query, result)
    else:
        _explain_text(base, query, result)
    result["found"] = bool(result["codes"] or result["matches"])
    if not result["found"]:
        result["not_found"] = _not_found_message(base, query, result["kind"])
    return result


def _code_json(base: Any, info: Any) -> Dict[str, Any]:
    data = info.to_json()
    chain = []
    seen = {info.key}
    target = info.maps_to
    while target and target not in seen and len(chain) < 3:  # ts -> runtime-internal -> public
        seen.add(target)
        mapped = base.lookup_codes(target)
        if not mapped:
            break
        chain.append({"key": mapped[0].key, "code": mapped[0].code, "name": mapped[0].name, "meaning": mapped[0].meaning})
        target = mapped[0].maps_to
    if chain:
        data["reported_as"] = chain
    return data


def _entry_keys(info_json: Dict[str, Any]) -> List[str]:
    return [info_json["key"]] + [c["key"] for c in info_json.get("reported_as", [])]


def _explain_code(base: Any, query: str, result: Dict[str, Any]) -> None:
    infos = base.lookup_codes(query)
    if len({i.key for i in infos}) > 1:
        result["ambiguous"] = True  # a bare small number: HcclResult and drvError_t both fit
    seen_entries: List[str] = []
    for info in infos:
        data = _code_json(base, info)
        result["codes"].append(data)
        for key in _entry_keys(data):
            for entry in base.entries_for_code(key):
                if entry.id not in seen_entries:
                    seen_entries.append(entry.id)
                    result["matches"].append(_entry_json(base, entry, None))


def _triage_reading(base: Any, query: str) -> Optional[Any]:
    """The incident triage makes of the same text (so explain and triage never disagree)."""
    import io

    # the triage engine only for pasted text: `explain CODE` answers from the tables alone
    from ascend_doctor.triage.engine import triage_paths
    from ascend_doctor.triage.knowledge import Knowledge

    report = triage_paths(["-"], stdin=io.BytesIO(query.encode("utf-8", "replace")), knowledge=Knowledge(kb=base))
    return report.incidents[0] if report.incidents else None


def _explain_text(base: Any, query: str, result: Dict[str, Any]) -> None:
    matches = base.match(query)
    top = _triage_reading(base, query)
    if top is not None:
        v = top.verdict
        result["triage"] = {"category": v.category, "title": top.display_title, "kb": v.kb_id,
                            "confidence": v.confidence, "runner_up": v.runner_up}
        if v.kb_id is not None:  # triage's reading of the text comes first, as triage would print it
            first = next((m for m in matches if m.entry.id == v.kb_id), None)
            matches = ([first] if first is not None else []) + [m for m in matches if m is not first]
            if first is None:
                result["matches"].append(_entry_json(base, base.entry(v.kb_id), None))
    for match in matches[:MAX_MATCHES - len(result["matches"])]:
        result["matches"].append(_entry_json(base, match.entry, match))
    if top is not None and top.verdict.kb_id is not None and result["matches"]:
        # the numbers of an out-of-memory message, or a family table, can move the category and fill the text
        v, first_json = top.verdict, result["matches"][0]
        first_json.update({"category": v.category, "title": v.title, "cause": v.cause})
        first_json["fix"] = {**first_json["fix"], "text": v.fix_text, "commands": list(v.fix_commands)}
    seen = set()
    for info in base.codes_in(query):
        if info.key in seen:
            continue
        seen.add(info.key)
        result["codes"].append(_code_json(base, info))
    if not matches:  # codes but no entry: offer the entries those codes are tied to
        ids: List[str] = []
        for data in result["codes"]:
            for key in _entry_keys(data):
                for entry in base.entries_for_code(key):
                    if entry.id not in ids:
                        ids.append(entry.id)
                        result["matches"].append(_entry_json(base, entry, None))


def _entry_json(base: Any, entry: Any, match: Any) -> Dict[str, Any]:
    data = match.to_json() if match is not None else entry.to_json()
    data["upstream"] = [{"id": e.id, "title": e.title, "category": e.category} for e in base.causes_of(entry.id)]
    data["downstream"] = [{"id": e.id, "title": e.title, "category": e.category} for e in base.effects_of(entry.id)]
    if entry.checks:
        data["check_command"] = "ascend-doctor check " + " ".join(f"--only {c}" for c in entry.checks)
    return data


def _not_found_message(base: Any, query: str, kind: str) -> str:
    hint = (
        "paste the whole error block (the lines around the code) into `ascend-doctor explain -`, "
        "or run `ascend-doctor triage ~/ascend/log` on the plog directory"
    )
    if kind == "code":
        shown = query.strip()
        found = base.ecode_prefix(shown) if shown[:1].upper() in "EW" and len(shown) == 6 else None
        if found:
            component, advice = found
            what = f" {advice.rstrip('.')}." if advice else ""
            return f"{shown} is not in the knowledge base; by its prefix it comes from {component}.{what} Next: {hint}"
        return f"{shown} is not in the knowledge base. Next: {hint}"
    return f"no known error code or message in the text ({len(query)} characters). Next: {hint}"


# ------------------------------------------------------------------ rendering
def to_json(result: Dict[str, Any]) -> str:
    """The ``--json`` document: the envelope of docs/output.md around the explanation."""
    from ascend_doctor import output

    top = result["matches"][0] if result["matches"] else None
    summary = {"found": result["found"], "kind": result["kind"], "codes": len(result["codes"]),
               "matches": len(result["matches"]), "category": top["category"] if top else None}
    return output.dumps(output.envelope(summary, result))


def _label(name: str) -> str:
    return f"  {name + ':':<10}"


class _Lines:
    """Where the text report goes, line by line. A line is a sequence of parts: a string, or a
    tuple (style, string, ...). On a styled console each string is escaped and the line is rich
    markup; off a terminal (no styles) rich prints just the strings, so they are written as they
    are without importing rich (a fifth of an ``explain``). A line with a string rich would not
    print as it is still goes through rich, so the output stays the same: a control character
    (rich drops some and expands tabs), a backslash at the end, or a backslash with a tag-like
    ``[``, whose escaping changed between rich releases (tests/kb/test_explain_plain_text.py; CI runs
    it on the newest and the oldest rich allowed)."""

    def __init__(self, out: TextIO, styled: bool) -> None:
        self._out = out
        self._console: Any = make_console(out) if styled else None

    @property
    def console(self) -> Any:
        if self._console is None:
            self._console = make_console(self._out)
        return self._console

    def __call__(self, *parts: Any) -> None:
        texts = [t for p in parts for t in (p[1:] if isinstance(p, tuple) else (p,))]
        if self._console is None and all(_as_is(t) for t in texts):
            self._out.write("".join(texts) + "\n")
            return
        self.console.print("".join(f"[{p[0]}]{''.join(escape(t) for t in p[1:])}[/{p[0]}]" if isinstance(p, tuple) else escape(p)
                                   for p in parts))


_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
_TAG_LIKE = re.compile(r"\[[a-z#/@]")  # what rich's markup (12.0 and later) may read as a tag


def _as_is(text: str) -> bool:
    """Whether rich prints ``escape(text)`` as ``text``: no control character and, when there is
    a backslash, none at the end, none doubled before a ``[`` and no tag-like ``[`` anywhere (how
    escape treats backslashes near a tag changed between rich releases)."""
    if "\\" not in text:
        return not _CONTROL.search(text)
    return not (_CONTROL.search(text) or text.endswith("\\") or "\\\\[" in text or _TAG_LIKE.search(text))


def render_text(result: Dict[str, Any], out: TextIO, styled: Optional[bool] = None) -> None:
    """``styled``: rich markup (None: when ``out`` is a terminal that takes colours)."""
    from ascend_doctor.output import plain

    line = _Lines(out, not plain(out) if styled is None else styled)
    if not result["found"]:
        line(("yellow", "Not in the knowledge base:"), " ", result["query"][:200])
        return
    if result.get("ambiguous"):
        line(("yellow", "This number is ambiguous; each reading is shown. Write hccl:N or drv:N to choose."))
    if result["kind"] == "code":
        for code in result["codes"]:
            _text_code(line, code, show_advice=not result["matches"])
        _text_matches(line, result["matches"])
    else:
        _text_matches(line, result["matches"])
        guess = _triage_guess(result)
        if guess:
            line(("bold", "Triage reads it as:"), " ", guess["title"], "  ", ("cyan", guess["category"]), " ",
                 ("dim", f"({guess['confidence']} confidence: by its code; no entry explains the line)"))
            line("")
        if result["codes"]:
            from ascend_doctor.output import print_table

            line(("bold", "Codes in the text:"))
            print_table(line.console, None, [(code["code"] + "".join(f" -> {c['code']}" for c in code.get("reported_as", [])),
                                              f"{code['name']}: {code['meaning']}") for code in result["codes"]], markup=False)
            line("")


def _triage_guess(result: Dict[str, Any]) -> Optional[Dict[str, Any]]:
    """Triage's reading of a pasted text that no entry explains but whose code it filed (shown, so that
    explain says what triage says)."""
    t = result.get("triage")
    return t if t and t["kb"] is None and not result["matches"] and t["title"] != "Unrecognised error" else None


def _text_code(line: _Lines, code: Dict[str, Any], show_advice: bool) -> None:
    line(("bold", code["code"]), "  ", code["name"], "  ", ("dim", "(", code["family_title"], ")"))
    line(_label("Meaning"), code["meaning"])
    if code.get("class"):
        line(_label("Class"), code["class"])
    if code.get("component"):
        line(_label("From"), code["component"])
    if code.get("printed"):
        line(_label("Template" if code["family"] == "cann" else "Printed"), code["printed"])
    for step in code.get("reported_as", []):
        line(_label("Becomes"), step["code"], " ", step["name"], ": ", step["meaning"])
    if show_advice and code.get("advice"):
        line(_label("To do"), code["advice"])
    line("")


def _text_matches(line: _Lines, matches: List[Dict[str, Any]]) -> None:
    for i, m in enumerate(matches):
        head = "Likely cause" if i == 0 else "Also possible"
        role = () if m["role"] == "cause" else (" ", ("dim", f"({m['role']})"))
        line(("bold", f"{head}:"), " ", m["title"], "  ", ("cyan", m["category"]), *role)
        if i > 0:
            line("  ", m["cause"])
            continue
        line(_label("Cause"), m["cause"])
        if m.get("alternative"):
            line(_label("Or"), m["alternative"]["title"], "  ", ("cyan", m["alternative"]["category"]))
        line(_label("Why"), m["explanation"])
        if m.get("captures"):
            line(_label("Found"), ", ".join(f"{k}={v}" for k, v in m["captures"].items()))
        if m["upstream"] and m["role"] != "cause":
            line(_label("Look for"), "; ".join(u["title"] for u in m["upstream"][:6]))
        if m.get("check_command"):
            line(_label("Check"), m["check_command"])
        line(_label("Fix"), m["fix"]["text"])
        for cmd in m["fix"]["commands"]:
            line("      $ ", cmd)
        if m["fix"]["collect"]:
            line("  Before asking for help, collect:")
            for cmd in m["fix"]["collect"]:
                line("      $ ", cmd)
        for link in m["links"]:
            line(_label("See"), link)
        line("")
    if len(matches) > 1:
        line("")


def render_md(result: Dict[str, Any]) -> str:
    from ascend_doctor.output import md_heading

    lines: List[str] = md_heading("explain")
    if not result["found"]:
        return "\n".join(lines + ["**Not in the knowledge base:**", "", f"`{result['query'][:200]}`", "",
                                   result["not_found"] or "", ""])
    if result.get("ambiguous"):
        lines += ["> This number is ambiguous; each reading is shown (write `hccl:N` or `drv:N`).", ""]
    code_lines: List[str] = []
    for code in result["codes"]:
        code_lines += [f"## `{code['code']}` {code['name']}", "", f"*{code['family_title']}*", "", code["meaning"], ""]
        if code.get("class"):
            code_lines += [f"- Class: {code['class']}"]
        if code.get("component"):
            code_lines += [f"- From: {code['component']}"]
        if code.get("printed"):
            code_lines += [f"- {'Template' if code['family'] == 'cann' else 'Printed'}: `{code['printed']}`"]
        for step in code.get("reported_as", []):
            code_lines += [f"- Becomes `{step['code']}` {step['name']}: {step['meaning']}"]
        code_lines += [""]
    match_lines: List[str] = []
    for i, m in enumerate(result["matches"]):
        match_lines += [f"## {'Likely cause' if i == 0 else 'Also possible'}: {m['title']} ({m['category']})", ""]
        match_lines += [f"**Cause:** {m['cause']}", ""]
        if i:
            continue
        if m.get("alternative"):
            match_lines += [f"**Or:** {m['alternative']['title']} ({m['alternative']['category']})", ""]
        match_lines += [m["explanation"], ""]
        if m["upstream"] and m["role"] != "cause":
            match_lines += ["**Look for:** " + "; ".join(u["title"] for u in m["upstream"][:6]), ""]
        if m.get("check_command"):
            match_lines += [f"**Check:** `{m['check_command']}`", ""]
        match_lines += [f"**Fix:** {m['fix']['text']}", ""]
        if m["fix"]["commands"]:
            match_lines += ["```sh"] + m["fix"]["commands"] + ["```", ""]
        if m["fix"]["collect"]:
            match_lines += ["Before asking for help, collect:", "", "```sh"] + m["fix"]["collect"] + ["```", ""]
        match_lines += [f"- {link}" for link in m["links"]] + [""]
    guess = _triage_guess(result)
    if guess:
        match_lines += [f"**Triage reads it as:** {guess['title']} ({guess['category']}; {guess['confidence']} confidence: "
                        "by its code; no entry explains the line)", ""]
    lines += code_lines + match_lines if result["kind"] == "code" else match_lines + code_lines
    return "\n".join(lines)
