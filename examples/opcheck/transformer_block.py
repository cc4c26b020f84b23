"""A small GPT-style transformer block, trained for one step on CPU (forward, backward, AdamW).

    ascend-doctor opcheck record -o block.ops.json -- python examples/opcheck/transformer_block.py
    ascend-doctor opcheck compare block.ops.json --from 2.1.0.post10 --to 2.7.1.post8

The optimizer uses ``foreach=True`` because that is what PyTorch picks on an NPU (it
defaults to the multi-tensor ``_foreach_*`` kernels on CUDA, XPU and the PrivateUse1
device, but not on CPU), so the recording shows the ops an NPU run would use.
"""
from __future__ import annotations

import argparse

import torch
import torch.nn.functional as F
from torch import nn


class Block(nn.Module):
    def __init__(self, dim: int = 64, heads: int = 4, mlp: int = 256, dropout: float = 0.1) -> None:
        super().__init__()
        self.heads = heads
        self.ln1 = nn.LayerNorm(dim)
        self.qkv = nn.Linear(dim, 3 * dim)
        self.proj = nn.Linear(dim, dim)
        self.ln2 = nn.LayerNorm(dim)
        self.fc1 = nn.Linear(dim, mlp)
        self.fc2 = nn.Linear(mlp, dim)
        self.drop = nn.Dropout(dropout)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, s, d = x.shape
        q, k, v = self.qkv(self.ln1(x)).split(d, dim=-1)
        q, k, v = (t.view(b, s, self.heads, d // self.heads).transpose(1, 2) for t in (q, k, v))
        att = F.scaled_dot_product_attention(q, k, v, dropout_p=0.1 if self.training else 0.0, is_causal=True)
        x = x + self.drop(self.proj(att.transpose(1, 2).reshape(b, s, d)))
        return x + self.drop(self.fc2(F.gelu(self.fc1(self.ln2(x)))))


def build(dim: int = 64) -> nn.Module:
    return Block(dim=dim)


def run(model: nn.Module, batch: int = 2, seq: int = 16, train: bool = True) -> torch.Tensor:
    dim = model.ln1.normalized_shape[0]
    x = torch.randn(batch, seq, dim)
    if not train:
        model.eval()
        with torch.no_grad():
            return model(x)
    model.train()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3, foreach=True)
    loss = model(x).pow(2).mean()
    loss.backward()
    opt.step()
    opt.zero_grad()
    return loss


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--eval", action="store_true", help="inference only (no_grad)")
    args = p.parse_args()
    torch.manual_seed(0)
    out = run(build(), train=not args.eval)
    print("transformer block:", "eval" if args.eval else "train step", tuple(out.shape))


if __name__ == "__main__":
    main()
