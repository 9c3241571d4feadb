"""A tiny block language model for the frameworks that take any ``nn.Module`` (accelerate,
Lightning), and the token batches it trains on."""

from __future__ import annotations

import torch
import torch.nn as nn

DIM, VOCAB, SEQ = 32, 64, 8


class Block(nn.Module):
    """A residual MLP block: the unit accelerate's transformer-based wrap shards."""

    def __init__(self):
        super().__init__()
        self.norm = nn.LayerNorm(DIM)
        self.up = nn.Linear(DIM, 2 * DIM)
        self.down = nn.Linear(2 * DIM, DIM)

    def forward(self, x):
        return x + self.down(torch.nn.functional.gelu(self.up(self.norm(x))))


class TinyLM(nn.Module):
    """Embedding, ``blocks`` residual blocks, a linear head."""

    def __init__(self, blocks: int = 2):
        super().__init__()
        self.embed = nn.Embedding(VOCAB, DIM)
        self.blocks = nn.ModuleList(Block() for _ in range(blocks))
        self.head = nn.Linear(DIM, VOCAB)

    def forward(self, ids):
        x = self.embed(ids)
        for block in self.blocks:
            x = block(x)
        return self.head(x)


def batches(rank: int, n: int, batch: int = 2) -> list[torch.Tensor]:
    """This rank's ``n`` microbatches of token ids (a generator seeded by the rank)."""
    g = torch.Generator().manual_seed(100 + rank)
    return [torch.randint(0, VOCAB, (batch, SEQ + 1), generator=g) for _ in range(n)]
