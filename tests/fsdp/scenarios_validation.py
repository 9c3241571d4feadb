"""Scenarios for argument validation that only fsdp_ref reports at ``fully_shard`` time."""

from __future__ import annotations

import torch
import torch.nn as nn

from tests import tolerance
from tests.fsdp.common import get_impl, make_mesh


class _MixedDtypes(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = nn.Linear(8, 8)
        self.b = nn.Linear(8, 8).double()

    def forward(self, x):
        return self.b(self.a(x).double()).float()


def mixed_dtypes(rank, world_size, param_dtype=None):
    """A group with fp32 and fp64 parameters trains like the reference: without a policy
    through one byte all-gather (each parameter in its own dtype), with ``param_dtype``
    in that one dtype; gradients land in each parameter's own dtype either way."""
    lib = get_impl("fsdp_ref")
    mesh = make_mesh(world_size)
    torch.manual_seed(0)
    model = _MixedDtypes()
    ref = _MixedDtypes()
    ref.load_state_dict(model.state_dict())
    policy = lib.MixedPrecisionPolicy(param_dtype=param_dtype)
    lib.fully_shard(model, mesh=mesh, mp_policy=policy)
    x = torch.randn(2 * world_size, 8, generator=torch.Generator().manual_seed(3))
    model(x[2 * rank : 2 * rank + 2]).pow(2).mean().backward()
    ref(x).pow(2).mean().backward()
    grad_dtypes = sorted({str(p.grad.dtype) for p in model.parameters()})
    tol = tolerance.of_model(ref, rows=2 * world_size, steps=1).gradients()
    if param_dtype is not None:  # the fp32 layer computes in fp64: the reference rounds more
        tol = tol.plus(tolerance.mixed_precision(depth=2, steps=1, dtype=torch.float32))
    excess = max(
        tol.excess(p.grad.full_tensor(), q.grad)
        for p, q in zip(model.parameters(), ref.parameters())
    )
    return {"grad_dtypes": grad_dtypes, "excess": excess}
