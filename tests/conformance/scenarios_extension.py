"""Issue 23 item 6: the all-gather extension attached to a tensor *instance*.

FSDP2 asks a parameter's sharded local tensor for ``fsdp_pre_all_gather`` /
``fsdp_post_all_gather`` when the group initialises at its first forward; torch finds
hooks set on the tensor object itself (not only on its class), for example attached after
``fully_shard`` to ``module.weight._local_tensor``. The pre hook receives the mesh of the
ranks the parameter is sharded over: the 1-D mesh under FSDP, the shard dim's sub-mesh
under HSDP.

Under ``replicate`` with ``dp_mesh_dims`` (parameters are DTensors on the whole mesh),
it is the replicate dim's 1-D mesh.

The hooks here gather ``2 * shard`` and use the gathered tensor as the unsharded weight,
so a model whose hooks are ignored trains differently; they also record the mesh they
were given.
"""

from __future__ import annotations

import types

import torch
import torch.nn as nn

from tests.conformance.harness import fit


def _pre(seen: list):
    def fsdp_pre_all_gather(self, mesh):
        seen.append((mesh.mesh.tolist(), mesh.mesh_dim_names))
        return (self * 2,), None

    return fsdp_pre_all_gather


def fsdp_post_all_gather(self, outputs, metadata, param_dtype, *, out=None):
    """The gathered ``2 * weight`` is the unsharded weight (filled in place later on)."""
    (gathered,) = outputs
    if out is not None:  # (a DTensor under dp_mesh_dims: fill its local tensor)
        out = getattr(out, "_local_tensor", out)
        with torch.no_grad():
            out.copy_(gathered.view_as(out))
        return None
    return gathered, (gathered,)


def instance_extension(lib, hsdp: bool = False, steps: int = 2, unshard_first: bool = False):
    """Shard a two-layer model (HSDP on a ``(2, world/2)`` mesh when ``hsdp``), attach the
    hooks to the first weight's local tensor object, train (``unshard_first``: after an
    explicit ``model.unshard()`` and ``reshard()``, the first all-gather). Returns losses,
    parameters, whether the pre hook ran (at the explicit unshard) and the distinct meshes
    it received."""
    ws = lib.world_size
    mesh = lib.mesh((2, ws // 2), ("rep", "shard")) if hsdp else lib.mesh((ws,), ("dp",))
    model = nn.Sequential(nn.Linear(8, 8), nn.Tanh(), nn.Linear(8, 4))
    lib.fully_shard(model, mesh=mesh)
    seen: list = []
    local = model[0].weight._local_tensor
    local.fsdp_pre_all_gather = types.MethodType(_pre(seen), local)
    local.fsdp_post_all_gather = types.MethodType(fsdp_post_all_gather, local)
    at_unshard = None
    if unshard_first:
        model.unshard()
        at_unshard = bool(seen)
        model.reshard()
    out = fit(lib, model, din=8, dout=4, steps=steps)
    out["pre_hook_ran_at_unshard"] = at_unshard
    meshes = sorted({repr(m) for m in seen})
    return {**out, "pre_hook_ran": bool(seen), "meshes": meshes}


class _OnTP(nn.Module):
    """The two-layer model with DTensor parameters replicated on a whole ``(rep, tp)``
    mesh (what ``dp_mesh_dims`` requires): inputs enter, and outputs leave, as
    DTensors on that mesh (each rank's batch its own: nothing is checked)."""

    def __init__(self, mesh) -> None:
        super().__init__()
        from torch.distributed.tensor import Replicate, distribute_tensor

        self.net = nn.Sequential(nn.Linear(8, 8), nn.Tanh(), nn.Linear(8, 4))
        self.mesh = mesh
        for m in self.net.modules():
            for name, p in list(m._parameters.items()):
                m._parameters[name] = nn.Parameter(
                    distribute_tensor(p.detach(), mesh, [Replicate(), Replicate()]))

    def forward(self, x):
        from torch.distributed.tensor import DTensor, Replicate

        return self.net(DTensor.from_local(x, self.mesh, [Replicate(), Replicate()])).to_local()


def replicate_extension(lib, steps: int = 2):
    """``replicate`` over the ``rep`` dim of a ``(world, 1)`` mesh named by
    ``dp_mesh_dims``, the hooks on the first weight's local tensor: the pre hook gets the
    replicate dim's 1-D mesh."""
    mesh = lib.mesh((lib.world_size, 1), ("rep", "tp"))
    model = _OnTP(mesh)
    lib.replicate(model, mesh=mesh, dp_mesh_dims=lib.DataParallelMeshDims(replicate="rep"))
    seen: list = []
    local = model.net[0].weight._local_tensor
    local.fsdp_pre_all_gather = types.MethodType(_pre(seen), local)
    local.fsdp_post_all_gather = types.MethodType(fsdp_post_all_gather, local)
    out = fit(lib, model, din=8, dout=4, steps=steps)
    return {**out, "meshes": sorted({repr(m) for m in seen})}


def class_extension_control(lib, steps: int = 2):
    """The same model without hooks: what the instance scenario must *not* equal (it
    shows the hooks change training, so a run that ignores them is caught)."""
    mesh = lib.mesh(names=("dp",))
    model = nn.Sequential(nn.Linear(8, 8), nn.Tanh(), nn.Linear(8, 4))
    lib.fully_shard(model, mesh=mesh)
    return fit(lib, model, din=8, dout=4, steps=steps)


def extension_under_inference_mode(lib):
    """The hooked model of :func:`instance_extension`, its first two forwards under
    ``torch.inference_mode()``: the extension's all-gather outputs are made there (inference
    tensors, which have no version counter). Returns the outputs."""
    model = nn.Sequential(nn.Linear(8, 8), nn.Tanh(), nn.Linear(8, 4))
    lib.fully_shard(model, mesh=lib.mesh((lib.world_size,), ("dp",)))
    local = model[0].weight._local_tensor
    local.fsdp_pre_all_gather = types.MethodType(_pre([]), local)
    local.fsdp_post_all_gather = types.MethodType(fsdp_post_all_gather, local)
    x = torch.randn(4, 8, generator=torch.Generator().manual_seed(lib.rank))
    with torch.inference_mode():
        return {"outputs": [model(x) for _ in range(2)]}
