#!/usr/bin/env python3
"""Write the knowledge base's compiled form: ascend_doctor/kb/data/compiled.json.gz.

    python tools/compile_kb.py [--check]

Loads the YAML data files with every check the loader has (bad regexes, unknown fields,
edges to nowhere, examples that must match are tested by tests/kb), then writes one gzipped
JSON document with the parsed files and the stamp of the YAML it came from. The run-time
loader uses it only while the stamp matches (see ascend_doctor/kb/loader.py); run this after
editing any file under kb/data/{rules,codes,tables}. --check exits 1 when the file is stale.
The output is deterministic (sorted keys, fixed gzip mtime), so it diffs cleanly.
"""
from __future__ import annotations

import gzip
import io
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from ascend_doctor.kb import loader  # noqa: E402


def render(data_dir: Path) -> bytes:
    docs = loader.yaml_docs(data_dir)
    loader._DOCS[str(data_dir)] = (docs, True)  # check everything exactly as the YAML path does
    entries = loader.load_entries(data_dir)
    loader.load_code_tables(data_dir)
    triggers = {p.source: p.trigger for e in entries for p in e.rule.patterns}
    body = json.dumps({"stamp": loader.data_stamp(data_dir), "sizes": loader.data_sizes(data_dir), "docs": docs,
                       "triggers": triggers},
                      sort_keys=True, ensure_ascii=False,
                      separators=(",", ":")).encode("utf-8")
    buf = io.BytesIO()
    with gzip.GzipFile(fileobj=buf, mode="wb", compresslevel=9, mtime=0) as gz:
        gz.write(body)
    return buf.getvalue()


def main(argv) -> int:
    data_dir = loader.DATA_DIR
    blob = render(data_dir)
    target = data_dir / loader.COMPILED
    if "--check" in argv:
        current = target.read_bytes() if target.is_file() else b""
        if current != blob:
            print(f"{target} is stale: run python tools/compile_kb.py", file=sys.stderr)
            return 1
        return 0
    target.write_bytes(blob)
    print(f"wrote {target} ({len(blob)} bytes)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
