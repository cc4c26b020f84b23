"""Pre-upgrade operator check: record a model's aten ops on CPU, judge them per torch_npu release.

Recording needs torch (``pip install 'ascend-doctor[torch]'``); everything else does not::

    from ascend_doctor.opcheck import record_ops, load_manifest, check

    with record_ops(mode="fake") as rec:          # eager | fake | meta
        model = build_model()                     # fake: no weights are allocated
        model(inputs).sum().backward()
    rec.save("model.ops.json")

    report = check(load_manifest("model.ops.json"), "2.1.0.post10", "26.1.0")
    report.verdict        # breaks | slower | changes | same
    report.to_json()      # {"schema": 1, "ops": [{"op", "from", "to", "change", ...}], ...}

Modules: ``recorder`` (torch), ``runner`` (child process of ``opcheck record``),
``manifest`` (the JSON format), ``classify`` (status of an op on one release), ``diff``
(two releases, the summary), ``render`` (text / Markdown), ``replay`` (run a manifest
through runtime_sim's simulated NPU).
"""
from __future__ import annotations

from typing import Any

from ascend_doctor.opcheck.check import check, status_matrix
from ascend_doctor.opcheck.manifest import Manifest, ManifestError
from ascend_doctor.opcheck.manifest import load as load_manifest


def record_ops(*args: Any, **kwargs: Any):
    """``recorder.record_ops`` (imported on use so that torch is only needed for recording)."""
    from ascend_doctor.opcheck.recorder import record_ops as _record_ops

    return _record_ops(*args, **kwargs)


__all__ = ["Manifest", "ManifestError", "check", "load_manifest", "record_ops", "status_matrix"]
