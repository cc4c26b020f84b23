"""Shared fixtures: the example models of examples/opcheck, recorded once per session."""
from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from typing import Any, Dict

import pytest

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = REPO / "examples" / "opcheck"
DATA = Path(__file__).resolve().parent / "data"


def load_example(name: str) -> Any:
    """Import examples/opcheck/<name>.py as a module (they are scripts, not a package)."""
    path = EXAMPLES / f"{name}.py"
    spec = importlib.util.spec_from_file_location(f"opcheck_example_{name}", path)
    assert spec and spec.loader
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod
    spec.loader.exec_module(mod)
    return mod


@pytest.fixture(scope="session")
def recorded() -> Dict[str, Any]:
    """Manifests of the example models, recorded in this process (needs torch)."""
    torch = pytest.importorskip("torch")
    from ascend_doctor.opcheck.recorder import record_ops

    out: Dict[str, Any] = {}
    torch.manual_seed(0)
    block, unet, enc = load_example("transformer_block"), load_example("unet_block"), load_example("encoder_layer_eval")

    model = block.build()
    with record_ops() as rec:
        block.run(model, train=True)
    out["block"] = rec.manifest()

    model = unet.build()
    with record_ops() as rec:
        unet.run(model)
    out["unet"] = rec.manifest()

    # Only the layer's forward is recorded here (inputs are made outside the block).
    model = enc.build()
    x = torch.randn(2, 10, 64)
    with record_ops() as rec, torch.no_grad():
        model(x)
    out["encoder_eval"] = rec.manifest()

    with record_ops(mode="fake") as rec:
        model = enc.build()
        x = torch.randn(2, 10, 64)
        with torch.no_grad():
            model(x)
    out["encoder_eval_fake"] = rec.manifest()

    with record_ops(mode="meta") as rec:
        model = enc.build()
        x = torch.randn(2, 10, 64)
        with torch.no_grad():
            model(x)
    out["encoder_eval_meta"] = rec.manifest()
    return out
