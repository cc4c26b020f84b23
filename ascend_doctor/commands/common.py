"""What several verbs share: building the Host from --root/--env-file/--sim, output format choice."""
from __future__ import annotations

import atexit
import shutil
import tempfile
from pathlib import Path
from typing import Optional, Tuple

from ..errors import UsageError, did_you_mean
from ..inputs import os_message
from ..host import Host, HostError, parse_env_file
from ..inputs.openable import named_input

FORMATS = ("text", "json", "md")


def output_format(fmt: str, json_flag: bool) -> str:
    if json_flag:
        return "json"
    if fmt not in FORMATS:
        raise UsageError(f"--format {fmt}: choose one of {', '.join(FORMATS)}")
    return fmt


def check_timeout(timeout: float, maximum: float = 600.0, option: str = "--timeout") -> float:
    """Seconds a child may run: more than 0 (0 would kill it before it starts) and at most
    ``maximum``; NaN and infinity are refused too."""
    if not 0 < timeout <= maximum:  # NaN fails both comparisons
        raise UsageError(f"{option} {timeout:g}: give seconds above 0 and at most {maximum:g}")
    return timeout


def readable_input(path: Path, option: str) -> None:
    """Refuse what would block or mislead a read (a FIFO with no writer, a device, /proc),
    by the one rule every verb uses (``ascend_doctor.inputs.openable``); ``<(...)`` pipes are allowed."""
    named_input(str(path), option, hint=" (use <(...) to pass a stream)", open_it=False)


def load_env_file(path: Path) -> dict:
    readable_input(path, "--env-file")
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError as exc:
        raise UsageError(os_message(f"--env-file {path}", exc)) from None
    try:
        return parse_env_file(text, name=f"--env-file {path}")
    except HostError as exc:
        raise UsageError(str(exc)) from None


def build_sim(scenario: str) -> Tuple[Path, Path]:
    """Materialise a runtime_sim scenario in a temporary directory; returns (root, env file)."""
    try:
        import runtime_sim
    except ImportError:  # pragma: no cover - runtime_sim ships with the package
        raise UsageError("--sim needs the runtime_sim package, which is not installed") from None
    from runtime_sim.scenarios import names

    known = names()
    if scenario.replace("-", "_") not in known:
        raise UsageError(f"--sim {scenario}: unknown scenario; {did_you_mean(scenario.replace('-', '_'), known)}"
                         f"`python -m runtime_sim list` shows all {len(known)}")
    tmp = Path(tempfile.mkdtemp(prefix="ascend-sim-"))
    atexit.register(shutil.rmtree, tmp, True)
    from runtime_sim.host import BuildError

    try:
        built = runtime_sim.build(scenario, tmp)
    except (BuildError, KeyError, ValueError, LookupError) as exc:
        raise UsageError(f"--sim {scenario}: {str(exc).strip(chr(39))}") from None
    return Path(built.root), Path(built.env_file)


def target_python(host: Host, python: Optional[str], option: str = "--python") -> Optional[str]:
    """The interpreter the user named, as a judged-machine path, or a usage error when it is not
    a program at all. A bare name (``python3.10``) is looked up on the judged PATH; a relative
    path is taken from the current directory on the real machine. Refused without running
    anything: a missing path, a directory or other non-regular file, a file without execute
    permission, and a file that is neither an ELF binary nor a ``#!`` script (``/etc/passwd``).
    A program that is all of that but then does not answer as Python is a finding of the
    checks, not a usage error."""
    import os
    import stat

    if not python:
        return None
    if "/" not in python:
        found = host.which(python)
        if found is None:
            raise UsageError(f"{option} {python}: not found on the judged PATH")
        return found
    path = python
    if not path.startswith("/"):
        if not host.is_real:
            raise UsageError(f"{option} {python}: give the interpreter's absolute path inside --root")
        path = os.path.abspath(path)
    try:
        fs = host.fs_path(path)
        st = fs.stat()
    except OSError as exc:
        raise UsageError(os_message(f"{option} {python}", exc)) from None
    if not stat.S_ISREG(st.st_mode):
        kind = "is a directory" if stat.S_ISDIR(st.st_mode) else "not a regular file"
        raise UsageError(f"{option} {python}: {kind}, not a Python interpreter")
    if not st.st_mode & 0o111 or (host.is_real and not os.access(fs, os.X_OK)):
        raise UsageError(f"{option} {python}: not executable, not a Python interpreter")
    try:
        with open(fs, "rb") as fh:
            magic = fh.read(4)
    except OSError as exc:
        raise UsageError(os_message(f"{option} {python}", exc)) from None
    if magic != b"\x7fELF" and not magic.startswith(b"#!"):
        raise UsageError(f"{option} {python}: neither a program (ELF) nor a #! script, not a Python interpreter")
    return path


def make_host(root: Optional[Path], env_file: Optional[Path], sim: Optional[str] = None,
              trust_root: bool = False) -> Host:
    """The Host to judge. The programs of a --root tree run only with ``trust_root``; a --sim
    tree is built by the doctor itself and trusted."""
    if sim:
        if root or env_file:
            raise UsageError("--sim builds its own host: do not combine it with --root or --env-file")
        root, env_file = build_sim(sim)
        trust_root = True
    elif trust_root and not root:
        raise UsageError("--trust-root goes with --root DIR (the real machine's programs always run)")
    env = load_env_file(env_file) if env_file else None
    try:
        return Host(str(root) if root else "/", env=env, trusted=trust_root)
    except HostError as exc:
        raise UsageError(str(exc)) from None
