"""Fuzz surfaces: every parser and loader of the doctor (and of runtime_sim's own CLI
inputs), with the one error each is allowed to raise for bad input, and seeds taken from
the real samples the other tests already use (their sources are listed beside them).

Shared by tests/hardening/test_fuzz.py (hypothesis, bounded example counts) and
bench/fuzz_throughput.py (inputs per second, and time for a doubled input).

An input is a seed with a few edits: text inserted, a digit run of 4,301 to 6,000 digits,
brackets nested thousands deep, a range deleted or repeated, the tail cut off. The
property checked for each surface: it returns, or raises only its allowed error.
"""
from __future__ import annotations

import io
import json
import pickle
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, List, Tuple, Type

HERE = Path(__file__).resolve().parent
TESTS = HERE.parent


def _lines(path: Path, limit: int = 400) -> List[str]:
    try:
        return [l for l in path.read_text(encoding="utf-8", errors="replace").splitlines() if l.strip()][:limit]
    except OSError:
        return []


def _files(pattern: str, where: Path) -> List[str]:
    return [p.read_text(encoding="utf-8", errors="replace") for p in sorted(where.glob(pattern))]


# ------------------------------------------------------------------ seeds
def log_lines() -> List[str]:
    out: List[str] = []
    for p in sorted((TESTS / "triage" / "data").glob("*.log")) + sorted((TESTS / "oom" / "data").glob("*.log")):
        out.extend(_lines(p, 150))
    return out or ["[ERROR] RUNTIME(216,):2026-07-24-02:51:31.963.577 [stars_engine.cc:1548]273 x"]


def npu_smi_texts() -> List[str]:
    return _files("*.txt", TESTS / "check" / "data" / "npu_smi")


def summary_texts() -> List[str]:
    return _files("summary_*.txt", TESTS / "oom" / "data")


def version_texts() -> List[str]:
    from tests.check import hosttree as ht

    return [ht.DRIVER_23_0_7, ht.FIRMWARE_7_1, ht.INSTALL_INFO] + [
        getattr(ht, n) for n in dir(ht) if n.startswith(("TOOLKIT_", "DRIVER_", "FIRMWARE_"))
        and isinstance(getattr(ht, n), str)]


def stats_texts() -> List[str]:
    flat = {f"{a}.{p}.{f}": i * 4096 for i, (a, p, f) in enumerate(
        (a, p, f) for a in ("allocated_bytes", "reserved_bytes", "active_bytes", "inactive_split_bytes")
        for p in ("all", "large_pool", "small_pool") for f in ("current", "peak", "allocated", "freed"))}
    flat.update(num_alloc_retries=3, num_ooms=1, max_split_size=-1)
    return [json.dumps(flat), "OrderedDict(%r)" % list(flat.items()), repr(flat)] + summary_texts()


def snapshot_blobs() -> List[bytes]:
    blocks = [{"size": 2 << 20, "state": "active_allocated", "requested_size": 2 << 20},
              {"size": 4 << 20, "state": "inactive"}]
    snap = {"segments": [{"device": 0, "address": 1 << 30, "total_size": 6 << 20, "segment_type": "large",
                          "stream": 0, "blocks": blocks}],
            "device_traces": [[{"action": "oom", "size": 8 << 20, "device_free": 1 << 20,
                                "frames": [{"filename": "train.py", "line": 9, "name": "step"}]}]]}
    return [pickle.dumps(snap, protocol=p) for p in (2, 4, 5)] + [json.dumps(snap).encode()]


def env_texts() -> List[str]:
    return ["export PATH=/usr/bin:/bin\nASCEND_RT_VISIBLE_DEVICES=0,1,3\nASCEND_VISIBLE_DEVICES=0-3\n"
            "ASCEND_TOOLKIT_HOME='/usr/local/Ascend/ascend-toolkit/latest'\n# comment\nUSER=root\n"]


def manifest_texts() -> List[str]:
    from ascend_doctor.opcheck.manifest import Manifest, OpContext, OpEntry

    m = Manifest(ops=[OpEntry("aten::mm", 3, "kernel", [OpContext(("aten::linear",), 2), OpContext((), 1)],
                              [["float32"]], [[[2, 3], [3, 4]]], ["forward"], ["CPU"])],
                 recorded={"torch": "2.1.0"}, tool={"name": "ascend-doctor"})
    return [m.dumps(), '{"schema": 1, "ops": ["aten::addmm", {"op": "npu::npu_rms_norm", "calls": 4}]}']


def scenario_texts() -> List[str]:
    import runtime_sim.scenarios as sc

    return [Path(sc.CATALOG_DIR, n + ".yaml").read_text() for n in sc.names()[:6]]


def alloc_conf_texts() -> List[str]:
    return ["expandable_segments:True", "max_split_size_mb:128,garbage_collection_threshold:0.6",
            "roundup_power2_divisions:[256:1,512:2,>:4]", "page_size:1g,segment_size_mb:40"]


def version_strings() -> List[str]:
    return ["8.0.RC1", "8.5.0", "24.1.rc2", "7.3.0.1.231", "2.4.0", "2.4.0.post2", "3.10", "2.1.0.post13"]


# ------------------------------------------------------------------ surfaces
@dataclass
class Surface:
    name: str
    seeds: Callable[[], list]
    run: Callable[[object], object]
    allowed: Tuple[Type[BaseException], ...]
    binary: bool = False


def _console(text: str) -> None:
    from ascend_doctor.parsers.cann_error import CannBlockParser
    from ascend_doctor.parsers.codes import find_codes
    from ascend_doctor.parsers.hccl import parse_hccl_line
    from ascend_doctor.parsers.prefixes import strip_prefixes
    from ascend_doctor.parsers.torch_npu_error import parse_torch_npu_line
    from ascend_doctor.parsers.traceback import TracebackParser

    cann, tbs = CannBlockParser(), TracebackParser()
    for n, line in enumerate(text.splitlines(), 1):
        body, _ = strip_prefixes(line)
        cann.feed(n, body)
        tbs.feed(n, body)
        parse_torch_npu_line(body)
        parse_hccl_line(body)
        find_codes(body)
    cann.close()
    tbs.close()


def _plog(text: str) -> None:
    from ascend_doctor.parsers.plog import device_of_dir, parse_plog_file_name, parse_plog_line

    for line in text.splitlines():
        rec = parse_plog_line(line)
        if rec is not None:
            rec.epoch()
    for part in text.replace("/", "\n").split():
        parse_plog_file_name(part)
        device_of_dir(part)


def _npu_smi(text: str) -> None:
    from ascend_doctor.parsers.npu_smi import parse_npu_smi_error, parse_npu_smi_info

    parse_npu_smi_error(text)
    info = parse_npu_smi_info(text)
    info.logical_devices()


def _version_files(text: str) -> None:
    from ascend_doctor.parsers import version_info as vi

    for fn in (vi.parse_driver_version_info, vi.parse_firmware_version_info, vi.parse_toolkit_install_info,
               vi.parse_install_info):
        try:
            fn(text)
        except vi.ParseError:
            pass


def _version_strings(text: str) -> None:
    from compat_matrix.errors import CompatError
    from compat_matrix.versions import parse_version

    for kind in ("cann", "driver", "firmware", "torch", "torch_npu", "python"):
        try:
            parse_version(text, kind)
        except CompatError:
            pass


def _oom(text: str) -> None:
    from ascend_doctor.memory.message import scan_text
    from ascend_doctor.parsers.oom_text import classify, parse_oom

    for line in text.splitlines() or [text]:
        rec = parse_oom(line)
        if rec is not None:
            classify(rec)
    scan_text(text)


def _stats(text: str) -> None:
    from ascend_doctor.memory.stats import parse_stats_text

    parse_stats_text(text)


def _snapshot(data: bytes) -> None:
    from ascend_doctor.memory.snapshot import _load_stream, snapshot_facts

    facts = snapshot_facts(_load_stream(io.BytesIO(data), "snapshot"))
    facts.largest_free(), facts.nonreleasable, facts.external_fragmentation()


def _env(text: str) -> None:
    from ascend_doctor.host import parse_env_file
    from ascend_doctor.parsers.visible_devices import parse_ascend_visible_devices, parse_rt_visible_devices

    env = parse_env_file(text)
    for value in env.values():
        parse_rt_visible_devices(value, 8)
        parse_ascend_visible_devices(value)


def _manifest(text: str) -> None:
    from ascend_doctor.inputs import load_json
    from ascend_doctor.opcheck.manifest import from_json

    from_json(load_json(text, what="manifest"))


def _scenario(text: str) -> None:
    from runtime_sim.scenarios import parse

    parse(text, "<fuzz>")


def _alloc_conf(text: str) -> None:
    from ascend_doctor.memory.advice import parse_conf
    from runtime_sim.allocator.config import parse_alloc_conf

    parse_conf(text)
    parse_alloc_conf(text)


def _printed(text: str) -> None:
    from ascend_doctor.inputs import parse_printed

    parse_printed(text)


def _json(text: str) -> None:
    from ascend_doctor.inputs import load_json

    load_json(text)


def _archive(data: bytes) -> None:
    from ascend_doctor.inputs.archive import Budget, TarReport, open_compressed, tar_entries

    report = TarReport(Budget())
    for _, member in tar_entries(io.BytesIO(data), report.budget, report):
        while member.read(1 << 16):
            pass
    stream = open_compressed(io.BytesIO(data))
    while stream.read(1 << 16):
        pass


def archive_blobs() -> List[bytes]:
    import gzip
    import tarfile

    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tf:
        for name, text in (("log/debug/plog/plog-1_20260724025100000.log", "\n".join(log_lines()[:40])),):
            data = text.encode()
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tf.addfile(info, io.BytesIO(data))
    return [buf.getvalue(), gzip.compress(b"x\n" * 1000)]


def _errors():
    from ascend_doctor.host import HostError
    from ascend_doctor.inputs import InputError
    from ascend_doctor.memory import MemoryInputError
    from ascend_doctor.opcheck.manifest import ManifestError
    from runtime_sim.allocator.errors import AllocConfError
    from runtime_sim.scenarios.schema import ScenarioError

    return HostError, InputError, MemoryInputError, ManifestError, AllocConfError, ScenarioError


def surfaces() -> List[Surface]:
    HostError, InputError, MemoryInputError, ManifestError, AllocConfError, ScenarioError = _errors()
    return [
        Surface("plog lines and names", log_lines, _plog, ()),
        Surface("error blocks, prefixes, codes", log_lines, _console, ()),
        Surface("npu-smi tables", npu_smi_texts, _npu_smi, (ValueError,)),
        Surface("version and install files", version_texts, _version_files, ()),
        Surface("version strings", version_strings, _version_strings, ()),
        Surface("OOM messages", log_lines, _oom, ()),
        Surface("memory stats and summaries", stats_texts, _stats, (MemoryInputError,)),
        Surface("snapshots", snapshot_blobs, _snapshot, (MemoryInputError,), binary=True),
        Surface("env files and visible devices", env_texts, _env, (HostError,)),
        Surface("opcheck manifests", manifest_texts, _manifest, (ManifestError, InputError)),
        Surface("runtime_sim scenario files", scenario_texts, _scenario, (ScenarioError,)),
        Surface("alloc-conf strings", alloc_conf_texts, _alloc_conf, (AllocConfError,)),
        Surface("printed dicts", stats_texts, _printed, (InputError,)),
        Surface("JSON", stats_texts, _json, (InputError,)),
        Surface("archives", archive_blobs, _archive, (), binary=True),
    ]


# ------------------------------------------------------------------ mutations
EDITS = ("insert", "digits", "nest", "delete", "repeat", "cut", "flip")


def mutate(seed, edits) -> object:
    """Apply ``edits`` [(where 0..1, kind, payload text, size)] to a str or bytes seed."""
    binary = isinstance(seed, (bytes, bytearray))
    data = bytearray(seed) if binary else seed
    for where, kind, payload, size in edits:
        n = len(data)
        at = int(where * n)
        if binary:
            chunk = payload.encode("utf-8", "surrogatepass") if isinstance(payload, str) else payload
        else:
            chunk = payload
        if kind == "insert":
            data = data[:at] + chunk + data[at:]
        elif kind == "digits":
            digits = "9" * (4301 + size * 17)  # past Python's 4,300-digit int() limit, up to 6,000
            data = data[:at] + (digits.encode() if binary else digits) + data[at:]
        elif kind == "nest":
            opener = "[" if size % 2 else "{"
            run = opener * (1 + size * 40)
            data = data[:at] + (run.encode() if binary else run) + data[at:]
        elif kind == "delete":
            data = data[:at] + data[at + size * 3:]
        elif kind == "repeat":
            piece = data[at:at + 1 + size]
            data = data[:at] + piece * min(1 + size, 50) + data[at:]
        elif kind == "cut":
            data = data[:at]
        elif kind == "flip" and n:
            at = min(at, n - 1)
            if binary:
                data[at] ^= (size % 255) + 1
            else:
                data = data[:at] + chr((ord(data[at]) + size + 1) % 0x2FFFF) + data[at + 1:]
    return bytes(data) if binary else data


def check(surface: Surface, value) -> None:
    """Run one input; only the surface's own input error may come out."""
    try:
        surface.run(value)
    except surface.allowed:
        pass
