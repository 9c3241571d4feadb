"""Where a reduction divides, seen through an all-reduce hook (``fsdp_ref.division``).

torch 2.13 averages in its collectives for fp32/bf16 (``AVG``), or divides before and after
a ``SUM`` (fp16, ``set_force_sum_reduction_for_comms(True)``), so an all-reduce hook sees an
average or a (pre-divided) sum. The scenario trains a two-layer model with a hook that
records what it sees and halves it in place, and returns what it saw with the gradients.
"""

from __future__ import annotations

import torch
import torch.nn as nn

from tests.conformance.harness import batch, full


def hooked(lib, dtype: str = "float32", force_sum: bool = False,
           factor: float | None = None, hsdp: bool = False, steps: int = 2) -> dict:
    """Two sharded layers (root and block) reducing in ``dtype``; a hook on the root."""
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 4))
    mesh = lib.mesh((2, lib.world_size // 2), ("replicate", "shard")) if hsdp else lib.mesh()
    mp = lib.MixedPrecisionPolicy(reduce_dtype=getattr(torch, dtype))
    lib.fully_shard(model[0], mesh=mesh, mp_policy=mp)
    lib.fully_shard(model, mesh=mesh, mp_policy=mp)
    seen: list[torch.Tensor] = []

    def hook(grad: torch.Tensor) -> None:
        seen.append(grad.detach().clone())
        grad.mul_(0.5)

    for module in (model, model[0]):
        module.set_all_reduce_hook(hook)
        module.set_force_sum_reduction_for_comms(force_sum)
        if factor is not None:
            module.set_gradient_divide_factor(factor)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    grads = []
    for step in range(steps):
        x, y = batch(step, 2 * lib.world_size, 8, 4)
        loss = nn.functional.mse_loss(model(lib.local(x)), lib.local(y))
        loss.backward()
        grads.append({n: full(p.grad).clone() for n, p in model.named_parameters()})
        opt.step()
        opt.zero_grad()
    return {"seen": seen, "grads": grads,
            "params": {n: full(p).detach().clone() for n, p in model.named_parameters()}}
