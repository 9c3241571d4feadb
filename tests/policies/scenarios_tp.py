"""FSDP on top of tensor parallelism (2-D parallelism), run on every rank by the harness.

Two ways to compose, as in torch:

* ``"tp"``-style: ``parallelize_module(model, world["tp"], plan)`` then
  ``fully_shard(..., mesh=world["dp"])`` (or an HSDP ``world["rep", "dp"]``);
* ``"spmd"``-style: every parameter is a DTensor on the whole ``world`` mesh and
  ``fully_shard(..., mesh=world, dp_mesh_dims=DataParallelMeshDims(...))``; inputs are
  DTensors sharded over the data-parallel dims.

The truth is a single-process :class:`~tests.fsdp.common.Stack` trained on the full
batch (SGD); torch's ``fully_shard`` is trained beside fsdp_ref on the same mesh and their
placements, local shards, losses and parameters are compared too.
"""

from __future__ import annotations

from typing import Any

import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F
from torch.distributed.device_mesh import init_device_mesh
from torch.distributed.tensor import DTensor, Replicate, Shard, distribute_tensor
from torch.distributed.tensor.parallel import (
    ColwiseParallel,
    RowwiseParallel,
    parallelize_module,
)

from tests import tolerance
from tests.fsdp.common import Report, build_model, get_impl, global_batch
from tests.policies.helpers import all_grads_are_dtensors, compare_named
from tests.tolerance import EXACT

# mesh shape, dim names, the dims to shard over (fully_shard's mesh or dp_mesh_dims)
LAYOUTS: dict[str, dict[str, Any]] = {
    # parallelize_module on world["tp"], fully_shard(mesh=world["dp"])
    "tp": {"shape": (2, 2), "names": ("dp", "tp"), "dp": ("dp",)},
    # HSDP x TP: fully_shard(mesh=world["rep", "dp"]) (replicate 2, shard 1)
    "hsdp_tp": {"shape": (2, 1, 2), "names": ("rep", "dp", "tp"), "dp": ("rep", "dp")},
    # one SPMD mesh: dp_mesh_dims(shard="dp")
    "spmd": {"shape": (2, 2), "names": ("dp", "tp"), "shard": "dp"},
    # tp on the *left* of dp: no _StridedShard needed
    "spmd_tp_first": {"shape": (2, 2), "names": ("tp", "dp"), "shard": "dp"},
    # HSDP on an SPMD mesh: shard="dp", replicate="rep"
    "spmd_hsdp": {"shape": (2, 1, 2), "names": ("rep", "dp", "tp"), "shard": "dp",
                  "replicate": "rep"},
    # two dims flattened into one shard dim
    "spmd_flat": {"shape": (2, 1, 2), "names": ("a", "b", "tp"), "shard": ("a", "b")},
    # replicate only (DDP over "rep"): no all-gather, no reduce-scatter, one all-reduce
    "spmd_ddp": {"shape": (2, 2), "names": ("rep", "tp"), "replicate": "rep"},
}

# The tensor-parallel plan of every ResBlock's MLP: in_proj column-wise (weight and bias
# Shard(0)), out_proj row-wise (weight Shard(1), bias Replicate()).
TP_PLACEMENTS = {
    "mlp.in_proj.weight": Shard(0),
    "mlp.in_proj.bias": Shard(0),
    "mlp.out_proj.weight": Shard(1),
}


_worlds: dict[str, Any] = {}


def _world(layout: str):
    """One mesh per layout for the life of the worker, as a training program has.

    (DTensor caches sharding specs by value, so a parameter distributed on a second,
    equal mesh may report the first one as its mesh; torch's dp_mesh_dims check wants
    the very object passed to fully_shard.)
    """
    if layout not in _worlds:
        spec = LAYOUTS[layout]
        _worlds[layout] = init_device_mesh("cpu", spec["shape"], mesh_dim_names=spec["names"])
    return _worlds[layout]


def _dp_coords(world, layout: str) -> tuple[int, int]:
    """(this rank's data-parallel index, number of data-parallel ranks)."""
    spec = LAYOUTS[layout]
    dp_names = spec.get("dp") or tuple(
        n for key in ("replicate", "shard") for n in _names(spec.get(key))
    )
    dp_names = tuple(n for n in spec["names"] if n in dp_names)  # mesh order
    index, size = 0, 1
    for name in dp_names:
        index = index * world.size(spec["names"].index(name)) + world.get_local_rank(name)
        size *= world.size(spec["names"].index(name))
    return index, size


def _names(v) -> tuple[str, ...]:
    if v is None:
        return ()
    return (v,) if isinstance(v, str) else tuple(v)


def _is_spmd(layout: str) -> bool:
    return "shard" in LAYOUTS[layout] or "replicate" in LAYOUTS[layout]


def _distribute_on_world(net: nn.Module, world) -> None:
    """Make every parameter a DTensor on ``world``: the TP placement on the ``tp`` dim
    for the blocks' MLP weights, ``Replicate()`` everywhere else."""
    tp = world.mesh_dim_names.index("tp")
    for mod_name, mod in net.named_modules():
        for pname, p in list(mod._parameters.items()):
            if p is None:
                continue
            fqn = f"{mod_name}.{pname}"
            placements = [Replicate()] * world.ndim
            for suffix, placement in TP_PLACEMENTS.items():
                if fqn.endswith(suffix):
                    placements[tp] = placement
            dt = distribute_tensor(p.detach(), world, placements)
            mod._parameters[pname] = nn.Parameter(dt, requires_grad=p.requires_grad)


def build_2d(api, layout: str, world, seed: int = 0, **fsdp_kwargs: Any) -> nn.Module:
    """A Stack with tensor-parallel MLPs, sharded block by block with ``api``."""
    net = build_model("stack", seed=seed)
    spec = LAYOUTS[layout]
    if _is_spmd(layout):
        _distribute_on_world(net, world)
        kw = {"mesh": world, "dp_mesh_dims": api.DataParallelMeshDims(
            shard=spec.get("shard"), replicate=spec.get("replicate"))}
    else:
        plan = {"mlp.in_proj": ColwiseParallel(), "mlp.out_proj": RowwiseParallel()}
        for block in net.blocks:
            parallelize_module(block, world["tp"], plan)
        dp = spec["dp"]
        kw = {"mesh": world[dp[0]] if len(dp) == 1 else world[dp]}
    for block in net.blocks:
        api.fully_shard(block, **kw, **fsdp_kwargs)
    api.fully_shard(net, **kw, **fsdp_kwargs)
    return net


def _inputs(x: torch.Tensor, world, layout: str) -> torch.Tensor:
    """This rank's slice of the global batch: a plain tensor for the TP-mesh layouts, a
    DTensor sharded over the data-parallel dims for the SPMD ones."""
    dp_index, dp_size = _dp_coords(world, layout)
    local = x.chunk(dp_size)[dp_index]
    if not _is_spmd(layout):
        return local
    spec = LAYOUTS[layout]
    dp_names = set(_names(spec.get("shard")) + _names(spec.get("replicate")))
    placements = [Replicate()] * world.ndim
    dp_dims = [i for i, n in enumerate(spec["names"]) if n in dp_names]
    # Shard(0) on every dp dim: local batch = chunk over the dp dims in mesh order
    for i in dp_dims:
        placements[i] = Shard(0)
    return DTensor.from_local(local, world, placements, run_check=False)


def _loss(out: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """MSE of this rank's slice; with DTensors (SPMD layouts) the global MSE as a DTensor."""
    return F.mse_loss(out, y)


def _scalar(loss: torch.Tensor) -> float:
    """The global loss: the full value of a DTensor loss, the mean over ranks otherwise
    (every rank's slice has the same size, so that is the full-batch loss)."""
    if isinstance(loss, DTensor):
        return loss.full_tensor().item()
    t = loss.detach().clone()
    dist.all_reduce(t)
    return t.item() / dist.get_world_size()


def _local_shards(net: nn.Module) -> dict[str, torch.Tensor]:
    return {n: p.to_local().detach().clone() for n, p in net.named_parameters()}


def train(rank: int, world_size: int, impl: str, layout: str, steps: int = 3,
          clip: bool = False) -> dict[str, Any]:
    """Train the 2-D-parallel Stack against the reference (and torch beside it).

    Checks: every parameter is a DTensor whose ``full_tensor()`` is the reference
    parameter; fsdp_ref's mesh dim names, placements and local shards equal torch's;
    losses, full gradients and parameters match the reference for ``steps`` SGD steps.
    ``clip``: ``clip_grad_norm_`` on the DTensor gradients gives the reference's norm.
    """
    report = Report(rank, f"tp[{layout}]")
    world = _world(layout)
    ref = build_model("stack", seed=0)
    labels = [impl] if impl == "torch" else [impl, "torch"]
    nets = {label: build_2d(get_impl(label), layout, world) for label in labels}
    for label, net in nets.items():
        compare_named(report, net, ref, f"{label} initial", EXACT)
    if impl != "torch":
        mine, theirs = nets[impl], nets["torch"]
        for (name, p), (_, q) in zip(mine.named_parameters(), theirs.named_parameters()):
            report.check(
                isinstance(p, DTensor)
                and p.device_mesh.mesh_dim_names == q.device_mesh.mesh_dim_names
                and tuple(p.placements) == tuple(q.placements),
                f"{name}: mesh {getattr(p, 'device_mesh', None)} placements "
                f"{getattr(p, 'placements', None)}; torch: {q.device_mesh} {q.placements}",
            )
        shards_t = _local_shards(theirs)
        for name, local in _local_shards(mine).items():
            report.check(
                torch.equal(local, shards_t[name]),
                f"{name}: local shard {tuple(local.shape)} differs from torch's "
                f"{tuple(shards_t[name].shape)}",
            )
    if report.errors:
        return report.result()
    opts = {k: torch.optim.SGD(n.parameters(), lr=0.1) for k, n in nets.items()}
    ref_opt = torch.optim.SGD(ref.parameters(), lr=0.1)
    for step in range(steps):
        # tensor parallelism splits the matmul sums: another order, within the same bound
        tol = tolerance.of_model(ref, rows=8, steps=step + 1)
        x, y = global_batch("stack", step, 8)
        ref_opt.zero_grad(set_to_none=True)
        ref_loss = F.mse_loss(ref(x), y)
        ref_loss.backward()
        ref_norm = torch.nn.utils.clip_grad_norm_(ref.parameters(), 1e9) if clip else None
        for label, net in nets.items():
            opts[label].zero_grad(set_to_none=True)
            xs, ys = _inputs(x, world, layout), _inputs(y, world, layout)
            loss = _loss(net(xs), ys)
            loss.backward()
            report.close(f"{label} step {step} loss", _scalar(loss), ref_loss.item(), tol)
            compare_named(report, net, ref, f"{label} step {step}", tol, grads=True)
            all_grads_are_dtensors(report, net, f"{label} step {step}")
            if clip:
                norm = torch.nn.utils.clip_grad_norm_(net.parameters(), 1e9)
                norm = norm.full_tensor() if isinstance(norm, DTensor) else norm
                report.close(f"{label} step {step} grad norm", norm, ref_norm,
                             tol.plus(tolerance.squares(ref.parameters(), world_size)))
            opts[label].step()
        ref_opt.step()
    for label, net in nets.items():
        compare_named(report, net, ref, f"{label} final", tol)
    return report.result()


def grad_accumulation(rank: int, world_size: int, impl: str, layout: str) -> dict[str, Any]:
    """Two microbatches, ``set_requires_gradient_sync(False)`` on the first: the
    accumulated (local, tensor-parallel) gradients are reduced once and match the
    reference's full-batch gradient."""
    report = Report(rank, f"tp_accum[{layout}]")
    world = _world(layout)
    api = get_impl(impl)
    ref = build_model("stack", seed=0)
    net = build_2d(api, layout, world)
    x, y = global_batch("stack", 0, 16)
    (F.mse_loss(ref(x), y)).backward()
    for i, (xm, ym) in enumerate(zip(x.chunk(2), y.chunk(2))):
        net.set_requires_gradient_sync(i == 1)
        xs, ys = _inputs(xm, world, layout), _inputs(ym, world, layout)
        loss = _loss(net(xs), ys) / 2
        loss.backward()
    compare_named(report, net, ref, "accumulated", tolerance.of_model(ref, rows=16, steps=1),
                  grads=True)
    return report.result()


def mixed_precision(rank: int, world_size: int, layout: str) -> dict[str, Any]:
    """bf16 all-gather and compute, fp32 reduction: the unsharded parameters are bf16
    DTensors with the tensor-parallel placements, the sharded ones stay fp32, and
    fsdp_ref's parameters after two steps equal torch's bitwise (same policy, same mesh)."""
    report = Report(rank, f"tp_mp[{layout}]")
    world = _world(layout)
    nets = {}
    for label in ("fsdp_ref", "torch"):
        api = get_impl(label)
        mp = api.MixedPrecisionPolicy(param_dtype=torch.bfloat16, reduce_dtype=torch.float32)
        nets[label] = build_2d(api, layout, world, mp_policy=mp)
    seen: dict[str, list] = {label: [] for label in nets}
    for label, net in nets.items():
        lin = net.blocks[0].mlp.in_proj

        def record(mod, args, _log=seen[label]):
            w = mod.weight
            _log.append((type(w).__name__, w.dtype, tuple(getattr(w, "placements", ()))))

        lin.register_forward_pre_hook(record)
    opts = {k: torch.optim.SGD(n.parameters(), lr=0.1) for k, n in nets.items()}
    for step in range(2):
        x, y = global_batch("stack", step, 8)
        for label, net in nets.items():
            opts[label].zero_grad(set_to_none=True)
            xs, ys = _inputs(x, world, layout), _inputs(y, world, layout)
            loss = _loss(net(xs), ys)
            loss.float().backward()
            opts[label].step()
    report.check(seen["fsdp_ref"] == seen["torch"],
                 f"unsharded weight seen in forward: {seen['fsdp_ref']} vs torch {seen['torch']}")
    report.check(seen["fsdp_ref"] and seen["fsdp_ref"][0][1] == torch.bfloat16,
                 f"forward did not run in bf16: {seen['fsdp_ref']}")
    mine, theirs = dict(nets["fsdp_ref"].named_parameters()), dict(nets["torch"].named_parameters())
    for name, p in mine.items():
        report.check(p.dtype == torch.float32, f"{name}: sharded dtype {p.dtype}")
        report.close(f"{name} after 2 bf16 steps vs torch", p.full_tensor(),
                     theirs[name].full_tensor(), EXACT)
    return report.result()


