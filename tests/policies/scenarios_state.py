"""State scenarios: sharded state_dict, distributed checkpoint (DCP) across world sizes and
implementations, full state dicts, and meta-device initialization (run on every rank).

DCP scenarios are split in a *save* and a *load* half so that the two halves can run in
different pools (world sizes) and with different implementations, on a shared directory
passed by the test.  The saver also writes the full parameter values it saved
(``expected.pt``, rank 0) for the loader to compare with.
"""

from __future__ import annotations

import os
from typing import Any

import torch
import torch.distributed as dist
import torch.distributed.checkpoint as dcp
from torch.distributed.tensor import DTensor, distribute_tensor
from torch.distributed.tensor.debug import CommDebugMode

from tests import tolerance
from tests.fsdp.common import (
    Report,
    build_model,
    exc_info,
    get_impl,
    global_batch,
    make_mesh,
    run_with,
)
from tests.policies.helpers import compare_named, spy_collectives, step_pair
from tests.tolerance import EXACT


def _sharded_stack(api, mesh, seed: int = 0, **kw):
    net = build_model("stack", seed=seed, **kw)
    for block in net.blocks:
        api.fully_shard(block, mesh=mesh)
    api.fully_shard(net, mesh=mesh, reshard_after_forward=False)
    return net


def _train(report, net, ref, rank, world_size, steps, what="", start=0, done=0):
    """``steps`` SGD steps of both models (data of steps ``start``...), checking losses and
    gradients (a gradient error shows there first: parameters move by the learning rate
    times it); ``done``: steps the two already trained apart since they were equal.
    Returns the bound for their parameters after these steps."""
    opt = torch.optim.SGD(net.parameters(), lr=0.1)
    ref_opt = torch.optim.SGD(ref.parameters(), lr=0.1)
    for i, step in enumerate(range(start, start + steps)):
        x, y = global_batch("stack", step, 2 * world_size)
        step_pair(report, net, ref, opt, ref_opt, x, y, rank, world_size,
                  what=f"{what} step {step}", tol=_bound(ref, world_size, done + i + 1))
    return _bound(ref, world_size, done + steps)


def _bound(ref, world_size, steps):
    """The bound of :mod:`tests.tolerance` after ``steps`` steps on ``2 * world_size`` rows."""
    return tolerance.of_model(ref, rows=2 * world_size, steps=steps)


# --------------------------------------------------------------------------------------
# model.state_dict() / load_state_dict()
# --------------------------------------------------------------------------------------


def state_dict_roundtrip(rank: int, world_size: int, impl: str) -> dict[str, Any]:
    """``state_dict()`` returns the sharded DTensors, without any communication (checked
    with CommDebugMode, a spy on torch.distributed and, for fsdp_ref, its recorder),
    also right after a forward that left the root unsharded; ``load_state_dict`` into
    a differently initialized sharded model takes them back, and it trains on."""
    report = Report(rank, "state_dict")
    api = get_impl(impl)
    mesh = make_mesh(world_size)
    net = _sharded_stack(api, mesh)
    ref = build_model("stack", seed=0)
    tol = _train(report, net, ref, rank, world_size, steps=1)
    # the root keeps its params unsharded after forward (reshard_after_forward=False)
    with torch.no_grad():
        net(torch.randn(2, 16))

    if impl == "fsdp_ref":
        from fsdp_ref.recorder import record

        with record() as events, CommDebugMode() as comm, spy_collectives() as calls:
            sd = net.state_dict()
        collectives = [e for e in events if e.kind == "collective"]
        report.check(not collectives, f"state_dict() issued collectives: {collectives}")
    else:
        with CommDebugMode() as comm, spy_collectives() as calls:
            sd = net.state_dict()
    report.check(comm.get_total_counts() == 0, f"state_dict() communicated: {comm.get_comm_counts()}")
    report.check(not calls, f"state_dict() called torch.distributed: {calls}")

    ref_names = [n for n, _ in ref.named_parameters()]
    report.check(sorted(sd) == sorted(ref_names), f"state_dict keys {sorted(sd)}")
    params = dict(net.named_parameters())
    for k, v in sd.items():
        report.check(isinstance(v, DTensor), f"state_dict[{k}] is a {type(v).__name__}")
        if isinstance(v, DTensor) and k in params and isinstance(params[k], DTensor):
            p = params[k]
            report.check(tuple(v.placements) == tuple(p.placements), f"{k}: placements differ")
            report.check(
                tuple(v.to_local().shape) == tuple(p.to_local().shape),
                f"{k}: state_dict local shape {tuple(v.to_local().shape)} != "
                f"{tuple(p.to_local().shape)}",
            )
    for k, v in sd.items():
        if isinstance(v, DTensor):
            report.close(f"state_dict[{k}] full value", v.full_tensor(),
                         dict(ref.named_parameters())[k], tol)

    other = _sharded_stack(api, mesh, seed=1)
    result = other.load_state_dict(sd)
    report.check(
        not result.missing_keys and not result.unexpected_keys, f"load_state_dict: {result}"
    )
    compare_named(report, other, net, "after load_state_dict", EXACT)  # a copy
    # the loaded values are the ones all-gathered in the next forward
    tol = _train(report, other, ref, rank, world_size, steps=2, what="after load", start=1,
                 done=1)
    compare_named(report, other, ref, "trained after load_state_dict", tol)
    return report.result()


# --------------------------------------------------------------------------------------
# torch.distributed.checkpoint
# --------------------------------------------------------------------------------------


def dcp_save(rank: int, world_size: int, impl: str, path: str, steps: int = 2) -> dict[str, Any]:
    """Train ``steps`` SGD steps from seed 0, then ``dcp.save`` the model to ``path``."""
    report = Report(rank, f"dcp_save[{impl}, ws{world_size}]")
    api = get_impl(impl)
    mesh = make_mesh(world_size)
    net = _sharded_stack(api, mesh)
    ref = build_model("stack", seed=0)
    _train(report, net, ref, rank, world_size, steps=steps)
    dcp.save({"model": net.state_dict()}, checkpoint_id=path)
    full = {n: p.full_tensor() for n, p in net.named_parameters()}
    if rank == 0:
        torch.save(full, os.path.join(path + "_expected.pt"))
    dist.barrier()
    return report.result()


def dcp_load(rank: int, world_size: int, impl: str, path: str) -> dict[str, Any]:
    """A differently initialized sharded model loads the checkpoint in place
    (``dcp.load`` into its state dict, then ``load_state_dict``): every parameter equals
    what was saved, and it trains on like a reference loaded from the same values."""
    report = Report(rank, f"dcp_load[{impl}, ws{world_size}]")
    api = get_impl(impl)
    mesh = make_mesh(world_size)
    net = _sharded_stack(api, mesh, seed=1)
    sd = {"model": net.state_dict()}
    dcp.load(sd, checkpoint_id=path)
    net.load_state_dict(sd["model"])
    expected = torch.load(path + "_expected.pt")
    for n, p in net.named_parameters():
        report.check(isinstance(p, DTensor), f"{n} is not a DTensor after load")
        report.close(f"loaded {n}", p.full_tensor(), expected[n], EXACT)
    ref = build_model("stack", seed=1)
    ref.load_state_dict(expected)
    tol = _train(report, net, ref, rank, world_size, steps=2, what="after dcp.load", start=5)
    compare_named(report, net, ref, "trained after dcp.load", tol)
    return report.result()


# --------------------------------------------------------------------------------------
# full state dict (torch.distributed.checkpoint.state_dict)
# --------------------------------------------------------------------------------------


def full_state_dict(rank: int, world_size: int, impl: str) -> dict[str, Any]:
    """``get_model_state_dict(full_state_dict=True, cpu_offload=True)``: rank 0 gets plain
    full tensors equal to the reference's params, other ranks an empty dict;
    ``set_model_state_dict(full, broadcast_from_rank0=True)`` loads them into a fresh
    sharded model."""
    from torch.distributed.checkpoint.state_dict import (
        StateDictOptions,
        get_model_state_dict,
        set_model_state_dict,
    )

    report = Report(rank, "full_state_dict")
    api = get_impl(impl)
    mesh = make_mesh(world_size)
    net = _sharded_stack(api, mesh)
    ref = build_model("stack", seed=0)
    tol = _train(report, net, ref, rank, world_size, steps=2)
    full = get_model_state_dict(
        net, options=StateDictOptions(full_state_dict=True, cpu_offload=True)
    )
    ref_params = dict(ref.named_parameters())
    if rank == 0:
        report.check(sorted(full) == sorted(ref_params), f"full state dict keys {sorted(full)}")
        for k, v in full.items():
            report.check(
                type(v) is torch.Tensor and v.device.type == "cpu",
                f"full[{k}] is a {type(v).__name__} on {getattr(v, 'device', None)}",
            )
            if k in ref_params and not isinstance(v, DTensor):
                report.close(f"full[{k}]", v, ref_params[k], tol)
    else:
        report.check(full == {}, f"rank {rank}: expected an empty dict, got keys {sorted(full)}")

    other = _sharded_stack(api, mesh, seed=3)
    set_model_state_dict(
        other,
        full,
        options=StateDictOptions(full_state_dict=True, broadcast_from_rank0=True),
    )
    compare_named(report, other, net, "after set_model_state_dict(full, broadcast_from_rank0)",
                  EXACT)  # a copy
    _train(report, other, ref, rank, world_size, steps=1, what="after full load", start=2,
           done=2)
    return report.result()


# --------------------------------------------------------------------------------------
# meta-device initialization
# --------------------------------------------------------------------------------------


def _seeded_full(name: str, shape: torch.Size) -> torch.Tensor:
    g = torch.Generator().manual_seed(sum(map(ord, name)) * 31 + len(shape))
    return torch.randn(shape, generator=g) * 0.2


def meta_init(rank: int, world_size: int, impl: str) -> dict[str, Any]:
    """Build under ``torch.device("meta")``, fully_shard, then materialize.

    * sharded meta params are DTensors whose local tensors have the shard size;
    * forward before materialization raises a RuntimeError naming meta / to_empty;
    * ``to_empty(device="cpu")`` + init by hand (seeded full tensors, each rank copying
      its shard) trains like a reference initialized with the same values;
    * ``to_empty`` + ``reset_parameters()`` gives a properly initialized model (the same
      on every rank) that trains like a reference loaded from its full values.
    """
    report = Report(rank, "meta_init")
    api = get_impl(impl)
    mesh = make_mesh(world_size)

    def build():
        with torch.device("meta"):
            net = build_model("stack", seed=0)
        for block in net.blocks:
            api.fully_shard(block, mesh=mesh)
        api.fully_shard(net, mesh=mesh)
        return net

    # 1. forward on meta parameters fails clearly
    bad = build()
    _, err = run_with(lambda: bad(torch.randn(2, 16)))
    info = exc_info(err)
    report.check(info is not None, "forward with parameters on the meta device did not raise")
    if info is not None:
        report.check("RuntimeError" in info["mro"], f"expected a RuntimeError, got {info}")
        msg = info["msg"].lower()
        report.check("meta" in msg and "to_empty" in msg, f"unclear error: {info['msg']}")

    # 2. shard sizes on meta, then init by hand
    net = build()
    for n, p in net.named_parameters():
        report.check(isinstance(p, DTensor) and p.device.type == "meta", f"{n}: not a meta DTensor")
        if isinstance(p, DTensor):
            exp = tuple(torch.empty(p.shape, device="meta").chunk(world_size)[rank].shape)
            report.check(
                tuple(p.to_local().shape) == exp,
                f"{n}: meta local shard {tuple(p.to_local().shape)}, expected {exp} "
                f"(full {tuple(p.shape)})",
            )
    net.to_empty(device="cpu")
    ref = build_model("stack", seed=0)
    with torch.no_grad():
        for n, p in net.named_parameters():
            report.check(
                isinstance(p, DTensor) and p.device.type == "cpu",
                f"{n} after to_empty: {type(p).__name__} on {p.device}",
            )
            full = _seeded_full(n, p.shape)
            p.to_local().copy_(distribute_tensor(full, p.device_mesh, p.placements).to_local())
        for n, p in ref.named_parameters():
            p.copy_(_seeded_full(n, p.shape))
    compare_named(report, net, ref, "init by hand", EXACT)
    tol = _train(report, net, ref, rank, world_size, steps=3, what="hand init")
    compare_named(report, net, ref, "hand init trained", tol)

    # 3. reset_parameters()
    net = build()
    net.to_empty(device="cpu")
    torch.manual_seed(123)
    with torch.no_grad():
        for m in net.modules():
            if hasattr(m, "reset_parameters"):
                m.reset_parameters()
    fulls = {n: p.full_tensor() for n, p in net.named_parameters()}
    for n, v in fulls.items():
        report.check(bool(torch.isfinite(v).all()), f"reset_parameters: {n} not finite")
        if n.endswith("norm.weight"):
            report.close(f"reset_parameters {n} (LayerNorm weight = 1)", v, torch.ones_like(v),
                         EXACT)
        elif n.endswith("weight"):
            bound = 1 / v.shape[1] ** 0.5
            report.check(
                float(v.abs().max()) <= bound + 1e-6 and float(v.std()) > bound / 4,
                f"reset_parameters {n}: not a kaiming-uniform init (max {float(v.abs().max())})",
            )
        gathered = [torch.empty_like(v) for _ in range(world_size)]
        dist.all_gather(gathered, v.contiguous())
        report.check(all(torch.equal(g, gathered[0]) for g in gathered), f"{n} differs across ranks")
    ref = build_model("stack", seed=5)
    ref.load_state_dict(fulls)
    tol = _train(report, net, ref, rank, world_size, steps=2, what="reset_parameters")
    compare_named(report, net, ref, "reset_parameters trained", tol)
    return report.result()

