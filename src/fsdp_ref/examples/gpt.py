"""A small GPT-like transformer for the demo, the benchmarks and the memory model.

Pre-norm blocks of causal self-attention and an MLP, a token embedding whose weight is
tied to the output head, and learned positions: the shapes FSDP meets in practice
(2-D weights, 1-D biases and norms, a tied parameter) in a few dozen lines.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
import torch.nn as nn
import torch.nn.functional as F

__all__ = ["Block", "GPT", "GPTConfig"]


@dataclass(frozen=True)
class GPTConfig:
    """Model shape.

    Attributes:
        vocab_size: number of tokens.
        seq_len: maximum sequence length (size of the position table).
        dim: hidden size.
        n_layers: number of transformer blocks.
        n_heads: attention heads per block (must divide ``dim``).
        mlp_ratio: MLP hidden size as a multiple of ``dim``.
    """

    vocab_size: int = 256
    seq_len: int = 64
    dim: int = 64
    n_layers: int = 4
    n_heads: int = 4
    mlp_ratio: int = 4

    def num_params(self) -> int:
        """Parameter count (the tied head counted once), from the shapes alone."""
        d, h = self.dim, self.dim * self.mlp_ratio
        per_block = 2 * 2 * d + (3 * d * d + 3 * d) + (d * d + d) + (d * h + h) + (h * d + d)
        return self.vocab_size * d + self.seq_len * d + self.n_layers * per_block + 2 * d


class Block(nn.Module):
    """One pre-norm transformer block: ``x + attn(ln(x))`` then ``x + mlp(ln(x))``."""

    def __init__(self, cfg: GPTConfig) -> None:
        super().__init__()
        if cfg.dim % cfg.n_heads:
            raise ValueError(f"dim {cfg.dim} must be divisible by n_heads {cfg.n_heads}")
        self.n_heads = cfg.n_heads
        self.ln1 = nn.LayerNorm(cfg.dim)
        self.qkv = nn.Linear(cfg.dim, 3 * cfg.dim)
        self.proj = nn.Linear(cfg.dim, cfg.dim)
        self.ln2 = nn.LayerNorm(cfg.dim)
        self.fc = nn.Linear(cfg.dim, cfg.mlp_ratio * cfg.dim)
        self.out = nn.Linear(cfg.mlp_ratio * cfg.dim, cfg.dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """Apply attention then the MLP, each with a residual connection."""
        b, t, d = x.shape
        q, k, v = self.qkv(self.ln1(x)).split(d, dim=-1)
        q, k, v = (z.view(b, t, self.n_heads, d // self.n_heads).transpose(1, 2) for z in (q, k, v))
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.proj(y.transpose(1, 2).reshape(b, t, d))
        return x + self.out(F.gelu(self.fc(self.ln2(x))))


def _init_weights(module: nn.Module) -> None:
    """GPT-2 style init: small normal weights, zero biases, so the initial loss is about
    ``log(vocab_size)`` even with the head tied to the embedding."""
    if isinstance(module, (nn.Linear, nn.Embedding)):
        nn.init.normal_(module.weight, std=0.02)
    if isinstance(module, nn.Linear) and module.bias is not None:
        nn.init.zeros_(module.bias)


class GPT(nn.Module):
    """Token and position embeddings, ``n_layers`` blocks, a final norm, a tied head."""

    def __init__(self, cfg: GPTConfig) -> None:
        super().__init__()
        self.cfg = cfg
        self.tok = nn.Embedding(cfg.vocab_size, cfg.dim)
        self.pos = nn.Embedding(cfg.seq_len, cfg.dim)
        self.blocks = nn.ModuleList(Block(cfg) for _ in range(cfg.n_layers))
        self.norm = nn.LayerNorm(cfg.dim)
        self.head = nn.Linear(cfg.dim, cfg.vocab_size, bias=False)
        self.head.weight = self.tok.weight
        self.apply(_init_weights)

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        """Logits of shape ``(batch, seq, vocab)`` for integer ``tokens``."""
        positions = torch.arange(tokens.shape[1], device=tokens.device)
        x = self.tok(tokens) + self.pos(positions)
        for block in self.blocks:
            x = block(x)
        return self.head(self.norm(x))

    def loss(self, tokens: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        """Mean next-token cross-entropy."""
        logits = self(tokens)
        return F.cross_entropy(logits.flatten(0, 1), targets.flatten())
