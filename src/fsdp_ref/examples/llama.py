"""A Llama-like decoder (Llama-2 shapes, no rotary embedding) for the memory simulator.

:mod:`fsdp_ref.tools.simulate` builds it on the ``meta`` device at the sizes of
:data:`PRESETS` to read back what one rank of ``fully_shard`` holds; it is written to be
read (pre-norm blocks, grouped-query attention, SwiGLU MLP, untied head), not trained.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
import torch.nn as nn

__all__ = ["Attention", "Block", "FeedForward", "Llama", "LlamaConfig", "PRESETS", "RMSNorm"]


@dataclass(frozen=True)
class LlamaConfig:
    """Shapes of a Llama-like decoder.

    Attributes:
        vocab_size: tokens in the embedding and the (untied) output head.
        dim: hidden size.
        n_layers: transformer blocks.
        n_heads: query heads.
        n_kv_heads: key/value heads (grouped-query attention); ``None`` means ``n_heads``.
        ffn_dim: hidden size of the SwiGLU MLP.
    """

    vocab_size: int = 32000
    dim: int = 4096
    n_layers: int = 32
    n_heads: int = 32
    n_kv_heads: int | None = None
    ffn_dim: int = 11008

    @property
    def kv_dim(self) -> int:
        """Output size of the key and value projections."""
        return self.dim // self.n_heads * (self.n_kv_heads or self.n_heads)

    def block_params(self) -> int:
        """Parameters of one block: q, k, v, o, w1, w2, w3 and two RMSNorm weights."""
        d = self.dim
        return 2 * d * d + 2 * d * self.kv_dim + 3 * d * self.ffn_dim + 2 * d

    def root_params(self) -> int:
        """Parameters outside the blocks: embedding, final norm and head."""
        return 2 * self.vocab_size * self.dim + self.dim

    def num_params(self) -> int:
        """Total parameter count Ψ."""
        return self.root_params() + self.n_layers * self.block_params()


PRESETS: dict[str, LlamaConfig] = {
    "llama-7b": LlamaConfig(),
    "llama-13b": LlamaConfig(dim=5120, n_layers=40, n_heads=40, ffn_dim=13824),
    "llama-70b": LlamaConfig(dim=8192, n_layers=80, n_heads=64, n_kv_heads=8, ffn_dim=28672),
}
"""Llama-2 shapes (without rotary buffers): 6.7B, 13.0B and 69.0B parameters."""


class RMSNorm(nn.Module):
    """Root-mean-square norm with a learned scale."""

    def __init__(self, dim: int, eps: float = 1e-5) -> None:
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(dim))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """Scale ``x`` by the reciprocal of its RMS over the last dim."""
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight


class Attention(nn.Module):
    """Causal self-attention with grouped key/value heads (no rotary embedding)."""

    def __init__(self, cfg: LlamaConfig) -> None:
        super().__init__()
        self.n_heads, self.n_kv = cfg.n_heads, cfg.n_kv_heads or cfg.n_heads
        self.wq = nn.Linear(cfg.dim, cfg.dim, bias=False)
        self.wk = nn.Linear(cfg.dim, cfg.kv_dim, bias=False)
        self.wv = nn.Linear(cfg.dim, cfg.kv_dim, bias=False)
        self.wo = nn.Linear(cfg.dim, cfg.dim, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """Attend over the sequence, each query only to earlier positions."""
        b, t, d = x.shape
        hd = d // self.n_heads
        q = self.wq(x).view(b, t, self.n_heads, hd).transpose(1, 2)
        k = self.wk(x).view(b, t, self.n_kv, hd).transpose(1, 2)
        v = self.wv(x).view(b, t, self.n_kv, hd).transpose(1, 2)
        y = nn.functional.scaled_dot_product_attention(
            q, k, v, is_causal=True, enable_gqa=self.n_kv != self.n_heads
        )
        return self.wo(y.transpose(1, 2).reshape(b, t, d))


class FeedForward(nn.Module):
    """SwiGLU MLP: ``w2(silu(w1 x) * w3 x)``."""

    def __init__(self, cfg: LlamaConfig) -> None:
        super().__init__()
        self.w1 = nn.Linear(cfg.dim, cfg.ffn_dim, bias=False)
        self.w2 = nn.Linear(cfg.ffn_dim, cfg.dim, bias=False)
        self.w3 = nn.Linear(cfg.dim, cfg.ffn_dim, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """Gated MLP."""
        return self.w2(nn.functional.silu(self.w1(x)) * self.w3(x))


class Block(nn.Module):
    """Pre-norm block: ``x + attention(norm(x))`` then ``x + mlp(norm(x))``."""

    def __init__(self, cfg: LlamaConfig) -> None:
        super().__init__()
        self.attention_norm = RMSNorm(cfg.dim)
        self.attention = Attention(cfg)
        self.ffn_norm = RMSNorm(cfg.dim)
        self.feed_forward = FeedForward(cfg)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """Attention then MLP, each with a residual connection."""
        x = x + self.attention(self.attention_norm(x))
        return x + self.feed_forward(self.ffn_norm(x))


class Llama(nn.Module):
    """Embedding, ``n_layers`` blocks, a final RMSNorm and an untied output head."""

    def __init__(self, cfg: LlamaConfig) -> None:
        super().__init__()
        self.tok_embeddings = nn.Embedding(cfg.vocab_size, cfg.dim)
        self.layers = nn.ModuleList(Block(cfg) for _ in range(cfg.n_layers))
        self.norm = RMSNorm(cfg.dim)
        self.output = nn.Linear(cfg.dim, cfg.vocab_size, bias=False)

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        """Logits for integer ``tokens``."""
        x = self.tok_embeddings(tokens)
        for layer in self.layers:
            x = layer(x)
        return self.output(self.norm(x))
