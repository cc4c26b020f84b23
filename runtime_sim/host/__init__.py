"""The host builder: from a scenario, a directory tree that reads like a real Ascend host.

    from runtime_sim.host import build
    host = build("set_env_not_sourced", "/tmp/h")   # -> BuiltHost(.root, .env_file, .scenario)
    # ascend-doctor check --root /tmp/h --env-file /tmp/h/user.env

What the tree holds (formats: the public samples cited in ascend_doctor/parsers/version_info.py)
- ``/usr/local/Ascend/driver/version.info``, ``firmware/version.info``,
  ``/etc/ascend_install.info``, driver ``lib64`` libraries, ``/usr/local/dcmi``;
- the CANN toolkit in its release's layout (``ascend-toolkit/<ver>`` + ``latest`` for
  ≤ 8.3, ``cann-<ver>`` + ``cann`` for ≥ 8.5) with its install info files, ``set_env.sh``,
  ``lib64/libascendcl.so`` and the opp kernel directories of the chip;
- ``/etc/passwd``, ``/etc/group`` (with ``HwHiAiUser``), ``/proc/modules``,
  ``/proc/sys/kernel/arch``, ``/proc/1/cgroup`` and ``/.dockerenv`` in containers;
- ``/usr/local/bin/npu-smi``: a script printing this host's real npu-smi dialect, or
  failing as the real one does (dcmi ``-8005``, exit status 187), or hanging;
- ``/usr/local/lib/python3.X/site-packages`` with torch / torch_npu metadata and
  stand-ins whose import and ``torch.npu.is_available()`` behave as the real ones do on
  that host (same exception types and messages), and ``/usr/bin/python3`` to run them;
- next to the tree, inside the same directory: ``user.env``, the host user's shell
  environment (``--env-file``).

Device nodes (decided with ascend_doctor/host.py): an unprivileged builder cannot
``mknod``, so ``/dev/davinci<N>``, ``davinci_manager``, ``devmm_svm``, ``hisi_hdc`` are
regular files standing in for character devices, mode 0660 (0666 when the driver was
installed for all users). Their owner and group must read as ``HwHiAiUser``:
- built as root: they are chowned to uid/gid 1000, which the tree's passwd and group
  give to HwHiAiUser (the uid Ascend's images use);
- built as another user: the files belong to the builder, so the tree's passwd and
  group give HwHiAiUser the builder's own uid and gid. Other users get other ids.
The judged user is ``USER`` of the env file, looked up in the tree's passwd and group.

Library placeholders (``libascendcl.so`` ...) are 64-byte ELF headers of the toolkit's
architecture followed by ``key=value`` tags; the torch_npu stand-in resolves them through
``LD_LIBRARY_PATH`` like the dynamic loader, so "set_env.sh not sourced" fails the import
exactly as on a real host.

Nothing is written outside the target directory: every path is checked, and nothing is
written through a symlink.
"""
from __future__ import annotations

from .builder import BuildError, BuiltHost, RunResult, build, describe, run

__all__ = ["BuildError", "BuiltHost", "RunResult", "build", "describe", "run"]
