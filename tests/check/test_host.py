"""The Host: files under a root, symlinks, users, modes, env files, commands with timeouts."""
from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from ascend_doctor.host import Host, HostError, ReadError, parse_env_file


def test_absolute_symlinks_are_rerooted(tmp_path: Path) -> None:
    (tmp_path / "usr/local/Ascend/ascend-toolkit/8.1.RC1").mkdir(parents=True)
    (tmp_path / "usr/local/Ascend/ascend-toolkit/8.1.RC1/x").write_text("inside")
    (tmp_path / "usr/local/Ascend/ascend-toolkit/latest").symlink_to("/usr/local/Ascend/ascend-toolkit/8.1.RC1")
    host = Host(str(tmp_path), env={})
    assert host.read_text("/usr/local/Ascend/ascend-toolkit/latest/x") == "inside"
    assert host.realpath("/usr/local/Ascend/ascend-toolkit/latest") == "/usr/local/Ascend/ascend-toolkit/8.1.RC1"


def test_symlink_escape_and_loop(tmp_path: Path) -> None:
    (tmp_path / "etc").mkdir()
    (tmp_path / "etc/escape").symlink_to("../../../../../../etc/passwd")
    (tmp_path / "loop").symlink_to("/loop")
    host = Host(str(tmp_path), env={})
    assert not host.exists("/etc/escape")  # '..' cannot climb above the root
    with pytest.raises(ReadError, match="symbolic links"):
        host.read_text("/loop")


def test_devices_and_fifos_are_never_opened(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "fifo")
    host = Host(str(tmp_path), env={})
    with pytest.raises(ReadError, match="not a regular file"):
        host.read_text("/fifo")


def test_unreadable_file_is_one_line(tmp_path: Path) -> None:
    host = Host(str(tmp_path), env={})
    with pytest.raises(ReadError, match="no such file"):
        host.read_text("/nope")
    with pytest.raises(ReadError, match="is a directory|not a regular file"):
        host.read_text("/")


def test_root_must_exist(tmp_path: Path) -> None:
    with pytest.raises(HostError, match="no such directory"):
        Host(str(tmp_path / "missing"))
    (tmp_path / "f").write_text("")
    with pytest.raises(HostError, match="not a directory"):
        Host(str(tmp_path / "f"))


def test_user_and_group_judgement(tmp_path: Path) -> None:
    (tmp_path / "etc").mkdir()
    uid, gid = os.getuid(), os.getgid()
    (tmp_path / "etc/passwd").write_text(f"HwHiAiUser:x:{uid}:{gid}::/home/HwHiAiUser:/bin/sh\nalice:x:4242:4242::/home/alice:/bin/sh\nbob:x:4343:4343::/home/bob:/bin/sh\n")
    (tmp_path / "etc/group").write_text(f"HwHiAiUser:x:{gid}:alice\nalice:x:4242:\nbob:x:4343:\n")
    (tmp_path / "dev").mkdir()
    node = tmp_path / "dev/davinci0"
    node.write_text("")
    node.chmod(0o660)
    alice = Host(str(tmp_path), env={"USER": "alice"})
    bob = Host(str(tmp_path), env={"USER": "bob"})
    assert alice.user.groups == frozenset({"HwHiAiUser", "alice"})
    assert alice.is_device_node("/dev/davinci0")
    st = alice.stat("/dev/davinci0")
    assert (st.owner, st.group, st.mode_octal) == ("HwHiAiUser", "HwHiAiUser", "660")
    assert alice.can_access("/dev/davinci0", "rw")
    assert not bob.can_access("/dev/davinci0", "rw")
    assert alice.home() == "/home/alice"


def test_real_root_only_counts_character_devices(tmp_path: Path) -> None:
    host = Host("/", env={})
    assert host.is_device_node("/dev/null")
    assert not host.is_device_node(str(tmp_path))


@pytest.mark.parametrize(
    "text, expected",
    [
        ("A=1\n# c\n\nexport B='two words'\nC=\"x=y\"\nD=\n", {"A": "1", "B": "two words", "C": "x=y", "D": ""}),
        ("LD_LIBRARY_PATH=/a:/b\n", {"LD_LIBRARY_PATH": "/a:/b"}),
    ],
)
def test_env_file(text: str, expected: dict) -> None:
    assert parse_env_file(text) == expected


@pytest.mark.parametrize("line", ["just words", "=value", "1A=2", "A B=1"])
def test_env_file_malformed_line(line: str) -> None:
    with pytest.raises(HostError, match=r"line 2: expected KEY=VALUE"):
        parse_env_file("OK=1\n" + line + "\n", name="env")


def test_commands_resolve_under_root_and_hangs_are_killed(tmp_path: Path) -> None:
    bindir = tmp_path / "usr/local/bin"
    bindir.mkdir(parents=True)
    (bindir / "hello").write_text("#!/bin/sh\necho hi from tree\n")
    (bindir / "hello").chmod(0o755)
    # the child forks a grandchild that would keep the pipe open: the group kill must end both
    (bindir / "hang").write_text("#!/bin/sh\nsleep 600 &\nsleep 600\n")
    (bindir / "hang").chmod(0o755)
    untrusted = Host(str(tmp_path), env={"PATH": "/usr/local/bin"})
    refused = untrusted.run(["hello"], timeout=10)
    assert refused.untrusted and not refused.ok and "--trust-root" in refused.error
    host = Host(str(tmp_path), env={"PATH": "/usr/local/bin"}, trusted=True)
    assert host.which("hello") == "/usr/local/bin/hello"
    res = host.run(["hello"], timeout=10)
    assert res.ok and res.stdout.strip() == "hi from tree"
    start = time.monotonic()
    res = host.run(["hang"], timeout=0.5)
    assert res.timed_out and time.monotonic() - start < 5
    missing = host.run(["npu-smi", "info"], timeout=1)
    assert missing.not_found and "command not found" in missing.stderr


def test_arch_under_root(tmp_path: Path) -> None:
    (tmp_path / "proc/sys/kernel").mkdir(parents=True)
    (tmp_path / "proc/sys/kernel/arch").write_text("aarch64\n")
    assert Host(str(tmp_path), env={}).arch() == "aarch64"
    assert Host(str(tmp_path / "proc"), env={}).arch() is None
