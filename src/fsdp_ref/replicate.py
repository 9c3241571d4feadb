"""``replicate``: data parallelism on the FSDP machinery, parameters replicated, not sharded.

torch 2.13's ``torch.distributed._composable.replicate_with_fsdp.replicate``, same
signature: every rank keeps whole parameters and, after each group's backward, the
gradients are all-reduced (``SUM``, then divided by the number of replicas) across the
mesh. It is DDP built from FSDP's pieces: one call makes one group, as ``fully_shard``
does, and the group's gradients are reduced in one collective on the same streams.

How it reuses ``fully_shard``: a mesh read as *replicate only* (``MeshInfo`` with no shard
dim, see :mod:`fsdp_ref.mesh`) gives each parameter the placement ``(Replicate(),)``; its
"shard" is the whole tensor, the all-gather has no group and sends nothing
(:func:`fsdp_ref.collectives.run_all_gather`), the reduce-scatter keeps the single row
(:func:`fsdp_ref.collectives.reduce_scatter`) and the replica all-reduce that HSDP uses
does the reduction. Parameters stay unsharded from forward to backward
(``reshard_after_forward=False``): there is nothing to free.

Composition, as torch allows it: ``replicate`` a root whose children were given to
``fully_shard`` (children sharded, the rest replicated), or ``fully_shard`` a root whose
children were replicated. A module takes one of the two APIs, once.
"""

from __future__ import annotations

from typing import Any, overload

import torch.nn as nn
from torch.distributed.device_mesh import DeviceMesh

from . import compat
from .api import DataParallelMeshDims, MixedPrecisionPolicy, OffloadPolicy
from .fully_shard import apply_fsdp, validate_modules
from .mesh import MeshInfo, default_mesh, mesh_info_for
from .module import FSDPModule

__all__ = ["ReplicateModule", "replicate"]


class ReplicateModule(FSDPModule):
    """Mixin of every module passed to :func:`replicate` (class ``Replicate<Name>``).

    It has the :class:`~fsdp_ref.FSDPModule` methods (gradient sync, prefetching, hooks),
    so code that configures FSDP modules configures these too; modules are also instances
    of torch's ``ReplicateModule`` (:func:`fsdp_ref.compat.wrapper_class`).
    """


@overload
def replicate(module: nn.Module, **kwargs: Any) -> ReplicateModule: ...
@overload
def replicate(module: list[nn.Module], **kwargs: Any) -> list[ReplicateModule]: ...


def replicate(
    module,
    *,
    mesh: DeviceMesh | None = None,
    mp_policy: MixedPrecisionPolicy = MixedPrecisionPolicy(),  # noqa: B008 (frozen)
    offload_policy: OffloadPolicy = OffloadPolicy(),  # noqa: B008 (never mutated)
    ignored_params: set[nn.Parameter] | None = None,
    dp_mesh_dims: DataParallelMeshDims | None = None,
):
    """Replicate ``module``'s parameters on every rank of ``mesh``; all-reduce gradients.

    Call it like ``fully_shard`` (bottom-up for several groups, then the root): each call
    makes one group whose gradients are all-reduced in one collective after its backward.

    Args:
        module: a module, or a list of modules to communicate as one group.
        mesh: a 1-D mesh of the replicas (default: all ranks).
        mp_policy: mixed precision (see :class:`~fsdp_ref.MixedPrecisionPolicy`).
        offload_policy: :class:`~fsdp_ref.CPUOffloadPolicy` keeps parameters on the CPU.
        ignored_params: parameters left alone: not moved, not reduced.
        dp_mesh_dims: on a larger SPMD mesh, the replicate dim(s) (no shard dim).

    Returns:
        The same module object(s), now also instances of :class:`ReplicateModule`.

    Raises:
        AssertionError: a module already replicated.
        RuntimeError: a module already given to ``fully_shard``.
        ValueError: a mesh that is not 1-D, ``dp_mesh_dims`` with a shard dim, a
            container without ``forward`` (torch's types and wording).
    """
    modules = validate_modules(module, "replicate")
    mesh = mesh if mesh is not None else default_mesh()
    apply_fsdp(
        modules, _replicate_mesh_info(mesh, compat.from_torch(dp_mesh_dims)),
        ReplicateModule, "replicate",
        reshard_after_forward=False,
        shard_placement_fn=None,
        mp_policy=mp_policy,
        offload_policy=offload_policy,
        ignored_params=ignored_params,
    )
    return module


def _replicate_mesh_info(mesh: DeviceMesh, dims: DataParallelMeshDims | None) -> MeshInfo:
    """The mesh read with no shard dim: its one dim (or the named replicate dims) holds
    the replicas."""
    if dims is not None:
        info = mesh_info_for(mesh, dims)
        if info.shard_mesh_dim is not None:
            raise ValueError(
                "replicate() with dp_mesh_dims requires replicate-only dims (no shard "
                "dims). Use fully_shard() for sharding."
            )
        return info
    if mesh.ndim != 1:
        raise ValueError(
            f"replicate expects a 1D DeviceMesh but got {mesh}; for replicas of sharded "
            "groups (HSDP) use fully_shard with a 2-D (replicate, shard) mesh"
        )
    return MeshInfo(mesh, None, 0, None, mesh.get_group(0))
