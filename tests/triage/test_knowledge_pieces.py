"""The seams of triage/knowledge.py Knowledge._resolve: which match speaks for the line, how sure it is."""
from __future__ import annotations

from types import SimpleNamespace

from ascend_doctor.triage.knowledge import _confidence, _role

# https://github.com/hicann/hccl/blob/09300b70df9a031339f08e5f2ca06d7bf294d009/docs/zh/user_guide/fault_diagnosis/task_exec_stage.md
CRIMER = ("[INFO] HCCL(686,python):2025-10-23-07:52:59.191.363 [heartbeat.cc:951] [8970][TaskExecStage][HeartbeatAbnormal]local rank "
          "[127.10.0.1/1]: crimer rank [127.10.0.2/2] status[LOST] by informer rank [127.10.0.3/3]")


def _m(role, category="hccl_comm", score=10.0, kb="x.y", alternative=None):
    return SimpleNamespace(entry=SimpleNamespace(role=role, category=category, id=kb, title=kb, cause=None, family=None,
                                                 alternative=alternative), score=score, captures={})


def test_role_of_the_best_match():
    ev = SimpleNamespace(match_text="plain failure")
    cause, symptom = _m("cause"), _m("symptom")
    assert _role([cause, symptom], ev) == ("root", cause)
    assert _role([cause, _m("advisory")], ev) == ("advisory", cause)
    # a rank quoting HCCL's verdict on another rank: its own story is the wait
    assert _role([cause, symptom], SimpleNamespace(match_text=CRIMER)) == ("symptom", symptom)
    assert _role([_m("wrapper")], ev)[0] == "wrapper"


def test_confidence_and_runner_up():
    best = _m("cause", score=12.0, kb="a.best")
    assert _confidence(best, [best]) == ("high", None)
    close = _m("cause", category="other", score=11.0, kb="b.close")
    conf, runner = _confidence(best, [best, close])
    assert conf == "medium" and runner == {"kb": "b.close", "category": "other", "title": "b.close"}
    weak = _m("cause", score=3.0)
    assert _confidence(weak, [weak]) == ("low", None)
    assert _confidence(_m("cause", score=6.0), [_m("cause", score=6.0)])[0] == "medium"


def test_an_entry_that_names_its_other_reading_is_never_sure():
    from ascend_doctor.kb.model import Alternative

    alt = Alternative(category="env_path", title="no NPU mapped into this container")
    best = _m("cause", category="driver_init", score=12.0, alternative=alt)
    assert _confidence(best, [best]) == ("medium", {"kb": None, "category": "env_path", "title": alt.title})
    # a matching entry of another category is the closer runner-up; the alternative does not replace it
    close = _m("cause", category="other", score=11.0, kb="b.close")
    assert _confidence(best, [best, close])[1]["kb"] == "b.close"


def test_a_real_line_gets_its_entrys_other_reading():
    """https://github.com/vllm-project/vllm-ascend/issues/2698: npu-smi in a container, -8005."""
    import io
    import json

    from ascend_doctor.commands.triage import run_triage

    out = io.StringIO()
    line = "DrvMngGetConsoleLogLevel failed. (g_conLogLevel=-1)\ndcmi module initialize failed. ret is -8005\n"
    run_triage(["-"], fmt="json", out=out, err=io.StringIO(), stdin=io.BytesIO(line.encode()))
    top = json.loads(out.getvalue())["incidents"][0]
    assert top["category"] == "driver_init" and top["confidence"] != "high"
    assert top["runner_up"]["category"] == "device_busy_permission"


def test_a_runner_up_title_never_shows_an_empty_placeholder():
    from ascend_doctor import kb
    from ascend_doctor.triage.knowledge import _named

    base = kb.load()
    for entry in base.entries:
        name = _named(entry, {})
        assert "{" not in name and "}" not in name or "{" in (entry.cause or ""), (entry.id, name)
        assert name.strip(), entry.id


def test_a_wrapper_gives_way_to_a_cause_of_the_same_event():
    from ascend_doctor.triage.knowledge import _cause_before_wrapper

    wrapper, cause, symptom = _m("wrapper", score=12.0), _m("cause", score=5.0), _m("symptom", score=8.0)
    assert _cause_before_wrapper([wrapper, symptom, cause]) == [cause, wrapper, symptom]
    assert _cause_before_wrapper([wrapper, symptom]) == [wrapper, symptom]  # nothing better to say
    assert _cause_before_wrapper([cause, wrapper]) == [cause, wrapper]


def test_the_allocators_numbers_settle_an_entrys_other_oom_reading():
    from ascend_doctor.parsers.oom_text import parse_oom
    from ascend_doctor.triage.knowledge import Verdict, _judged

    other = {"kb": None, "category": "oom_fragmentation", "title": "split cache"}
    hit = Verdict(role="root", category="oom_capacity", weight=95, title="t", cause="c", fix_text="f", fix_commands=[],
                  signal=None, confidence="medium", runner_up=other)
    # https://github.com/vllm-project/vllm-omni/issues/705: nothing reserved, nothing cached: no split to speak of
    oom = parse_oom("NPU out of memory. Tried to allocate 20.00 MiB (NPU 0; 61.27 GiB total capacity; 0 bytes already "
                    "allocated; 0 bytes current active; 48.36 MiB free; 0 bytes reserved in total by PyTorch)")
    assert oom is not None and oom.reserved is not None
    assert _judged(hit, oom).runner_up is None
    # a message without the numbers keeps the entry's other reading
    assert _judged(hit, parse_oom("torch.OutOfMemoryError: NPU out of memory.")).runner_up == other
