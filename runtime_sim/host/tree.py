"""A writer confined to one directory: the root of a simulated host.

Paths are judged-machine paths (``/usr/local/Ascend/driver/version.info``). Every write
is checked to land inside the root: no ``..``, and never through a symlink (links in a
tree, such as ``ascend-toolkit/latest``, may point anywhere on the judged machine, so
writing through one could leave the root).
"""
from __future__ import annotations

import os
from pathlib import Path
from typing import Optional, Union

ELF_MACHINE = {"x86_64": 0x3E, "aarch64": 0xB7}


class TreeError(Exception):
    """A write would leave the tree, or the destination cannot be used."""


class Tree:
    def __init__(self, root: Union[str, Path]) -> None:
        self.root = Path(root).resolve()

    def fs(self, host_path: str) -> Path:
        """The file under the root for a judged-machine path, refusing anything that escapes."""
        if not host_path.startswith("/"):
            raise TreeError(f"host paths are absolute: {host_path!r}")
        parts = [p for p in host_path.split("/") if p not in ("", ".")]
        if ".." in parts:
            raise TreeError(f"'..' in a host path: {host_path!r}")
        current = self.root
        for part in parts[:-1]:
            current = current / part
            if current.is_symlink():
                raise TreeError(f"{host_path}: would write through the symlink {current}")
        return self.root.joinpath(*parts)

    def mkdir(self, host_path: str, mode: int = 0o755) -> Path:
        path = self.fs(host_path) if host_path.strip("/") else self.root
        path.mkdir(parents=True, exist_ok=True)
        os.chmod(path, mode)
        return path

    def write(self, host_path: str, content: Union[str, bytes], mode: int = 0o644) -> Path:
        path = self.fs(host_path)
        path.parent.mkdir(parents=True, exist_ok=True)
        if path.is_symlink() or (path.exists() and not path.is_file()):
            raise TreeError(f"{host_path}: exists and is not a regular file")
        data = content.encode("utf-8") if isinstance(content, str) else content
        with open(path, "wb") as fh:
            fh.write(data)
        os.chmod(path, mode)
        return path

    def symlink(self, host_path: str, target: str) -> Path:
        """A symlink; ``target`` is relative to the link's directory or a judged-machine path."""
        path = self.fs(host_path)
        path.parent.mkdir(parents=True, exist_ok=True)
        if path.is_symlink():
            path.unlink()
        os.symlink(target, path)
        return path

    def chown(self, host_path: str, uid: int, gid: int) -> None:
        os.chown(self.fs(host_path), uid, gid, follow_symlinks=False)

    def placeholder_library(self, host_path: str, arch: str, tags: Optional[dict] = None) -> Path:
        """A shared-object stand-in: an ELF64 header for ``arch`` followed by ``key=value`` tags.

        Tools that look at the header (``file``, an ELF machine check) see the library's
        architecture; the torch_npu stand-in reads the tags (e.g. which CANN it belongs to).
        """
        header = bytearray(64)
        header[0:4] = b"\x7fELF"
        header[4] = 2  # 64-bit
        header[5] = 1  # little endian
        header[6] = 1  # ELF version
        header[16:18] = (3).to_bytes(2, "little")  # ET_DYN: a shared object
        header[18:20] = ELF_MACHINE[arch].to_bytes(2, "little")
        header[20:24] = (1).to_bytes(4, "little")
        header[52:54] = (64).to_bytes(2, "little")  # e_ehsize
        body = b"\0runtime_sim placeholder\0"
        for key, value in (tags or {}).items():
            body += f"{key}={value}".encode() + b"\0"
        return self.write(host_path, bytes(header) + body, mode=0o755)
