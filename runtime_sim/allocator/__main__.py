"""``python -m runtime_sim.allocator``: look at the simulated allocator by hand.

    traces                                  list the fragmentation traces
    replay TRACE [--conf S] [--profile P] [--non-torch-gib X] [--json]
                                            run a trace; print the outcome / OOM text
    parse CONF [--profile P] [--json]       parse a PYTORCH_NPU_ALLOC_CONF value
    profiles                                list the release profiles

Exit status: 0 success (a replay that ends in OOM is still a success), 1 when
``parse`` rejects the string (its text is printed as torch_npu prints it),
2 on usage errors.
"""
from __future__ import annotations

import argparse
import json
import math
import sys
from typing import List, Optional

from .config import parse_alloc_conf
from .constants import GiB
from .errors import AllocConfError
from .formatting import format_size
from .profiles import UnknownProfileError, get_profile, profile_names
from .traces import UnknownTraceError, list_traces, load_trace, replay


def _parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="python -m runtime_sim.allocator",
                                 description="Simulated torch_npu caching allocator.")
    sub = ap.add_subparsers(dest="cmd", required=True)
    sub.add_parser("traces", help="list the fragmentation traces")
    sub.add_parser("profiles", help="list the release profiles")
    rp = sub.add_parser("replay", help="replay a trace")
    rp.add_argument("trace")
    rp.add_argument("--conf", default="", help="PYTORCH_NPU_ALLOC_CONF value")
    rp.add_argument("--profile", default=None, help="torch_npu release, e.g. 7.2.0 or 26.0.0")
    rp.add_argument("--non-torch-gib", type=float, default=None)
    rp.add_argument("--json", action="store_true")
    pp = sub.add_parser("parse", help="parse a PYTORCH_NPU_ALLOC_CONF value")
    pp.add_argument("conf")
    pp.add_argument("--profile", default=None)
    pp.add_argument("--json", action="store_true")
    return ap


def main(argv: Optional[List[str]] = None) -> int:
    args = _parser().parse_args(argv)
    try:
        if args.cmd == "traces":
            for name in list_traces():
                print("%s\t%s" % (name, load_trace(name).title))
            return 0
        if args.cmd == "profiles":
            for name in profile_names():
                prof = get_profile(name)
                print("%s\t%s\t%s" % (name, prof.oom_exception, prof.source))
            return 0
        if args.cmd == "parse":
            try:
                conf = parse_alloc_conf(args.conf, args.profile)
            except AllocConfError as exc:
                print(exc.console_line())
                return 1
            data = {"schema": 1, "profile": conf.profile.name,
                    "max_split_size": conf.max_split_size,
                    "garbage_collection_threshold": conf.garbage_collection_threshold,
                    "expandable_segments": conf.expandable_segments,
                    "roundup_power2_divisions": conf.roundup_power2_divisions,
                    "warnings": conf.warnings}
            print(json.dumps(data, indent=2) if args.json else
                  "\n".join("%s: %s" % (k, v) for k, v in data.items() if k != "schema"))
            return 0
        # replay
        overrides = {}
        if args.non_torch_gib is not None:
            if not math.isfinite(args.non_torch_gib) or not 0 <= args.non_torch_gib <= 1 << 20:
                print("error: --non-torch-gib must be a number from 0 to %d" % (1 << 20), file=sys.stderr)
                return 2
            overrides["non_torch_bytes"] = int(args.non_torch_gib * GiB)
        trace = load_trace(args.trace, **overrides)
        try:
            alloc = trace.allocator(args.conf, profile=args.profile)
        except AllocConfError as exc:
            print("error: PYTORCH_NPU_ALLOC_CONF rejected: %s" % str(exc).splitlines()[0],
                  file=sys.stderr)
            return 2
        result = replay(trace, alloc)
        if args.json:
            out = dict(result.to_dict(), schema=1, profile=alloc.profile.name, conf=args.conf)
            print(json.dumps(out, indent=2))
            return 0
        print("%s (%s, profile %s, conf %r)" % (trace.name, trace.title, alloc.profile.name, args.conf))
        if result.completed:
            print("completed %d events; peak reserved %s, peak allocated %s, %d cache flushes"
                  % (result.events_run, format_size(result.peak_reserved),
                     format_size(result.peak_allocated), result.num_alloc_retries))
        else:
            print("OOM at event %d of %d: %s" % (result.failed_event, result.events_total,
                                                 result.failed_label))
            print(result.error.console_line())  # type: ignore[union-attr]
            print("reserved - allocated = %s (non-releasable %s), largest free block %s, %d cache flushes"
                  % (format_size(result.gap), format_size(result.inactive_split_bytes),
                     format_size(result.largest_free_block), result.num_alloc_retries))
        return 0
    except (UnknownTraceError, UnknownProfileError) as exc:
        print("error: %s" % exc, file=sys.stderr)
        return 2


if __name__ == "__main__":
    try:
        sys.exit(main())
    except BrokenPipeError:  # e.g. piped into `head`
        sys.stdout = None  # type: ignore[assignment]
        sys.exit(0)
