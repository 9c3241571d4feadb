"""QLoRA with torchao's ``NF4Tensor``: a frozen NF4 base weight and trainable low-rank
adapters in every block (torchtune's ``LoRALinear``, written small), each block sharded
and then the root, trained under torch's ``fully_shard`` and fsdp_ref side by side in
the same rank process (run in the ranks; failures are collected, never raised)."""

from __future__ import annotations

from typing import Any

import torch
import torch.distributed as dist
import torch.nn as nn
from torchao.quantization import to_nf4
from torchao.quantization.quantize_.workflows.nf4.nf4_tensor import NF4Tensor, linear_nf4

from tests.fsdp.common import Report, get_impl, make_mesh, rank_slice
from tests.tolerance import EXACT

DIM = 256  # NF4 quantizes blocks of 64 values, its scales in blocks of 256: each rank
#             needs whole scale blocks (its quantization_factor splits evenly)


class LoRALinear(nn.Module):
    """``linear_nf4(x, W) + B(A(x)) * alpha / rank`` with ``W`` frozen in NF4 (bf16)."""

    def __init__(self, dim: int = DIM, rank: int = 4, alpha: float = 8.0) -> None:
        super().__init__()
        base = torch.randn(dim, dim) / dim**0.5
        self.weight = nn.Parameter(to_nf4(base.to(torch.bfloat16)), requires_grad=False)
        self.lora_a = nn.Linear(dim, rank, bias=False, dtype=torch.bfloat16)
        self.lora_b = nn.Linear(rank, dim, bias=False, dtype=torch.bfloat16)
        nn.init.normal_(self.lora_b.weight, std=0.02)  # (zeros upstream: a test wants grads)
        self.scale = alpha / rank

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return linear_nf4(x, self.weight) + self.lora_b(self.lora_a(x)) * self.scale


class QLoRAModel(nn.Module):
    """Two blocks of ``LoRALinear + ReLU`` and a ``LoRALinear`` head on the root."""

    def __init__(self) -> None:
        super().__init__()
        torch.manual_seed(0)
        self.blocks = nn.ModuleList(LoRALinear() for _ in range(2))
        self.head = LoRALinear()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for block in self.blocks:
            x = torch.relu(block(x))
        return self.head(x)


def _nf4_state(model: nn.Module) -> dict[str, torch.Tensor]:
    """Every NF4 weight's local quantized bytes and scales, copied."""
    out = {}
    for name, p in model.named_parameters():
        local = p.to_local() if hasattr(p, "to_local") else p
        if isinstance(local, NF4Tensor):
            for inner in ("quantized_data", "quantized_scalers", "quantization_factor"):
                out[f"{name}.{inner}"] = getattr(local, inner).clone()
    return out


def qlora_vs_torch(rank: int, world_size: int, steps: int = 3, impl: str = "fsdp_ref"
                   ) -> dict[str, Any]:
    """Same losses, same adapter shards, NF4 weights unchanged, under ``impl`` and torch."""
    report = Report(rank, "qlora")
    mesh = make_mesh(world_size)
    nets, opts, losses = [], [], [[], []]
    for name in ("torch", impl):
        api, net = get_impl(name), QLoRAModel()
        for block in net.blocks:
            api.fully_shard(block, mesh=mesh)
        api.fully_shard(net, mesh=mesh)
        nets.append(net)
        opts.append(torch.optim.AdamW([p for p in net.parameters() if p.requires_grad], lr=1e-2))
    report.check(
        all(isinstance(p.to_local(), NF4Tensor) for n, p in nets[1].named_parameters()
            if n.endswith(".weight") and "lora" not in n),
        "fsdp_ref's sharded base weights are not NF4Tensors",
    )
    before = _nf4_state(nets[1])
    for step in range(steps):
        g = torch.Generator().manual_seed(step)
        x = torch.randn(2 * world_size, DIM, generator=g).to(torch.bfloat16)
        y = torch.randn(2 * world_size, DIM, generator=g).to(torch.bfloat16)
        xr, yr = rank_slice(x, rank, world_size), rank_slice(y, rank, world_size)
        for k, (net, opt) in enumerate(zip(nets, opts)):
            loss = (net(xr).float() - yr.float()).pow(2).mean()
            loss.backward()
            opt.step()
            opt.zero_grad()
            mean = loss.detach().clone()
            dist.all_reduce(mean)
            losses[k].append(mean.item() / world_size)
        report.close(f"step {step} loss", losses[1][-1], losses[0][-1], EXACT)
    for (name, tp), (_, ip) in zip(nets[0].named_parameters(), nets[1].named_parameters()):
        if tp.requires_grad:
            report.close(f"adapter shard {name}", ip.to_local(), tp.to_local(), EXACT)
    after = _nf4_state(nets[1])
    for key, value in before.items():
        report.check(torch.equal(after[key], value), f"{key} changed in training")
    report.check(len(before) == 9, f"expected 3 NF4 weights x 3 inner tensors, got {len(before)}")
    return report.result(losses=losses[1])
