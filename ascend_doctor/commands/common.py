"""What several verbs share: building the Host from --root/--env-file/--sim, output format choice."""
from __future__ import annotations

import atexit
import shutil
import tempfile
from pathlib import Path
from typing import Optional, Tuple

from ..errors import UsageError, os_message
from ..host import Host, HostError, parse_env_file

FORMATS = ("text", "json", "md")


def output_format(fmt: str, json_flag: bool) -> str:
    if json_flag:
        return "json"
    if fmt not in FORMATS:
        raise UsageError(f"--format {fmt}: choose one of {', '.join(FORMATS)}")
    return fmt


def readable_input(path: Path, option: str) -> None:
    """Refuse what would block or mislead a read (a FIFO with no writer, a device, /proc),
    by the one rule every verb uses (``ascend_doctor.openable``); ``<(...)`` pipes are allowed."""
    import stat

    from ..openable import refusal

    try:
        st = path.stat()
    except OSError as exc:
        raise UsageError(os_message(f"{option} {path}", exc)) from None
    if stat.S_ISDIR(st.st_mode):
        raise UsageError(f"{option} {path}: is a directory")
    reason = refusal(str(path), st, allow_pipe=True)
    if reason is not None:
        raise UsageError(f"{option} {path}: {reason} (use <(...) to pass a stream)")


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
        raise UsageError(f"--sim {scenario}: unknown scenario; choose one of {', '.join(known)}")
    tmp = Path(tempfile.mkdtemp(prefix="ascend-sim-"))
    atexit.register(shutil.rmtree, tmp, True)
    from runtime_sim.host import BuildError

    try:
        built = runtime_sim.build(scenario, tmp)
    except (BuildError, KeyError, ValueError, LookupError) as exc:
        raise UsageError(f"--sim {scenario}: {str(exc).strip(chr(39))}") from None
    return Path(built.root), Path(built.env_file)


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
