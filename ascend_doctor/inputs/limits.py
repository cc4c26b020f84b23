"""Every limit of the input layer, in one place (the README's reliability table lists them).

A limit is reached by hostile or broken input, never by a real log, stats dump or snapshot
(the figures are far above what real files hold); what happens at each one is written
beside it and tested in tests/hardening.
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Limits:
    # numbers: a pid, device id or byte count never needs more digits; longer is malformed
    int_digits: int = 24
    float_chars: int = 64
    size_cap: int = 1 << 64  # bytes; a larger size saturates here (16 EiB, above any device)
    # JSON and printed dicts: real memory_stats / snapshots / manifests nest < 10 deep
    json_depth: int = 64
    # archives given to triage and oom --file
    member_bytes: int = 1 << 30  # decompressed bytes read of one member; the rest is cut
    archive_bytes: int = 4 << 30  # decompressed bytes of one archive; then it is cut
    archive_ratio: int = 500  # decompressed/compressed bytes beyond which a stream is a bomb (logs: 5-50)
    archive_seconds: float = 60.0  # wall time for one archive
    archive_members: int = 100_000
    # snapshots (pickle): bytes, memo entries, objects built
    snapshot_bytes: int = 512 << 20
    pickle_memo: int = 10_000_000
    pickle_objects: int = 50_000_000
    # text read from a child process (npu-smi, the target Python): head and tail kept
    output_bytes: int = 4 << 20
    # device lists (ASCEND_VISIBLE_DEVICES ranges)
    device_ids: int = 4096


LIMITS = Limits()

__all__ = ["Limits", "LIMITS"]
