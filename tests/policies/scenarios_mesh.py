"""Mesh / placement scenarios: HSDP, dp_mesh_dims, shard_placement_fn, ignored_params and
the all-reduce hook (run on every rank by the harness).

Each numeric check compares with a single-process model trained on the full batch
(SGD) and, where torch's ``fully_shard`` supports the same call, with torch side by side.
"""

from __future__ import annotations

from typing import Any

import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F
from torch.distributed.device_mesh import init_device_mesh
from torch.distributed.tensor import DTensor, Replicate, Shard

from tests import tolerance
from tests.fsdp.common import (
    Report,
    build_model,
    exc_info,
    get_impl,
    global_batch,
    make_mesh,
    mean_over_ranks,
    rank_slice,
    run_with,
)
from tests.policies.helpers import all_grads_are_dtensors, compare_named, fsdp_modules
from tests.tolerance import EXACT


def _shard_stack(net, api, mesh, **kw) -> None:
    for block in net.blocks:
        api.fully_shard(block, mesh=mesh, **kw)
    api.fully_shard(net, mesh=mesh, **kw)


def _train_vs_reference(
    report: Report,
    nets: dict[str, nn.Module],
    ref: nn.Module,
    rank: int,
    dp_size: int,
    dp_rank: int,
    steps: int = 3,
    microbatches: int = 1,
    before_micro=None,
    grad_scale: float = 1.0,
    lr: float = 0.1,
) -> None:
    """Train every model in ``nets`` on its dp slice and ``ref`` on the full batch.

    ``before_micro(net, i, last)`` runs before each microbatch's forward;
    ``grad_scale``: expected grads are ``grad_scale * reference grads`` (the reference
    optimizer's lr is scaled so that the parameters still match).
    """
    opts = {k: torch.optim.SGD(n.parameters(), lr=lr) for k, n in nets.items()}
    ref_opt = torch.optim.SGD(ref.parameters(), lr=lr * grad_scale)
    for step in range(steps):
        tol = tolerance.of_model(ref, rows=2 * dp_size * microbatches, steps=step + 1)
        x, y = global_batch("stack", step, 2 * dp_size * microbatches)
        xs, ys = x.chunk(microbatches), y.chunk(microbatches)
        ref_opt.zero_grad(set_to_none=True)
        ref_loss = 0.0
        for xm, ym in zip(xs, ys):
            lo = F.mse_loss(ref(xm), ym) / microbatches
            lo.backward()
            ref_loss += lo.item()
        for label, net in nets.items():
            opts[label].zero_grad(set_to_none=True)
            loss = 0.0
            for i, (xm, ym) in enumerate(zip(xs, ys)):
                if before_micro is not None:
                    before_micro(net, i, i == microbatches - 1)
                out = net(rank_slice(xm, dp_rank, dp_size))
                lo = F.mse_loss(out, rank_slice(ym, dp_rank, dp_size)) / microbatches
                lo.backward()
                loss = loss + lo.detach()
            report.close(f"{label} step {step} loss", mean_over_ranks(loss), ref_loss, tol)
            compare_named(report, net, ref, f"{label} step {step}", tol, grads=True,
                          scale=grad_scale)
            all_grads_are_dtensors(report, net, f"{label} step {step}")
            opts[label].step()
        ref_opt.step()
    for label, net in nets.items():
        compare_named(report, net, ref, f"{label} final", tol)


def _check_placements(report: Report, net: nn.Module, placements: tuple, shard_coord: int,
                      shard_size: int, label: str) -> None:
    for name, p in net.named_parameters():
        if not isinstance(p, DTensor):
            report.errors.append(f"{label}: {name} is a {type(p).__name__}, not a DTensor")
            continue
        report.check(
            tuple(p.placements) == placements,
            f"{label}: {name} placements {p.placements}, expected {placements}",
        )
        chunks = torch.empty(p.shape, device="meta").chunk(shard_size, dim=0)
        expected = tuple(chunks[shard_coord].shape) if shard_coord < len(chunks) else (0, *p.shape[1:])
        report.check(
            tuple(p.to_local().shape) == expected,
            f"{label}: local shard of {name} is {tuple(p.to_local().shape)}, expected {expected}",
        )


# --------------------------------------------------------------------------------------
# HSDP
# --------------------------------------------------------------------------------------


def hsdp(
    rank: int, world_size: int, impl: str, accum: bool = False, hook: bool = False,
    separate_rs: bool = False,
) -> dict[str, Any]:
    """2-D ``(replicate, shard)`` mesh: placements ``(Replicate(), Shard(0))``; training
    matches the single-process reference (and torch, trained alongside).

    accum: 3 microbatches, ``set_requires_all_reduce(False)`` on all but the last.
    hook: ``set_all_reduce_hook`` on every FSDP module with a hook that doubles the
    reduced gradient in place: under HSDP torch calls it with the all-reduce output
    (after the all-reduce), so grads must be exactly 2x the reference's.
    separate_rs: ``set_separate_reduce_scatter_group()`` on the root (collective: every
    rank must create every shard line's group); fsdp_ref's groups then reduce-scatter on
    a new group over the same ranks as their shard group.
    """
    report = Report(rank, "hsdp")
    mesh = init_device_mesh("cpu", (2, world_size // 2), mesh_dim_names=("replicate", "shard"))
    ref = build_model("stack", seed=0)
    nets: dict[str, nn.Module] = {}
    labels = [impl] if impl == "torch" else [impl, "torch"]
    calls: dict[str, list] = {}
    for label in labels:
        api = get_impl(label)
        net = build_model("stack", seed=0)
        _shard_stack(net, api, mesh)
        nets[label] = net
        if separate_rs:
            net.set_separate_reduce_scatter_group()
        if hook:
            calls[label] = []
            for m in fsdp_modules(net, api):

                def double(t, _log=calls[label]):
                    _log.append((t.dtype, tuple(t.shape)))
                    t.mul_(2.0)

                m.set_all_reduce_hook(double)
    shard_rank = mesh.get_local_rank("shard")
    _check_placements(report, nets[impl], (Replicate(), Shard(0)), shard_rank,
                      world_size // 2, impl)

    before = None
    if accum:

        def before(net, i, last):
            net.set_requires_all_reduce(last)

    steps = 2
    _train_vs_reference(
        report, nets, ref, rank, world_size, rank, steps=steps,
        microbatches=3 if accum else 1, before_micro=before, grad_scale=2.0 if hook else 1.0,
    )
    if separate_rs and impl == "fsdp_ref":
        for m in fsdp_modules(nets[impl], get_impl(impl)):
            group = m._get_fsdp_state().groups[0]
            rs = group.settings.reduce_scatter_group
            report.check(
                rs is not None and rs is not group.mesh_info.shard_group
                and dist.get_process_group_ranks(rs)
                == dist.get_process_group_ranks(group.mesh_info.shard_group),
                f"{group.name}: reduce-scatter group {rs} is not a separate group over "
                "the shard ranks",
            )
    if hook:
        n_groups = len(fsdp_modules(nets[impl], get_impl(impl)))
        report.check(
            len(calls[impl]) == n_groups * steps,
            f"all-reduce hook called {len(calls[impl])} times, expected {n_groups * steps} "
            f"(once per group per step)",
        )
    return report.result()


def fsdp_all_reduce_hook(rank: int, world_size: int, impl: str) -> dict[str, Any]:
    """1-D FSDP: the hook receives the reduce-scatter output and runs once per group per
    backward; doubling it in place doubles the sharded grads."""
    report = Report(rank, "all_reduce_hook")
    api = get_impl(impl)
    mesh = make_mesh(world_size)
    ref = build_model("stack", seed=0)
    net = build_model("stack", seed=0)
    _shard_stack(net, api, mesh)
    log: list = []
    for m in fsdp_modules(net, api):

        def double(t, _log=log):
            _log.append(t.dtype)
            t.mul_(2.0)

        m.set_all_reduce_hook(double)
    _train_vs_reference(report, {impl: net}, ref, rank, world_size, rank, steps=2, grad_scale=2.0)
    n_groups = len(fsdp_modules(net, api))
    report.check(len(log) == 2 * n_groups, f"hook called {len(log)} times, expected {2 * n_groups}")
    report.check(set(log) == {torch.float32}, f"hook saw dtypes {set(log)}")
    return report.result()


# --------------------------------------------------------------------------------------
# dp_mesh_dims (fsdp_ref: plain-tensor parameters on a named SPMD mesh)
# --------------------------------------------------------------------------------------


def dp_mesh_dims(rank: int, world_size: int, impl: str, layout: str) -> dict[str, Any]:
    """``fully_shard(mesh=spmd_mesh, dp_mesh_dims=DataParallelMeshDims(...))``.

    layout:
      * ``"1d"``: mesh ``("dp",)``, ``shard="dp"``: plain FSDP;
      * ``"dp_tp"``: mesh ``("dp", "tp")`` of ``(ws/2, 2)``, ``shard="dp"``: params
        replicated over ``tp``, sharded over ``dp``; both tp ranks see the same data;
      * ``"hsdp"``: mesh ``("rep", "dp")``, ``shard="dp", replicate="rep"``;
      * ``"flat"``: mesh ``("a", "b")``, ``shard=("a", "b")``: the two dims flattened into
        one shard dim over all ranks;
      * ``"ddp"``: mesh ``("rep",)``, ``replicate="rep"`` only: whole parameters on every
        rank (placement ``Replicate()``), gradients all-reduced.
    """
    report = Report(rank, f"dp_mesh_dims[{layout}]")
    api = get_impl(impl)
    D = api.DataParallelMeshDims
    if layout == "1d":
        mesh = init_device_mesh("cpu", (world_size,), mesh_dim_names=("dp",))
        dims, dp_size, dp_rank = D(shard="dp"), world_size, rank
        placements, shard_rank, shard_size = (Shard(0),), rank, world_size
    elif layout == "dp_tp":
        mesh = init_device_mesh("cpu", (world_size // 2, 2), mesh_dim_names=("dp", "tp"))
        dp_rank = mesh.get_local_rank("dp")
        dims, dp_size = D(shard="dp"), world_size // 2
        placements, shard_rank, shard_size = (Shard(0), Replicate()), dp_rank, dp_size
    elif layout == "hsdp":
        mesh = init_device_mesh("cpu", (2, world_size // 2), mesh_dim_names=("rep", "dp"))
        dims, dp_size, dp_rank = D(shard="dp", replicate="rep"), world_size, rank
        placements = (Replicate(), Shard(0))
        shard_rank, shard_size = mesh.get_local_rank("dp"), world_size // 2
    elif layout == "ddp":
        mesh = init_device_mesh("cpu", (world_size,), mesh_dim_names=("rep",))
        dims, dp_size, dp_rank = D(replicate="rep"), world_size, rank
        placements, shard_rank, shard_size = (Replicate(),), 0, 1
    elif layout == "flat":
        mesh = init_device_mesh("cpu", (2, world_size // 2), mesh_dim_names=("a", "b"))
        dims, dp_size, dp_rank = D(shard=("a", "b")), world_size, rank
        placements = None
        shard_rank, shard_size = rank, world_size
    else:
        raise ValueError(layout)
    ref = build_model("stack", seed=0)
    net = build_model("stack", seed=0)
    _shard_stack(net, api, mesh, dp_mesh_dims=dims)
    for name, p in net.named_parameters():
        report.check(isinstance(p, DTensor), f"{name} is not a DTensor")
    if placements is not None:
        _check_placements(report, net, placements, shard_rank, shard_size, layout)
    else:
        for name, p in net.named_parameters():
            chunks = torch.empty(p.shape, device="meta").chunk(shard_size, dim=0)
            exp = tuple(chunks[shard_rank].shape) if shard_rank < len(chunks) else (0, *p.shape[1:])
            report.check(
                tuple(p.to_local().shape) == exp,
                f"{layout}: local shard of {name} is {tuple(p.to_local().shape)}, expected {exp} "
                f"(sharded over all {shard_size} ranks)",
            )
    _, err = run_with(lambda: compare_named(report, net, ref, f"{layout} initial full_tensor()",
                                            EXACT))
    if err is not None:
        report.errors.append(
            f"{layout}: full_tensor() of the sharded parameters fails: {err!r}; the DTensor "
            f"placements {next(net.parameters()).placements} do not describe the local shards"
        )
    if report.errors:  # a wrong layout would make training fail confusingly
        return report.result()
    _train_vs_reference(report, {layout: net}, ref, rank, dp_size, dp_rank, steps=2)
    return report.result()


def dp_mesh_dims_errors(rank: int, world_size: int, impl: str) -> dict[str, Any]:
    """Unsupported dp_mesh_dims usage raises clear errors."""
    api = get_impl(impl)
    D = api.DataParallelMeshDims
    named = init_device_mesh("cpu", (world_size,), mesh_dim_names=("dp",))
    unnamed = make_mesh(world_size)
    out: dict[str, Any] = {}
    _, out["empty"] = run_with(lambda: D())
    _, out["unknown_name"] = run_with(
        lambda: api.fully_shard(nn.Linear(4, 4), mesh=named, dp_mesh_dims=D(shard="nope"))
    )
    _, out["unnamed_mesh"] = run_with(
        lambda: api.fully_shard(nn.Linear(4, 4), mesh=unnamed, dp_mesh_dims=D(shard="dp"))
    )

    def tp_param():
        from torch.distributed.tensor import distribute_tensor

        lin = nn.Linear(4, 4)
        lin.weight = nn.Parameter(distribute_tensor(lin.weight.detach(), named, [Shard(0)]))
        api.fully_shard(lin, mesh=named, dp_mesh_dims=D(shard="dp"))

    _, out["dtensor_param"] = run_with(tp_param)
    return {k: exc_info(v) for k, v in out.items()}


# --------------------------------------------------------------------------------------
# shard_placement_fn
# --------------------------------------------------------------------------------------


# --------------------------------------------------------------------------------------
# ignored_params
# --------------------------------------------------------------------------------------


