"""Tensor parallelism + FSDP beyond training: misuse errors, DCP checkpoints across
implementations and layouts, meta-device initialization."""

from __future__ import annotations

from typing import Any

import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F
from torch.distributed.device_mesh import init_device_mesh
from torch.distributed.tensor import DTensor, Partial, Replicate, Shard, distribute_tensor

from tests import tolerance
from tests.fsdp.common import Report, build_model, exc_info, get_impl, global_batch, run_with
from tests.policies.helpers import compare_named
from tests.policies.scenarios_tp import (
    _inputs,
    _loss,
    _world,
    build_2d,
)
from tests.tolerance import EXACT


def errors(rank: int, world_size: int) -> dict[str, Any]:
    """Misuse with DTensor parameters: each raises the type torch 2.13 raises (a
    RuntimeError for meshes that cannot be concatenated, else a ValueError), naming the
    problem and the fix."""
    api = get_impl("fsdp_ref")
    D = api.DataParallelMeshDims
    world = init_device_mesh("cpu", (2, 2), mesh_dim_names=("dp", "tp"))
    other = init_device_mesh("cpu", (2, 2), mesh_dim_names=("x", "y"))
    out: dict[str, Any] = {}

    def linear_on(mesh, placements):
        lin = nn.Linear(8, 8)
        lin.weight = nn.Parameter(distribute_tensor(lin.weight.detach(), mesh, placements))
        return lin

    def partial_param():
        lin = nn.Linear(8, 8)
        dt = DTensor.from_local(lin.weight.detach(), world["tp"], [Partial()])
        lin.weight = nn.Parameter(dt)
        api.fully_shard(lin, mesh=world["dp"])

    _, out["partial"] = run_with(partial_param)
    # a "tp" mesh whose groups are the dp groups again (another mesh's dim of the same
    # stride): the two cannot form a 2-D mesh
    _, out["overlapping"] = run_with(
        lambda: api.fully_shard(linear_on(other["x"], [Shard(0)]), mesh=world["dp"])
    )
    # the parameter's mesh *is* the FSDP mesh: sharding it twice over dp
    _, out["same_mesh"] = run_with(
        lambda: api.fully_shard(linear_on(world["dp"], [Shard(0)]), mesh=world["dp"])
    )
    # dp_mesh_dims: parameter on another mesh than the one given
    _, out["spmd_other_mesh"] = run_with(
        lambda: api.fully_shard(linear_on(other, [Replicate(), Shard(0)]), mesh=world,
                                dp_mesh_dims=D(shard="dp"))
    )
    # shard_placement_fn Shard(1) on a local dim that does not divide over dp
    def uneven_dim1():
        lin = nn.Linear(6, 8)  # weight (8, 6): tp Shard(1) -> local (8, 3); 3 % 2 != 0
        lin.weight = nn.Parameter(distribute_tensor(lin.weight.detach(), world["tp"], [Shard(1)]))
        api.fully_shard(lin, mesh=world["dp"], shard_placement_fn=lambda p: Shard(1))

    _, out["uneven_local_dim1"] = run_with(uneven_dim1)
    return {k: exc_info(v) for k, v in out.items()}


def checkpoint(rank: int, world_size: int, save_impl: str, load_impl: str, tmpdir: str,
               load_layout: str = "tp") -> dict[str, Any]:
    """DCP save of a 2-D model (after one step) and load into another model.

    ``load_layout`` ``"tp"``: the same 2-D layout, implementations swapped as given;
    ``"fsdp"``: a plain 1-D ``fully_shard`` over all 4 ranks (no tensor parallelism),
    i.e. a resharding load. The loaded ``full_tensor()`` of every parameter equals the
    saved one; the full state dict on rank 0 (cpu_offload) equals it too.
    """
    import torch.distributed.checkpoint as dcp
    from torch.distributed.checkpoint.state_dict import (
        StateDictOptions,
        get_model_state_dict,
        set_model_state_dict,
    )

    report = Report(rank, f"tp_dcp[{save_impl}->{load_impl}, {load_layout}]")
    world = _world("tp")
    src = build_2d(get_impl(save_impl), "tp", world, seed=0)
    opt = torch.optim.SGD(src.parameters(), lr=0.1)
    x, y = global_batch("stack", 0, 8)
    _loss(src(_inputs(x, world, "tp")), _inputs(y, world, "tp")).backward()
    opt.step()
    saved = {n: p.full_tensor() for n, p in src.named_parameters()}
    dcp.save(get_model_state_dict(src), checkpoint_id=tmpdir)
    dist.barrier()
    api = get_impl(load_impl)
    if load_layout == "tp":
        dst = build_2d(api, "tp", world, seed=1)
    else:
        dst = build_model("stack", seed=1)
        for block in dst.blocks:
            api.fully_shard(block)
        api.fully_shard(dst)
    sd = get_model_state_dict(dst)
    dcp.load(sd, checkpoint_id=tmpdir)
    set_model_state_dict(dst, sd)
    for name, p in dst.named_parameters():
        report.close(f"loaded {name}", p.full_tensor(), saved[name], EXACT)
    full_sd = get_model_state_dict(
        src, options=StateDictOptions(full_state_dict=True, cpu_offload=True)
    )
    if rank == 0:
        for name, t in saved.items():
            report.check(not isinstance(full_sd[name], DTensor) and full_sd[name].device.type == "cpu",
                         f"full state dict {name}: {type(full_sd[name]).__name__}")
            report.close(f"full state dict {name}", full_sd[name], t, EXACT)
    else:
        report.check(not full_sd, f"rank {rank} got a full state dict: {sorted(full_sd)[:3]}")
    return report.result()


def meta_init(rank: int, world_size: int, impl: str, layout: str) -> dict[str, Any]:
    """Build under ``torch.device("meta")``, parallelize and shard, ``to_empty``, load the
    reference's full state dict (broadcast from rank 0), then train: the sharded
    parameters hold only their shard and training matches the reference."""
    from torch.distributed.checkpoint.state_dict import StateDictOptions, set_model_state_dict

    report = Report(rank, f"tp_meta[{layout}]")
    world = _world(layout)
    ref = build_model("stack", seed=0)
    with torch.device("meta"):
        net = build_2d(get_impl(impl), layout, world)
    for name, p in net.named_parameters():
        report.check(p.to_local().is_meta, f"{name} materialized before to_empty")
    net.to_empty(device="cpu")
    full = ref.state_dict() if rank == 0 else {}
    set_model_state_dict(
        net, full, options=StateDictOptions(full_state_dict=True, broadcast_from_rank0=True)
    )
    compare_named(report, net, ref, "loaded", EXACT)
    opt, ref_opt = (torch.optim.SGD(m.parameters(), lr=0.1) for m in (net, ref))
    x, y = global_batch("stack", 0, 8)
    _loss(net(_inputs(x, world, layout)), _inputs(y, world, layout)).backward()
    F.mse_loss(ref(x), y).backward()
    tol = tolerance.of_model(ref, rows=8, steps=1)
    compare_named(report, net, ref, "after meta init", tol, grads=True)
    opt.step()
    ref_opt.step()
    compare_named(report, net, ref, "after meta init step", tol)
    return report.result()
