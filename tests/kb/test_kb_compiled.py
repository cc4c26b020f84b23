"""The knowledge base ships compiled (kb/data/compiled.json.gz, written by tools/compile_kb.py):
it must hold exactly what the YAML files say, and the loader must fall back to the YAML when the
two differ, never serve stale rules."""
from __future__ import annotations

import gzip
import json
import shutil
import subprocess
import sys
from pathlib import Path

from ascend_doctor.kb import loader

ROOT = Path(__file__).resolve().parents[2]


def test_compiled_form_is_current_and_equal_to_the_yaml():
    blob = json.loads(gzip.decompress((loader.DATA_DIR / loader.COMPILED).read_bytes()))
    assert blob["stamp"] == loader.data_stamp(loader.DATA_DIR), "stale: run python tools/compile_kb.py"
    yaml_docs = json.loads(json.dumps(loader.yaml_docs(loader.DATA_DIR), sort_keys=True))
    assert blob["docs"] == yaml_docs
    res = subprocess.run([sys.executable, str(ROOT / "tools" / "compile_kb.py"), "--check"], capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stderr


def test_the_loader_uses_the_compiled_form_only_while_it_matches(tmp_path):
    data = tmp_path / "data"
    shutil.copytree(loader.DATA_DIR, data)
    assert loader.compiled_docs(data) is not None
    rules = data / "rules" / "other.yaml"
    rules.write_text(rules.read_text(encoding="utf-8") + "\n# edited\n", encoding="utf-8")
    assert loader.compiled_docs(data) is None  # the YAML changed: the compiled form is not trusted
    docs, validate = loader.data_docs(data)
    assert validate and "other.yaml" in docs["rules"]
