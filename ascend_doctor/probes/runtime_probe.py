# Runs inside the target interpreter for `check --tier deep`: import torch_npu, ask the
# runtime for devices, and run one small op on NPU 0. Every step is reported, with the
# exception type and message when it fails, as one JSON object on stdout.
import json
import sys
import traceback

steps = []


def step(name, fn):
    try:
        value = fn()
    except BaseException as exc:  # the point is to report whatever the runtime raises
        tb = traceback.format_exception_only(type(exc), exc)
        steps.append({
            "step": name, "ok": False, "error_type": type(exc).__name__,
            "error": "".join(tb).strip()[-4000:],
        })
        return None, False
    steps.append({"step": name, "ok": True, "value": value})
    return value, True


def import_torch_npu():
    import torch  # noqa: F401
    import torch_npu  # noqa: F401
    return getattr(torch_npu, "__version__", None)


def run():
    _, ok = step("import", import_torch_npu)
    if not ok:
        return
    import torch
    available, ok = step("available", lambda: bool(torch.npu.is_available()))
    if not ok or not available:
        return
    step("device_count", lambda: int(torch.npu.device_count()))

    def small_op():
        x = torch.ones(4, 4).to("npu:0")
        y = (x @ x).sum().item()
        torch.npu.synchronize()
        return y

    step("small_op", small_op)


run()
sys.stdout.write(json.dumps({"steps": steps}) + "\n")
