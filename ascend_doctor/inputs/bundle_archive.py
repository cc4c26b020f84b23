"""Writing a bundle archive and recognising one when it is read back.

The manifest is the archive's first member, ``<top>/manifest.json`` with
``"kind": "ascend-doctor bundle"``, so a reader that streams the archive (triage reads
tar files member by member) knows it holds a bundle before it reaches the other members
and can keep to the logs under ``<top>/logs/``.
"""
from __future__ import annotations

import io
import json
import os
import time
from typing import TYPE_CHECKING, Any, Dict, List, Optional, Tuple

if TYPE_CHECKING:
    import tarfile

KIND = "ascend-doctor bundle"
TOP_PREFIX = "ascend-doctor-bundle"
MANIFEST = "manifest.json"
MAX_MANIFEST_BYTES = 8 << 20


def write_archive(path: str, top: str, manifest: Dict[str, Any], members: List[Tuple[str, bytes]]) -> int:
    """Write ``members`` (name under ``top``, bytes) after the manifest; returns the archive size.

    The archive is written next to ``path`` and renamed into place, so a failed run leaves
    no half-written bundle."""
    import tarfile  # here and below, not at import: triage reads a manifest without tarfile

    part = path + ".part"
    now = int(time.time())
    try:
        with tarfile.open(part, "w:gz", format=tarfile.PAX_FORMAT) as tf:
            _add(tf, f"{top}/{MANIFEST}", (json.dumps(manifest, indent=2, ensure_ascii=False) + "\n").encode(), now)
            for name, data in members:
                _add(tf, f"{top}/{name}", data, now)
        os.replace(part, path)
    finally:
        if os.path.exists(part):
            os.unlink(part)
    return os.path.getsize(path)


def _add(tf: tarfile.TarFile, name: str, data: bytes, mtime: int) -> None:
    import tarfile

    info = tarfile.TarInfo(name)
    info.size = len(data)
    info.mtime = mtime
    info.mode = 0o644
    info.uname = info.gname = ""
    tf.addfile(info, io.BytesIO(data))


def bundle_manifest(member_name: str, data: bytes) -> Optional[Dict[str, Any]]:
    """The manifest when ``member_name``/``data`` is a bundle's manifest member, else None."""
    parts = member_name.split("/")
    if len(parts) != 2 or parts[1] != MANIFEST or not parts[0].startswith(TOP_PREFIX) or len(data) > MAX_MANIFEST_BYTES:
        return None
    try:
        doc = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        return None
    if not isinstance(doc, dict) or doc.get("kind") != KIND:
        return None
    return doc


def read_member(path: str, suffix: str, limit: int = 64 << 20) -> Optional[bytes]:
    """The bytes of the member ``<top>/<suffix>`` of a bundle at ``path``, or None."""
    import tarfile

    try:
        with tarfile.open(path, "r:*") as tf:
            for member in tf:
                parts = member.name.split("/", 1)
                if member.isreg() and len(parts) == 2 and parts[1] == suffix and parts[0].startswith(TOP_PREFIX):
                    if member.size > limit:
                        return None
                    fh = tf.extractfile(member)
                    return fh.read() if fh else None
    except (OSError, tarfile.TarError, EOFError):
        return None
    return None


def is_bundle(path: str) -> bool:
    """Whether ``path`` is a bundle archive (its first member is a bundle manifest)."""
    import tarfile

    try:
        with tarfile.open(path, "r|*") as tf:
            for member in tf:
                if not member.isreg():
                    return False
                fh = tf.extractfile(member)
                data = fh.read(MAX_MANIFEST_BYTES + 1) if fh else b""
                return bundle_manifest(member.name, data) is not None
    except (OSError, tarfile.TarError, EOFError):
        return False
    return False
