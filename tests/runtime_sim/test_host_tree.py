"""The trees the host builder writes: real file formats, both CANN layouts, device nodes,
accounts, environment, containers, and confinement to the target directory."""
from __future__ import annotations

import os
import re
import stat
from pathlib import Path

import pytest

from runtime_sim.host import BuildError, build
from runtime_sim.host.tree import Tree, TreeError
from runtime_sim.scenarios import names

REF_DRIVER_2307 = """Version=23.0.7
ascendhal_version=7.35.19
aicpu_version=1.0
tdt_version=1.0
log_version=1.0
prof_version=2.0
dvppkernels_version=1.1
tsfw_version=1.0
Innerversion=V100R001C15SPC012B220
compatible_version=[V100R001C29],[V100R001C30],[V100R001C13],[V100R001C15]
compatible_version_fw=[7.0.0,7.1.99]
package_version=23.0.7
"""  # Ascend/mind-cluster fixture: https://github.com/Ascend/mind-cluster/blob/master/component/ascend-faultdiag/test/st_testcase/modelarts-job-testdt/ascend/environment_check/worker-0/npu_info_before.txt

REF_TOOLKIT_INFO = re.compile(
    r"package_name=Ascend-cann-toolkit\nversion=(\S+)\ninnerversion=(V100R001C\d+\S*)\n"
    r"(compatible_version=(\[V100R00\dC\d+\],?)+\n)?arch=(aarch64|x86_64)\nos=linux\npath=(\S+)\n$"
)  # published samples (vllm-ascend#1047, #6842, mind-cluster log doc)


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    base = tmp_path_factory.mktemp("hosts")
    return {name: build(name, base / name) for name in names()}


def _read(host, path):
    return (host.root / path.lstrip("/")).read_text(encoding="utf-8")


def _kv(text):
    return dict(line.split("=", 1) for line in text.splitlines() if "=" in line)


def test_every_scenario_builds(built):
    """Every scenario becomes a tree with its environment file (build time is measured by
    bench/sim_host_build.py against copying the same tree, not asserted here)."""
    assert sorted(built) == sorted(names())
    for name, host in built.items():
        assert host.root.is_dir() and host.env_file.is_file(), name
        assert "PATH=" in host.env_file.read_text(encoding="utf-8"), name


def test_driver_files_are_the_real_files(built):
    host = built["driver_firmware_mismatch"]
    assert _read(host, "/usr/local/Ascend/driver/version.info") == REF_DRIVER_2307
    fw = _kv(_read(host, "/usr/local/Ascend/firmware/version.info"))
    assert fw == {
        "Version": "7.7.0.1.231",
        "firmware_version": "1.0",
        "package_version": "25.0.rc1.1",
        "compatible_version_drv": "[23.0.0,23.0.0.],[24.0,24.0.],[24.1,24.1.],[25.0,25.0.]",
    }
    info = _kv(_read(host, "/etc/ascend_install.info"))
    assert info["UserName"] == "HwHiAiUser" and info["Driver_Install_Path_Param"] == "/usr/local/Ascend"
    assert info["Driver_Install_Status"] == "complete" and info["Driver_Install_For_All"] == "no"


def test_old_layout_has_latest_link_and_install_info(built):
    host = built["healthy_910b"]
    base = host.root / "usr/local/Ascend/ascend-toolkit"
    assert os.readlink(base / "latest") == "8.2.RC1"
    info = (base / "latest/aarch64-linux/ascend_toolkit_install.info").read_text()
    m = REF_TOOLKIT_INFO.match(info)
    assert m and m[1] == "8.2.RC1" and m[6] == "/usr/local/Ascend/ascend-toolkit/8.2.RC1/aarch64-linux"
    assert "compatible_version=[V100R001C15],[V100R001C18],[V100R001C19],[V100R001C20],[V100R001C21],[V100R001C23]" in info
    assert (base / "set_env.sh").is_file() and (base / "latest/lib64/libascendcl.so").is_file()
    kernels = base / "latest/opp/built-in/op_impl/ai_core/tbe/kernel"
    assert (kernels / "ascend910b/matmul_v3").is_dir() and (kernels / "config/ascend910b").is_dir()
    assert _kv((base / "latest/opp_kernel/version.info").read_text()) == {"Version": "8.2.0.0.201", "version_dir": "8.2.RC1"}


def test_new_layout_has_cann_link_and_its_info_files(built):
    host = built["healthy_310p"]
    base = host.root / "usr/local/Ascend"
    assert os.readlink(base / "cann") == "cann-8.5.0"
    assert os.readlink(base / "ascend-toolkit/latest") == "../cann-8.5.0"
    info = (base / "cann-8.5.0/aarch64-linux/ascend_toolkit_install.info").read_text()
    m = REF_TOOLKIT_INFO.match(info)
    assert m and m[1] == "8.5.0" and m[6] == "/usr/local/Ascend/cann-8.5.0"  # as printed on vllm-ascend#6842
    assert "package_name=Ascend-cann-310p-ops" in (base / "cann-8.5.0/aarch64-linux/ascend_ops_install.info").read_text()
    assert (base / "cann/set_env.sh").is_file()
    assert (base / "cann-8.5.0/opp/built-in/op_impl/ai_core/tbe/kernel/ascend310p/add").is_dir()
    nine = built["cann_too_new_for_driver"].root / "usr/local/Ascend/cann-9.1.0/aarch64-linux/ascend_toolkit_install.info"
    assert "compatible_version" not in nine.read_text()  # the real 9.1.0 file has no such line


def test_toolkit_libraries_carry_the_toolkit_arch(built):
    wrong = built["toolkit_wrong_arch"]
    lib = wrong.root / "usr/local/Ascend/ascend-toolkit/8.2.RC1/lib64/libascendcl.so"
    head = lib.read_bytes()[:20]
    assert head[:4] == b"\x7fELF" and int.from_bytes(head[18:20], "little") == 0xB7  # aarch64
    assert _read(wrong, "/proc/sys/kernel/arch") == "x86_64\n"
    assert (wrong.root / "usr/local/Ascend/ascend-toolkit/8.2.RC1/aarch64-linux/ascend_toolkit_install.info").is_file()


def test_set_env_script_and_env_file_agree(built):
    host = built["healthy_910b"]
    script = _read(host, "/usr/local/Ascend/ascend-toolkit/set_env.sh")
    env = _kv(host.env_file.read_text())
    for name in ("ASCEND_TOOLKIT_HOME", "ASCEND_HOME_PATH", "ASCEND_OPP_PATH", "ASCEND_AICPU_PATH", "TOOLCHAIN_HOME"):
        assert f"export {name}={env[name]}\n" in script
    assert env["ASCEND_TOOLKIT_HOME"] == "/usr/local/Ascend/ascend-toolkit/latest"
    ld = env["LD_LIBRARY_PATH"].split(":")
    assert "/usr/local/Ascend/ascend-toolkit/latest/lib64" in ld and "/usr/local/Ascend/driver/lib64/driver" in ld
    for d in ld:  # every directory set_env.sh puts on the path exists in the tree
        assert (host.root / d.lstrip("/")).resolve().is_dir() or not d.startswith("/usr/local/Ascend/ascend-toolkit"), d
    assert env["USER"] == "root" and env["HOME"] == "/root"
    new = _kv(built["healthy_310p"].env_file.read_text())
    assert new["ASCEND_HOME_PATH"] == "/usr/local/Ascend/cann-8.5.0"  # as on vllm-ascend#6842
    assert new["USER"] == "aiuser" and new["HOME"] == "/home/aiuser"


def test_unsourced_environment_has_no_toolkit_variables(built):
    env = _kv(built["set_env_not_sourced"].env_file.read_text())
    assert not any(k.startswith("ASCEND_") for k in env) and "LD_LIBRARY_PATH" not in env
    assert _kv(built["visible_devices_out_of_order"].env_file.read_text())["ASCEND_RT_VISIBLE_DEVICES"] == "3,1"


def _names(host):
    passwd = {int(r.split(":")[2]): r.split(":")[0] for r in _read(host, "/etc/passwd").splitlines()}
    groups = {int(r.split(":")[2]): r.split(":")[0] for r in _read(host, "/etc/group").splitlines()}
    return passwd, groups


def test_device_nodes_read_as_hwhiaiuser_0660(built):
    host = built["healthy_910b"]
    passwd, groups = _names(host)
    nodes = sorted(p.name for p in (host.root / "dev").iterdir())
    assert nodes[:8] == [f"davinci{i}" for i in range(8)]
    assert {"davinci_manager", "devmm_svm", "hisi_hdc"} <= set(nodes)
    for name in nodes:
        st = (host.root / "dev" / name).stat()
        assert stat.S_ISREG(st.st_mode) and stat.S_IMODE(st.st_mode) == 0o660, name
        assert passwd[st.st_uid] == "HwHiAiUser" and groups[st.st_gid] == "HwHiAiUser", name


def test_judged_user_and_group_membership(built):
    member = built["healthy_310p"]
    assert re.search(r"^HwHiAiUser:x:\d+:aiuser$", _read(member, "/etc/group"), re.M)
    outsider = built["user_not_in_group"]
    group = _read(outsider, "/etc/group")
    assert re.search(r"^HwHiAiUser:x:\d+:$", group, re.M) and re.search(r"^docker:x:\d+:alice$", group, re.M)
    assert re.search(r"^alice:x:\d+:\d+::/home/alice:/bin/bash$", _read(outsider, "/etc/passwd"), re.M)


def test_no_driver_host_has_no_driver_traces(built):
    host = built["no_driver"]
    for path in ("usr/local/Ascend/driver", "usr/local/Ascend/firmware", "usr/local/bin/npu-smi", "etc/ascend_install.info"):
        assert not (host.root / path).exists(), path
    assert not list((host.root / "dev").iterdir())
    assert "drv_pcie_host" not in _read(host, "/proc/modules")
    assert "drv_pcie_host " in _read(built["healthy_910b"], "/proc/modules")


def test_containers(built):
    nodes = built["container_no_device_nodes"]
    assert (nodes.root / ".dockerenv").is_file() and "/docker/" in _read(nodes, "/proc/1/cgroup")
    assert not list((nodes.root / "dev").iterdir())
    assert (nodes.root / "usr/local/bin/npu-smi").is_file() and (nodes.root / "usr/local/dcmi/libdcmi.so").is_file()
    mounts = built["container_no_driver_mounts"]
    assert (mounts.root / "dev/davinci0").is_file()
    for path in ("usr/local/Ascend/driver/version.info", "usr/local/bin/npu-smi", "usr/local/dcmi", "etc/ascend_install.info"):
        assert not (mounts.root / path).exists(), path
    assert not (built["healthy_910b"].root / ".dockerenv").exists()
    assert _read(built["healthy_910b"], "/proc/1/cgroup") == "0::/init.scope\n"


def test_nothing_points_outside_except_judged_machine_paths(built):
    for host in built.values():
        for dirpath, dirnames, filenames in os.walk(host.root):
            for name in dirnames + filenames:
                path = Path(dirpath) / name
                if path.is_symlink():
                    target = os.readlink(path)
                    assert not target.startswith("/"), f"{path} -> {target}: links in a tree are relative"
                    assert (path.parent / target).resolve().is_relative_to(host.root), f"{path} leaves the tree"


def test_tree_refuses_to_escape(tmp_path):
    tree = Tree(tmp_path / "root")
    with pytest.raises(TreeError):
        tree.write("/../outside", "x")
    with pytest.raises(TreeError):
        tree.write("relative/path", "x")
    (tmp_path / "root").mkdir(exist_ok=True)
    (tmp_path / "elsewhere").mkdir()
    os.symlink(tmp_path / "elsewhere", tmp_path / "root" / "link")
    with pytest.raises(TreeError):
        tree.write("/link/file", "x")
    assert not (tmp_path / "elsewhere" / "file").exists()


def test_build_destination_rules(tmp_path):
    busy = tmp_path / "busy"
    busy.mkdir()
    (busy / "precious.txt").write_text("keep me")
    with pytest.raises(BuildError, match="not empty"):
        build("healthy_910b", busy)
    assert (busy / "precious.txt").read_text() == "keep me"
    again = tmp_path / "again"
    first = build("no_driver", again)
    second = build("healthy_910b", again)  # a previous build is replaced
    assert first.root == second.root and (again / "usr/local/Ascend/driver/version.info").is_file()
    (tmp_path / "file").write_text("")
    with pytest.raises(BuildError, match="not a directory"):
        build("healthy_910b", tmp_path / "file")


def test_builds_are_deterministic(tmp_path):
    a = build("npu_held_by_other_process", tmp_path / "a")
    b = build("npu_held_by_other_process", tmp_path / "b")

    def snapshot(root):
        out = {}
        for dirpath, _, files in os.walk(root):
            for f in files:
                p = Path(dirpath) / f
                data = p.read_bytes()
                out[str(p.relative_to(root))] = data.replace(str(root).encode(), b"ROOT")
        return out

    assert snapshot(a.root) == snapshot(b.root)


def test_unprivileged_builder_gives_hwhiaiuser_its_own_ids(monkeypatch):
    # Without root the nodes cannot be chowned: they stay the builder's, so HwHiAiUser
    # takes the builder's uid/gid and a judged user never collides with it.
    from runtime_sim.host import plan as plan_mod
    from runtime_sim.scenarios import load

    monkeypatch.setattr(plan_mod.os, "geteuid", lambda: 1001)
    monkeypatch.setattr(plan_mod.os, "getegid", lambda: 1001)
    p = plan_mod.make_plan(load("user_not_in_group"))  # alice asks for uid 1001
    assert not p.builder_is_root
    assert (p.hw.uid, p.hw.gid) == (1001, 1001)
    assert p.user.uid not in (0, 1001) and p.group_ids["alice"] != 1001
    assert not p.user_can_open_nodes()
    assert plan_mod.make_plan(load("healthy_310p")).user_can_open_nodes()  # aiuser is in HwHiAiUser
