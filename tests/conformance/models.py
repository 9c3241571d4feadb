"""Small models of the conformance scenarios, each with the one feature a scenario needs.

* :class:`MoEModel`: dense layers around Mixture-of-Experts blocks whose experts are
  ``[num_experts, d, h]`` parameters (torchtitan's layout), routed softly so that every
  expert gets a gradient on every rank;
* :class:`Layers` / :class:`NamedLayers`: an ``nn.ModuleList`` / ``nn.ModuleDict``
  subclass with a ``forward`` of its own;
* :class:`ViewOut`: a block whose output is a view (what an in-place op on the output
  breaks in torch);
* :class:`ScaledBlock`: a block with a scale vector that meta-device initialisation
  computes from another weight after ``fully_shard``;
* :class:`Shapes`: parameters and buffers of every shape, 0-dim and 1-element included.
"""

from __future__ import annotations

import torch
import torch.nn as nn
import torch.nn.functional as F

from tests.fsdp.models import Stack


class Experts(nn.Module):
    """``num_experts`` two-layer MLPs stored as ``[E, d, h]`` / ``[E, h, d]`` weights."""

    def __init__(self, dim: int, hidden: int, num_experts: int) -> None:
        super().__init__()
        self.w1 = nn.Parameter(torch.randn(num_experts, dim, hidden) * dim**-0.5)
        self.w2 = nn.Parameter(torch.randn(num_experts, hidden, dim) * hidden**-0.5)

    def forward(self, x: torch.Tensor, gates: torch.Tensor) -> torch.Tensor:
        h = F.gelu(torch.einsum("bd,edh->beh", x, self.w1))
        out = torch.einsum("beh,ehd->bed", h, self.w2)
        return (gates.unsqueeze(-1) * out).sum(1)


class MoEBlock(nn.Module):
    """LayerNorm, a router, and the experts, with a residual."""

    def __init__(self, dim: int, hidden: int, num_experts: int) -> None:
        super().__init__()
        self.norm = nn.LayerNorm(dim)
        self.router = nn.Linear(dim, num_experts, bias=False)
        self.experts = Experts(dim, hidden, num_experts)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.norm(x)
        return x + self.experts(h, self.router(h).softmax(-1))


class MoEModel(Stack):
    """``in_proj -> MoEBlock x n -> out_proj`` (a :class:`~tests.fsdp.models.Stack` whose
    blocks are MoE blocks)."""

    def __init__(self, dim: int = 8, hidden: int = 12, dout: int = 4, num_experts: int = 4,
                 n_blocks: int = 2) -> None:
        super().__init__(dim=dim, n_blocks=0, out=dout)
        self.blocks = nn.ModuleList(MoEBlock(dim, hidden, num_experts) for _ in range(n_blocks))


class Layers(nn.ModuleList):
    """A ModuleList that runs its layers in order: a container *with* a forward."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for layer in self:
            x = torch.tanh(layer(x))
        return x


class NamedLayers(nn.ModuleDict):
    """A ModuleDict that runs its layers in key order."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for layer in self.values():
            x = torch.tanh(layer(x))
        return x


class ViewOut(nn.Module):
    """A linear layer whose output is returned as a view of the result."""

    def __init__(self, dim: int) -> None:
        super().__init__()
        self.lin = nn.Linear(dim, dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.lin(x).view(x.shape[0], -1)


class ScaledBlock(nn.Module):
    """``scale * tanh(proj(x))``; ``scale`` is meant to be set from ``proj.weight``."""

    def __init__(self, dim: int) -> None:
        super().__init__()
        self.proj = nn.Linear(dim, dim)
        self.scale = nn.Parameter(torch.ones(dim))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.scale * torch.tanh(self.proj(x))


class Shapes(nn.Module):
    """Parameters of shapes (5, 3), (3,), (1,), (1, 1) and a 0-dim one (to be ignored by
    FSDP: neither library shards scalars); buffers of shapes (), (1,) and (4, 2)."""

    def __init__(self) -> None:
        super().__init__()
        self.w = nn.Parameter(torch.randn(5, 3))
        self.b = nn.Parameter(torch.randn(3))
        self.one = nn.Parameter(torch.randn(1))
        self.one_2d = nn.Parameter(torch.randn(1, 1))
        self.scalar = nn.Parameter(torch.tensor(0.5))
        self.register_buffer("step", torch.tensor(3.0))
        self.register_buffer("single", torch.ones(1))
        self.register_buffer("table", torch.arange(8.0).reshape(4, 2))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = x @ self.w + self.b + self.one * self.one_2d.squeeze(0) * self.scalar
        return y * self.single + self.step * self.table.sum() * 1e-3
