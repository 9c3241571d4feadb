"""Scenarios for argument validation that only fsdp_ref reports at ``fully_shard`` time."""

from __future__ import annotations

import torch
import torch.nn as nn

from tests.fsdp.common import exc_info, get_impl, make_mesh, run_with


class _MixedDtypes(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = nn.Linear(8, 8)
        self.b = nn.Linear(8, 8).double()

    def forward(self, x):
        return self.b(self.a(x).double()).float()


def mixed_dtypes(rank, world_size):
    """A group with fp32 and fp64 parameters: an error without a policy; with
    ``param_dtype`` the group gathers in one dtype and trains like the reference."""
    lib = get_impl("fsdp_ref")
    mesh = make_mesh(world_size)
    torch.manual_seed(0)
    model = _MixedDtypes()
    _, err = run_with(lambda: lib.fully_shard(model, mesh=mesh))
    torch.manual_seed(0)
    model = _MixedDtypes()
    ref = _MixedDtypes()
    ref.load_state_dict(model.state_dict())
    policy = lib.MixedPrecisionPolicy(param_dtype=torch.float64)
    lib.fully_shard(model, mesh=mesh, mp_policy=policy)
    x = torch.randn(2 * world_size, 8, generator=torch.Generator().manual_seed(3))
    model(x[2 * rank : 2 * rank + 2]).pow(2).mean().backward()
    ref(x).pow(2).mean().backward()
    grad_dtypes = sorted({str(p.grad.dtype) for p in model.parameters()})
    max_diff = max(
        (p.grad.full_tensor() - q.grad).abs().max().item()
        for p, q in zip(model.parameters(), ref.parameters())
    )
    return {"err": exc_info(err), "grad_dtypes": grad_dtypes, "max_diff": max_diff}
