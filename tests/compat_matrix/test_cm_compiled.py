"""compat_matrix ships its YAML data compiled (data/compiled.json.gz, tools/compile_compat.py):
the compiled form must say exactly what the YAML says, and it is used only while it matches."""
from __future__ import annotations

import gzip
import json
import shutil
import subprocess
import sys
from pathlib import Path

from compat_matrix import tables

ROOT = Path(__file__).resolve().parents[2]


def test_compiled_form_is_current_and_equal_to_the_yaml():
    doc = json.loads(gzip.decompress((tables.DATA_DIR / tables.COMPILED).read_bytes()))
    assert doc["sizes"] == tables.yaml_sizes(), "stale: run python tools/compile_compat.py"
    for name in tables.DATA_FILES:
        from_yaml = json.loads(json.dumps(tables._yaml_load(tables.DATA_DIR / (name + ".yaml"))))
        assert doc["docs"][name] == from_yaml, f"{name}.yaml differs from the compiled form"
    res = subprocess.run([sys.executable, str(ROOT / "tools" / "compile_compat.py"), "--check"],
                         capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stderr


def test_a_changed_yaml_file_is_read_instead_of_the_compiled_form(tmp_path):
    data = tmp_path / "data"
    shutil.copytree(tables.DATA_DIR, data)
    assert tables._compiled(data) is not None
    f = data / "sources.yaml"
    f.write_text(f.read_text(encoding="utf-8") + "\n# edited\n", encoding="utf-8")
    assert tables._compiled(data) is None


def test_a_broken_compiled_file_is_ignored(tmp_path):
    data = tmp_path / "data"
    shutil.copytree(tables.DATA_DIR, data)
    (data / tables.COMPILED).write_bytes(b"\x1f\x8b not gzip")
    assert tables._compiled(data) is None
