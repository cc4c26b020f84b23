"""A diffusion UNet block (time-conditioned ResNet block, self- and cross-attention,
down- and up-sampling), one denoising forward pass on CPU.

    ascend-doctor opcheck record -o unet.ops.json -- python examples/opcheck/unet_block.py
    ascend-doctor opcheck compare unet.ops.json --from 8.0.0 --to 8.3.RC1
"""
from __future__ import annotations

import argparse
import math

import torch
import torch.nn.functional as F
from torch import nn


def timestep_embedding(t: torch.Tensor, dim: int) -> torch.Tensor:
    half = dim // 2
    freqs = torch.exp(-math.log(10000.0) * torch.arange(half, dtype=torch.float32) / half)
    args = t.float()[:, None] * freqs[None]
    return torch.cat([torch.cos(args), torch.sin(args)], dim=-1)


class ResBlock(nn.Module):
    def __init__(self, cin: int, cout: int, tdim: int) -> None:
        super().__init__()
        self.norm1 = nn.GroupNorm(8, cin)
        self.conv1 = nn.Conv2d(cin, cout, 3, padding=1)
        self.temb = nn.Linear(tdim, cout)
        self.norm2 = nn.GroupNorm(8, cout)
        self.conv2 = nn.Conv2d(cout, cout, 3, padding=1)
        self.skip = nn.Conv2d(cin, cout, 1) if cin != cout else nn.Identity()

    def forward(self, x: torch.Tensor, temb: torch.Tensor) -> torch.Tensor:
        h = self.conv1(F.silu(self.norm1(x)))
        h = h + self.temb(F.silu(temb))[:, :, None, None]
        h = self.conv2(F.silu(self.norm2(h)))
        return self.skip(x) + h


class AttnBlock(nn.Module):
    """Self-attention over pixels, then cross-attention to a text context."""

    def __init__(self, ch: int, ctx_dim: int, heads: int = 4) -> None:
        super().__init__()
        self.heads = heads
        self.norm = nn.GroupNorm(8, ch)
        self.qkv = nn.Linear(ch, 3 * ch)
        self.q = nn.Linear(ch, ch)
        self.kv = nn.Linear(ctx_dim, 2 * ch)
        self.out = nn.Linear(ch, ch)

    def _heads(self, t: torch.Tensor) -> torch.Tensor:
        b, n, c = t.shape
        return t.view(b, n, self.heads, c // self.heads).transpose(1, 2)

    def forward(self, x: torch.Tensor, ctx: torch.Tensor) -> torch.Tensor:
        b, c, hgt, wid = x.shape
        h = self.norm(x).flatten(2).transpose(1, 2)
        q, k, v = (self._heads(t) for t in self.qkv(h).chunk(3, dim=-1))
        h = h + F.scaled_dot_product_attention(q, k, v).transpose(1, 2).reshape(b, -1, c)
        k2, v2 = (self._heads(t) for t in self.kv(ctx).chunk(2, dim=-1))
        h = h + F.scaled_dot_product_attention(self._heads(self.q(h)), k2, v2).transpose(1, 2).reshape(b, -1, c)
        return x + self.out(h).transpose(1, 2).reshape(b, c, hgt, wid)


class UNetBlock(nn.Module):
    def __init__(self, ch: int = 32, ctx_dim: int = 48, tdim: int = 64) -> None:
        super().__init__()
        self.tdim = tdim
        self.time = nn.Sequential(nn.Linear(tdim, tdim), nn.SiLU(), nn.Linear(tdim, tdim))
        self.inp = nn.Conv2d(4, ch, 3, padding=1)
        self.down_res = ResBlock(ch, 2 * ch, tdim)
        self.down = nn.Conv2d(2 * ch, 2 * ch, 3, stride=2, padding=1)
        self.mid_res = ResBlock(2 * ch, 2 * ch, tdim)
        self.mid_attn = AttnBlock(2 * ch, ctx_dim)
        self.up_res = ResBlock(4 * ch, ch, tdim)
        self.outp = nn.Sequential(nn.GroupNorm(8, ch), nn.SiLU(), nn.Conv2d(ch, 4, 3, padding=1))

    def forward(self, x: torch.Tensor, t: torch.Tensor, ctx: torch.Tensor) -> torch.Tensor:
        temb = self.time(timestep_embedding(t, self.tdim))
        h0 = self.down_res(self.inp(x), temb)
        h = self.mid_attn(self.mid_res(self.down(h0), temb), ctx)
        h = F.interpolate(h, scale_factor=2.0, mode="nearest")
        h = self.up_res(torch.cat([h, h0], dim=1), temb)
        return self.outp(h)


def build() -> nn.Module:
    return UNetBlock()


def run(model: nn.Module, batch: int = 2, size: int = 16, train: bool = False) -> torch.Tensor:
    x = torch.randn(batch, 4, size, size)
    t = torch.randint(0, 1000, (batch,))
    ctx = torch.randn(batch, 7, 48)
    if train:
        loss = F.mse_loss(model(x, t, ctx), torch.randn_like(x))
        loss.backward()
        return loss
    model.eval()
    with torch.no_grad():
        return model(x, t, ctx)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--train", action="store_true", help="forward + backward of an MSE loss")
    args = p.parse_args()
    torch.manual_seed(0)
    out = run(build(), train=args.train)
    print("unet block:", "train" if args.train else "denoise", tuple(out.shape))


if __name__ == "__main__":
    main()
