"""The redactor on real text: the same value gets the same mask everywhere, versions and
indexes survive, and nothing identifying is left."""
from __future__ import annotations

from ascend_doctor.bundle.redact import Redactor, looks_secret, mask_env, register_env, register_passwd

# npu-smi info -t board -i 0 on an Atlas 200I DK A2 (310B), from the npu-smi manual:
# https://hiascend.com/document/detail/zh/Atlas%20200I%20A2/24.1.RC3/re/npu/npusmi_008.html
NPU_SMI_BOARD = """\
        NPU ID                         : 0
        Product Name                   : IT22DMDB02
        Model                          : NA
        Manufacturer                   : Huawei
        Serial Number                  : 025VLB10K7000275
        Software Version               : 24.1.RC2
        Firmware Version               : 7.1.0.4.218
        Board ID                       : 0x45
        PCB ID                         : B
        BOM ID                         : 1
        Chip Count                     : 1
        Faulty Chip Count              : 0
"""
# torch c10d socket lines: https://github.com/KinWaiCheuk/Jointist/issues/3 (a host name)
# and https://github.com/gensyn-ai/rl-swarm/issues/197 (an IPv4-mapped IPv6 address)
C10D_HOST = "[W926 21:34:49.000000000 socket.cpp:697] [c10d] The client socket has failed to connect to [LAPTOP-TF2BILCG]:50656 (system error: 10049)."
C10D_V6 = "[W427 01:04:16.149509694 socket.cpp:752] [c10d] The client socket has failed to connect to [::ffff:198.18.0.1]:3254 (errno: 110 - Connection timed out)."
# an HCCL heartbeat line as runtime_sim writes it (format: formats of CANN 8.x plogs)
HCCL = "[INFO] HCCL(2111671,python3):2025-10-24-11:27:34.628.139 [heartbeat.cc:951] [2111975][TaskExecStage][HeartbeatAbnormal]local rank [10.20.3.41/4]: crimer rank [10.20.3.7/3] status[STUCK]"
# a runtime error block line: chipId/dieId/serial number are positions and task counters, not identities
# https://github.com/Ascend/pytorch (CANN device_error_proc.cc message as quoted in public issues)
STARS = "[ERROR] RUNTIME(216,):2026-07-24-02:51:31.964.908 [device_error_proc.cc:1644]273 ProcessStarsAicpuErrorInfo:The error from device(chipId:0, dieId:0), serial number is 6, an exception occurred during AICPU execution"
# an Aruba switch's mac-address table row: https://github.com/Cray-HPE/docs-csm/pull/1536
MAC_ROW = "4    a4:bf:01:65:68:54    dynamic        1/1/48"


def test_same_value_same_mask_across_files():
    r = Redactor()
    a = r.text(HCCL, "rank4.log")
    b = r.text("connect to 10.20.3.7:60000 failed; retry 10.20.3.41", "rank3.log")
    assert "10.20.3.7" not in a + b and "10.20.3.41" not in a + b
    crimer = a.split("crimer rank [")[1].split("/")[0]
    local = a.split("local rank [")[1].split("/")[0]
    assert crimer != local
    assert f"connect to {crimer}:60000" in b and b.endswith(local)
    entry = {e["mask"]: e for e in r.manifest()}[crimer]
    assert entry["kind"] == "ipv4" and entry["files"] == ["rank3.log", "rank4.log"] and entry["count"] == 2


def test_versions_timestamps_and_indexes_are_kept():
    r = Redactor()
    assert r.text(NPU_SMI_BOARD, "board.txt").count("7.1.0.4.218") == 1
    assert r.text(STARS, "plog") == STARS  # chipId, dieId and the task serial are not identities
    assert r.text("Version=25.0.rc1.1 compatible_version_fw=[7.0.0,7.1.99] at 2025-10-24-11:27:34.628.139", "v") == \
        "Version=25.0.rc1.1 compatible_version_fw=[7.0.0,7.1.99] at 2025-10-24-11:27:34.628.139"
    assert r.text("bind 0.0.0.0:29500 and 127.0.0.1, mask 255.255.255.0", "x") == "bind 0.0.0.0:29500 and 127.0.0.1, mask 255.255.255.0"
    assert r.text("c10_npu::acl::AclrtSynchronizeStreamWithTimeout", "x") == "c10_npu::acl::AclrtSynchronizeStreamWithTimeout"


def test_serial_and_board_id_masked_in_field_and_everywhere_else():
    r = Redactor()
    out = r.text(NPU_SMI_BOARD, "npu-smi.txt")
    assert "025VLB10K7000275" not in out and "Serial Number                  : serial-1" in out
    assert "0x45" not in out
    later = r.text("replace the card with SN 025VLB10K7000275", "notes.txt")
    assert "serial-1" in later and "025VLB10K7000275" not in later
    assert "Chip Count                     : 1" in out  # counts are not ids


def test_hostname_ipv6_mac_and_tokens():
    r = Redactor()
    r.add_hostname("LAPTOP-TF2BILCG")
    out = r.text(C10D_HOST, "console.log")
    assert "LAPTOP-TF2BILCG" not in out and "[host-1]:50656" in out
    v6 = r.text(C10D_V6, "console.log")
    assert "198.18.0.1" not in v6 and "[::ffff:192.0.2.1]:3254" in v6
    full_v6 = r.text("peer fe80::3e4a:92ff:fe1b:2c01%eth0 and 2407:c080:1200:11::7 up", "x")
    assert "fe80::3e4a" not in full_v6 and "2407:c080" not in full_v6 and full_v6.count("2001:db8::") == 2
    mac = r.text(MAC_ROW, "switch.txt")
    assert "a4:bf:01:65:68:54" not in mac and "02:00:00:00:00:01" in mac
    tok = r.text("login with 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 and pip from https://bob:s3cretpw@mirror.example/simple", "x")
    assert "hf_qLmZ" not in tok and "s3cretpw" not in tok and "<credentials-1>@mirror.example" in tok
    kinds = r.kinds()
    assert kinds == {"hostname": 1, "ipv4": 1, "ipv6": 2, "mac": 1, "secret": 1, "credentials": 1}


def test_users_homes_and_secret_env():
    env = {"USER": "alice", "HOME": "/data/alice-ws", "HF_TOKEN": "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",
           "AWS_SECRET_ACCESS_KEY": "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", "LD_LIBRARY_PATH": "/home/alice/lib:/usr/lib",
           "HOSTNAME": "npu-node-17.cluster.example", "PWD": "/home/alice"}
    r = Redactor()
    register_env(env, r)
    register_passwd("root:x:0:0::/root:/bin/bash\nHwHiAiUser:x:1000:1000::/home/HwHiAiUser:/bin/bash\n"
                    "bob:x:1002:1002::/home/bob:/bin/bash\n", r)
    lines = mask_env(env, r)
    text = "\n".join(lines)
    for secret in ("hf_qLmZ", "wJalrXUtnFEMI", "alice", "npu-node-17"):
        assert secret not in text
    assert "HF_TOKEN=<set>" in lines and "AWS_SECRET_ACCESS_KEY=<set>" in lines
    assert "LD_LIBRARY_PATH=/home/user-1/lib:/usr/lib" in lines
    assert "HOSTNAME=host-1" in text
    log = r.text("File \"/home/bob/train.py\" by bob on npu-node-17 as HwHiAiUser (root ok)", "x")
    assert "bob" not in log and "npu-node-17" not in log and "HwHiAiUser" in log and "root" in log
    assert looks_secret("MY_api_key") and not looks_secret("ASCEND_HOME_PATH")


def test_disabled_redactor_changes_nothing():
    r = Redactor(enabled=False)
    r.add_hostname("LAPTOP-TF2BILCG")
    assert r.text(C10D_HOST + HCCL, "x") == C10D_HOST + HCCL
    assert mask_env({"HF_TOKEN": "hf_x"}, r) == ["HF_TOKEN=hf_x"]
    assert r.manifest() == []
