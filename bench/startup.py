"""How fast a one-line question is answered: `ascend-doctor triage` of a one-line paste and
`ascend-doctor explain CODE`, as whole commands, next to `python -c pass` in the same run.

The machine is noisy, so each command runs interleaved with the others, N times, and the
medians are printed with the ratio to the interpreter's own start-up. The knowledge base
loads from its compiled form (kb/data/compiled.jsonl, compiled-codes.jsonl.gz); `--yaml` times
the YAML path for comparison by pointing the loader at a copy of the data without the compiled files.

    python bench/startup.py [--runs 15] [--yaml]
"""
from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
from pathlib import Path
from typing import Dict, List

sys.path.insert(0, str(Path(__file__).resolve().parent))
from wall import wall  # noqa: E402

LINE = "ImportError: libhccl.so: cannot open shared object file: No such file or directory\n"


def run_once(argv: List[str], env: Dict[str, str]) -> float:
    return wall(argv, env, limit=120)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=15)
    ap.add_argument("--yaml", action="store_true", help="also time the loader reading the YAML (no compiled form)")
    args = ap.parse_args()
    exe = shutil.which("ascend-doctor") or ""
    cli = [exe] if exe else [sys.executable, "-m", "ascend_doctor"]
    with tempfile.TemporaryDirectory() as tmp:
        paste = Path(tmp) / "paste.log"
        paste.write_text(LINE, encoding="utf-8")
        # as after `pip install`: byte code compiled once, then used (some shells export
        # PYTHONDONTWRITEBYTECODE, which would make every run compile every module again)
        import compileall

        import ascend_doctor

        compileall.compile_dir(str(Path(ascend_doctor.__file__).parent), quiet=1)
        env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
        commands = {
            "python -c pass": ([sys.executable, "-c", "pass"], env),
            "ascend-doctor triage <one-line paste>": (cli + ["triage", str(paste)], env),
            "ascend-doctor explain EZ9999": (cli + ["explain", "EZ9999"], env),
        }
        if args.yaml:
            from ascend_doctor.kb import loader

            data = Path(tmp) / "kbdata"
            shutil.copytree(loader.DATA_DIR, data)
            for name in (loader.COMPILED, loader.COMPILED_CODES):
                (data / name).unlink()
            yaml_env = dict(env, ASCEND_DOCTOR_KB_DIR=str(data))
            commands["ascend-doctor triage <one-line paste> (YAML, not compiled)"] = (cli + ["triage", str(paste)], yaml_env)
        times: Dict[str, List[float]] = {name: [] for name in commands}
        for name, (argv, e) in commands.items():  # warm the file cache once
            run_once(argv, e)
        for _ in range(args.runs):
            for name, (argv, e) in commands.items():
                times[name].append(run_once(argv, e))
    base = statistics.median(times["python -c pass"])
    print(f"{args.runs} interleaved runs each, medians (wall clock):")
    for name, ts in times.items():
        med = statistics.median(ts)
        ratio = "" if name == "python -c pass" else f"   {med / base:5.1f}x python -c pass"
        print(f"  {name:<62} {med * 1000:7.0f} ms{ratio}")


if __name__ == "__main__":
    main()
