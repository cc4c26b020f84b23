#!/usr/bin/env python3
"""Write the knowledge base's compiled form: ascend_doctor/kb/data/compiled.jsonl and compiled-codes.jsonl.

    python tools/compile_kb.py [--check]

Loads the YAML data files with every check the loader has (bad regexes, unknown fields,
edges to nowhere, examples that must match are tested by tests/kb), then writes the two
compiled files (the format is described in ascend_doctor/kb/loader.py): the rule entries and
family tables one document per line with an index of the entries in the header, and the code
tables already decoded, with the stamp of the YAML they came from. The run-time loader uses
them only while the YAML beside them is the same (see ascend_doctor/kb/loader.py); run this
after editing any file under kb/data/{rules,codes,tables}. --check exits 1 when a file is stale.
The output is deterministic (sorted keys), so it diffs cleanly.
"""
from __future__ import annotations

import sys
from pathlib import Path
from typing import Any, Dict, List

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from ascend_doctor.kb import loader  # noqa: E402
from ascend_doctor.kb.matcher import whole_word  # noqa: E402


def render(data_dir: Path):
    """(main file, codes file): rules and family tables with the entry index; the code tables apart."""
    docs = loader.yaml_docs(data_dir)
    loader._DOCS[str(data_dir)] = (docs, True)  # check everything exactly as the YAML path does
    try:
        entries = loader.load_entries(data_dir)
        tables = loader.load_code_tables(data_dir)
    finally:
        loader._DOCS.pop(str(data_dir), None)
    stamp = loader.data_stamp(data_dir)
    documents: List[Any] = []
    files: Dict[str, Dict[str, Any]] = {"rules": {}, "tables": {}}
    place: Dict[str, List[Any]] = {}
    for name in sorted(docs["rules"]):
        numbers = files["rules"][name] = []
        for i, raw in enumerate(docs["rules"][name]["entries"]):
            place[raw["id"]] = [name, i, len(documents)]
            numbers.append(len(documents))
            documents.append(raw)
    for name in sorted(docs["tables"]):
        files["tables"][name] = len(documents)
        documents.append(docs["tables"][name])
    header = {"stamp": stamp, "sizes": loader.data_sizes(data_dir), "files": files,
              "entries": [loader.index_row(e, place[e.id]) for e in entries]}
    header["words"] = {t: whole_word(t) for row in header["entries"] for t in row[loader.ROW_TRIGGERS]}
    return loader.write_compiled(header, documents), loader.compiled_code_tables(tables, stamp)


def main(argv) -> int:
    data_dir = loader.DATA_DIR
    blobs = dict(zip((loader.COMPILED, loader.COMPILED_CODES), render(data_dir)))
    if "--check" in argv:
        for name, blob in blobs.items():
            target = data_dir / name
            if (target.read_bytes() if target.is_file() else b"") != blob:
                print(f"{target} is stale: run python tools/compile_kb.py", file=sys.stderr)
                return 1
        return 0
    for name, blob in blobs.items():
        (data_dir / name).write_bytes(blob)
        print(f"wrote {data_dir / name} ({len(blob)} bytes)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
