"""npu-smi as the simulated host prints it, against real captures (URLs in the data files)."""
from __future__ import annotations

import re
import subprocess
from pathlib import Path
from typing import List, Tuple

import pytest

from runtime_sim.host.npu_smi import (
    SmiChip,
    SmiProcess,
    dcmi_failure,
    render_board,
    render_info,
    render_list,
    render_mapping,
)

DATA = Path(__file__).parent / "data" / "npu_smi"
PAIR = r"(\d+)\s*/ (\d+)"


def _real(name: str) -> Tuple[str, str]:
    text = (DATA / name).read_text(encoding="utf-8")
    source = text.splitlines()[0]
    assert source.startswith("# source: https://"), f"{name} must start with its source URL"
    return source, "\n".join(line for line in text.splitlines() if not line.startswith("#")) + "\n"


def _values(text: str, dialect: str):
    """Read the device and process values back out of a captured table."""
    lines = text.splitlines()
    tool, driver = re.search(r"npu-smi (\S+)\s+Version: (\S+)", lines[1]).groups()
    chips: List[SmiChip] = []
    procs: List[SmiProcess] = []
    in_procs = False
    i = 5
    while i < len(lines):
        line = lines[i]
        if "Process id" in line:
            in_procs = True
        head = re.match(r"\| (\d+)\s+(\S+)\s+\| (\S+)\s+\| (\S+)\s+(\d+)\s+" + PAIR, line)
        if head and not in_procs:
            nxt = lines[i + 1]
            if dialect == "a2":
                m = re.match(r"\| (\d+)\s+\| (\S+)\s+\| (\d+)\s+" + PAIR + r"\s+" + PAIR, nxt)
                chip, logic, bus, aicore = int(m[1]), int(head[1]), m[2], int(m[3])
                memory, hbm = (int(m[4]), int(m[5])), (int(m[6]), int(m[7]))
            else:
                m = re.match(r"\| (\d+)\s+(\d+)\s+\| (\S+)\s+\| (\d+)\s+" + PAIR, nxt)
                chip, logic, bus, aicore = int(m[1]), int(m[2]), m[3], int(m[4])
                memory, hbm = (int(m[5]), int(m[6])), None
            chips.append(
                SmiChip(int(head[1]), chip, logic, head[2], head[3], head[4], int(head[5]),
                        (int(head[6]), int(head[7])), bus, aicore, memory, hbm)
            )
            i += 2
            continue
        proc = re.match(r"\| (\d+)\s+(\d+)\s+\| (\d+)\s+\|\s*(\S*)\s*\| (\d+)", line)
        if in_procs and proc:
            procs.append(SmiProcess(int(proc[1]), int(proc[2]), int(proc[3]), proc[4], int(proc[5])))
        i += 1
    return tool, driver, chips, procs


@pytest.mark.parametrize(
    "name,dialect,chips,procs",
    [
        ("a2_sample_a.txt", "a2", 8, 1),  # one busy NPU
        ("a2_sample_b.txt", "a2", 8, 4),  # four busy NPUs
        ("p310_duo_6842.txt", "310p", 8, 0),  # 4 Duo cards, two chips each, odd card ids
    ],
)
def test_info_reproduces_real_capture_byte_for_byte(name, dialect, chips, procs):
    _, real = _real(name)
    tool, driver, parsed, processes = _values(real, dialect)
    assert (len(parsed), len(processes)) == (chips, procs)
    assert render_info(dialect, tool, driver, parsed, processes) == real


def test_every_line_keeps_the_dialect_width():
    chip = SmiChip(0, 0, 0, "910B4", "Warning", "101.3", 41, (0, 0), "0000:C1:00.0", 0, (0, 0), (61234, 65536))
    text = render_info("a2", "25.0.rc1.1", "25.0.rc1.1", [chip], [SmiProcess(0, 0, 1234567, "python3", 57000)])
    assert {len(line) for line in text.splitlines()} == {98}
    assert "| 0       0                 | 1234567       | python3                  | 57000                   |" in text
    assert "61234/ 65536" in text


def test_incomplete_install_warning_follows_the_process_table():
    chip = SmiChip(0, 0, 0, "910B4", "OK", "95.0", 38, (0, 0), "0000:C1:00.0", 0, (0, 0), (3400, 65536))
    text = render_info("a2", "25.0.rc1.1", "25.0.rc1.1", [chip], incomplete_install=True)
    assert text.splitlines()[-1] == (
        "[WARNING]The driver package may not be completely installed, which may cause function abnormal. Please reinstall it."
    )


def test_board_list_and_mapping_use_the_real_field_layout():
    # Real `-t board` lines: 8 spaces, key padded to 31, ": " (mind-cluster docs/en/faultdiag/user_guide/03_collecting_logs.md)
    real_board_line = "        Software Version               : 23.0.5"
    board = render_board(0, "23.0.5", "7.1.0.7.220", "OK", "0000:61:00.0", "0xD801", 1)
    assert real_board_line in board.splitlines()
    assert "        Compatibility                  : OK" in board.splitlines()
    assert "        Firmware Version               : NA" in render_board(0, "25.0.rc1.1", None, "UNKNOWN", "x", "0xD802", 1)
    chips = [SmiChip(n, 0, n, "910A", "OK", "70.0", 40, (0, 0), "0000:01:00.0", 0, (0, 0), (0, 32768)) for n in range(2)]
    # Real `-m` header of a 910A host (Ascend/mind-cluster .../kg_parse/npu_info_before.txt)
    real_header = "\tNPU ID                         Chip ID                        Chip Logic ID                  Chip Name"
    real_row = "\t1                              0                              1                              Ascend 910A"
    mapping = render_mapping(chips, mcu_rows=False).splitlines()
    assert mapping[0] == real_header and mapping[2] == real_row
    assert render_mapping(chips, mcu_rows=True).splitlines()[2].split() == ["0", "1", "-", "Mcu"]
    listing = render_list(chips).splitlines()
    assert listing[0] == "        Total Count                    : 2"
    assert "        NPU ID                         : 1" in listing


def test_dcmi_failure_text_and_status():
    text, status = dcmi_failure(-8005, access_problem=False)
    assert text == "dcmi module initialize failed. ret is -8005\n"
    assert status == 187  # exit(-8005) as the shell sees it
    text, _ = dcmi_failure(-8005, access_problem=True)
    assert text.splitlines() == ["DrvMngGetConsoleLogLevel failed. (ret=4)", "dcmi module initialize failed. ret is -8005"]
    text, status = dcmi_failure(-8020, access_problem=False)
    assert text == "dcmi model initialized failed, because the device is used. ret is -8020\n"
    assert status == (-8020) % 256


@pytest.fixture(scope="module")
def hosts(tmp_path_factory):
    from runtime_sim.host import build

    base = tmp_path_factory.mktemp("smi")
    return {name: build(name, base / name) for name in ("healthy_910b", "healthy_310p", "dcmi_8005", "npu_smi_hangs", "user_not_in_group", "npu_held_by_other_process")}


def _smi(host, *args, timeout=10.0):
    exe = host.root / "usr/local/bin/npu-smi"
    return subprocess.run([str(exe), *args], capture_output=True, text=True, timeout=timeout, env={"PATH": "/usr/bin:/bin"})


def test_script_prints_the_hosts_table_and_subcommands(hosts):
    healthy = hosts["healthy_910b"]
    out = _smi(healthy, "info")
    assert out.returncode == 0
    assert out.stdout.splitlines()[1].startswith("| npu-smi 25.0.rc1.1               Version: 25.0.rc1.1")
    assert out.stdout.count("910B4") == 8
    assert "No running processes found in NPU 7" in out.stdout
    board = _smi(healthy, "info", "-t", "board", "-i", "3").stdout
    assert "        Compatibility                  : OK" in board.splitlines()
    assert "        Firmware Version               : 7.7.0.1.231" in board.splitlines()
    unknown = _smi(healthy, "info", "-t", "nonsense")
    assert unknown.returncode != 0 and unknown.stdout == "Command or option is not found.\n"
    duo = _smi(hosts["healthy_310p"], "info").stdout
    assert {len(line) for line in duo.splitlines()} == {106}
    assert "| 32768   310P3" in duo and "No running processes found in NPU 32800" in duo


def test_script_shows_the_process_holding_npu_0(hosts):
    text = _smi(hosts["npu_held_by_other_process"], "info").stdout
    assert re.search(r"^\| 0       0                 \| 1333928       \|\s+\| 37709\s+\|$", text, re.M)
    assert "No running processes found in NPU 0" not in text


def test_script_fails_like_dcmi(hosts):
    out = _smi(hosts["dcmi_8005"], "info")
    assert (out.returncode, out.stdout) == (187, "dcmi module initialize failed. ret is -8005\n")
    # a user who cannot open the device nodes also gets the driver log library's line first
    out = _smi(hosts["user_not_in_group"], "info")
    assert out.returncode == 187 and out.stdout.startswith("DrvMngGetConsoleLogLevel failed. (ret=4)\n")


def test_script_hangs(hosts):
    with pytest.raises(subprocess.TimeoutExpired):
        _smi(hosts["npu_smi_hangs"], "info", timeout=1.0)
