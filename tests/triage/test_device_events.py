"""Lines triage reads since the device's own event stream and cut OOM pastes are read:
each on real text, with its source beside it."""
from __future__ import annotations

import io
import json

from ascend_doctor.commands.triage import run_triage

# device-os log of a tsdaemon fault event, from the fault-diagnosis tool's fixtures:
TSD_SOURCE = ("https://github.com/Ascend/mind-cluster/blob/22bb3d987bc0208c3eb7395e222b661276133c58/"
              "component/ascend-faultdiag/test/st_module_testcase/kg_parse/device-os_20231031164139951.log")
TSD_LOG = (
    "[EVENT] TDT(4717,tsdaemon):2023-10-31-16:41:39.405.951 [tsdaemon.cpp:2070][RemoveResidualFile][tid:4717] RemoveResidualFile finish\n"
    "[EVENT] TDT(4717,tsdaemon):2023-10-31-16:41:39.405.959 [tsdaemon.cpp:2085][Start][tid:4717] [TsdEVENT] PreInit Success.\n"
    "[EVENT] TDT(4717,tsdaemon):2023-10-31-16:41:39.406.087 [tsdaemon.cpp:1811][RunSpecialProcess][tid:4717] [TsdEVENT] Event id=0x8c17a005.\n"
)
IMP_SOURCE = ("https://github.com/Ascend/mind-cluster/blob/22bb3d987bc0208c3eb7395e222b661276133c58/"
              "component/ascend-faultdiag/test/st_module_testcase/kg_parse/device-1/device-1_20241204162140159.log")
IMP_LINE = ("[EVENT] IMP(-2,IMP): 2024-12-04-08:21:54.994.714 70 (device_id:1 die_id:0) [IMP] present 1, mac_link 1, "
            "pcs_link 1, rf_lf 1, pcs_err_cnt 5, pcs_64_66b 4681\n")
# an OOM message pasted from "Tried to allocate" on: https://github.com/LISTatSNU/FastMRI_challenge/issues/238
CUT_OOM = ("Tried to allocate 216.00 MiB (GPU 0; 7.92 GiB total capacity; 69.17 MiB already allocated; 24.56 MiB free; "
           "86.00 MiB reserved in total by PyTorch) If reserved memory is >> allocated memory try setting max_split_size_mb "
           "to avoid fragmentation.  See documentation for Memory Management and PYTORCH_CUDA_ALLOC_CONF\n")


def _triage_file(tmp_path, name, text):
    path = tmp_path / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    out = io.StringIO()
    rc = run_triage([str(path)], fmt="json", out=out, err=io.StringIO())
    return rc, json.loads(out.getvalue())


def test_a_known_tsdaemon_fault_event_is_an_incident(tmp_path):
    rc, doc = _triage_file(tmp_path, "device-os_20231031164139951.log", TSD_LOG)
    assert rc == 1, TSD_SOURCE
    first = doc["incidents"][0]
    assert first["kb"] == "other.tsd_fault_event" and "0x8c17a005" in first["title"]
    assert len(doc["incidents"]) == 1  # the routine EVENT lines around it are not failures


def test_a_port_link_fault_event_is_a_communication_cause(tmp_path):
    rc, doc = _triage_file(tmp_path, "device-1/device-1_20241204162140159.log", IMP_LINE)
    assert rc == 1, IMP_SOURCE
    assert doc["incidents"][0]["category"] == "hccl_comm" and doc["incidents"][0]["kb"] == "npu.port_link_fault_event"


def test_the_rest_of_the_event_stream_stays_unread(tmp_path):
    routine = "".join(line for line in TSD_LOG.splitlines(keepends=True) if "Event id=" not in line)
    healthy_port = IMP_LINE.replace("rf_lf 1", "rf_lf 0")
    rc, doc = _triage_file(tmp_path, "device-os_20231031164139951.log", routine + healthy_port)
    assert rc == 0 and doc["incidents"] == [], (TSD_SOURCE, IMP_SOURCE)
    assert doc["stats"]["events"] == 0


def test_an_oom_message_cut_at_its_numbers_is_read_as_one():
    out = io.StringIO()
    rc = run_triage(["-"], fmt="json", out=out, err=io.StringIO(), stdin=io.BytesIO(CUT_OOM.encode()))
    first = json.loads(out.getvalue())["incidents"][0]
    # 86 MiB reserved by this process, 24.56 MiB free of 7.92 GiB: the rest is someone else's
    assert rc == 1 and first["category"] == "device_busy_permission" and first["kb"] == "oom.npu_external"
