"""`oom --alloc-conf`: a value torch_npu would refuse at start-up is a usage error (one line,
exit 2), never copied into the suggested `export`."""
from __future__ import annotations

import pytest

from ascend_doctor.commands.oom import run_oom
from ascend_doctor.errors import UsageError
from ascend_doctor.memory.advice import check_conf, load_options

# the out-of-memory line of https://github.com/xingchensong/TouchNet/issues/100 (tests/oom/data/messages.yaml)
OOM = ("RuntimeError: NPU out of memory. Tried to allocate 5.03 GiB (NPU 3; 60.96 GiB total capacity; 49.47 GiB "
       "already allocated; 49.47 GiB current active; 1.32 GiB free; 57.55 GiB reserved in total by PyTorch) If "
       "reserved memory is >> allocated memory try setting max_split_size_mb to avoid fragmentation.")


def test_known_keys_are_the_union_of_the_release_lines_read() -> None:
    """The doctor's key list and the simulator's per-branch lists come from the same branches."""
    from runtime_sim.allocator.profiles import _resolved

    union = set()
    for name, prof in _resolved().items():
        if name != "cuda":
            union |= set(prof.keys)
    assert set(load_options()["keys"]) == union


@pytest.mark.parametrize("value, message", [
    ("banana", "'banana' is not an allocator key of torch_npu; known keys: max_split_size_mb"),
    ("expandable_segment:True", "did you mean expandable_segments"),
    ("expandable_segments", "expandable_segments has no value (write it as expandable_segments:VALUE)"),
    ("max_split_size_mb:", "max_split_size_mb has no value"),
    ("expandable_segments:True,,banana:1", "'banana' is not an allocator key"),
    ("  ", "empty"),
])
def test_bad_alloc_conf_is_a_usage_error(value: str, message: str, capsys) -> None:
    with pytest.raises(UsageError, match="^--alloc-conf.*") as err:
        run_oom(OOM, alloc_conf=value)
    assert message in str(err.value) and "\n" not in str(err.value)
    assert capsys.readouterr().out == ""


def test_good_alloc_conf_reaches_the_suggested_export(capsys) -> None:
    """A valid setting is the base of the advice: the export keeps it and adds to it."""
    assert run_oom(OOM, alloc_conf="garbage_collection_threshold:0.6", torch_npu="2.1.0.post13") in (0, 1)
    exports = [line for line in capsys.readouterr().out.splitlines() if "export PYTORCH_NPU_ALLOC_CONF=" in line]
    assert exports
    for line in exports:  # every suggested setting is one torch_npu accepts
        check_conf(line.split("PYTORCH_NPU_ALLOC_CONF=", 1)[1].strip())


def test_good_alloc_conf_is_read_whole() -> None:
    value = "max_split_size_mb:128,roundup_power2_divisions:[256:1,512:2,>:4],garbage_collection_threshold:0.6"
    assert check_conf(value) == {"max_split_size_mb": "128", "roundup_power2_divisions": "[256:1,512:2,>:4]",
                                 "garbage_collection_threshold": "0.6"}


def test_cli_exit_code_and_one_line() -> None:
    import subprocess
    import sys

    res = subprocess.run([sys.executable, "-m", "ascend_doctor", "oom", OOM, "--alloc-conf", "banana"],
                         capture_output=True, text=True, timeout=120)
    assert res.returncode == 2 and res.stdout == "" and len(res.stderr.strip().splitlines()) == 1
    assert "banana:" not in res.stderr.replace("--alloc-conf banana:", "")
