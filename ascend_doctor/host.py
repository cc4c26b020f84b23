"""Host: the only door to the machine being judged.

Every check reads the machine through a Host, never through ``os``, ``open`` or
``subprocess``. A Host has a root: ``/`` for the machine we run on, or a directory
that is read as if it were ``/`` (``--root``). All paths given to a Host are paths
*on the judged machine* (``/usr/local/Ascend/driver/version.info``); the Host maps
them under its root, and re-roots absolute symlinks so that a tree never escapes it.

Device nodes under a root: an unprivileged tree builder cannot ``mknod``, so under a
root other than ``/`` a regular file at a device path stands in for the character
device. Its mode, owner and group are read with ``stat`` as for a real node, and the
owner and group ids are named through the root's ``/etc/passwd`` and ``/etc/group``.
On the real machine only a character device counts.

Commands are run with an argv list (never a shell), stdin closed, a timeout, and in a
new session so that a hang is ended by killing the whole process group; what is left of a
command when it returns (a grandchild that double-forked) is killed too
(``ascend_doctor.children``), and its output is read up to a cap (head and tail kept).

Trust: the programs of a tree given with ``--root`` (its npu-smi, its python3) are code
from the inspected machine. They run only when the Host is ``trusted`` (``--trust-root``,
or a ``--sim`` tree the doctor built itself); otherwise ``run`` refuses and says so, and the
facts fall back to static evidence. The real machine (root ``/``) is trusted.
"""
from __future__ import annotations

import errno
import os
import platform
import stat as stat_mod
import subprocess
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Dict, FrozenSet, List, Mapping, Optional, Sequence, Tuple

from . import children
from .inputs import CappedBuffer, os_message

# Where commands are looked up under a --root, after the judged PATH.
ROOT_BIN_DIRS = ("/usr/local/bin", "/usr/local/sbin", "/usr/bin")
DEFAULT_READ_LIMIT = 4 << 20  # files the checks read are small; a bigger one is cut here
_MAX_SYMLINKS = 40


class HostError(Exception):
    """Bad input about the host itself (missing root, malformed env file): one line."""


class ReadError(OSError):
    """A file on the judged machine could not be read; the message is one line."""


@dataclass(frozen=True)
class PathStat:
    path: str
    kind: str  # file | dir | char | block | fifo | socket | other
    mode: int  # permission bits only
    uid: int
    gid: int
    owner: Optional[str]
    group: Optional[str]
    size: int

    @property
    def mode_octal(self) -> str:
        return format(self.mode, "03o")


@dataclass(frozen=True)
class User:
    name: str
    uid: Optional[int]
    gid: Optional[int]
    groups: FrozenSet[str] = frozenset()
    gids: FrozenSet[int] = frozenset()
    home: Optional[str] = None

    @property
    def is_root(self) -> bool:
        return self.uid == 0


@dataclass
class CommandResult:
    argv: List[str]
    returncode: Optional[int]
    stdout: str
    stderr: str
    duration_s: float
    timed_out: bool = False
    not_found: bool = False
    error: Optional[str] = None  # could not start (permission, exec format)
    foreign: bool = False  # a binary of another architecture or format: it cannot run here
    untrusted: bool = False  # a program of an untrusted --root tree: not run
    cut: int = 0  # output bytes dropped between head and tail (over the cap)

    @property
    def ok(self) -> bool:
        return self.returncode == 0 and not self.timed_out and not self.not_found and not self.error

    @property
    def output(self) -> str:
        return (self.stdout + ("\n" if self.stdout and self.stderr else "") + self.stderr).strip()


def parse_env_file(text: str, name: str = "env file") -> Dict[str, str]:
    """Parse ``KEY=VALUE`` lines (``export`` and quotes allowed, ``#`` comments).

    Raises HostError naming the first malformed line.
    """
    env: Dict[str, str] = {}
    for lineno, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        if line.startswith("export "):
            line = line[len("export "):].lstrip()
        key, sep, value = line.partition("=")
        key = key.strip()
        if not sep or not key or not (key[0].isalpha() or key[0] == "_") or not all(
            c.isalnum() or c == "_" for c in key
        ):
            shown = raw if len(raw) <= 60 else raw[:57] + "..."
            raise HostError(f"{name} line {lineno}: expected KEY=VALUE, got {shown!r}")
        value = value.strip()
        if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
            value = value[1:-1]
        env[key] = value
    return env


def _parse_colon_table(text: str) -> List[List[str]]:
    rows = []
    for line in text.splitlines():
        if line and not line.startswith("#"):
            rows.append(line.split(":"))
    return rows


class Host:
    """Read-only view of a machine: files under a root, an environment, a user, commands."""

    def __init__(
        self,
        root: str = "/",
        env: Optional[Mapping[str, str]] = None,
        user_name: Optional[str] = None,
        trusted: bool = False,
    ) -> None:
        root_path = Path(root).expanduser()
        if not root_path.exists():
            raise HostError(f"--root {root}: no such directory")
        if not root_path.is_dir():
            raise HostError(f"--root {root}: not a directory")
        self.root = root_path.resolve()
        self.is_real = str(self.root) == "/"
        self.trusted = trusted or self.is_real  # may the tree's own programs run here?
        self.env: Dict[str, str] = dict(os.environ if env is None else env)
        self._user_name = user_name
        self._user: Optional[User] = None
        self._passwd: Optional[List[List[str]]] = None
        self._group: Optional[List[List[str]]] = None

    # ------------------------------------------------------------------ paths
    def fs_path(self, path: str) -> Path:
        """The path on this machine's filesystem for a judged-machine path (symlinks re-rooted)."""
        if not path.startswith("/"):
            raise ValueError(f"host paths are absolute: {path!r}")
        if self.is_real:
            return Path(path)
        return self._resolve_under_root(path)

    def _resolve_under_root(self, path: str) -> Path:
        parts = [p for p in path.split("/") if p not in ("", ".")]
        resolved: List[str] = []
        hops = 0
        while parts:
            name = parts.pop(0)
            if name == "..":
                if resolved:
                    resolved.pop()
                continue
            candidate = self.root.joinpath(*resolved, name)
            try:
                is_link = candidate.is_symlink()
            except OSError:
                is_link = False
            if not is_link:
                resolved.append(name)
                continue
            hops += 1
            if hops > _MAX_SYMLINKS:
                raise ReadError(f"{path}: too many levels of symbolic links")
            target = os.readlink(candidate)
            target_parts = [p for p in target.split("/") if p not in ("", ".")]
            if target.startswith("/"):
                resolved = []
            parts = target_parts + parts
        return self.root.joinpath(*resolved)

    def host_path(self, fs_path: Path) -> str:
        """Inverse of fs_path for display: the judged-machine path of a file under the root."""
        if self.is_real:
            return str(fs_path)
        try:
            return "/" + str(Path(fs_path).relative_to(self.root))
        except ValueError:
            return str(fs_path)

    def here(self, path: str) -> str:
        """A judged-machine path as it is reached from this machine, for a command the user runs
        here (``ascend-doctor triage DIR/root/ascend/log`` under ``--root DIR``); unchanged on
        the real machine."""
        if self.is_real:
            return path
        try:
            return str(self.fs_path(path))
        except (OSError, ValueError):
            return str(self.root) + path

    def realpath(self, path: str) -> str:
        """The judged-machine path with every symlink followed."""
        return self.host_path(self.fs_path(path)) if not self.is_real else os.path.realpath(path)

    def exists(self, path: str) -> bool:
        try:
            return self.fs_path(path).exists()
        except (OSError, ValueError):
            return False

    def is_file(self, path: str) -> bool:
        try:
            return self.fs_path(path).is_file()
        except (OSError, ValueError):
            return False

    def is_dir(self, path: str) -> bool:
        try:
            return self.fs_path(path).is_dir()
        except (OSError, ValueError):
            return False

    def listdir(self, path: str) -> List[str]:
        """Entry names of a directory, sorted; empty when it is missing or unreadable."""
        try:
            return sorted(os.listdir(self.fs_path(path)))
        except (OSError, ValueError):
            return []

    def read_bytes(self, path: str, limit: int = DEFAULT_READ_LIMIT) -> bytes:
        try:
            fs = self.fs_path(path)
            st = fs.stat()
            if not stat_mod.S_ISREG(st.st_mode):
                # never open a device, fifo or socket: reading one can block or change state
                raise ReadError(f"{path}: not a regular file")
            with open(fs, "rb") as fh:
                return fh.read(limit)
        except ReadError:
            raise
        except OSError as exc:
            raise ReadError(os_message(path, exc)) from None

    def read_text(self, path: str, limit: int = DEFAULT_READ_LIMIT) -> str:
        """Text of a file; undecodable bytes become U+FFFD instead of failing."""
        return self.read_bytes(path, limit).decode("utf-8", errors="replace")

    def stat(self, path: str) -> Optional[PathStat]:
        try:
            st = self.fs_path(path).stat()
        except (OSError, ValueError):
            return None
        mode = st.st_mode
        if stat_mod.S_ISREG(mode):
            kind = "file"
        elif stat_mod.S_ISDIR(mode):
            kind = "dir"
        elif stat_mod.S_ISCHR(mode):
            kind = "char"
        elif stat_mod.S_ISBLK(mode):
            kind = "block"
        elif stat_mod.S_ISFIFO(mode):
            kind = "fifo"
        elif stat_mod.S_ISSOCK(mode):
            kind = "socket"
        else:
            kind = "other"
        return PathStat(
            path=path,
            kind=kind,
            mode=stat_mod.S_IMODE(mode),
            uid=st.st_uid,
            gid=st.st_gid,
            owner=self.user_name_of(st.st_uid),
            group=self.group_name_of(st.st_gid),
            size=st.st_size,
        )

    def is_device_node(self, path: str) -> bool:
        """A character device; under a --root a regular file stands in for one (module doc)."""
        st = self.stat(path)
        if st is None:
            return False
        return st.kind == "char" or (not self.is_real and st.kind == "file")

    def glob(self, directory: str, pattern: str) -> List[str]:
        """Judged-machine paths of entries of ``directory`` matching a glob ``pattern``."""
        import fnmatch

        return [
            directory.rstrip("/") + "/" + name
            for name in self.listdir(directory)
            if fnmatch.fnmatchcase(name, pattern)
        ]

    # ------------------------------------------------------------- users
    def _table(self, which: str) -> List[List[str]]:
        cached = self._passwd if which == "passwd" else self._group
        if cached is None:
            try:
                cached = _parse_colon_table(self.read_text(f"/etc/{which}"))
            except ReadError:
                cached = []
            if which == "passwd":
                self._passwd = cached
            else:
                self._group = cached
        return cached

    def user_name_of(self, uid: int) -> Optional[str]:
        for row in self._table("passwd"):
            if len(row) > 2 and row[2] == str(uid):
                return row[0]
        return None

    def group_name_of(self, gid: int) -> Optional[str]:
        for row in self._table("group"):
            if len(row) > 2 and row[2] == str(gid):
                return row[0]
        return None

    @property
    def user(self) -> User:
        """The user whose access is judged: USER of the judged env, else the real user."""
        if self._user is None:
            self._user = self._lookup_user()
        return self._user

    def _lookup_user(self) -> User:
        real_uid = os.getuid()
        name = self._user_name
        if name is None and self.is_real:
            name = self.user_name_of(real_uid) or self.env.get("USER") or str(real_uid)
        if name is None:
            name = self.env.get("USER") or self.env.get("LOGNAME") or "root"
        uid = gid = None
        home = None
        for row in self._table("passwd"):
            if row and row[0] == name and len(row) > 3:
                try:
                    uid, gid = int(row[2]), int(row[3])
                except ValueError:
                    pass
                home = row[5] if len(row) > 5 else None
                break
        if uid is None and self.is_real and name == str(real_uid):
            uid, gid = real_uid, os.getgid()
        groups = set()
        gids = set()
        for row in self._table("group"):
            if len(row) < 3:
                continue
            members = row[3].split(",") if len(row) > 3 else []
            try:
                row_gid = int(row[2])
            except ValueError:
                continue
            if name in members or (gid is not None and row_gid == gid):
                groups.add(row[0])
                gids.add(row_gid)
        if self.is_real and uid == real_uid:
            # NSS (LDAP, sssd) groups are not in /etc/group; the kernel knows them
            for g in os.getgroups():
                gids.add(g)
                gname = self.group_name_of(g)
                if gname:
                    groups.add(gname)
        return User(name=name, uid=uid, gid=gid, groups=frozenset(groups), gids=frozenset(gids), home=home)

    def can_access(self, path: str, want: str = "rw", user: Optional[User] = None) -> bool:
        """Whether ``user`` may open ``path`` for ``want`` (``r``, ``w``, ``x``), judged by mode bits."""
        user = user or self.user
        st = self.stat(path)
        if st is None:
            return False
        if user.is_root:
            return True
        bits = {"r": 4, "w": 2, "x": 1}
        need = sum(bits[c] for c in want)
        if user.uid is not None and st.uid == user.uid:
            have = (st.mode >> 6) & 7
        elif st.gid in user.gids:
            have = (st.mode >> 3) & 7
        else:
            have = st.mode & 7
        return have & need == need

    def home(self) -> Optional[str]:
        return self.env.get("HOME") or self.user.home

    # ------------------------------------------------------------ system
    def modules(self) -> Optional[FrozenSet[str]]:
        """Loaded kernel module names from /proc/modules, or None when it cannot be read."""
        try:
            text = self.read_text("/proc/modules")
        except ReadError:
            return None
        return frozenset(line.split()[0] for line in text.splitlines() if line.strip())

    def arch(self) -> Optional[str]:
        """Machine architecture (x86_64, aarch64) of the judged machine."""
        if self.is_real:
            return platform.machine() or None
        try:
            value = self.read_text("/proc/sys/kernel/arch").strip()
            if value:
                return value
        except ReadError:
            pass
        for binary in ("/usr/bin/env", "/bin/sh", "/usr/bin/python3"):
            arch = self._elf_arch(binary)
            if arch:
                return arch
        return None

    def _elf_arch(self, path: str) -> Optional[str]:
        try:
            head = self.read_bytes(path, 20)
        except ReadError:
            return None
        if len(head) < 20 or head[:4] != b"\x7fELF":
            return None
        order = "little" if head[5] == 1 else "big"
        machine = int.from_bytes(head[18:20], order)
        return {0x3E: "x86_64", 0xB7: "aarch64", 0x03: "i686", 0x28: "arm"}.get(machine)

    def container(self) -> Optional[str]:
        """What says this is a container (``/.dockerenv``, a cgroup path), or None."""
        if self.exists("/.dockerenv"):
            return "/.dockerenv exists"
        if self.exists("/run/.containerenv"):
            return "/run/.containerenv exists"
        try:
            cgroup = self.read_text("/proc/1/cgroup", 1 << 16)
        except ReadError:
            cgroup = ""
        for marker in ("docker", "kubepods", "containerd", "libpod", "lxc"):
            if marker in cgroup:
                return f"/proc/1/cgroup mentions {marker}"
        return None

    def disk_free(self, path: str) -> Optional[int]:
        """Free bytes on the filesystem holding ``path`` (or its nearest existing parent)."""
        probe = path
        while probe and not self.exists(probe):
            probe = os.path.dirname(probe.rstrip("/")) or "/"
            if probe == "/":
                break
        try:
            st = os.statvfs(self.fs_path(probe))
        except (OSError, ValueError):
            return None
        return st.f_bavail * st.f_frsize

    def nearest_existing(self, path: str) -> str:
        probe = path.rstrip("/") or "/"
        while probe != "/" and not self.exists(probe):
            probe = os.path.dirname(probe) or "/"
        return probe

    # ----------------------------------------------------------- commands
    def which(self, name: str) -> Optional[str]:
        """Judged-machine path of an executable: the judged PATH, then the standard bin dirs."""
        if "/" in name:
            return name if self._is_executable(name) else None
        dirs: List[str] = [d for d in self.env.get("PATH", "").split(":") if d.startswith("/")]
        for d in ROOT_BIN_DIRS:
            if d not in dirs:
                dirs.append(d)
        for d in dirs:
            candidate = d.rstrip("/") + "/" + name
            if self._is_executable(candidate):
                return candidate
        return None

    def _is_executable(self, path: str) -> bool:
        try:
            fs = self.fs_path(path)
            return fs.is_file() and os.access(fs, os.X_OK)
        except (OSError, ValueError):
            return False

    def command_env(self) -> Dict[str, str]:
        """Environment for child processes.

        On the real machine it is the judged environment. Under a --root, the judged
        environment's paths are not paths here, so children get this process's basics.
        """
        if self.is_real:
            return dict(self.env)
        keep = ("PATH", "HOME", "LANG", "LC_ALL", "TMPDIR", "SYSTEMROOT")
        return {k: os.environ[k] for k in keep if k in os.environ}

    def run(
        self, argv: Sequence[str], timeout: float, env: Optional[Mapping[str, str]] = None, cwd: Optional[str] = None
    ) -> CommandResult:
        """Run a command found on the judged machine; never raises for the command's failures.

        Under an untrusted root nothing runs: the result says so (``untrusted``)."""
        argv = list(argv)
        start = time.monotonic()
        exe = self.which(argv[0])
        if exe is None:
            return CommandResult(argv, None, "", f"{argv[0]}: command not found", 0.0, not_found=True)
        if not self.trusted:
            return CommandResult(argv, None, "", "", 0.0, untrusted=True,
                                 error=f"{exe}: not run, it belongs to the tree under --root (give --trust-root to run it)")
        real_argv = [str(self.fs_path(exe))] + argv[1:]
        try:
            result = run_command(real_argv, timeout, env=dict(env) if env is not None else self.command_env(), cwd=cwd)
        except OSError as exc:
            return CommandResult(
                argv, None, "", "", time.monotonic() - start,
                error=os_message(argv[0], exc), foreign=exc.errno == errno.ENOEXEC,
            )
        result.argv = argv
        result.duration_s = time.monotonic() - start
        return result


def run_command(argv: Sequence[str], timeout: float, env: Optional[Mapping[str, str]] = None,
                cwd: Optional[str] = None) -> CommandResult:
    """The one runner: start ``argv`` with ``children.spawn`` (a session of its own, marked),
    read both outputs into capped buffers, wait at most ``timeout`` seconds, and
    ``children.finish`` it on every way out (a normal end, the timeout, an exception, Ctrl-C),
    so nothing it started outlives the call. The exit code is None at the timeout. Raises
    OSError only when the program cannot start. ``Host.run`` and the maintainer tools use it."""
    start = time.monotonic()
    proc = children.spawn(argv, dict(os.environ) if env is None else env, cwd=cwd)
    out, err = CappedBuffer(), CappedBuffer()
    pumps = [threading.Thread(target=_pump, args=(pipe, buf), daemon=True)
             for pipe, buf in ((proc.stdout, out), (proc.stderr, err))]
    for t in pumps:
        t.start()
    timed_out = False
    try:
        proc.wait(timeout=max(timeout, 0.01))
    except subprocess.TimeoutExpired:
        timed_out = True
    finally:
        children.finish(proc)
        for t in pumps:
            t.join(2.0)
    return CommandResult(list(argv), None if timed_out else proc.returncode, out.text(), err.text(),
                         time.monotonic() - start, timed_out=timed_out, cut=out.cut + err.cut)


def _pump(pipe, buf) -> None:
    try:
        while True:
            data = pipe.read1(1 << 16) if hasattr(pipe, "read1") else pipe.read(1 << 16)
            if not data:
                break
            buf.write(data)
    except (OSError, ValueError):
        pass
    finally:
        try:
            pipe.close()
        except OSError:
            pass


def split_path_list(value: Optional[str]) -> List[str]:
    """Entries of a PATH-like variable, without empties."""
    return [p for p in (value or "").split(":") if p]


__all__: Tuple[str, ...] = (
    "Host",
    "HostError",
    "ReadError",
    "PathStat",
    "User",
    "CommandResult",
    "parse_env_file",
    "split_path_list",
)
