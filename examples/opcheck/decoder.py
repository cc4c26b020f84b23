"""A LLaMA-style decoder-only language model in plain PyTorch, built from a config.

Used by the opcheck examples and by ``bench/opcheck_record.py``: with the 7B config and
fake or meta tensors it can be recorded without allocating its ~6.7e9 parameters.

    ascend-doctor opcheck record --mode fake -o decoder.ops.json -- python examples/opcheck/decoder.py --config 7b
"""
from __future__ import annotations

import argparse
import math
from dataclasses import dataclass
from typing import Optional

import torch
import torch.nn.functional as F
from torch import nn


@dataclass
class DecoderConfig:
    vocab_size: int = 32000
    hidden_size: int = 4096
    intermediate_size: int = 11008
    num_layers: int = 32
    num_heads: int = 32
    num_kv_heads: int = 32
    max_positions: int = 4096
    rms_eps: float = 1e-6
    rope_theta: float = 10000.0


CONFIGS = {
    "7b": DecoderConfig(),
    "tiny": DecoderConfig(vocab_size=256, hidden_size=64, intermediate_size=172, num_layers=2, num_heads=4, num_kv_heads=2, max_positions=128),
}


def param_count(cfg: DecoderConfig) -> int:
    head_dim = cfg.hidden_size // cfg.num_heads
    attn = cfg.hidden_size * (cfg.hidden_size + 2 * cfg.num_kv_heads * head_dim) + cfg.hidden_size * cfg.hidden_size
    mlp = 3 * cfg.hidden_size * cfg.intermediate_size
    per_layer = attn + mlp + 2 * cfg.hidden_size
    return cfg.num_layers * per_layer + 2 * cfg.vocab_size * cfg.hidden_size + cfg.hidden_size


class RMSNorm(nn.Module):
    def __init__(self, dim: int, eps: float) -> None:
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(dim))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        var = x.float().pow(2).mean(-1, keepdim=True)
        return (x.float() * torch.rsqrt(var + self.eps)).to(x.dtype) * self.weight


def rotary_tables(cfg: DecoderConfig, seq_len: int, device: torch.device, dtype: torch.dtype):
    head_dim = cfg.hidden_size // cfg.num_heads
    inv_freq = 1.0 / (cfg.rope_theta ** (torch.arange(0, head_dim, 2, device=device, dtype=torch.float32) / head_dim))
    t = torch.arange(seq_len, device=device, dtype=torch.float32)
    freqs = torch.outer(t, inv_freq)
    emb = torch.cat((freqs, freqs), dim=-1)
    return emb.cos().to(dtype), emb.sin().to(dtype)


def rotate_half(x: torch.Tensor) -> torch.Tensor:
    a, b = x.chunk(2, dim=-1)
    return torch.cat((-b, a), dim=-1)


class Attention(nn.Module):
    def __init__(self, cfg: DecoderConfig) -> None:
        super().__init__()
        self.cfg = cfg
        self.head_dim = cfg.hidden_size // cfg.num_heads
        self.q_proj = nn.Linear(cfg.hidden_size, cfg.num_heads * self.head_dim, bias=False)
        self.k_proj = nn.Linear(cfg.hidden_size, cfg.num_kv_heads * self.head_dim, bias=False)
        self.v_proj = nn.Linear(cfg.hidden_size, cfg.num_kv_heads * self.head_dim, bias=False)
        self.o_proj = nn.Linear(cfg.num_heads * self.head_dim, cfg.hidden_size, bias=False)

    def forward(self, x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
        b, s, _ = x.shape
        q = self.q_proj(x).view(b, s, self.cfg.num_heads, self.head_dim).transpose(1, 2)
        k = self.k_proj(x).view(b, s, self.cfg.num_kv_heads, self.head_dim).transpose(1, 2)
        v = self.v_proj(x).view(b, s, self.cfg.num_kv_heads, self.head_dim).transpose(1, 2)
        q = q * cos + rotate_half(q) * sin
        k = k * cos + rotate_half(k) * sin
        if self.cfg.num_kv_heads != self.cfg.num_heads:
            rep = self.cfg.num_heads // self.cfg.num_kv_heads
            k = k.repeat_interleave(rep, dim=1)
            v = v.repeat_interleave(rep, dim=1)
        out = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        return self.o_proj(out.transpose(1, 2).reshape(b, s, -1))


class MLP(nn.Module):
    def __init__(self, cfg: DecoderConfig) -> None:
        super().__init__()
        self.gate_proj = nn.Linear(cfg.hidden_size, cfg.intermediate_size, bias=False)
        self.up_proj = nn.Linear(cfg.hidden_size, cfg.intermediate_size, bias=False)
        self.down_proj = nn.Linear(cfg.intermediate_size, cfg.hidden_size, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.down_proj(F.silu(self.gate_proj(x)) * self.up_proj(x))


class DecoderLayer(nn.Module):
    def __init__(self, cfg: DecoderConfig) -> None:
        super().__init__()
        self.input_norm = RMSNorm(cfg.hidden_size, cfg.rms_eps)
        self.attn = Attention(cfg)
        self.post_norm = RMSNorm(cfg.hidden_size, cfg.rms_eps)
        self.mlp = MLP(cfg)

    def forward(self, x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
        x = x + self.attn(self.input_norm(x), cos, sin)
        return x + self.mlp(self.post_norm(x))


class Decoder(nn.Module):
    def __init__(self, cfg: DecoderConfig) -> None:
        super().__init__()
        self.cfg = cfg
        self.embed = nn.Embedding(cfg.vocab_size, cfg.hidden_size)
        self.layers = nn.ModuleList(DecoderLayer(cfg) for _ in range(cfg.num_layers))
        self.norm = RMSNorm(cfg.hidden_size, cfg.rms_eps)
        self.lm_head = nn.Linear(cfg.hidden_size, cfg.vocab_size, bias=False)

    def forward(self, ids: torch.Tensor, labels: Optional[torch.Tensor] = None) -> torch.Tensor:
        x = self.embed(ids)
        cos, sin = rotary_tables(self.cfg, ids.shape[1], ids.device, x.dtype)
        for layer in self.layers:
            x = layer(x, cos, sin)
        logits = self.lm_head(self.norm(x))
        if labels is None:
            return logits
        return F.cross_entropy(logits.float().view(-1, logits.shape[-1]), labels.view(-1))


def build(config: str = "tiny", dtype: torch.dtype = torch.bfloat16) -> Decoder:
    """Build directly in ``dtype`` (no ``.to(dtype)`` afterwards: fake-tensor parameters
    cannot be converted in place, and a 7B float32 copy would not fit in memory)."""
    cfg = CONFIGS[config]
    before = torch.get_default_dtype()
    torch.set_default_dtype(dtype)
    try:
        return Decoder(cfg)
    finally:
        torch.set_default_dtype(before)


def run(model: Decoder, batch: int = 1, seq: int = 128, train: bool = False) -> torch.Tensor:
    device = next(model.parameters()).device
    ids = torch.randint(0, model.cfg.vocab_size, (batch, seq), device=device)
    if train:
        loss = model(ids, labels=ids)
        loss.backward()
        return loss
    with torch.no_grad():
        return model(ids)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--config", choices=sorted(CONFIGS), default="tiny")
    p.add_argument("--seq", type=int, default=128)
    p.add_argument("--train", action="store_true", help="forward + backward of the LM loss")
    args = p.parse_args()
    cfg = CONFIGS[args.config]
    print(f"decoder {args.config}: {param_count(cfg) / 1e9:.2f}e9 parameters")
    model = build(args.config)
    out = run(model, seq=args.seq, train=args.train)
    print("output", tuple(out.shape), out.dtype)


if __name__ == "__main__":
    main()
