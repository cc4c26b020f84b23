"""python -m runtime_sim list | build SCENARIO DIR | run SCENARIO DIR | show SCENARIO

  list    one scenario a line: name, kind (host | runtime), summary
  build   write the scenario's simulated host under DIR (an empty or new directory)
  run     build, then run the scenario's workload: CANN logs in the host user's
          ~/ascend/log and the console capture in DIR/console.log
  show    the scenario's ground truth and what npu-smi prints on its host

Exit status: 0 done, 1 the scenario or its workload failed to build or run, 2 usage error.
"""
from __future__ import annotations

import argparse
import sys
from typing import List, Optional

USAGE_EXIT = 2


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m runtime_sim",
        description="A simulated Ascend host and runtime that reproduces real failures.",
    )
    sub = p.add_subparsers(dest="command", metavar="{list,build,run,show}")
    sub.add_parser("list", help="list the scenarios")
    for name, text in (("build", "write a scenario's host"), ("run", "write a scenario's host and run its workload")):
        cmd = sub.add_parser(name, help=text)
        cmd.add_argument("scenario", help="scenario name (see list) or path to a scenario .yaml")
        cmd.add_argument("dir", help="directory to build in (empty or new)")
    show = sub.add_parser("show", help="ground truth and npu-smi output of a scenario")
    show.add_argument("scenario")
    return p


def main(argv: Optional[List[str]] = None) -> int:
    parser = _parser()
    args_list = sys.argv[1:] if argv is None else argv
    try:
        args = parser.parse_args(args_list)
    except SystemExit as exc:  # argparse already printed a one-line usage error
        return USAGE_EXIT if exc.code else 0
    if args.command is None:
        parser.print_usage(sys.stderr)
        sys.stderr.write("python -m runtime_sim: error: give a command (list, build, run, show)\n")
        return USAGE_EXIT

    from runtime_sim.host import BuildError
    from runtime_sim.scenarios import ScenarioError

    try:
        return _dispatch(args)
    except ScenarioError as exc:
        sys.stderr.write(f"python -m runtime_sim: {exc}\n")
        return USAGE_EXIT if str(exc).startswith("unknown scenario") else 1
    except BuildError as exc:
        sys.stderr.write(f"python -m runtime_sim: {exc}\n")
        return 1


def _dispatch(args: argparse.Namespace) -> int:
    from runtime_sim import scenarios

    if args.command == "list":
        for s in scenarios.load_all():
            kind = "runtime" if s.workload else "host"
            sys.stdout.write(f"{s.name:<30} {kind:<8} {s.summary}\n")
        return 0
    if args.command == "build":
        from runtime_sim.host import build, describe

        host = build(args.scenario, args.dir)
        sys.stdout.write(describe(host) + "\n")
        return 0
    if args.command == "run":
        from runtime_sim.host import describe, run

        result = run(args.scenario, args.dir)
        sys.stdout.write(describe(result.host) + "\n")
        sys.stdout.write(f"  logs      {result.log_dir}\n  console   {result.console_file}\n")
        sys.stdout.write("  triage    ascend-doctor triage " + f"{result.log_dir} {result.console_file}\n")
        facts = getattr(result.workload, "facts", None) or {}
        if facts.get("profile_dir"):
            sys.stdout.write(f"  profile   ascend-doctor profile {facts['profile_dir']}\n")
        if facts.get("profile_after_upgrade"):
            sys.stdout.write(f"  compare   ascend-doctor profile compare {facts['profile_dir']} {facts['profile_after_upgrade']}\n")
        return 0
    if args.command == "show":
        return _show(args.scenario)
    return USAGE_EXIT


def _show(name: str) -> int:
    from runtime_sim.host.driver import npu_smi_preview
    from runtime_sim.host.plan import make_plan
    from runtime_sim.scenarios import load

    s = load(name)
    out = [f"{s.name}: {s.summary}"]
    if s.expect.check:
        out.append("check fails: " + ", ".join(f"{f.id} ({f.category}, {f.status})" for f in s.expect.check))
    else:
        out.append("check fails: nothing")
    if s.expect.triage_category:
        rank = f", first failing rank {s.expect.first_failing_rank}" if s.expect.first_failing_rank is not None else ""
        out.append(f"triage: {s.expect.triage_category}{rank}")
    if s.expect.oom_verdict:
        out.append(f"oom: {s.expect.oom_verdict}")
    for src in s.sources:
        out.append(f"source: {src}")
    preview = npu_smi_preview(make_plan(s))
    if preview:
        out.append("npu-smi info:")
        out.append(preview.rstrip("\n"))
    sys.stdout.write("\n".join(out) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
