"""Sharded layouts of tensor-parallel parameters at world sizes no machine here has.

A fake process group (collectives that move nothing) of 8 or 16 ranks is enough to build
the meshes and the sharded DTensors; each case plays several ranks in turn and checks,
for every parameter, that fsdp_ref's sharded DTensor has

* torch ``fully_shard``'s mesh dim names and placements (built the same way);
* torch's local shard shape, and the local shape DTensor itself derives from those
  placements for this rank (``compute_local_shape_and_global_offset``), so DTensor ops
  on the sharded parameter see the data FSDP put there, uneven sizes included.

Numbers are checked on real gloo ranks in ``test_tensor_parallel.py``.
"""

from __future__ import annotations

import pytest
import torch
import torch.nn as nn
from torch.distributed.device_mesh import init_device_mesh
from torch.distributed.tensor import Replicate, Shard, distribute_tensor
from torch.distributed.tensor._utils import compute_local_shape_and_global_offset

from fsdp_ref.tools.simulate import fake_process_group
from tests.fsdp.common import get_impl

# name -> (world shape, dim names, tp dim placements per weight, dp_mesh_dims kwargs
#          or the names of fully_shard's mesh)
CASES = {
    "dp4_tp2": ((4, 2), ("dp", "tp"), {"shard": "dp"}),
    "tp2_dp4": ((2, 4), ("tp", "dp"), {"shard": "dp"}),
    "rep2_dp2_tp2": ((2, 2, 2), ("rep", "dp", "tp"), {"shard": "dp", "replicate": "rep"}),
    "dp2_cp2_tp2_flat": ((2, 2, 2), ("dp", "cp", "tp"), {"shard": ("dp", "cp")}),
    "dp2_cp2_tp4_flat": ((2, 2, 4), ("dp", "cp", "tp"), {"shard": ("dp", "cp")}),
    "tpmesh_dp4": ((4, 2), ("dp", "tp"), ("dp",)),
    "tpmesh_hsdp": ((2, 2, 2), ("rep", "dp", "tp"), ("rep", "dp")),
}

# (global shape, tp placement): uneven on purpose (10 rows over tp=2 then dp=4: 5 -> 2,2,1,0)
PARAMS = {
    "colwise": ((10, 6), Shard(0)),
    "rowwise": ((6, 12), Shard(1)),
    "replicated": ((7, 3), Replicate()),
    "bias": ((10,), Shard(0)),
}


def _model(world, names, spmd: bool) -> nn.Module:
    mod = nn.Module()
    tp_mesh = world["tp"]
    for key, (shape, tp_placement) in PARAMS.items():
        t = torch.arange(torch.Size(shape).numel(), dtype=torch.float32).reshape(shape)
        if spmd:
            placements = [tp_placement if n == "tp" else Replicate() for n in names]
            p = distribute_tensor(t, world, placements)
        else:
            p = distribute_tensor(t, tp_mesh, [tp_placement])
        mod.register_parameter(key, nn.Parameter(p))
    return mod


def _forget_earlier_meshes() -> None:
    """DTensor caches sharding propagation by value; a spec cached for an equal mesh of
    an earlier (fake) process group would hand back that older mesh object, which torch's
    dp_mesh_dims check rejects (it wants the very mesh passed to fully_shard)."""
    from torch.distributed.tensor import debug

    debug._clear_python_sharding_prop_cache()
    debug._clear_fast_path_sharding_prop_cache()


def _shard(impl: str, world, names, dims) -> nn.Module:
    api = get_impl(impl)
    spmd = isinstance(dims, dict)
    model = _model(world, names, spmd)
    if spmd:
        api.fully_shard(model, mesh=world, dp_mesh_dims=api.DataParallelMeshDims(**dims))
    else:
        api.fully_shard(model, mesh=world[dims[0]] if len(dims) == 1 else world[dims])
    return model


@pytest.mark.parametrize("case", sorted(CASES))
def test_layout_matches_upstream(case):
    shape, names, dims = CASES[case]
    world_size = torch.Size(shape).numel()
    for rank in sorted({0, 1, world_size // 2 + 1, world_size - 1}):
        with fake_process_group(world_size, rank):
            _forget_earlier_meshes()
            world = init_device_mesh("cpu", shape, mesh_dim_names=names)
            mine = _shard("fsdp_ref", world, names, dims)
            theirs = _shard("torch", world, names, dims)
            for (name, p), (_, q) in zip(mine.named_parameters(), theirs.named_parameters()):
                where = f"{case} rank {rank} {name}"
                assert p.device_mesh.mesh_dim_names == q.device_mesh.mesh_dim_names, where
                assert tuple(p.placements) == tuple(q.placements), (where, p.placements)
                assert p.to_local().shape == q.to_local().shape, where
                derived, _ = compute_local_shape_and_global_offset(
                    p.shape, p.device_mesh, p.placements
                )
                assert tuple(p.to_local().shape) == tuple(derived), (
                    where, p.placements, tuple(p.to_local().shape), derived)


def test_int_reshard_groups_follow_the_shard_dim():
    """reshard_after_forward=2 on a (dp=4, tp=2) mesh sharding over dp: the post-forward
    groups are pairs of *dp* neighbours with the same tp coordinate. Rank r sits at
    (dp, tp) = (r // 2, r % 2), so the dp line of tp=0 is 0, 2, 4, 6."""
    from fsdp_ref.api import DataParallelMeshDims
    from fsdp_ref.mesh import mesh_info_for, post_forward_mesh_info

    with fake_process_group(8, 0):
        world = init_device_mesh("cpu", (4, 2), mesh_dim_names=("dp", "tp"))
        info = mesh_info_for(world, DataParallelMeshDims(shard="dp"))
        post = post_forward_mesh_info(2, info)
        assert post.mesh.mesh.tolist() == [[0, 2], [4, 6], [1, 3], [5, 7]]
        assert post.shard_size == 2
