"""Behaviour scenarios for the FSDP2 API surface (run on every rank by the harness)."""

from __future__ import annotations

from typing import Any

import torch
import torch.nn as nn
from torch.distributed.tensor import DTensor, Shard

from tests import tolerance
from tests.fsdp.common import (
    Report,
    apply_fsdp,
    build_model,
    deepcopy_model,
    full,
    get_impl,
    global_batch,
    loss_fn,
    make_mesh,
    rank_slice,
)
from tests.tolerance import EXACT


def _expected_local_shape(shape: torch.Size, rank: int, world_size: int) -> tuple[int, ...]:
    """torch.chunk semantics along dim 0; ranks past the last chunk hold an empty shard."""
    chunks = torch.empty(shape, device="meta").chunk(world_size, dim=0)
    if rank < len(chunks):
        return tuple(chunks[rank].shape)
    return (0, *shape[1:])


def _is_sharded(p: torch.Tensor) -> bool:
    return isinstance(p, DTensor)


def sharding_layout(rank: int, world_size: int, impl: str) -> dict[str, Any]:
    """Sharded params are DTensors with Shard(0) and torch.chunk-sized local shards; grads
    are DTensors with the same placement; classes become FSDPModule subclasses; tied
    weights stay tied; full_tensor() gives back the original values."""
    report = Report(rank, "sharding_layout")
    fsdp = get_impl(impl)
    mesh = make_mesh(world_size)
    for kind in ("uneven", "gpt"):
        net = build_model(kind, seed=0)
        orig_cls = {name: type(m) for name, m in net.named_modules()}
        ref = deepcopy_model(net)
        apply_fsdp(net, fsdp, mesh, nested=True)
        sharded_names = {""} | {
            name for name, m in net.named_modules() if m in set(_block_set(net))
        }
        for name, m in net.named_modules():
            if name in sharded_names:
                report.check(
                    isinstance(m, fsdp.FSDPModule),
                    f"{kind}: module {name!r} ({type(m).__name__}) is not an FSDPModule",
                )
                report.check(
                    isinstance(m, orig_cls[name]),
                    f"{kind}: module {name!r} lost its class {orig_cls[name].__name__}",
                )
            else:
                report.check(
                    not isinstance(m, fsdp.FSDPModule),
                    f"{kind}: module {name!r} became an FSDPModule without fully_shard",
                )
        if kind == "gpt":
            report.check(
                net.lm_head.weight is net.tok_emb.weight,
                "gpt: tied lm_head/tok_emb weights are no longer the same parameter",
            )
        ref_params = dict(ref.named_parameters())
        names = [n for n, _ in net.named_parameters()]
        report.check(
            names == list(ref_params),
            f"{kind}: parameter names/order changed: {names} vs {list(ref_params)}",
        )
        for name, p in net.named_parameters():
            if not report.check(
                _is_sharded(p), f"{kind}: {name} is {type(p).__name__}, not DTensor"
            ):
                continue
            report.check(isinstance(p, nn.Parameter), f"{kind}: {name} is not an nn.Parameter")
            report.check(
                tuple(p.placements) == (Shard(0),),
                f"{kind}: {name} placements {p.placements}, expected (Shard(dim=0),)",
            )
            report.check(
                p.device_mesh.ndim == 1 and p.device_mesh.size() == world_size,
                f"{kind}: {name} mesh {p.device_mesh}",
            )
            full_shape = ref_params[name].shape
            report.check(
                tuple(p.shape) == tuple(full_shape),
                f"{kind}: {name} global shape {tuple(p.shape)} != {tuple(full_shape)}",
            )
            exp = _expected_local_shape(full_shape, rank, world_size)
            report.check(
                tuple(p.to_local().shape) == exp,
                f"{kind}: {name} {tuple(full_shape)} local shape {tuple(p.to_local().shape)} "
                f"on rank {rank}, expected {exp} (torch.chunk)",
            )
            report.check(
                p.requires_grad == ref_params[name].requires_grad,
                f"{kind}: {name} requires_grad changed",
            )
            report.close(f"{kind}: {name} full_tensor()", p.full_tensor(), ref_params[name], EXACT)

        # one training step: grads are DTensors with the parameter's placement
        x, y = global_batch(kind, 0, 2 * world_size)
        loss = loss_fn(kind, net(rank_slice(x, rank, world_size)), rank_slice(y, rank, world_size))
        loss.backward()
        for name, p in net.named_parameters():
            g = p.grad
            if not report.check(g is not None, f"{kind}: {name}.grad is None after backward"):
                continue
            if not report.check(
                isinstance(g, DTensor), f"{kind}: {name}.grad is {type(g).__name__}"
            ):
                continue
            report.check(
                tuple(g.placements) == tuple(p.placements),
                f"{kind}: {name}.grad placements {g.placements} != param's {p.placements}",
            )
            report.check(
                tuple(g.to_local().shape) == tuple(p.to_local().shape),
                f"{kind}: {name}.grad local shape {tuple(g.to_local().shape)} != "
                f"param's {tuple(p.to_local().shape)}",
            )
            report.check(tuple(g.shape) == tuple(p.shape), f"{kind}: {name}.grad global shape")
        # after backward everything is sharded again
        for name, p in net.named_parameters():
            report.check(_is_sharded(p), f"{kind}: {name} not resharded after backward")
    return report.result()


def _block_set(net: nn.Module) -> list[nn.Module]:
    from tests.fsdp.common import block_modules

    return block_modules(net)


def unshard_reshard(rank: int, world_size: int, impl: str) -> dict[str, Any]:
    """unshard(async_op=True) -> UnshardHandle whose wait() leaves the unsharded params
    registered; forward then uses them; reshard() restores the sharded DTensors.
    unshard() is not recursive; unshard() (sync) returns None."""
    report = Report(rank, "unshard_reshard")
    fsdp = get_impl(impl)
    mesh = make_mesh(world_size)
    net = build_model("stack")
    ref = deepcopy_model(net)
    apply_fsdp(net, fsdp, mesh, nested=True)
    x = torch.randn(3, 16, generator=torch.Generator().manual_seed(5))
    ref_out = ref(x)

    handle = net.unshard(async_op=True)
    report.check(
        isinstance(handle, fsdp.UnshardHandle),
        f"unshard(async_op=True) returned {type(handle).__name__}, not an UnshardHandle",
    )
    if handle is not None:
        handle.wait()
    ref_params = dict(ref.named_parameters())
    for name in ("in_proj.weight", "in_proj.bias", "out_proj.weight", "out_proj.bias"):
        p = net.get_parameter(name)
        if report.check(
            not _is_sharded(p), f"after unshard+wait, root param {name} is still a DTensor"
        ):
            report.close(f"unsharded {name}", p, ref_params[name], EXACT)
    for name, p in net.blocks.named_parameters():
        report.check(
            _is_sharded(p), f"root unshard() is not recursive, but blocks.{name} got unsharded"
        )

    # forward with the params unsharded by hand
    out = net(x)
    report.close("forward output after explicit unshard", out, ref_out, EXACT)
    out.sum().backward()
    ref_out.sum().backward()
    # every rank ran the whole batch: each gradient is the average of world_size equal ones
    for name, p in net.named_parameters():
        report.check(_is_sharded(p), f"{name} not sharded after backward")
        if p.grad is not None:
            report.close(f"grad {name}", full(p.grad), ref_params[name].grad,
                         tolerance.replicated_sum(world_size))
        else:
            report.errors.append(f"grad {name} is None")

    # explicit unshard / reshard of one block
    block = net.blocks[1]
    report.check(block.unshard() is None, "unshard() (sync) should return None")
    for name, p in block.named_parameters():
        report.check(not _is_sharded(p), f"blocks.1.{name} still a DTensor after sync unshard()")
    block.reshard()
    for name, p in block.named_parameters():
        report.check(_is_sharded(p), f"blocks.1.{name} not a DTensor after reshard()")
    net.reshard()
    for name, p in net.named_parameters():
        report.check(_is_sharded(p), f"{name} not sharded after root reshard()")

    # async handle may also be left to the pre-forward to wait on
    handle = block.unshard(async_op=True)
    with torch.no_grad():
        out2 = net(x)
    with torch.no_grad():
        ref_out2 = ref(x)  # ref has not stepped; both models unchanged
    report.close("forward output with an un-waited async unshard", out2, ref_out2, EXACT)
    return report.result()


def reshard_after_forward_state(
    rank: int, world_size: int, impl: str, value: Any
) -> dict[str, Any]:
    """What is registered after forward: sharded DTensors for True; unsharded tensors for
    False (until ``reshard()``); training still works either way."""
    report = Report(rank, f"reshard_after_forward={value}")
    fsdp = get_impl(impl)
    mesh = make_mesh(world_size)
    net = build_model("stack")
    ref = deepcopy_model(net)
    for b in net.blocks:
        fsdp.fully_shard(b, mesh=mesh, reshard_after_forward=value)
    fsdp.fully_shard(net, mesh=mesh, reshard_after_forward=value)
    x = torch.randn(4, 16, generator=torch.Generator().manual_seed(3))
    out = net(x)
    expect_sharded = value is True or value == world_size
    if value is True or value is False or value == 1 or value == world_size:
        for name, p in net.blocks.named_parameters():
            report.check(
                _is_sharded(p) == expect_sharded,
                f"after forward blocks.{name} is {type(p).__name__}; expected "
                f"{'sharded DTensor' if expect_sharded else 'unsharded tensor'}",
            )
    if value is None or value is True or value is False or value == 1 or value == world_size:
        # None: the root is special-cased to False (kept unsharded), the blocks to True
        root_sharded = value is not None and expect_sharded
        for name in ("in_proj.weight", "out_proj.weight"):
            p = net.get_parameter(name)
            report.check(
                _is_sharded(p) == root_sharded,
                f"after forward root param {name} is {type(p).__name__}; expected "
                f"{'sharded DTensor' if root_sharded else 'unsharded tensor'}",
            )
    if value is None:
        for name, p in net.blocks.named_parameters():
            report.check(
                _is_sharded(p), f"None: non-root blocks.{name} not resharded after forward"
            )
    if value is False:
        net.blocks[0].reshard()
        for name, p in net.blocks[0].named_parameters():
            report.check(_is_sharded(p), f"blocks.0.{name} not sharded after reshard()")
    out.sum().backward()
    ref(x).sum().backward()
    ref_params = dict(ref.named_parameters())
    for name, p in net.named_parameters():
        report.check(_is_sharded(p), f"{name} not sharded after backward")
        if report.check(p.grad is not None, f"grad {name} is None"):  # the same x on every rank
            report.close(f"grad {name}", full(p.grad), ref_params[name].grad,
                         tolerance.replicated_sum(world_size))
    return report.result()


def gradient_sync_off(rank: int, world_size: int, impl: str) -> dict[str, Any]:
    """With set_requires_gradient_sync(False) nothing is reduced into the sharded grads;
    re-enabling sync reduces the accumulated gradients of both backwards."""
    report = Report(rank, "gradient_sync_off")
    fsdp = get_impl(impl)
    mesh = make_mesh(world_size)
    net = build_model("stack")
    ref = deepcopy_model(net)
    apply_fsdp(net, fsdp, mesh)
    x, y = global_batch("stack", 0, 4 * world_size)
    halves = list(zip(x.chunk(2), y.chunk(2)))
    net.set_requires_gradient_sync(False)
    xa, ya = halves[0]
    loss_fn(
        "stack", net(rank_slice(xa, rank, world_size)), rank_slice(ya, rank, world_size)
    ).backward()
    for name, p in net.named_parameters():
        report.check(_is_sharded(p), f"{name} not a DTensor after a no-sync backward")
        report.check(
            p.grad is None,
            f"{name}.grad was set by a backward with set_requires_gradient_sync(False)",
        )
    net.set_requires_gradient_sync(True)
    xb, yb = halves[1]
    loss_fn(
        "stack", net(rank_slice(xb, rank, world_size)), rank_slice(yb, rank, world_size)
    ).backward()
    for xp, yp in halves:
        loss_fn("stack", ref(xp), yp).backward()
    ref_params = dict(ref.named_parameters())
    tol = tolerance.of_model(ref, rows=4 * world_size, steps=1).gradients()
    for name, p in net.named_parameters():
        if report.check(p.grad is not None, f"{name}.grad None after the synced backward"):
            report.close(f"accumulated grad {name}", full(p.grad), ref_params[name].grad, tol)
    return report.result()


