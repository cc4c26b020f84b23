"""Every npu-smi sample in the reference parses (samples and URLs: data/npu_smi/SOURCES.md)."""
from __future__ import annotations

from pathlib import Path

import pytest

from ascend_doctor.parsers.npu_smi import parse_npu_smi_error, parse_npu_smi_info

DATA = Path(__file__).parent / "data" / "npu_smi"


def sample(name: str) -> str:
    return (DATA / name).read_text()


# file -> (dialect, tool version, driver version, chips, first chip name, processes, idle NPUs)
EXPECTED = {
    "a2_910b3_driver25.2.0_container.txt": ("a2", "25.2.0", "25.2.0", 8, "910B3", 1, 7),
    "a2_910b3_driver23.0.7_busy.txt": ("a2", "23.0.7", "23.0.7", 8, "910B3", 4, 4),
    "a3_ascend910_driver25.2.1.txt": ("a3", "25.2.1", "25.2.1", 16, "Ascend910", 0, 8),
    "910prob_driver24.1.0.txt": ("a2", "24.1.0", "24.1.0", 8, "910ProB", 0, 8),
    "310p3_duo_driver25.2.0_excerpt.txt": ("310", "25.2.0", "25.2.0", 2, "310P3", 0, 0),
    "310p3_pro_tool22.0.0_driver22.0.2.txt": ("310", "22.0.0", "22.0.2", 1, "310P3", 0, 0),
    "310b1_driver23.0.rc3.txt": ("310", "23.0.rc3", "23.0.rc3", 1, "310B1", 0, 0),
    "310b_driver24.1.rc3.txt": ("310", "24.1.rc3", "24.1.rc3", 1, "310B", 0, 0),
    "a3_driver26.0.rc2_devices_excerpt.txt": ("a3", "26.0.rc2", "26.0.rc2", 1, "Ascend910", 0, 0),
    "950_template.txt": ("950", "x.x.x", "x.x.x", 1, "xxx", 0, 1),
}


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_sample_parses(name: str) -> None:
    dialect, tool, driver, chips, first, procs, idle = EXPECTED[name]
    info = parse_npu_smi_info(sample(name))
    assert (info.dialect, info.tool_version, info.driver_version) == (dialect, tool, driver)
    assert len(info.chips) == chips
    assert info.chips[0].name == first
    assert all(c.health == "OK" for c in info.chips)
    assert len(info.processes) == procs
    assert len(info.idle_npus) == idle


def test_every_sample_file_is_covered() -> None:
    files = {p.name for p in DATA.glob("*.txt")} - {"a3_driver26.0.rc2_processes_excerpt.txt"}
    assert files == set(EXPECTED)


def test_a2_values() -> None:
    info = parse_npu_smi_info(sample("a2_910b3_driver25.2.0_container.txt"))
    c2 = info.chips[2]
    assert (c2.npu_id, c2.chip_id, c2.bus_id) == (2, 0, "0000:81:00.0")
    assert c2.hbm_mb == (41052, 65536)  # "41052/ 65536": no space before the slash
    assert c2.memory_mb == (0, 0) and c2.power_w == 92.3 and c2.temp_c == 32
    assert info.processes[0].pid == 1333928 and info.processes[0].memory_mb == 37709 and info.processes[0].name == ""


def test_a3_two_chips_per_card_numbered_by_phy_id() -> None:
    info = parse_npu_smi_info(sample("a3_ascend910_driver25.2.1.txt"))
    assert info.npu_ids == list(range(8))
    second = info.chips[1]
    assert (second.npu_id, second.chip_id, second.phy_id, second.power_w) == (0, 1, 1, None)
    assert [c.phy_id for c in info.logical_devices()] == list(range(16))


def test_910prob_has_ddr_and_hbm() -> None:
    c = parse_npu_smi_info(sample("910prob_driver24.1.0.txt")).chips[0]
    assert c.memory_mb == (2387, 13553) and c.hbm_mb == (18, 32768)
    assert c.device_memory_mb == (18, 32768)


def test_310_has_no_hbm_column() -> None:
    duo = parse_npu_smi_info(sample("310p3_duo_driver25.2.0_excerpt.txt"))
    assert [(c.npu_id, c.chip_id, c.phy_id) for c in duo.chips] == [(2, 0, 0), (2, 1, 1)]
    assert duo.chips[0].hbm_mb is None and duo.chips[0].device_memory_mb == (1529, 44280)
    assert duo.chips[0].power_w is None  # "NA" on 310P
    b = parse_npu_smi_info(sample("310b1_driver23.0.rc3.txt")).chips[0]
    assert b.bus_id is None and b.hugepages == (15, 15)


def test_container_pid_column() -> None:
    info = parse_npu_smi_info(sample("a3_driver26.0.rc2_processes_excerpt.txt"))
    p = info.processes[0]
    assert (p.npu_id, p.chip_id, p.pid, p.name, p.memory_mb, p.container_pid) == (0, 0, 632268, "python3.1", 197, None)
    assert info.idle_npus == [1]


def test_950_layout() -> None:
    c = parse_npu_smi_info(sample("950_template.txt")).chips[0]
    assert (c.npu_id, c.bus_id, c.hbm_mb, c.power_w) == (0, "0000:91:00.0", (4439, 86016), 204.4)


def test_driver_incomplete_warning_is_seen() -> None:
    # the line npu-smi appends (npu_info_print.c in github.com/verylucky01/driver)
    text = sample("310b1_driver23.0.rc3.txt") + "[WARNING]The driver package may not be completely installed, which may cause function abnormal. Please reinstall it.\n"
    assert parse_npu_smi_info(text).driver_incomplete_warning


def test_not_a_table() -> None:
    with pytest.raises(ValueError):
        parse_npu_smi_info("dcmi module initialize failed. ret is -8005\n")


@pytest.mark.parametrize(
    "text, kind, code",
    [
        # https://github.com/Project-HAMi/ascend-device-plugin/issues/66
        ("DrvMngGetConsoleLogLevel failed. (ret=4)\ndcmi module initialize failed. ret is -8005\n", "dcmi_init", -8005),
        # https://github.com/Project-HAMi/HAMi/issues/1696
        ("DrvMngGetConsoleLogLevel failed. (g_conLogLevel=3)\ndcmi module initialize failed. ret is -8005", "dcmi_init", -8005),
        # format of npu_smi.c in https://github.com/verylucky01/driver
        ("Failed to execute npu-smi info. ret is -8020.", "exec_failed", -8020),
        # https://github.com/vllm-project/vllm-ascend/issues/13399
        ("DrvMngGetConsoleLogLevel failed. (ret=4)", "console_log_level", 4),
        # https://github.com/vllm-project/vllm-ascend/issues/6264
        ("bash: npu-smi: command not found", "not_found", None),
    ],
)
def test_errors(text: str, kind: str, code) -> None:
    err = parse_npu_smi_error(text)
    assert err is not None and err.kind == kind and err.code == code
