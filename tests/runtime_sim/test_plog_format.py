"""The plog writer: line shapes against real lines, timestamps, layout, rotation, settings."""
from __future__ import annotations

import random
import re
from pathlib import Path

import pytest

from runtime_sim.plog import LogSettings, Noise, ProcessLog, line as L, timefmt
from runtime_sim.plog.noise import templates

try:
    from plog_samples import MODULE_STYLE, REAL_LINES, body_style_ok, parse
except ImportError:  # tests/runtime_sim became a package
    from tests.runtime_sim.plog_samples import MODULE_STYLE, REAL_LINES, body_style_ok, parse

T0 = timefmt.parse_start("2025-10-24 11:16:52.724374")


@pytest.mark.parametrize("source,text", REAL_LINES)
def test_real_lines_fit_the_shared_regexes(source, text):
    m = parse(text)
    assert body_style_ok(m.group("module"), m.group("body")), source


def _written(tmp_path: Path, **kw) -> ProcessLog:
    return ProcessLog(tmp_path, 2111667, "all_reduce_test", LogSettings(global_level=0, **kw))


@pytest.mark.parametrize("module,body", [
    ("RUNTIME", L.tid_func(3154, "ProcLogicCqReport", "Task run failed, device_id=7")),
    ("RUNTIME", L.tid_func(58, "CreateRuntimeImpl", " Open libruntime_v100.so success", space=True)),
    ("GE", L.tid_func(947062, "LoadLib", " ErrorNo: 1343225860(Internal errors)")),
    ("HCCL", L.hccl(2111667, "[TaskExecStage][Timeout][Host]Task run failed, base information is x")),
    ("TDT", L.tdt("OpenProcess", 947062, "[ProcessModeManager] enter into open process deviceId[0]")),
    ("PROFILING", L.profiling(947062, "MsprofCtrlCallback called, type: 255", arrow=True)),
    ("PROFILING", L.profiling(58, "Module[45] register callback of ctrl handle.")),
    ("DRV", L.drv(378937, 378953, "devmm", "devmm_setup_device", "DrvMemDeviceOpen. (devid=0)")),
    ("HCCP", L.hccp(2988, "rs_ssl_init", 1529, "TLS SWITCH (1)")),
    ("ATRACE", L.atrace(173913, "destroy object FE_Global_Trace, exitSave(false).")),
    ("APP", L.app_pta(173913, "build/CMakeFiles/torch_npu.dir/compiler_depend.ts:MakeSureQueueEmpty:343", '"x"')),
])
def test_written_lines_have_the_real_shape(tmp_path, module, body):
    log = _written(tmp_path)
    log.debug("ERROR", module, "file.cc:12", body, T0)
    log.close()
    text = log.paths[0].read_text()
    m = parse(text)
    assert m.group("module") == module and m.group("pid") == "2111667"
    assert m.group("file") == "file.cc" and m.group("line") == "12"
    assert body_style_ok(module, m.group("body"))
    # the same separators as the real sample of that module: "[LEVEL] MOD(pid,name):ts [f:l]body"
    assert text.startswith("[ERROR] %s(2111667,all_reduce_test):2025-10-24-11:16:52.724.374 [file.cc:12]" % module)


def test_tight_variant_matches_the_hccl_doc_sample(tmp_path):
    log = _written(tmp_path)
    log.debug("ERROR", "HCCL", "task_exception_handler.cc:610", L.hccl_tight(835695, "[TaskExecStage]x"), T0,
              tight=True)
    log.close()
    text = log.paths[0].read_text().rstrip("\n")
    real = [t for _, t in REAL_LINES if t.startswith("[ERROR]HCCL(")][0]
    assert re.sub(r"\(.*", "", text) == re.sub(r"\(.*", "", real)  # "[ERROR]HCCL" glued
    assert parse(text).group("body").startswith("[835695][TaskExecStage]")


def test_timestamps():
    assert timefmt.plog_ts(timefmt.parse_start("2024-07-04 14:14:25.036721")) == "2024-07-04-14:14:25.036.721"
    assert timefmt.file_ts(timefmt.parse_start("2022-06-17 23:40:19.449000")) == "20220617234019449"
    assert timefmt.banner_ts(timefmt.parse_start("2025-04-29 18:46:11.9")) == "2025-04-29-18:46:11"
    # "Arrival Time:[Thu Oct 23 17:25:58 2025]" (hicann/hccl task_exec_stage.md)
    assert timefmt.ctime_ts(timefmt.parse_start("2025-10-23 17:25:58")) == "Thu Oct 23 17:25:58 2025"
    # "[W730 06:16:22.869118032 ..." (vllm-project/vllm-ascend#2105), "[W107 21:14:04.201960667"
    assert timefmt.glog_ts(timefmt.parse_start("2025-07-30 06:16:22.869118"), 32) == "730 06:16:22.869118032"
    assert timefmt.glog_ts(timefmt.parse_start("2026-01-07 21:14:04.201960"), 667).startswith("107 21:14:04")
    stamper = timefmt.PlogTimestamper()
    for us in (0, 999_999, 1_000_000, 59_999_999, 3_600_000_123):
        assert stamper(T0 + us) == timefmt.plog_ts(T0 + us)


def test_layout_and_names(tmp_path):
    log = _written(tmp_path)
    log.debug("ERROR", "RUNTIME", "a.cc:1", L.tid_func(1, "F", "x"), T0)
    log.run("INFO", "HCCL", "b.cc:2", L.hccl(1, "y"), T0 + 5)
    log.device("run", 3, "INFO", "HCCP", 2988, "hccp_service.bin", "rs_ssl.c:1529",
               L.hccp(2988, "rs_ssl_init", 1529, "TLS SWITCH (1)"), T0 + 9)
    log.close()
    rel = sorted(str(p.relative_to(tmp_path)) for p in log.paths)
    assert rel == ["debug/plog/plog-2111667_20251024111652724.log",
                   "run/device-3/device-2111667_20251024111652724.log",
                   "run/plog/plog-2111667_20251024111652724.log"]
    dev_line = (tmp_path / rel[1]).read_text()
    assert parse(dev_line).group("pid") == "2988"  # device-side pid inside, host pid in the name


def test_rotation_caps_files_and_prunes_old_ones(tmp_path):
    log = ProcessLog(tmp_path, 7, "python3", LogSettings(global_level=0, file_num=3, file_max_bytes=64 * 1024))
    body = L.tid_func(7, "Fill", "x" * 150)
    for i in range(3000):  # ~600 kB through 64 kB files: rotates ~9 times, keeps 3
        log.debug("INFO", "RUNTIME", "fill.cc:1", body, T0 + i * 1000)
    log.close()
    paths = log.paths
    assert len(paths) == 3
    names = [p.name for p in paths]
    assert all(re.fullmatch(r"plog-7_\d{17}\.log", n) for n in names)
    assert all(p.stat().st_size <= 64 * 1024 for p in paths)
    assert len(set(names)) == 3
    # the newest file holds the last line; the oldest were aged out
    assert paths[-1].read_text().rstrip("\n").endswith("x" * 150)
    assert log.bytes_written > 9 * 64 * 1024


def test_settings_follow_the_runtime_rules():
    s = LogSettings.from_env({"ASCEND_GLOBAL_LOG_LEVEL": "9"})
    assert s.global_level == 3  # invalid -> default ERROR
    s = LogSettings.from_env({"ASCEND_GLOBAL_LOG_LEVEL": "1", "ASCEND_MODULE_LOG_LEVEL": "HCCL=0:RUNTIME=3"})
    assert s.debug_enabled("DEBUG", "HCCL") and not s.debug_enabled("INFO", "RUNTIME")
    assert s.debug_enabled("INFO", "GE")
    s = LogSettings.from_env({"ASCEND_MODULE_LOG_LEVEL": "HCCL=0:NOPE=1"})
    assert s.module_levels == {}  # one unknown module disables the whole setting
    assert LogSettings.from_env({"ASCEND_HOST_LOG_FILE_NUM": "0"}).file_num == 10
    assert LogSettings.from_env({"ASCEND_HOST_LOG_FILE_NUM": "1000"}).file_num == 1000
    default = LogSettings.from_env({})
    assert default.debug_enabled("ERROR", "RUNTIME") and not default.debug_enabled("WARNING", "RUNTIME")
    assert default.debug_enabled("EVENT", "GE")
    assert not LogSettings.from_env({"ASCEND_GLOBAL_EVENT_ENABLE": "0"}).debug_enabled("EVENT", "GE")


def test_noise_templates_are_real_shapes_with_sources(tmp_path):
    for row in templates():
        assert row["source"].startswith(("https://github.com/", "hicann/")), row["id"]
        assert row["module"] in MODULE_STYLE or row["module"] in ("TUNE",), row["id"]
    log = _written(tmp_path)
    noise = Noise(log, random.Random(1), 2, [2111667, 2111700])
    ts = noise.start(T0)
    ts = noise.open(ts)
    noise.steady(ts, ts + 5_000_000, 2000)
    noise.exit(ts + 5_000_000)
    log.close()
    count = 0
    for path in log.paths:
        prev = ""
        for text in path.read_text().splitlines():
            m = parse(text)
            assert body_style_ok(m.group("module"), m.group("body")), text
            assert m.group("ts") >= prev  # each file is in time order
            prev = m.group("ts")
            count += 1
    assert count > 100


def test_same_seed_same_bytes(tmp_path):
    def write(root: Path) -> bytes:
        log = _written(root)
        noise = Noise(log, random.Random(42), 0)
        noise.steady(T0, T0 + 2_000_000, 500)
        log.close()
        return b"".join(p.read_bytes() for p in log.paths)

    assert write(tmp_path / "a") == write(tmp_path / "b")
    assert write(tmp_path / "a") != b""


def test_writing_streams_in_constant_memory(tmp_path):
    import tracemalloc

    log = ProcessLog(tmp_path, 9, "python3", LogSettings(global_level=1, file_num=1000))
    noise = Noise(log, random.Random(3), 0)
    tracemalloc.start()
    noise.steady(T0, T0 + 10 ** 12, 100, max_lines=15000)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    log.close()
    assert log.bytes_written > 2 * 2 ** 20
    assert peak < 1.5 * 2 ** 20  # a flush buffer, not the file
