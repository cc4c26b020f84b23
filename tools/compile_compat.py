#!/usr/bin/env python3
"""Write compat_matrix's compiled data: compat_matrix/data/compiled.json.gz.

    python tools/compile_compat.py [--check]

Parses every YAML data file of compat_matrix, builds the matrix from them once (so a file the
matrix rejects is never compiled), and writes one gzipped JSON document with the parsed files
and the size of each YAML file. compat_matrix.tables reads it only while every YAML file still
has that size; run this after editing any file under compat_matrix/data. --check exits 1 when
the compiled file is stale. The output is deterministic (sorted keys, fixed gzip mtime).
"""
from __future__ import annotations

import gzip
import io
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from compat_matrix import tables  # noqa: E402


def render(data_dir: Path = tables.DATA_DIR) -> bytes:
    docs = {name: tables._yaml_load(data_dir / (name + ".yaml")) for name in tables.DATA_FILES}
    tables._CACHE.clear()
    tables._CACHE["__compiled__"] = docs  # build the matrix from exactly what is compiled
    tables.load_matrix()
    body = json.dumps({"sizes": tables.yaml_sizes(data_dir), "docs": docs}, sort_keys=True,
                      ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    buf = io.BytesIO()
    with gzip.GzipFile(fileobj=buf, mode="wb", compresslevel=9, mtime=0) as gz:
        gz.write(body)
    return buf.getvalue()


def main(argv) -> int:
    blob = render()
    target = tables.DATA_DIR / tables.COMPILED
    if "--check" in argv:
        if (target.read_bytes() if target.is_file() else b"") != blob:
            print(f"{target} is stale: run python tools/compile_compat.py", file=sys.stderr)
            return 1
        return 0
    target.write_bytes(blob)
    print(f"wrote {target} ({len(blob)} bytes)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
