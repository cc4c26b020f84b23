"""The op manifest format: validation (one-line errors naming the field) and round trips."""
from __future__ import annotations

import json

import pytest

from ascend_doctor.opcheck.manifest import Manifest, ManifestError, OpContext, OpEntry, from_json, load


def _write(tmp_path, text, name="m.json"):
    p = tmp_path / name
    p.write_text(text)
    return p


@pytest.mark.parametrize(
    "text, expect",
    [
        ("{not json", "not JSON"),
        ("[1, 2]", "top level is not a JSON object"),
        ('{"ops": []}', "no 'schema'/'ops'"),
        ('{"schema": 2, "ops": []}', "schema 2 is not supported"),
        ('{"schema": 1, "ops": {}}', "ops: expected a list, got a mapping"),
        ('{"schema": 1, "ops": [{"calls": 1}]}', "ops[0].op: required field is missing"),
        ('{"schema": 1, "ops": ["addmm"]}', "needs a namespace, e.g. 'aten::addmm'"),
        ('{"schema": 1, "ops": ["aten::mm", "aten::mm"]}', "listed twice"),
        ('{"schema": 1, "ops": [{"op": "aten::mm", "calls": -1}]}', "ops[0].calls: must be >= 0, got -1"),
        ('{"schema": 1, "ops": [{"op": "aten::mm", "level": "weird"}]}', "ops[0].level: 'weird' is not one of kernel, composite"),
        ('{"schema": 1, "ops": [{"op": "aten::mm", "dtypes": ["float32"]}]}', "ops[0].dtypes[0]: expected a list, got a string"),
        ('{"schema": 1, "ops": [{"op": "aten::mm", "contexts": [{"within": "aten::linear"}]}]}', "ops[0].contexts[0].within: expected a list, got a string"),
    ],
)
def test_bad_manifests_give_one_line_errors(tmp_path, text, expect):
    with pytest.raises(ManifestError) as e:
        load(_write(tmp_path, text))
    assert expect in str(e.value)
    assert "\n" not in str(e.value)
    assert str(tmp_path) in str(e.value)  # names the file


def test_missing_file_and_directory(tmp_path):
    with pytest.raises(ManifestError, match="no such file"):
        load(tmp_path / "absent.json")
    with pytest.raises(ManifestError, match="is a directory"):
        load(tmp_path)


def test_hand_written_manifest_with_bare_names(tmp_path):
    m = load(_write(tmp_path, '{"schema": 1, "ops": ["aten::addmm", {"op": "npu::npu_rms_norm", "calls": 4}]}'))
    assert [(e.op, e.calls, e.contexts[0].within) for e in m.ops] == [("aten::addmm", 1, ()), ("npu::npu_rms_norm", 4, ())]
    assert m.total_calls == 5 and m.path.endswith("m.json")


def test_round_trip_one_op_per_line(tmp_path):
    m = Manifest(
        ops=[
            OpEntry("aten::mm", 3, "kernel", [OpContext(("aten::linear", "aten::matmul"), 2), OpContext((), 1)],
                    [["float32"]], [[[2, 3], [3, 4]]], ["forward"], ["CPU", "Meta"]),
            OpEntry("aten::linear", 2, "composite", [OpContext((), 2)], [["float32"]], [], ["forward"], ["CompositeImplicitAutograd"]),
        ],
        recorded={"torch": "2.13.0", "mode": "eager", "complete": True},
        tool={"name": "ascend-doctor"},
    )
    p = tmp_path / "rt.json"
    m.save(p)
    text = p.read_text()
    assert text.count('{"op": ') == 2  # one line per op
    back = load(p)
    assert back.to_json() == m.to_json() == json.loads(text)
    assert from_json(json.loads(text)).entry("aten::mm").all_dtypes == ["float32"]
