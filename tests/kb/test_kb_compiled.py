"""The knowledge base ships compiled (kb/data/compiled.jsonl and compiled-codes.jsonl.gz, written by
tools/compile_kb.py): it must hold exactly what the YAML files say (the documents, and the entries
and code rows built from them), the loader must fall back to the YAML when the two differ, never
serve stale rules, and a one-line question must build only the entries its line can match."""
from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

from ascend_doctor.kb import loader
from ascend_doctor.kb.knowledge import KnowledgeBase

ROOT = Path(__file__).resolve().parents[2]
LINE = "ImportError: libhccl.so: cannot open shared object file: No such file or directory"


def _yaml_copy(tmp_path: Path) -> Path:
    data = tmp_path / "data"
    shutil.copytree(loader.DATA_DIR, data)
    for name in (loader.COMPILED, loader.COMPILED_CODES):
        (data / name).unlink()
    return data


def test_compiled_form_is_current_and_equal_to_the_yaml():
    main = loader._read_compiled(loader.DATA_DIR / loader.COMPILED)
    codes = loader._read_compiled(loader.DATA_DIR / loader.COMPILED_CODES)
    assert main is not None and codes is not None
    assert main.header["stamp"] == codes.header["stamp"] == loader.data_stamp(loader.DATA_DIR), "stale: run python tools/compile_kb.py"
    compiled = loader.compiled_docs(loader.DATA_DIR)
    assert compiled is not None
    yaml_docs = json.loads(json.dumps(loader.yaml_docs(loader.DATA_DIR), sort_keys=True))
    for section in ("rules", "tables"):
        assert dict(compiled[section]) == yaml_docs[section], section
    res = subprocess.run([sys.executable, str(ROOT / "tools" / "compile_kb.py"), "--check"], capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stderr


def test_compiled_entries_and_code_rows_equal_those_built_from_the_yaml(tmp_path):
    data = _yaml_copy(tmp_path)
    assert loader.data_docs(data)[1]  # no compiled form there: read and checked from the YAML
    from_yaml = KnowledgeBase(loader.load_store(data), data)
    compiled = KnowledgeBase(loader.load_store(loader.DATA_DIR), loader.DATA_DIR)
    assert not loader.data_docs(loader.DATA_DIR)[1]
    assert len(compiled.entries) == len(from_yaml.entries) > 300
    assert compiled.entries == from_yaml.entries
    assert compiled.stats() == from_yaml.stats()
    got, want = compiled.tables, from_yaml.tables
    assert [i.__dict__ for i in got.all()] == [i.__dict__ for i in want.all()]
    assert dict(got.by_name) == want.by_name and got.families == want.families and got.classes == want.classes
    assert got.prefixes == want.prefixes and list(got.tables.items()) == list(want.tables.items())
    assert [i.__dict__ for i in compiled.lookup_codes("EZ9999")] == [i.__dict__ for i in from_yaml.lookup_codes("EZ9999")]


def test_a_line_builds_only_the_entries_it_can_match():
    base = KnowledgeBase(loader.load_store(loader.DATA_DIR), loader.DATA_DIR)
    store = base._store
    assert store._built == {}
    top = base.match(LINE)[0]
    assert top.entry.id == "env.cann_lib_missing"
    assert 0 < len(store._built) <= 10 < len(store)
    assert base.entry(top.entry.id) is top.entry  # built once, then kept


def test_the_loader_uses_the_compiled_form_only_while_it_matches(tmp_path):
    data = tmp_path / "data"
    shutil.copytree(loader.DATA_DIR, data)
    assert loader.compiled_docs(data) is not None
    rules = data / "rules" / "other.yaml"
    rules.write_text(rules.read_text(encoding="utf-8") + "\n# edited\n", encoding="utf-8")
    assert loader.compiled_docs(data) is None  # the YAML changed: the compiled form is not trusted
    docs, validate = loader.data_docs(data)
    assert validate and "other.yaml" in docs["rules"]


def test_a_compiled_file_of_another_format_is_not_read(tmp_path):
    data = tmp_path / "data"
    shutil.copytree(loader.DATA_DIR, data)
    target = data / loader.COMPILED
    head, _, body = target.read_bytes().partition(b"\n")
    header = json.loads(head)
    header["format"] = loader.FORMAT - 1
    target.write_bytes(json.dumps(header).encode() + b"\n" + body)
    assert loader.compiled_docs(data) is None
    target.write_bytes(head + b"\n" + body[:-10])  # cut short: the offsets no longer fit
    assert loader.compiled_docs(data) is None
