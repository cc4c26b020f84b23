"""The hostile and broken inputs of issue #10, one builder each, shared by the tests
(tests/hardening/test_hostile_inputs.py) and the benchmark (bench/hostile_inputs.py).

Each builder writes its input under a directory and returns a Case: the command line
(``ascend-doctor`` verb and arguments, or ``runtime_sim``), the exit codes that are right
for it, and a piece of text the output must hold (the one-line message or the finding).
Nothing here is copied from anywhere: the inputs are made to hit one limit each.
"""
from __future__ import annotations

import bz2
import gzip
import io
import json
import pickle
import struct
import tarfile
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Dict, List, Sequence, Tuple

BIG = "9" * 5000  # more digits than Python's int() takes (4,300) on 3.11+
PLOG_TS = "2026-07-24-02:51:31.963.577"
OOM_LINE = ("RuntimeError: NPU out of memory. Tried to allocate 22.00 MiB (NPU {dev}; 60.97 GiB total capacity; "
            "10.24 GiB already allocated; 10.24 GiB current active; {free} free; 10.65 GiB reserved in total by PyTorch)")


@dataclass
class Case:
    argv: List[str]  # after the program: ["oom", "--stats", path] or ["-m", "runtime_sim", ...]
    codes: Tuple[int, ...]  # exit codes that are right
    expect: str  # text the combined output must hold
    program: str = "doctor"  # doctor | python (argv is given to the interpreter)
    env: Dict[str, str] = None  # type: ignore[assignment]


def _w(path: Path, data) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(data, str):
        data = data.encode()
    path.write_bytes(data)
    return path


def _tar(entries: Sequence[Tuple[str, bytes]], mode: str = "w") -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode=mode, format=tarfile.PAX_FORMAT) as tf:
        for name, data in entries:
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tf.addfile(info, io.BytesIO(data))
    return buf.getvalue()


def _plog(pid: str = "216", body: str = "ProcLogicCqReport:Task run failed, retCode=0x2a.") -> str:
    return f"[ERROR] RUNTIME({pid},python):{PLOG_TS} [stars_engine.cc:1548]273 {body}\n"


# ---------------------------------------------------------------- numbers (4,300 digits)
def plog_pid_digits(d: Path) -> Case:
    f = _w(d / "plog" / "plog-216_20260724025100000.log", _plog(BIG) + _plog())
    return Case(["triage", str(f)], (0, 1), "plog")


def framework_prefix_digits(d: Path) -> Case:
    f = _w(d / "console.log", f"[rank{BIG}]:[W VariableFallbackKernel.cpp:51] Warning: CAUTION: The operator "
                               "'aten::isin.Tensor_Tensor_out' is not currently supported on the NPU backend and will "
                               "fall back to run on the CPU.\n"
                               f"(VllmWorkerProcess pid={BIG}) ERROR 03-05 07:15:39 x.py:1] "
                               f"[ERROR] 2024-06-28-13:05:55 (PID:{BIG}, Device:{BIG}, RankID:-{BIG}) ERR01005 OPS internal error\n")
    return Case(["triage", str(f)], (0, 1), "ERR01005")


def device_dir_and_plog_name_digits(d: Path) -> Case:
    # file names hold at most 255 bytes on disk, but a tar member name (PAX) is unbounded
    data = _tar([(f"log/debug/device-{BIG}/device-{BIG}_20260724025100000.log", _plog().encode()),
                 (f"log/debug/plog/plog-{BIG}_20260724025100000.log", _plog().encode())])
    f = _w(d / "logs.tar", data)
    return Case(["triage", str(f)], (0, 1), "logs.tar")


def oom_message_digits(d: Path) -> Case:
    return Case(["oom", OOM_LINE.format(dev=BIG, free="19.79 MiB")], (0, 1, 2), "out of memory")


def oom_size_overflow(d: Path) -> Case:
    line = OOM_LINE.format(dev="0", free="1" + "0" * 400 + " GiB").replace("22.00 MiB", "1" + "0" * 400 + ".00 GiB")
    return Case(["oom", line], (0, 1, 2), "out of memory")


def explain_digits(d: Path) -> Case:
    return Case(["explain", f"error code {BIG} and 0x{BIG} drvRetCode={BIG} hcclRet -> {BIG}"], (0, 1, 2), "")


def rt_visible_devices_digits(d: Path) -> Case:
    env = _w(d / "env", f"ASCEND_RT_VISIBLE_DEVICES={BIG}\nASCEND_DEVICE_ID={BIG}\nPATH=/usr/bin\n")
    return Case(["check", "--root", str(d), "--env-file", str(env), "--only", "env", "--json"], (0, 1), "ASCEND_RT_VISIBLE_DEVICES")


def visible_devices_range(d: Path) -> Case:
    # 35 bytes that used to expand into a list of 300 million ids
    env = _w(d / "env", "ASCEND_VISIBLE_DEVICES=0-300000000\nASCEND_RT_VISIBLE_DEVICES=0-300000000\n")
    return Case(["check", "--root", str(d), "--env-file", str(env), "--only", "env", "--json"], (0, 1), "goes past any device id")


def summary_digits(d: Path) -> Case:
    table = ("|                  PyTorch NPU memory summary, device ID %s                 |\n"
             "|            NPU OOMs: %s            |        npuMalloc retries: 1         |\n"
             "|        Metric         | Cur Usage  | Peak Usage | Tot Alloc  | Tot Freed  |\n"
             "| Allocated memory      |    %s MB |    4877 MB |   89299 MB |   88237 MB |\n"
             "| NPU reserved memory   |   12420 MB |   12420 MB |   16924 MB |    4504 MB |\n"
             "| Allocations           |    %s    |    4877    |   89299    |   88237    |\n") % (BIG, BIG, BIG, BIG)
    f = _w(d / "summary.txt", table)
    return Case(["oom", "--stats", str(f)], (0, 1, 2), "")


def long_run_lines(d: Path) -> Case:
    # 60 KB runs of word characters in front of the phrases the line parsers search for:
    # a regular expression that may start anywhere in such a run backtracks quadratically
    run = "9" * 60000
    lines = [run + " NPU function error: aclrtSynchronizeDevice, error code is 507035",
             "a:" * 30000 + " NPU error, error code is 5",
             "CUDA out of memory. Tried to allocate 2.00 MiB " + run + " allowed; ",
             "| " + run + " / " + run + " |"]
    f = _w(d / "console.log", "\n".join(lines * 20) + "\n")
    return Case(["triage", str(f)], (0, 1), "")


def long_run_oom_lines(d: Path) -> Case:
    f = _w(d / "worker.log", ("CUDA out of memory. Tried to allocate 2.00 MiB " + "9" * 60000 + " allowed; \n") * 20)
    return Case(["oom", "--file", str(f)], (0, 1, 2), "")


# ---------------------------------------------------------------- JSON, printed dicts
def stats_nan(d: Path) -> Case:
    f = _w(d / "stats.json", '{"allocated_bytes.all.current": NaN, "reserved_bytes.all.current": Infinity}')
    return Case(["oom", "--stats", str(f)], (2,), "NaN")


def stats_negative(d: Path) -> Case:
    f = _w(d / "stats.json", json.dumps({"allocated_bytes.all.current": -5 << 30, "reserved_bytes.all.current": -1}))
    return Case(["oom", "--stats", str(f), OOM_LINE.format(dev="0", free="19.79 MiB")], (2,), "never negative")


def stats_deep_json(d: Path) -> Case:
    f = _w(d / "stats.json", "[" * 100000 + "]" * 100000)
    return Case(["oom", "--stats", str(f)], (2,), "levels deep")


def stats_deep_printed(d: Path) -> Case:
    f = _w(d / "stats.txt", "OrderedDict([('a', " + "[" * 100000 + "]" * 100000 + ")])")
    return Case(["oom", "--stats", str(f)], (2,), "levels deep")


def stats_printed_8mb(d: Path) -> Case:
    pairs = ", ".join(f"('reserved_bytes.all.{i}', {i})" for i in range(250000))
    f = _w(d / "stats.txt", "OrderedDict([('allocated_bytes.all.current', 1), ('reserved_bytes.all.current', 2), " + pairs + "])")
    return Case(["oom", "--stats", str(f)], (0, 1), "")


def snapshot_deep_json(d: Path) -> Case:
    f = _w(d / "snap.json", '{"segments": ' + "[" * 100000 + "]" * 100000 + "}")
    return Case(["oom", "--snapshot", str(f)], (2,), "levels deep")


def manifest_deep_json(d: Path) -> Case:
    f = _w(d / "ops.json", '{"schema": 1, "ops": ' + "[" * 100000 + "]" * 100000 + "}")
    return Case(["opcheck", "compare", str(f), "--from", "2.1.0.post13", "--to", "2.4.0.post2"], (2,), "levels deep")


def manifest_wrong_types(d: Path) -> Case:
    f = _w(d / "ops.json", json.dumps({"schema": 1, "ops": [{"op": "aten::mm", "contexts": 5, "level": ["x"]}]}))
    return Case(["opcheck", "compare", str(f), "--from", "2.1.0.post13", "--to", "2.4.0.post2"], (2,), "ops[0]")


# ---------------------------------------------------------------- archives
def _log_tar(mode: str) -> bytes:
    body = (_plog() * 2000).encode()
    return _tar([("log/debug/plog/plog-216_20260724025100000.log", body),
                 ("log/debug/plog/plog-217_20260724025100000.log", body)], mode)


def truncated_tar_triage(d: Path) -> Case:
    data = _log_tar("w")
    f = _w(d / "logs.tar", data[: len(data) // 2 + 100])
    return Case(["triage", str(f)], (0, 1), "truncated")


def truncated_tgz_triage(d: Path) -> Case:
    data = _log_tar("w:gz")
    f = _w(d / "logs.tar.gz", data[: len(data) * 2 // 3])
    return Case(["triage", str(f)], (0, 1), "truncated")


def truncated_tgz_oom(d: Path) -> Case:
    body = (OOM_LINE.format(dev="0", free="19.79 MiB") + "\n") * 3000
    data = _tar([("worker.log", body.encode()), ("worker2.log", body.encode())], "w:gz")
    f = _w(d / "logs.tar.gz", data[: len(data) * 2 // 3])
    return Case(["oom", "--file", str(f)], (0, 1, 2), "")


def bz2_bomb(d: Path) -> Case:
    # zeros compress to almost nothing: a small .tar.bz2 stands for gigabytes
    comp = bz2.BZ2Compressor(9)
    header = _tar([("log/debug/plog/plog-1_20260724025100000.log", b"")])[:512]
    info = tarfile.TarInfo("log/debug/plog/plog-1_20260724025100000.log")
    info.size = (8 << 30) - 512
    header = info.tobuf(format=tarfile.USTAR_FORMAT)
    out = comp.compress(header)
    chunk = b"\0" * (8 << 20)
    for _ in range(16):  # 128 MB of zeros -> a few hundred bytes
        out += comp.compress(chunk)
    out += comp.flush()
    f = _w(d / "bomb.tar.bz2", out)
    return Case(["triage", str(f)], (0, 1, 2), "compression bomb")


def gzip_bomb_file(d: Path) -> Case:
    comp = gzip.compress(b"\n" * (64 << 20), 9)  # gzip's best ratio is about 1000:1
    f = _w(d / "console.log.gz", comp)
    return Case(["triage", str(f)], (0, 1, 2), "compression bomb")


# ---------------------------------------------------------------- pickles
def pickle_memo_index(d: Path) -> Case:
    # LONG_BINPUT 2**31: the unpickler would size its memo to that index
    f = _w(d / "snap.pickle", b"\x80\x04N" + b"r" + struct.pack("<I", 1 << 31) + b".")
    return Case(["oom", "--snapshot", str(f)], (2,), "memo index")


def pickle_memo_1gb(d: Path) -> Case:
    f = _w(d / "snap.pickle", b"\x80\x04N" + b"r" + struct.pack("<I", 1 << 26) + b".")
    return Case(["oom", "--snapshot", str(f)], (2,), "memo index")


def pickle_binbytes8(d: Path) -> Case:
    f = _w(d / "snap.pickle", b"\x80\x04\x8e" + struct.pack("<Q", 1 << 62) + b"abc.")
    return Case(["oom", "--snapshot", str(f)], (2,), "not a readable pickle")


def pickle_frame(d: Path) -> Case:
    f = _w(d / "snap.pickle", b"\x80\x04\x95" + struct.pack("<Q", 1 << 60) + b"N.")
    return Case(["oom", "--snapshot", str(f)], (2,), "frame")


def snapshot_shared_blocks(d: Path) -> Case:
    blocks = [{"size": 2 << 20, "state": "inactive"} for _ in range(2000)]
    segs = [{"device": 0, "address": i, "total_size": 4000 << 20, "segment_type": "large", "blocks": blocks}
            for i in range(20000)]  # one list object, pickled once, referenced 20,000 times
    f = _w(d / "snap.pickle", pickle.dumps({"segments": segs, "device_traces": []}, protocol=4))
    return Case(["oom", "--snapshot", str(f)], (0, 1), "")


def snapshot_shared_frames(d: Path) -> Case:
    frames = [{"filename": "/x/torch/a.py", "line": i, "name": "f"} for i in range(3000)]
    trace = [{"action": "oom", "size": 1 << 30, "device_free": 0, "frames": frames} for _ in range(3000)]
    segs = [{"device": 0, "address": 0, "total_size": 2 << 20, "segment_type": "large",
             "blocks": [{"size": 2 << 20, "state": "active_allocated", "requested_size": 2 << 20}]}]
    f = _w(d / "snap.pickle", pickle.dumps({"segments": segs, "device_traces": [trace] * 8}, protocol=4))
    return Case(["oom", "--snapshot", str(f)], (0, 1), "")


def snapshot_no_segments(d: Path) -> Case:
    f = _w(d / "snap.json", json.dumps({"segments": [], "device_traces": []}))
    return Case(["oom", "--snapshot", str(f)], (2,), "no segments")


# ---------------------------------------------------------------- runtime_sim's own CLI
def sim_binary_scenario(d: Path) -> Case:
    f = _w(d / "bad.yaml", bytes(range(256)) * 40)
    return Case(["-m", "runtime_sim", "build", str(f), str(d / "out")], (1, 2), "not UTF-8", program="python")


def sim_deep_scenario(d: Path) -> Case:
    f = _w(d / "deep.yaml", "name: deep\nhost: " + "[" * 50000 + "]" * 50000 + "\n")
    return Case(["-m", "runtime_sim", "build", str(f), str(d / "out")], (1, 2), "nested", program="python")


def sim_nan_argument(d: Path) -> Case:
    return Case(["-m", "runtime_sim.allocator", "replay", "training_varlen", "--non-torch-gib", "nan"], (2,),
                "--non-torch-gib", program="python")


CASES: Dict[str, Callable[[Path], Case]] = {f.__name__: f for f in (
    plog_pid_digits, framework_prefix_digits, device_dir_and_plog_name_digits, oom_message_digits,
    oom_size_overflow, explain_digits, long_run_lines, long_run_oom_lines, rt_visible_devices_digits, visible_devices_range, summary_digits,
    stats_nan, stats_negative, stats_deep_json, stats_deep_printed, stats_printed_8mb, snapshot_deep_json,
    manifest_deep_json, manifest_wrong_types, truncated_tar_triage, truncated_tgz_triage, truncated_tgz_oom,
    bz2_bomb, gzip_bomb_file, pickle_memo_index, pickle_memo_1gb, pickle_binbytes8, pickle_frame,
    snapshot_shared_blocks, snapshot_shared_frames, snapshot_no_segments, sim_binary_scenario,
    sim_deep_scenario, sim_nan_argument,
)}
