"""The small deterministic models of the FSDP scenarios: an MLP, a stack of residual
blocks, uneven shapes, a branch unused on some steps, and a tiny GPT with tied weights;
:func:`build_model` makes one by name, :func:`block_modules` says which submodules get
their own ``fully_shard`` in the nested layout."""

from __future__ import annotations

import math
from typing import Any

import torch
import torch.nn as nn
import torch.nn.functional as F


class MLP(nn.Module):
    def __init__(self, dim: int = 16, hidden: int = 32, out: int | None = None):
        super().__init__()
        self.in_proj = nn.Linear(dim, hidden)
        self.out_proj = nn.Linear(hidden, out or dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.out_proj(F.gelu(self.in_proj(x)))


class ResBlock(nn.Module):
    """LayerNorm + MLP with a residual; optional activation checkpointing and an
    injectable failure (``fail_next``) for the recovery tests."""

    def __init__(self, dim: int = 16, hidden: int = 32, checkpoint: bool = False):
        super().__init__()
        self.norm = nn.LayerNorm(dim)
        self.mlp = MLP(dim, hidden)
        self.checkpoint = checkpoint
        self.fail_next = False

    def _inner(self, x: torch.Tensor) -> torch.Tensor:
        return x + self.mlp(self.norm(x))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if self.fail_next:
            self.fail_next = False
            raise RuntimeError("injected failure in ResBlock.forward")
        if self.checkpoint:
            from torch.utils.checkpoint import checkpoint

            return checkpoint(self._inner, x, use_reentrant=False)
        return self._inner(x)


class Stack(nn.Module):
    """in_proj -> n ResBlocks -> out_proj."""

    def __init__(
        self, dim: int = 16, hidden: int = 32, n_blocks: int = 3, out: int = 8, checkpoint=False
    ):
        super().__init__()
        self.in_proj = nn.Linear(dim, dim)
        self.blocks = nn.ModuleList(ResBlock(dim, hidden, checkpoint) for _ in range(n_blocks))
        self.out_proj = nn.Linear(dim, out)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.in_proj(x)
        for block in self.blocks:
            h = block(h)
        return self.out_proj(h)


class UnevenModel(nn.Module):
    """Shapes not divisible by the world size: Linear(7, 13), Linear(13, 5), a bias of 5,
    a (3, 13) weight (fewer rows than 4 ranks) and an unused-on-odd-steps parameter."""

    def __init__(self):
        super().__init__()
        self.l1 = nn.Linear(7, 13)
        self.l2 = nn.Linear(13, 5)
        self.extra_bias = nn.Parameter(torch.randn(5) * 0.1)
        self.side = nn.Linear(13, 3, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = torch.tanh(self.l1(x))
        return self.l2(h) + self.extra_bias + self.side(h).sum(-1, keepdim=True)


class SometimesUnused(nn.Module):
    """``branch`` only contributes when ``use_branch`` is set."""

    def __init__(self, dim: int = 12):
        super().__init__()
        self.trunk = nn.Linear(dim, dim)
        self.branch = nn.Linear(dim, dim)
        self.head = nn.Linear(dim, 3)
        self.use_branch = True

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = torch.relu(self.trunk(x))
        if self.use_branch:
            h = h + self.branch(h)
        return self.head(h)


class CausalSelfAttention(nn.Module):
    def __init__(self, dim: int, n_heads: int):
        super().__init__()
        self.n_heads = n_heads
        self.qkv = nn.Linear(dim, 3 * dim)
        self.proj = nn.Linear(dim, dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, t, c = x.shape
        q, k, v = self.qkv(x).split(c, dim=-1)
        q, k, v = (z.view(b, t, self.n_heads, c // self.n_heads).transpose(1, 2) for z in (q, k, v))
        att = (q @ k.transpose(-2, -1)) / math.sqrt(c // self.n_heads)
        mask = torch.ones(t, t, dtype=torch.bool, device=x.device).tril()
        att = att.masked_fill(~mask, float("-inf")).softmax(dim=-1)
        y = (att @ v).transpose(1, 2).reshape(b, t, c)
        return self.proj(y)


class GPTBlock(nn.Module):
    def __init__(self, dim: int, n_heads: int, checkpoint: bool = False):
        super().__init__()
        self.ln1 = nn.LayerNorm(dim)
        self.attn = CausalSelfAttention(dim, n_heads)
        self.ln2 = nn.LayerNorm(dim)
        self.mlp = MLP(dim, 2 * dim)
        self.checkpoint = checkpoint

    def _inner(self, x: torch.Tensor) -> torch.Tensor:
        x = x + self.attn(self.ln1(x))
        return x + self.mlp(self.ln2(x))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if self.checkpoint:
            from torch.utils.checkpoint import checkpoint

            return checkpoint(self._inner, x, use_reentrant=False)
        return self._inner(x)


class TinyGPT(nn.Module):
    """Embedding + learned positions, causal attention blocks, final LayerNorm and an
    lm-head whose weight is tied to the token embedding."""

    def __init__(
        self,
        vocab: int = 37,
        dim: int = 16,
        n_heads: int = 2,
        n_layers: int = 2,
        seq_len: int = 8,
        checkpoint: bool = False,
    ):
        super().__init__()
        self.tok_emb = nn.Embedding(vocab, dim)
        self.pos_emb = nn.Parameter(torch.randn(seq_len, dim) * 0.02)
        self.blocks = nn.ModuleList(GPTBlock(dim, n_heads, checkpoint) for _ in range(n_layers))
        self.ln_f = nn.LayerNorm(dim)
        self.lm_head = nn.Linear(dim, vocab, bias=False)
        self.lm_head.weight = self.tok_emb.weight  # tied

    def forward(self, idx: torch.Tensor) -> torch.Tensor:
        t = idx.shape[1]
        h = self.tok_emb(idx) + self.pos_emb[:t]
        for block in self.blocks:
            h = block(h)
        return self.lm_head(self.ln_f(h))


def build_model(kind: str, seed: int = 0, **kwargs: Any) -> nn.Module:
    torch.manual_seed(seed)
    if kind == "mlp":
        return MLP(**kwargs)
    if kind == "stack":
        return Stack(**kwargs)
    if kind == "uneven":
        return UnevenModel(**kwargs)
    if kind == "unused":
        return SometimesUnused(**kwargs)
    if kind == "gpt":
        return TinyGPT(**kwargs)
    raise ValueError(f"unknown model kind {kind!r}")


def block_modules(model: nn.Module) -> list[nn.Module]:
    """The modules that get their own ``fully_shard`` in the nested layout."""
    if isinstance(model, (Stack, TinyGPT)):
        return list(model.blocks)
    if isinstance(model, MLP):
        return [model.in_proj]
    if isinstance(model, UnevenModel):
        return [model.l1, model.l2]
    if isinstance(model, SometimesUnused):
        return [model.branch]
    raise ValueError(f"no block layout for {type(model).__name__}")
