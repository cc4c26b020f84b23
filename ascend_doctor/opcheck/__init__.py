"""Pre-upgrade operator check: record a model's aten ops on CPU, judge them per torch_npu release.

Recording needs torch (``pip install 'ascend-doctor[torch]'``); everything else does not::

    from ascend_doctor.opcheck.recorder import record_ops    # imports torch
    from ascend_doctor.opcheck.manifest import load
    from ascend_doctor.opcheck.check import check

    with record_ops(mode="fake") as rec:          # eager | fake | meta (choices.Mode)
        model = build_model()                     # fake: no weights are allocated
        model(inputs).sum().backward()
    rec.save("model.ops.json")

    report = check(load("model.ops.json"), "2.1.0.post10", "26.1.0")
    report.verdict        # breaks | slower | changes | same
    report.to_json()      # {"schema": 1, "ops": [{"op", "from", "to", "change", ...}], ...}

Modules: ``choices`` (the recording modes, --fail-on levels and simulated chips), ``recorder``
(torch), ``runner`` (child process of ``opcheck record``), ``manifest`` (the JSON format),
``classify`` (status of an op on one release), ``diff`` (two releases, the summary), ``check``
(both together), ``render`` (text / Markdown), ``replay`` (run a manifest through runtime_sim's
simulated NPU). This package file imports none of them: the command line reads ``choices``
without loading the rest.
"""
