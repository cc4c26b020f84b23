"""`ascend-doctor check --root T --json` on host trees built from real formats.

Each case names exactly the findings that must fail (with their category); every other
finding must not fail. See hosttree.py for where each file's format comes from.
"""
from __future__ import annotations

import json
import time
from dataclasses import replace
from pathlib import Path
from typing import Dict, List, Optional

import pytest
from typer.testing import CliRunner

from ascend_doctor.checks.runner import QUICK_DEADLINE_S
from ascend_doctor.cli import app

from . import hosttree as ht

runner = CliRunner()


def run_json(root: Path, env_file: Path, *extra: str) -> Dict:
    result = runner.invoke(app, ["check", "--root", str(root), "--trust-root", "--env-file", str(env_file), "--json", *extra])
    assert result.exit_code in (0, 1), result.output
    return json.loads(result.stdout)


def statuses(report: Dict, status: str) -> Dict[str, Optional[str]]:
    return {f["id"]: f["category"] for f in report["findings"] if f["status"] == status}


HEALTHY_310P = ht.HostSpec(
    driver=ht.DRIVER_25_2_0,
    firmware=ht.FIRMWARE_7_7,
    npu_smi="310p3_duo_driver25.2.0_excerpt.txt",
    davinci=2,
    toolkit=ht.TOOLKIT_8_3,
    toolkit_version="8.3.RC2",
    kernel_dirs=["ascend310p"],
    env={},
)

HANG = "sleep 600"
DCMI_8005 = "echo 'DrvMngGetConsoleLogLevel failed. (ret=4)'\necho 'dcmi module initialize failed. ret is -8005'\nexit 255"

CASES = {
    "healthy-910b": (ht.HostSpec(), {}),
    "healthy-310p": (HEALTHY_310P, {}),
    "no-driver": (
        ht.HostSpec(driver=None, firmware=None, install_info=None, npu_smi=None, davinci=0, control_nodes=False, modules=""),
        {"driver.installed": "driver_init"},
    ),
    "driver-firmware-mismatch": (
        ht.HostSpec(firmware=ht.FIRMWARE_7_7),
        {"driver.firmware_compat": "version_mismatch"},
    ),
    "modules-not-loaded": (ht.HostSpec(modules="ext4 737280 2 - Live 0x0000000000000000\n"), {"driver.modules": "driver_init"}),
    "garbage-version-info": (ht.HostSpec(driver="this is not a version file\n"), {"driver.installed": "driver_init"}),
    "binary-version-info": (ht.HostSpec(driver="\x00\x01\x02\xff\xfe" * 40), {"driver.installed": "driver_init"}),
    "toolkit-missing": (ht.HostSpec(toolkit=None, sourced=False), {"toolkit.installed": "env_path"}),
    "set-env-not-sourced": (ht.HostSpec(sourced=False), {"env.set_env": "env_path"}),
    "toolkit-wrong-arch": (ht.HostSpec(toolkit_arch="aarch64"), {"toolkit.arch": "env_path"}),
    "cann-rejects-driver": (
        ht.HostSpec(toolkit=ht.TOOLKIT_8_1.replace("[V100R001C15],", "")),
        {"toolkit.driver_compat": "version_mismatch"},
    ),
    "kernels-for-other-chip": (ht.HostSpec(kernel_dirs=["ascend310p"]), {"toolkit.kernels": "env_path"}),
    "torch-torch_npu-mismatch": (
        ht.HostSpec(python_packages={"torch": "2.1.0", "torch_npu": "2.4.0.post2"}),
        {"python.torch_npu_match": "version_mismatch"},
    ),
    "container-without-device-nodes": (
        ht.HostSpec(container=True, davinci=0, control_nodes=False),
        {"devices.nodes": "driver_init"},
    ),
    "container-without-driver-mounts": (
        ht.HostSpec(container=True, driver=None, firmware=None, install_info=None, npu_smi=None),
        {"container.mounts": "driver_init"},
    ),
    "visible-devices-out-of-range": (ht.HostSpec(env={"ASCEND_RT_VISIBLE_DEVICES": "4,9"}), {"env.visible_devices": "env_path"}),
    "visible-devices-out-of-order": (ht.HostSpec(env={"ASCEND_RT_VISIBLE_DEVICES": "6,4"}), {"env.visible_devices": "env_path"}),
    "user-not-in-HwHiAiUser": (ht.HostSpec(user_in_group=False), {"devices.access": "device_busy_permission"}),
    "npu-held-by-another-process": (ht.HostSpec(env={}), {"devices.busy": "device_busy_permission"}),
    "dcmi-8005": (ht.HostSpec(npu_smi_script=DCMI_8005), {"npu_smi.info": "driver_init"}),
    "no-davinci-nodes-on-host": (ht.HostSpec(davinci=0), {"devices.nodes": "driver_init"}),
    "device-alarm": (
        ht.HostSpec(npu_smi_script="sed 's/| 3     910B3               | OK  /| 3     910B3               | Alarm/' '{}'".format((ht.DATA / "npu_smi/a2_910b3_driver23.0.7_busy.txt").resolve())),
        {"devices.health": "other"},
    ),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_tree_reports_exactly_the_expected_failures(tmp_path: Path, name: str) -> None:
    spec, expected = CASES[name]
    env_file = ht.build(tmp_path, spec)
    report = run_json(tmp_path, env_file)
    failing = statuses(report, "fail")
    assert failing == expected, json.dumps([f for f in report["findings"] if f["status"] != "ok"], indent=1)
    assert not statuses(report, "error"), "a check crashed"
    for f in report["findings"]:
        if f["status"] == "fail":
            assert f["fix"]["text"] or f["fix"]["commands"], f"{f['id']} fails without a fix"
            assert f["evidence"]["found"], f"{f['id']} fails without evidence"


def test_healthy_910b_reads_the_stack(tmp_path: Path) -> None:
    env_file = ht.build(tmp_path, ht.HostSpec())
    report = run_json(tmp_path, env_file)
    by_id = {f["id"]: f for f in report["findings"]}
    assert by_id["npu_smi.info"]["summary"].startswith("8 devices (910B3), driver 23.0.7")
    assert by_id["toolkit.installed"]["summary"].startswith("CANN 8.1.RC1 at /usr/local/Ascend/ascend-toolkit/latest")
    assert by_id["python.packages"]["summary"] == "torch 2.1.0, torch_npu 2.1.0.post10"
    assert by_id["driver.firmware_compat"]["status"] == "ok"
    assert by_id["devices.busy"]["status"] == "ok"  # NPUs 0-3 are busy, the job uses 4-7
    assert report["summary"]["verdict"] == "ok"
    assert report["host"]["arch"] == "x86_64"


def test_hanging_npu_smi_is_a_timeout_and_the_run_finishes(tmp_path: Path) -> None:
    env_file = ht.build(tmp_path, ht.HostSpec(npu_smi_script=HANG))
    start = time.monotonic()
    report = run_json(tmp_path, env_file, "--timeout", "1")
    elapsed = time.monotonic() - start
    assert statuses(report, "timeout") == {"npu_smi.info": "driver_init"}
    assert statuses(report, "fail") == {}
    # not a speed test: the run must end (a hang would never get here), well inside its own deadline
    assert elapsed < QUICK_DEADLINE_S, elapsed


def test_incomplete_install_is_a_warning(tmp_path: Path) -> None:
    env_file = ht.build(tmp_path, ht.HostSpec(install_info=ht.INSTALL_INFO.replace("Driver_Install_Status=complete\n", "")))
    report = run_json(tmp_path, env_file)
    assert statuses(report, "warn") == {"driver.install_complete": "driver_init"}
    assert statuses(report, "fail") == {}


def test_expect_devices(tmp_path: Path) -> None:
    env_file = ht.build(tmp_path, ht.HostSpec())
    assert statuses(run_json(tmp_path, env_file, "--expect-devices", "8"), "fail") == {}
    assert statuses(run_json(tmp_path, env_file, "--expect-devices", "16"), "fail") == {"devices.count": "driver_init"}


def test_driver_version_differs_from_npu_smi_header(tmp_path: Path) -> None:
    env_file = ht.build(tmp_path, ht.HostSpec(npu_smi="a2_910b3_driver25.2.0_container.txt", env={"ASCEND_RT_VISIBLE_DEVICES": "0"}))
    report = run_json(tmp_path, env_file)
    assert "driver.version" in statuses(report, "warn")


def test_fail_on_warn_changes_the_exit_code(tmp_path: Path) -> None:
    env_file = ht.build(tmp_path, ht.HostSpec(install_info=ht.INSTALL_INFO.replace("Driver_Install_Status=complete\n", "")))
    base = ["check", "--root", str(tmp_path), "--trust-root", "--env-file", str(env_file), "--json"]
    assert runner.invoke(app, base).exit_code == 0
    assert runner.invoke(app, base + ["--fail-on", "warn"]).exit_code == 1


def test_no_python_stand_in_skips_python_checks(tmp_path: Path) -> None:
    env_file = ht.build(tmp_path, replace(ht.HostSpec(), python=False))
    report = run_json(tmp_path, env_file)
    by_id = {f["id"]: f for f in report["findings"]}
    assert by_id["python.interpreter"]["status"] == "skip"
    assert statuses(report, "fail") == {}


def test_markdown_and_text_render(tmp_path: Path) -> None:
    env_file = ht.build(tmp_path, ht.HostSpec(firmware=ht.FIRMWARE_7_7))
    base = ["check", "--root", str(tmp_path), "--trust-root", "--env-file", str(env_file)]
    md = runner.invoke(app, base + ["--format", "md"])
    assert md.exit_code == 1
    assert "| ✗ | Driver and firmware match (`driver.firmware_compat`) |" in md.stdout
    assert "```sh" in md.stdout
    text = runner.invoke(app, base + ["-v"])
    assert "Driver and firmware match" in text.stdout and "$ ./Ascend-hdk-<chip>-npu-firmware_23.0.7.run --full" in text.stdout
    lines: List[str] = text.stdout.splitlines()
    assert "failed" in lines[-1] or "failed" in lines[-2]


def test_binaries_of_another_architecture_are_skipped_not_failed(tmp_path: Path) -> None:
    """A copied aarch64 tree judged on x86 (or the reverse): its npu-smi and python3 cannot run here."""
    env_file = ht.build(tmp_path, ht.HostSpec())
    elf = b"\x7fELF\x02\x01\x01" + b"\x00" * 9 + b"\x02\x00" + b"\xb7\x00" + b"\x00" * 44  # an aarch64 ELF header
    if Path("/proc/sys/kernel/arch").exists() and Path("/proc/sys/kernel/arch").read_text().strip() == "aarch64":
        elf = elf[:18] + b"\x3e\x00" + elf[20:]  # an x86-64 header on an aarch64 machine
    for binary in ("usr/local/bin/npu-smi", "usr/bin/python3"):
        (tmp_path / binary).write_bytes(elf)
        (tmp_path / binary).chmod(0o755)
    report = run_json(tmp_path, env_file)
    by_id = {f["id"]: f for f in report["findings"]}
    assert statuses(report, "fail") == {}
    assert by_id["npu_smi.info"]["status"] == "skip" and "cannot run on this machine" in by_id["npu_smi.info"]["summary"]
    assert by_id["python.interpreter"]["status"] == "skip"


@pytest.mark.parametrize("value, fixed", [("6,4", "4,6"), ("4,9", "4"), ("4,4,5", "4,5")])
def test_visible_devices_fix_keeps_every_existing_device(tmp_path: Path, value: str, fixed: str) -> None:
    env_file = ht.build(tmp_path, ht.HostSpec(env={"ASCEND_RT_VISIBLE_DEVICES": value}))
    f = {x["id"]: x for x in run_json(tmp_path, env_file)["findings"]}["env.visible_devices"]
    assert f["status"] == "fail" and f["fix"]["commands"] == [f"export ASCEND_RT_VISIBLE_DEVICES={fixed}"]


def test_kernel_dir_with_only_ops_oam_means_no_kernels_package(tmp_path: Path) -> None:
    """A toolkit without its kernels/ops package leaves kernel/<chip>/ holding only ops_oam
    (public notes of a CANN 8.5.0 toolkit-only image, where every aclnn op then failed with 561103)."""
    env_file = ht.build(tmp_path, ht.HostSpec(kernel_dirs=[]))
    (tmp_path / "usr/local/Ascend/ascend-toolkit/8.1.RC1/opp/built-in/op_impl/ai_core/tbe/kernel/ascend910b/ops_oam").mkdir(parents=True)
    assert statuses(run_json(tmp_path, env_file), "fail") == {"toolkit.kernels": "env_path"}
