"""The model of the pairwise conformance matrix and how a case's options are applied to
it (issue 30 item 2): each option of :data:`~tests.conformance.matrix_options.OPTIONS`
is applied here and nowhere else, in torchtitan's order (tensor parallelism, freezing,
activation checkpointing, compile, then ``fully_shard`` on the blocks and the root, then
the per-module settings). :mod:`tests.conformance.scenarios_matrix` trains the result.
"""

from __future__ import annotations

from typing import Any

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.distributed.tensor import Shard

DIN, DIM, HIDDEN, DOUT = 5, 8, 16, 3
#: the weight matrices a value passes through, (fan_out, fan_in): in_proj, two per block,
#: head (a block's ``spare`` is never called)
WEIGHT_SHAPES = ((DIM, DIN), *[(HIDDEN, DIM), (DIM, HIDDEN)] * 2, (DOUT, DIM))
#: data-parallel ranks of each mesh (tp: 2 of the 4 ranks hold the same batch slice)
WORLD_DP = {"dp2": 2, "dp4": 4, "hsdp": 4, "tp": 2}


class Block(nn.Module):
    """``x + out_proj(gelu(in_proj(x)))``; the input is cast to the weights' dtype by the
    block itself, so a block that FSDP does not cast (``cast_forward_inputs=False``)
    keeps its residual in the dtype it was given. ``spare`` (if any) is never called."""

    def __init__(self, unused: bool) -> None:
        super().__init__()
        self.in_proj = nn.Linear(DIM, HIDDEN)
        self.out_proj = nn.Linear(HIDDEN, DIM)
        if unused:
            self.spare = nn.Linear(DIM, DIM)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = F.gelu(self.in_proj(x.to(self.in_proj.weight.dtype)))
        return x + self.out_proj(h)


class Net(nn.Module):
    """``in_proj -> Block x 2 -> head``; uneven shapes on purpose (5 and 3 do not divide
    2 or 4), so that sharding pads."""

    def __init__(self, unused: bool) -> None:
        super().__init__()
        self.in_proj = nn.Linear(DIN, DIM)
        self.blocks = nn.ModuleList(Block(unused) for _ in range(2))
        self.head = nn.Linear(DIM, DOUT)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.in_proj(x)
        for block in self.blocks:
            h = block(h)
        return self.head(h.to(self.head.weight.dtype))


# ---- meshes ----------------------------------------------------------------------------


def _meshes(lib, mesh: str):
    """(the mesh given to fully_shard, the tensor-parallel mesh or None, the
    data-parallel coordinates (index, size) of this rank)."""
    if mesh in ("dp2", "dp4"):
        return lib.mesh(names=("dp",)), None, (lib.rank, lib.world_size)
    if mesh == "hsdp":
        return lib.mesh((2, lib.world_size // 2), ("rep", "shard")), None, (lib.rank,
                                                                             lib.world_size)
    world = lib.mesh((lib.world_size // 2, 2), ("dp", "tp"))
    return world["dp"], world["tp"], (world.get_local_rank("dp"), world.size(0))


def _own_mesh_result(lib):
    """torchtitan's expert layout: a parameter sharded over ``efsdp`` and replicated
    over ``ep`` of an ``(ep, efsdp)`` mesh, as torch's ShardPlacementResult."""
    from torch.distributed.fsdp._fully_shard import _fsdp_common as common

    world = lib.mesh((2, lib.world_size // 2), ("ep", "efsdp"))
    info = common.HSDPMeshInfo(world, shard_mesh_dim=1, replicate_mesh_dim=0)
    return common.ShardPlacementResult(placement=Shard(0), mesh_info=info)


def _shard_size(mesh) -> int:
    """The size of the dim FSDP shards over (the last one of an HSDP mesh)."""
    return mesh.size(mesh.ndim - 1)


# ---- building --------------------------------------------------------------------------


def _dtype(name: str | None):
    return None if name is None else getattr(torch, name)


def build(lib, case: dict[str, Any]):
    """The model with the case's options applied; (model, its blocks as FSDP modules,
    data-parallel (index, size))."""
    model = Net(unused=case["unused_params"] != "none")
    if case["frozen_params"]:
        for block in model.blocks:
            block.in_proj.requires_grad_(False)
    if not lib.distributed:  # one process: the whole model on the whole batch
        return model, list(model.blocks), (0, 1)
    mesh, tp_mesh, dp = _meshes(lib, case["mesh"])
    if tp_mesh is not None:
        from torch.distributed.tensor.parallel import (
            ColwiseParallel,
            RowwiseParallel,
            parallelize_module,
        )

        for block in model.blocks:
            parallelize_module(block, tp_mesh, {"in_proj": ColwiseParallel(),
                                                "out_proj": RowwiseParallel()})
    placement_fn = None
    if case["shard_placement"] == "dim1":  # torch shards dim 1 only evenly
        size = _shard_size(mesh)
        placement_fn = lambda p: (Shard(1) if p.ndim == 2  # noqa: E731
                                  and p.shape[1] % size == 0 else None)
    elif case["shard_placement"] == "own_mesh":
        targets = {id(block.out_proj.weight) for block in model.blocks}
        result = _own_mesh_result(lib)
        placement_fn = lambda p: result if id(p) in targets else None  # noqa: E731
    if case["activation_checkpointing"]:
        from torch.distributed.algorithms._checkpoint.checkpoint_wrapper import (
            checkpoint_wrapper,
        )

        for i, block in enumerate(list(model.blocks)):
            model.blocks[i] = checkpoint_wrapper(block)
    if case["compile"]:  # torchtitan's order: checkpointing, compile, then fully_shard
        for i, block in enumerate(list(model.blocks)):
            model.blocks[i] = torch.compile(block, backend="aot_eager")
    param, reduce = _dtype(case["param_dtype"]), _dtype(case["reduce_dtype"])
    common: dict[str, Any] = {"mesh": mesh, "shard_placement_fn": placement_fn,
                              "reshard_after_forward": case["reshard_after_forward"]}
    if case["offload"]:
        common["offload_policy"] = lib.CPUOffloadPolicy(pin_memory=False)
    for block in model.blocks:
        lib.fully_shard(block, mp_policy=lib.MixedPrecisionPolicy(
            param_dtype=param, reduce_dtype=reduce,
            cast_forward_inputs=case["cast_forward_inputs"]), **common)
    lib.fully_shard(model, mp_policy=lib.MixedPrecisionPolicy(
        param_dtype=param, reduce_dtype=reduce, output_dtype=_dtype(case["output_dtype"])),
        **common)
    blocks = list(model.blocks)
    modules = [model, *blocks]
    if case["explicit_prefetch"]:
        model.set_modules_to_forward_prefetch([blocks[0]])
        blocks[0].set_modules_to_forward_prefetch([blocks[1]])
        blocks[1].set_modules_to_backward_prefetch([blocks[0]])
    for module in modules:
        if case["gradient_divide_factor"] is not None:
            module.set_gradient_divide_factor(case["gradient_divide_factor"])
        if case["force_sum_reduction"]:
            module.set_force_sum_reduction_for_comms(True)
    if case["unused_params"] == "reduce_scatter":
        model.set_reduce_scatter_unused_params(True)
    return model, blocks, dp
