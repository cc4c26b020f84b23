"""nn.TransformerEncoderLayer at inference (eval + no_grad).

PyTorch runs the whole layer as one fused op, ``aten::_transformer_encoder_layer_fwd``,
which no torch_npu release implements: on an NPU the layer falls back to the CPU
(Ascend/pytorch issue #51). opcheck flags it on every release.

    ascend-doctor opcheck record -o encoder.ops.json -- python examples/opcheck/encoder_layer_eval.py
    ascend-doctor opcheck compare encoder.ops.json --from 2.1.0.post10 --to 2.7.1.post8

``--no-fastpath`` turns PyTorch's fast path off (torch.backends.mha.set_fastpath_enabled):
the layer then runs as ordinary ops that have NPU kernels. ``--mha`` also runs a bare
nn.MultiheadAttention in eval, whose fast path is ``aten::_native_multi_head_attention``
(an NPU kernel from release 7.1.0 on).
"""
from __future__ import annotations

import argparse

import torch
from torch import nn


def build(d_model: int = 64, nhead: int = 4) -> nn.Module:
    layer = nn.TransformerEncoderLayer(d_model=d_model, nhead=nhead, dim_feedforward=128, batch_first=True)
    return layer.eval()


def run(model: nn.Module, batch: int = 2, seq: int = 10, fastpath: bool = True, mha: bool = False) -> torch.Tensor:
    x = torch.randn(batch, seq, model.self_attn.embed_dim)
    before = torch.backends.mha.get_fastpath_enabled()
    torch.backends.mha.set_fastpath_enabled(fastpath)
    try:
        with torch.no_grad():
            out = model(x)
            if mha:
                attn = nn.MultiheadAttention(model.self_attn.embed_dim, model.self_attn.num_heads, batch_first=True).eval()
                out = out + attn(x, x, x, need_weights=False)[0]
    finally:
        torch.backends.mha.set_fastpath_enabled(before)
    return out


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--no-fastpath", action="store_true", help="disable PyTorch's fused eval fast path")
    p.add_argument("--mha", action="store_true", help="also run nn.MultiheadAttention in eval")
    args = p.parse_args()
    torch.manual_seed(0)
    out = run(build(), fastpath=not args.no_fastpath, mha=args.mha)
    print("encoder layer (eval):", tuple(out.shape))


if __name__ == "__main__":
    main()
