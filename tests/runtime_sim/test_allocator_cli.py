"""``python -m runtime_sim.allocator``: outputs and exit codes."""
from __future__ import annotations

import json

import pytest

from runtime_sim.allocator.__main__ import main


def test_replay_prints_the_oom_and_the_stranded_gap(capsys):
    assert main(["replay", "video_diffusion", "--profile", "7.2.0"]) == 0
    out = capsys.readouterr().out
    assert "OOM at event 991 of 6560: request 12 (720x1280x121) step 0 MLP temporary" in out
    assert "RuntimeError: NPU out of memory. Tried to allocate 8.52 GiB (NPU 0;" in out
    assert "reserved - allocated = 4.93 GiB" in out


def test_replay_json_is_plain_data(capsys):
    assert main(["replay", "video_diffusion", "--conf", "expandable_segments:True", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["schema"] == 1 and data["completed"] is True and data["failed_event"] is None
    assert data["stats"]["num_ooms"] == 0


def test_parse_rejection_prints_the_torch_npu_text(capsys):
    assert main(["parse", "expandable_segments:yes", "--profile", "26.0.0"]) == 1
    out = capsys.readouterr().out
    assert out.startswith("RuntimeError: Expected a single True/False argument for expandable_segments\n[ERROR] ")


@pytest.mark.parametrize("argv", [
    ["replay", "no_such_trace"],
    ["replay", "video_diffusion", "--profile", "1.0.0"],
    ["replay", "video_diffusion", "--conf", "foo:1"],
    ["replay", "video_diffusion", "--non-torch-gib", "-1"],
])
def test_bad_input_is_one_line_and_exit_2(argv, capsys):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and err.count("\n") == 1


def test_unknown_subcommand_is_a_usage_error():
    with pytest.raises(SystemExit) as info:
        main(["bogus"])
    assert info.value.code == 2
