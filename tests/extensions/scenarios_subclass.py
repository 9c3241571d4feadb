"""Scenarios for FSDP2's all-gather extension with the test subclass (run in the ranks).

Each trains ``Linear(16, rows) -> ReLU -> Linear(rows, 8)`` whose first weight is a
:class:`~tests.extensions.subclass.QuantWeight`, with the first linear in a group of its
own and the root around it, and compares it with one process training the whole batch
on the weight quantized and dequantized the same way (:func:`fake_quant`, gradient passed
straight through): losses, and each rank's shard of every parameter, each step from the
same weights (the quantizer is discontinuous: see :func:`quant_training`), within the
one-step bound of :mod:`tests.tolerance`. Failures are
collected in a :class:`~tests.fsdp.common.Report`, never raised (a raising rank would
leave the other waiting in a collective).
"""

from __future__ import annotations

from typing import Any

import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F

from tests import tolerance
from tests.extensions import subclass as sub
from tests.fsdp.common import Report, get_impl, make_mesh, rank_slice


def _model(rows: int, bias: bool, mode: str | None = None, cls: type | None = None):
    torch.manual_seed(0)
    net = nn.Sequential(nn.Linear(16, rows, bias=bias), nn.ReLU(), nn.Linear(rows, 8))
    if cls is not None:
        net[0].weight = sub.quant_weight(net[0].weight, mode, cls)
    return net


def _batch(step: int, batch: int):
    g = torch.Generator().manual_seed(99 + step)
    return torch.randn(batch, 16, generator=g), torch.randn(batch, 8, generator=g)


def _ref_forward(ref: nn.Sequential, x, mode: str, scale: float):
    w = sub.fake_quant(ref[0].weight, mode, scale)
    return ref[2](F.relu(F.linear(x, w, ref[0].bias)))


def _shard_data(param) -> torch.Tensor:
    """This rank's rows of a sharded parameter, as a plain tensor."""
    local = param.to_local()
    return local._data if isinstance(local, sub.QuantWeight) else local


def _load_full(ref: nn.Module, net: nn.Module) -> None:
    """Copy ``net``'s sharded parameters, gathered whole, into ``ref``."""
    for p, r in zip(net.parameters(), ref.parameters()):
        shards = [None] * dist.get_world_size()
        dist.all_gather_object(shards, _shard_data(p).detach().clone())
        with torch.no_grad():
            r.copy_(torch.cat(shards))


def quant_training(
    rank: int,
    world_size: int,
    impl: str,
    mode: str = "int8",
    cls: str = "QuantWeight",
    rows: int = 24,
    bias: bool = True,
    offload: bool = False,
    steps: int = 3,
) -> dict[str, Any]:
    """Train with the subclass under ``impl`` and against the one-process reference."""
    report = Report(rank, f"quant {impl} {mode} {cls}")
    api, mesh = get_impl(impl), make_mesh(world_size)
    sub.CALLS.clear()
    sub.PRE_PTRS.clear()
    sub._FIRST.clear()
    net = _model(rows, bias, mode, getattr(sub, cls))
    ref = _model(rows, bias)
    scale = net[0].weight._scale
    kw = {"offload_policy": api.CPUOffloadPolicy(pin_memory=False)} if offload else {}
    api.fully_shard(net[0], mesh=mesh, **kw)
    api.fully_shard(net, mesh=mesh, **kw)
    report.check(
        type(net[0].weight.to_local()) is getattr(sub, cls),
        f"the sharded local tensor is a {type(net[0].weight.to_local()).__name__}, "
        f"not a {cls}: sharding lost the subclass",
    )
    opt = torch.optim.SGD(net.parameters(), lr=0.2)
    ref_opt = torch.optim.SGD(ref.parameters(), lr=0.2)
    # One step from equal weights, every step: the quantizer rounds to a grid, so weights
    # that drifted apart by a few ulps could round to neighbouring grid points; from the
    # same weights both quantize alike and the one-step bound of tests.tolerance holds.
    tol = tolerance.of_model(ref, rows=2 * world_size, steps=1)
    for step in range(steps):
        _load_full(ref, net)
        x, y = _batch(step, 2 * world_size)
        loss = F.mse_loss(net(rank_slice(x, rank, world_size)), rank_slice(y, rank, world_size))
        loss.backward()
        ref_loss = F.mse_loss(_ref_forward(ref, x, mode, scale), y)
        ref_loss.backward()
        mean = loss.detach().clone()
        dist.all_reduce(mean)
        report.close(f"step {step} loss", mean / world_size, ref_loss, tol)
        opt.step()
        ref_opt.step()
        opt.zero_grad()
        ref_opt.zero_grad()
        for (name, p), r in zip(net.named_parameters(), ref.parameters()):
            expected = torch.chunk(r.detach(), world_size)[rank]
            report.close(f"step {step} shard of {name}", _shard_data(p), expected, tol)
    shard_ptr = net[0].weight.to_local()._data.untyped_storage().data_ptr()
    return report.result(
        calls=dict(sub.CALLS),
        pre_read_the_shard=[p == shard_ptr for p in sub.PRE_PTRS],
    )


def bad_extension(rank: int, world_size: int, impl: str, case: str) -> dict[str, Any]:
    """Make a malformed extension and return what each rank raised (``None``: nothing)."""
    api, mesh = get_impl(impl), make_mesh(world_size)
    try:
        if case == "no_pad":  # uneven rows: the ranks that pad break the padded-size rule
            net = _model(21, True, "int8", sub.NoPad)
            api.fully_shard(net, mesh=mesh)
            net(torch.randn(2, 16)).sum().backward()
        elif case == "int_reshard":
            net = _model(24, True, "int8", sub.QuantWeight)
            api.fully_shard(net[0], mesh=mesh, reshard_after_forward=2)
        else:  # a subclass whose hooks are malformed (see tests.extensions.subclass)
            weight = torch.Tensor._make_subclass(getattr(sub, case), torch.randn(8, 4))
            net = nn.Linear(4, 8)
            net.weight = nn.Parameter(weight)
            api.fully_shard(net, mesh=mesh)
            net(torch.randn(2, 4)).sum().backward()
    except Exception as exc:  # noqa: BLE001  (the test reads the message)
        return {"rank": rank, "error": f"{type(exc).__name__}: {exc}"}
    return {"rank": rank, "error": None}


def gloo_float8(rank: int, world_size: int) -> dict[str, Any]:
    """Whether gloo all-gathers a float8 tensor, and the same bits as uint8."""
    x = torch.full((4,), rank + 1.0).to(torch.float8_e4m3fn)
    out = torch.empty(4 * world_size, dtype=torch.float8_e4m3fn)
    try:
        dist.all_gather_into_tensor(out, x)
        float8_error = None
    except Exception as exc:  # noqa: BLE001
        float8_error = f"{type(exc).__name__}: {exc}"
    dist.all_gather_into_tensor(out.view(torch.uint8), x.view(torch.uint8))
    return {"float8_error": float8_error, "as_bytes": out.float().tolist()}
