"""Issue 23 item 1: per-parameter meshes through ``shard_placement_fn`` (Mixture of Experts).

torchtitan shards a MoE block with one ``fully_shard`` call whose ``shard_placement_fn``
returns, for the expert weights (``[num_experts, d, h]``), a ``ShardPlacementResult``
naming another mesh: the experts are sharded over the expert-FSDP dim ``efsdp`` of an
``(ep, efsdp)`` mesh, everything else over the whole data-parallel mesh. Here the mesh
info is built as torchtitan builds it, ``FSDPMeshInfo(mesh["efsdp"], shard_mesh_dim=0)``
or, for experts that are also reduced across ``ep``, ``HSDPMeshInfo(mesh, shard_mesh_dim=1,
replicate_mesh_dim=0)``. (Real expert parallelism also dispatches tokens with an
all-to-all over ``ep``; these scenarios test the sharding alone, every rank computing
every expert.)
"""

from __future__ import annotations

import torch
from torch.distributed.tensor import Shard

from tests.conformance.harness import fit
from tests.conformance.models import MoEModel


def meshes(lib):
    """The data-parallel mesh and the ``(ep, efsdp)`` mesh: ``ep`` is 2 from 2 ranks on."""
    ep = 1 if lib.world_size == 1 else 2
    return lib.mesh(names=("dp",)), lib.mesh((ep, lib.world_size // ep), ("ep", "efsdp"))


def expert_placement(lib, world, experts: str, result_cls: str, dim: int = 0):
    """What ``shard_placement_fn`` returns for an expert weight.

    ``experts``: ``"efsdp"`` (sharded over ``efsdp`` only), ``"hsdp"`` (sharded over
    ``efsdp``, replicated and all-reduced over ``ep``) or ``"same"`` (a new mesh info on
    the very mesh given to ``fully_shard``, sharded on ``dim``). ``result_cls``: ``"lib"``
    (the implementation's own ``ShardPlacementResult``), ``"torch"`` (torch's, whatever
    the implementation: what torchtitan-style code hands to a drop-in) or ``"mesh"``
    (fsdp_ref's result naming the ``DeviceMesh`` itself; torch's own for torch).
    """
    from torch.distributed.fsdp._fully_shard import _fsdp_common as common

    if experts == "same":
        info = common.FSDPMeshInfo(lib.mesh(names=("dp",)), shard_mesh_dim=0)
    elif experts == "efsdp":
        info = common.FSDPMeshInfo(world["efsdp"], shard_mesh_dim=0)
    else:
        info = common.HSDPMeshInfo(world, shard_mesh_dim=1, replicate_mesh_dim=0)
    if result_cls == "mesh" and lib.name == "fsdp_ref":  # fsdp_ref's result takes a mesh
        return lib.ShardPlacementResult(Shard(dim), info.mesh)
    cls = common.ShardPlacementResult if result_cls == "torch" else lib.ShardPlacementResult
    return cls(placement=Shard(dim), mesh_info=info)


def moe(lib, experts: str = "efsdp", result_cls: str = "lib", mp: bool = False,
        dim: int = 0, steps: int = 2):
    """Shard each MoE block with expert weights on their own mesh, then the root; train
    with SGD. Returns the losses, the full parameters, and each expert weight's mesh
    (ranks and dim names) and placements."""
    dp, world = meshes(lib)
    result = expert_placement(lib, world, experts, result_cls, dim)
    kw = {}
    if mp:
        kw["mp_policy"] = lib.MixedPrecisionPolicy(param_dtype=torch.bfloat16,
                                                   reduce_dtype=torch.float32)
    model = MoEModel()
    for block in model.blocks:
        lib.fully_shard(block, mesh=dp,
                        shard_placement_fn=lambda p: result if p.ndim == 3 else None, **kw)
    lib.fully_shard(model, mesh=dp, **kw)
    layout = {}
    if lib.distributed:
        for name, p in model.named_parameters():
            if p.ndim == 3:
                layout[name] = (p.device_mesh.mesh.tolist(), p.device_mesh.mesh_dim_names,
                                str(p.placements))
    out = fit(lib, model, din=8, dout=4, steps=steps)
    return {**out, "layout": layout}
