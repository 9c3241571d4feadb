"""Scenarios of which parameters FSDP shards and how: ``shard_placement_fn`` (another
dim, uneven shapes) and ``ignored_params``; each against a single-process reference."""

from __future__ import annotations

from typing import Any

import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F
from torch.distributed.tensor import DTensor, Shard

from tests import tolerance
from tests.fsdp.common import (
    Report,
    build_model,
    deepcopy_model,
    exc_info,
    get_impl,
    global_batch,
    make_mesh,
    rank_slice,
    run_with,
)
from tests.policies.scenarios_mesh import _shard_stack, _train_vs_reference
from tests.tolerance import EXACT


def _shard_dim1(p: nn.Parameter):
    return Shard(1) if p.ndim == 2 else None


def shard_placement(rank: int, world_size: int, impl: str) -> dict[str, Any]:
    """``Shard(1)`` for every 2-D weight (dims 16/32 divide 2 and 4): placements and
    local shapes, and training parity with the reference and torch."""
    report = Report(rank, "shard_placement_fn")
    mesh = make_mesh(world_size)
    ref = build_model("stack", seed=0)
    nets = {}
    for label in ([impl] if impl == "torch" else [impl, "torch"]):
        net = build_model("stack", seed=0)
        _shard_stack(net, get_impl(label), mesh, shard_placement_fn=_shard_dim1)
        nets[label] = net
    for name, p in nets[impl].named_parameters():
        if not isinstance(p, DTensor):
            report.errors.append(f"{name} is not a DTensor")
            continue
        if p.ndim == 2:
            exp = (p.shape[0], p.shape[1] // world_size)
            report.check(tuple(p.placements) == (Shard(1),), f"{name}: placements {p.placements}")
        else:
            exp = (p.shape[0] // world_size,)
            report.check(tuple(p.placements) == (Shard(0),), f"{name}: placements {p.placements}")
        report.check(
            tuple(p.to_local().shape) == tuple(exp),
            f"{name}: local shape {tuple(p.to_local().shape)}, expected {tuple(exp)}",
        )
    _train_vs_reference(report, nets, ref, rank, world_size, rank, steps=3)
    # grads carry the same placement as their parameter
    for name, p in nets[impl].named_parameters():
        if isinstance(p.grad, DTensor):
            report.check(p.grad.placements == p.placements, f"{name}: grad placements differ")
    return report.result()


class _Odd(nn.Module):
    def __init__(self):
        super().__init__()
        self.enc = nn.Linear(7, 8)  # weight (8, 7): dim 1 divides neither 2 nor 4
        self.dec = nn.Linear(8, 8)

    def forward(self, x):
        return self.dec(self.enc(x))


def shard_placement_uneven(rank: int, world_size: int, impl: str) -> dict[str, Any]:
    api = get_impl(impl)
    mesh = make_mesh(world_size)
    net = _Odd()
    _, err = run_with(lambda: api.fully_shard(net, mesh=mesh, shard_placement_fn=_shard_dim1))
    return exc_info(err)


def ignored_params(rank: int, world_size: int, impl: str) -> dict[str, Any]:
    """Ignored parameters stay plain (same object, same device), and their grads are not
    reduced: each rank keeps the gradient of its own slice (so they differ across ranks),
    while managed grads are the full-batch average and agree on every rank."""
    report = Report(rank, "ignored_params")
    api = get_impl(impl)
    mesh = make_mesh(world_size)
    net = build_model("stack", seed=0)
    ref = deepcopy_model(net)
    ignored_names = ["in_proj.weight", "out_proj.bias", "blocks.1.norm.weight"]
    params = dict(net.named_parameters())
    ignored = {params[n] for n in ignored_names}
    before = {n: (params[n], params[n].device, params[n].detach().clone()) for n in ignored_names}
    for block in net.blocks:
        api.fully_shard(block, mesh=mesh, ignored_params=ignored)
    api.fully_shard(net, mesh=mesh, ignored_params=ignored)

    after = dict(net.named_parameters())
    for n, (obj, dev, val) in before.items():
        p = after.get(n)
        report.check(p is obj, f"ignored {n} was replaced ({type(p).__name__})")
        report.check(not isinstance(p, DTensor), f"ignored {n} became a DTensor")
        report.check(p is not None and p.device == dev, f"ignored {n} moved")
        if p is not None:
            report.close(f"ignored {n} value", p.detach(), val, EXACT)
    for n, p in after.items():
        if n not in before:
            report.check(isinstance(p, DTensor), f"managed {n} is not a DTensor")

    # rank-dependent data: local reference on this rank's slice, full reference on all
    local_ref = deepcopy_model(ref)
    x0, y = global_batch("stack", 0, 2 * world_size)
    # shift each rank's slice so that per-rank gradients clearly differ
    xs = [xi + r * 0.5 for r, xi in enumerate(x0.chunk(world_size))]
    x_full = torch.cat(xs)
    xr, yr = xs[rank], rank_slice(y, rank, world_size)
    loss = F.mse_loss(net(xr), yr)
    loss.backward()
    F.mse_loss(local_ref(xr), yr).backward()
    F.mse_loss(ref(x_full), y).backward()
    ref_grads = {n: p.grad for n, p in ref.named_parameters()}
    tol = tolerance.of_model(ref, rows=2 * world_size, steps=1)
    local_grads = {n: p.grad for n, p in local_ref.named_parameters()}
    for n, p in net.named_parameters():
        if p.grad is None:
            report.errors.append(f"{n} has no grad")
            continue
        if n in before:
            report.check(not isinstance(p.grad, DTensor), f"ignored {n} grad is a DTensor")
            # the same kernels on the same rows as the local reference: bitwise
            report.close(f"ignored {n} grad vs this rank's local gradient", p.grad,
                         local_grads[n], EXACT)
            gathered = [torch.empty_like(p.grad) for _ in range(world_size)]
            dist.all_gather(gathered, p.grad.contiguous())
            report.check(
                not torch.allclose(gathered[0], gathered[1]),
                f"ignored {n} grad is identical on ranks 0 and 1: it was reduced",
            )
        else:
            report.close(f"managed {n} grad vs full-batch reference", p.grad.full_tensor(),
                         ref_grads[n], tol.gradients())
    # one optimizer step: the managed params still match the reference's update
    opt = torch.optim.SGD(net.parameters(), lr=0.1)
    ref_opt = torch.optim.SGD(ref.parameters(), lr=0.1)
    opt.step()
    ref_opt.step()
    for n, p in net.named_parameters():
        if n not in before:
            report.close(f"managed {n} after step", p.full_tensor(),
                         dict(ref.named_parameters())[n], tol)
    # a second forward/backward still works
    net.zero_grad(set_to_none=True)
    F.mse_loss(net(xr), yr).backward()
    return report.result()
