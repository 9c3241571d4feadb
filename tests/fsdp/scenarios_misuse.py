"""Misuse scenarios: each returns, per rank, a picklable description of the exception the
misuse raised (``None`` when nothing was raised).  Scenarios catch the exception
themselves so a well-behaved implementation leaves the process group in sync; the
harness timeout guards against hangs."""

from __future__ import annotations

import warnings

import torch
import torch.nn as nn

from tests.fsdp.common import MLP, build_model, exc_info, get_impl, make_mesh, run_with


def shard_twice(rank, world_size, impl):
    fsdp = get_impl(impl)
    mesh = make_mesh(world_size)
    model = build_model("mlp")
    fsdp.fully_shard(model, mesh=mesh)
    _, err = run_with(lambda: fsdp.fully_shard(model, mesh=mesh))
    # also: a child sharded after its parent already was
    _, err_child_after = run_with(lambda: fsdp.fully_shard(model.in_proj, mesh=mesh))
    return {"twice": exc_info(err), "child_after_parent": exc_info(err_child_after)}


class _Shared(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = nn.Linear(4, 4)
        self.b = nn.Linear(4, 4)
        self.b.weight = self.a.weight  # a and b overlap in one parameter

    def forward(self, x):
        return self.b(self.a(x))


def overlapping_list(rank, world_size, impl):
    fsdp = get_impl(impl)
    mesh = make_mesh(world_size)
    torch.manual_seed(0)
    # 1) a module and its own child in one list
    model = MLP(8, 8)
    _, err_nested = run_with(lambda: fsdp.fully_shard([model, model.in_proj], mesh=mesh))
    # 2) two sibling modules that share a parameter
    shared = _Shared()
    _, err_shared = run_with(lambda: fsdp.fully_shard([shared.a, shared.b], mesh=mesh))
    # 3) the same module twice in the list
    m = MLP(8, 8)
    _, err_dup = run_with(lambda: fsdp.fully_shard([m.in_proj, m.in_proj], mesh=mesh))
    return {
        "nested": exc_info(err_nested),
        "shared": exc_info(err_shared),
        "dup": exc_info(err_dup),
    }


def parent_first(rank, world_size, impl):
    """``fully_shard(parent)`` and then ``fully_shard(child)``: the child's parameters are
    already the parent's sharded DTensors. Also the order of a bottom-up call after it,
    which must still be accepted."""
    fsdp = get_impl(impl)
    mesh = make_mesh(world_size)
    torch.manual_seed(0)
    net = nn.Sequential(nn.Linear(4, 4), nn.Linear(4, 4))
    fsdp.fully_shard(net, mesh=mesh)
    _, err = run_with(lambda: fsdp.fully_shard(net[0], mesh=mesh))
    child_is_plain = not isinstance(net[0], fsdp.FSDPModule)
    ok = nn.Sequential(nn.Linear(4, 4), nn.Sequential(nn.Linear(4, 4)))
    fsdp.fully_shard(ok[1][0], mesh=mesh)
    fsdp.fully_shard(ok[1], mesh=mesh)  # no parameters of its own: all below it
    fsdp.fully_shard(ok, mesh=mesh)
    ok(torch.randn(2, 4)).sum().backward()
    return {"error": exc_info(err), "child_left_plain": child_is_plain}


def mesh_3d(rank, world_size, impl):
    from torch.distributed.device_mesh import init_device_mesh

    fsdp = get_impl(impl)
    mesh = init_device_mesh("cpu", (world_size, 1, 1), mesh_dim_names=("a", "b", "c"))
    model = build_model("mlp")
    _, err = run_with(lambda: fsdp.fully_shard(model, mesh=mesh))
    return exc_info(err)


def bad_reshard_int(rank, world_size, impl, value):
    fsdp = get_impl(impl)
    mesh = make_mesh(world_size)
    model = build_model("mlp")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _, err = run_with(lambda: fsdp.fully_shard(model, mesh=mesh, reshard_after_forward=value))
    return exc_info(err)


def meta_forward(rank, world_size, impl):
    """Parameters left on the meta device (no ``to_empty``/init) at the first forward."""
    fsdp = get_impl(impl)
    mesh = make_mesh(world_size)
    with torch.device("meta"):
        model = build_model("stack", n_blocks=2)
    for block in model.blocks:
        fsdp.fully_shard(block, mesh=mesh)
    fsdp.fully_shard(model, mesh=mesh)
    x = torch.randn(4, 16)
    out, err = run_with(lambda: model(x))
    return {"err": exc_info(err), "out_device": None if out is None else str(out.device)}


def mismatched_shapes(rank, world_size, impl, where="root"):
    """Rank 0 builds a differently shaped model than the others.  Must raise on every
    rank (at ``fully_shard``, lazy init or the first forward), not deadlock."""
    fsdp = get_impl(impl)
    mesh = make_mesh(world_size)
    torch.manual_seed(0)
    hidden = 24 if rank == 0 else 32
    if where == "root":
        model = MLP(16, hidden)
        shard = lambda: fsdp.fully_shard(model, mesh=mesh)  # noqa: E731
    else:  # nested: only the second block differs
        model = nn.Sequential(MLP(16, 32), MLP(16, hidden))

        def shard():
            for m in model:
                fsdp.fully_shard(m, mesh=mesh)
            fsdp.fully_shard(model, mesh=mesh)

    _, err = run_with(shard)
    stage = "fully_shard"
    if err is None:
        stage = "forward/backward"

        def step():
            out = model(torch.randn(4, 16))
            out.sum().backward()

        _, err = run_with(step)
    return {"err": exc_info(err), "stage": stage}
