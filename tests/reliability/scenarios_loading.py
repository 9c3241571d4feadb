"""Loading scenarios (run on every rank): what a failed load leaves behind.

Each scenario builds a sharded ``Stack``, records this rank's local shards, attempts a
load, and returns the exception (as :func:`exc_info`) and the keys whose local shard
changed. ``impl`` picks ``fsdp_ref`` or torch's ``fully_shard`` for side-by-side runs.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from typing import Any

import torch
import torch.distributed as dist
from torch.distributed.tensor import DTensor, Shard, distribute_tensor

from tests.fsdp.common import exc_info, run_with
from tests.reliability.common import sharded_stack


def _locals(model) -> dict[str, torch.Tensor]:
    return {
        k: (v.to_local() if isinstance(v, DTensor) else v).detach().clone()
        for k, v in model.state_dict().items()
    }


def _changed(model, before: dict[str, torch.Tensor]) -> list[str]:
    now = _locals(model)
    return sorted(k for k in before if not torch.equal(now[k], before[k]))


def _shifted(model, delta: float = 1.0) -> dict[str, Any]:
    """The model's own state dict plus ``delta``: every entry fits, every value differs."""
    return {k: (v + delta).detach() for k, v in model.state_dict().items()}


def _load(model, sd, **kw) -> dict[str, Any]:
    before = _locals(model)
    _, err = run_with(lambda: model.load_state_dict(sd, **kw))
    return {"err": exc_info(err), "changed": _changed(model, before), "n_keys": len(before)}


def wrong_shape_last(rank, world_size, impl):
    """Every entry fits except the last one (a bias of the wrong length)."""
    model = sharded_stack(impl, world_size)
    sd = _shifted(model)
    mesh = sd["out_proj.bias"].device_mesh
    sd["out_proj.bias"] = distribute_tensor(torch.zeros(5), mesh, [Shard(0)])
    return _load(model, sd)


def bad_on_one_rank(rank, world_size, impl, problem):
    """Only the last rank's state dict has a bad entry: ``"dtype"`` (an int64 weight),
    ``"missing"`` (a key dropped) or ``"plain"`` (a plain tensor for a DTensor)."""
    model = sharded_stack(impl, world_size)
    sd = _shifted(model)
    key = "blocks.1.mlp.in_proj.weight"
    full = sd[key].full_tensor()  # a collective: every rank computes it
    if rank == world_size - 1:
        if problem == "dtype":
            sd[key] = sd[key].to(torch.int64)
        elif problem == "missing":
            del sd[key]
        elif problem == "plain":
            sd[key] = full
    return _load(model, sd)


def strictness(rank, world_size, impl, strict, extra):
    """A missing key plus (``extra``) an unexpected one, under ``strict``."""
    model = sharded_stack(impl, world_size)
    sd = _shifted(model)
    del sd["in_proj.bias"]
    if extra:
        sd["blocks.0.nonexistent"] = sd["in_proj.weight"]
    return _load(model, sd, strict=strict)


def dtype_kinds(rank, world_size, impl, dtype):
    """Every entry cast to ``dtype`` (a string such as ``"bfloat16"``)."""
    model = sharded_stack(impl, world_size)
    sd = {k: v.to(getattr(torch, dtype)) for k, v in _shifted(model, 0.5).items()}
    out = _load(model, sd)
    out["dtypes"] = sorted({str(v.dtype) for v in model.state_dict().values()})
    return out


def assign_other_placement(rank, world_size, impl):
    """``assign=True`` with replicated DTensors (FSDP needs its ``Shard(0)`` shards)."""
    from torch.distributed.tensor import Replicate

    model = sharded_stack(impl, world_size)
    sd = {k: v.redistribute(v.device_mesh, [Replicate()]) for k, v in _shifted(model).items()}
    return _load(model, sd, assign=True)


def good_loads(rank, world_size, impl):
    """Loads that must work: shifted values, replicated DTensors (redistributed on copy),
    and a nested fully_shard module loaded on its own."""
    from torch.distributed.tensor import Replicate

    model = sharded_stack(impl, world_size)
    results = {}
    results["shifted"] = _load(model, _shifted(model))
    repl = {k: v.redistribute(v.device_mesh, [Replicate()]) for k, v in _shifted(model).items()}
    results["replicated"] = _load(model, repl)
    block = model.blocks[1]
    results["nested"] = _load(block, _shifted(block))
    bad = _shifted(block)
    bad["norm.weight"] = torch.zeros(3)
    results["nested_bad"] = _load(block, bad)
    return results


def set_model_state_dict_full(rank, world_size, impl, bad, broadcast):
    """``set_model_state_dict`` with a full (unsharded) state dict, every rank holding it
    (``broadcast=False``) or rank 0 only (``broadcast_from_rank0``); ``bad`` makes the
    last key's shape wrong."""
    from torch.distributed.checkpoint.state_dict import StateDictOptions, set_model_state_dict

    model = sharded_stack(impl, world_size)
    full = {k: (v + 1).full_tensor() for k, v in model.state_dict().items()}
    if bad:
        full["out_proj.bias"] = torch.zeros(5)
    if broadcast and rank != 0:
        full = {}
    before = _locals(model)
    opts = StateDictOptions(full_state_dict=True, broadcast_from_rank0=broadcast)
    _, err = run_with(lambda: set_model_state_dict(model, full, options=opts))
    return {"err": exc_info(err), "changed": _changed(model, before), "n_keys": len(before)}


# ---- DCP: what a damaged shard file does, and the staged load that survives it --------


def _shared_dir(rank) -> str:
    path = [tempfile.mkdtemp(prefix="fsdp_ref_dcp_") if rank == 0 else None]
    dist.broadcast_object_list(path, src=0)
    return path[0]


def _damage(path: str, how: str, own_shard: torch.Tensor) -> str:
    """Damage a data file; returns its name. ``truncate``: cut the last rank's file in
    half. ``flip``: invert one byte inside this rank's (rank 0's) bytes of ``own_shard``,
    found by searching the file for them, so the file still parses."""
    files = sorted(f for f in os.listdir(path) if f.endswith(".distcp"))
    victim = files[-1] if how == "truncate" else files[0]
    with open(os.path.join(path, victim), "r+b") as f:
        data = f.read()
        if how == "truncate":
            f.truncate(len(data) // 2)
        else:
            payload = own_shard.contiguous().numpy().tobytes()
            at = data.find(payload)
            assert at >= 0, "shard bytes not found in the checkpoint file"
            at += len(payload) // 2
            f.seek(at)
            f.write(bytes([data[at] ^ 0x40]))
    return victim


def dcp_damaged(rank, world_size, impl, how, staged):
    """Save, damage one shard file (``how``: ``"truncate"`` or ``"flip"``), then load it
    back into a model whose values differ: in place (``dcp.load(model.state_dict())``) or
    with :func:`fsdp_ref.load_checkpoint_staged`."""
    import torch.distributed.checkpoint as dcp

    model = sharded_stack(impl, world_size)
    path = _shared_dir(rank)
    try:
        dcp.save(model.state_dict(), checkpoint_id=path)
        saved = _locals(model)
        dist.barrier()
        shard = saved["blocks.1.mlp.in_proj.weight"]
        victim = _damage(path, how, shard) if rank == 0 else None
        dist.barrier()
        with torch.no_grad():
            for p in model.parameters():
                p.add_(1.0)
        before = _locals(model)
        if staged:
            from fsdp_ref import load_checkpoint_staged

            _, err = run_with(lambda: load_checkpoint_staged(model, path))
        else:
            _, err = run_with(lambda: dcp.load(model.state_dict(), checkpoint_id=path))
        now = _locals(model)
        return {
            "err": exc_info(err),
            "victim": victim,
            "changed": sorted(k for k in before if not torch.equal(now[k], before[k])),
            "equal_saved": sorted(k for k in saved if torch.equal(now[k], saved[k])),
            "n_keys": len(before),
        }
    finally:
        dist.barrier()
        if rank == 0:
            shutil.rmtree(path, ignore_errors=True)


def dcp_staged_roundtrip(rank, world_size):
    """A good checkpoint loads through the staged path to exactly the saved shards."""
    import torch.distributed.checkpoint as dcp

    from fsdp_ref import load_checkpoint_staged

    model = sharded_stack("fsdp_ref", world_size)
    path = _shared_dir(rank)
    try:
        dcp.save(model.state_dict(), checkpoint_id=path)
        saved = _locals(model)
        other = sharded_stack("fsdp_ref", world_size, seed=1)
        load_checkpoint_staged(other, path)
        now = _locals(other)
        return sorted(k for k in saved if not torch.equal(now[k], saved[k]))
    finally:
        dist.barrier()
        if rank == 0:
            shutil.rmtree(path, ignore_errors=True)


def assign_same_layout(rank, world_size, impl):
    """``assign=True`` with the model's own layout (values 0.5): the next forward must use
    the assigned values, and they must still be the parameters' values afterwards."""
    model = sharded_stack(impl, world_size)
    sd = {k: torch.full_like(v, 0.5) for k, v in model.state_dict().items()}
    model.load_state_dict(sd, assign=True)
    out = model(torch.ones(2, 16))
    return {
        "out": out.detach().flatten().tolist(),
        "values": sorted({x for v in model.state_dict().values() for x in v.to_local().flatten().tolist()}),
    }
