"""Which ranks shard and which replicate: reading a ``DeviceMesh`` for FSDP.

A 1-D mesh means plain FSDP: every rank holds one shard (placement ``(Shard(0),)``).
A 2-D mesh ``(replicate, shard)`` means HSDP: parameters are sharded within each row of
the mesh and replicated across rows (placement ``(Replicate(), Shard(0))``); gradients are
reduce-scattered within the row, then all-reduced across replicas.
With ``dp_mesh_dims`` the mesh may have more dims (tensor parallelism, context
parallelism): the named dims are the data-parallel ones, several names are flattened into
one dim, and the other dims are left to the parameters' own DTensor placements
(:mod:`fsdp_ref.spmd`).
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import torch
import torch.distributed as dist
from torch.distributed.device_mesh import DeviceMesh, init_device_mesh
from torch.distributed.tensor import Replicate, Shard

from .api import DataParallelMeshDims

__all__ = [
    "MeshInfo",
    "check_reshard_after_forward",
    "default_mesh",
    "mesh_info_for",
    "post_forward_mesh_info",
]


@dataclass
class MeshInfo:
    """The process groups and coordinates FSDP needs from a mesh.

    Attributes:
        mesh: the mesh parameters are placed on (the DTensor mesh).
        shard_mesh_dim: index of the shard dim in ``mesh``, or ``None`` (pure replication).
        replicate_mesh_dim: index of the replicate dim in ``mesh``, or ``None``.
        shard_group: process group of the ranks that share one parameter's shards.
        replicate_group: process group across replicas (HSDP), or ``None``.
        spmd_mesh: with ``dp_mesh_dims``, the full mesh the user passed (parameters that
            are DTensors must live on it); ``None`` otherwise. ``mesh`` differs from it
            only when several dims were flattened into one.
        dp_mesh_dims: the names given to ``fully_shard``, or ``None``.
    """

    mesh: DeviceMesh
    shard_mesh_dim: int | None
    replicate_mesh_dim: int | None
    shard_group: dist.ProcessGroup | None
    replicate_group: dist.ProcessGroup | None
    spmd_mesh: DeviceMesh | None = None
    dp_mesh_dims: DataParallelMeshDims | None = None

    @property
    def shard_size(self) -> int:
        """Number of ranks a parameter is split across."""
        return 1 if self.shard_group is None else self.shard_group.size()

    @property
    def shard_rank(self) -> int:
        """This rank's index among ``shard_group``."""
        return 0 if self.shard_group is None else self.shard_group.rank()

    @property
    def replicate_size(self) -> int:
        """Number of replicas (1 for plain FSDP)."""
        return 1 if self.replicate_group is None else self.replicate_group.size()

    @property
    def is_hsdp(self) -> bool:
        """Whether gradients need an all-reduce across replicas after the reduce-scatter."""
        return self.replicate_group is not None and self.replicate_size > 1

    def shard_lines(self, size: int) -> torch.Tensor:
        """The mesh's ranks in groups of ``size`` consecutive ranks *along the shard dim*.

        Row ``i`` of the result is one group. With ``size == shard_size`` the rows are all
        the shard groups of the mesh; a divisor gives the smaller groups of an int
        ``reshard_after_forward``. Moving the shard dim last first keeps other mesh dims
        (replicas, tensor-parallel peers) out of any one group.
        """
        return self.mesh.mesh.movedim(self.shard_mesh_dim, -1).reshape(-1, size)

    def placements(self, shard_dim: int) -> tuple:
        """DTensor placements of a parameter sharded on ``shard_dim`` of its tensor."""
        out = [Replicate()] * self.mesh.ndim
        if self.shard_mesh_dim is not None:
            out[self.shard_mesh_dim] = Shard(shard_dim)
        return tuple(out)


def default_mesh() -> DeviceMesh:
    """A 1-D mesh over the whole default process group on the default device type."""
    if not dist.is_initialized():
        raise RuntimeError(
            "fully_shard needs an initialized process group: call "
            "torch.distributed.init_process_group() first (torchrun sets up the env)"
        )
    device_type = "cuda" if torch.cuda.is_available() else "cpu"
    return init_device_mesh(device_type, (dist.get_world_size(),))


def mesh_info_for(mesh: DeviceMesh, dp_mesh_dims: DataParallelMeshDims | None) -> MeshInfo:
    """Validate ``mesh`` and return the groups to shard and replicate over.

    Raises:
        ValueError: when the mesh has the wrong number of dims, or ``dp_mesh_dims`` names
            a dim the mesh does not have (torch's messages first, then the fix).
        AssertionError: a 2-D mesh without ``mesh_dim_names`` (torch's type and message).
    """
    if not isinstance(mesh, DeviceMesh):
        raise ValueError(f"mesh must be a torch.distributed.DeviceMesh, got {type(mesh)}")
    if dp_mesh_dims is not None:
        return _spmd_mesh_info(mesh, dp_mesh_dims)
    if mesh.ndim == 1:
        return MeshInfo(mesh, 0, None, mesh.get_group(0), None)
    if mesh.ndim == 2 and mesh.mesh_dim_names is None:
        raise AssertionError(
            "Please init the 2D mesh for HSDP with mesh_dim_names specified: "
            "init_device_mesh(device, (replicas, shards), mesh_dim_names=('replicate', "
            "'shard')); the pre hook of the all-gather extension gets mesh['shard']"
        )
    if mesh.ndim == 2:
        return MeshInfo(mesh, 1, 0, mesh.get_group(1), mesh.get_group(0))
    raise ValueError(
        f"fully_shard expects a 1D or 2D DeviceMesh but got {mesh}: a 1-D mesh (FSDP) or a "
        f"2-D (replicate, shard) mesh (HSDP), not {mesh.ndim}-D; pass mesh[...] sliced to "
        "the data parallel dims, or name them with dp_mesh_dims=DataParallelMeshDims(...)"
    )


def _spmd_mesh_info(mesh: DeviceMesh, dims: DataParallelMeshDims) -> MeshInfo:
    spmd_mesh, user_dims = mesh, dims
    names = mesh.mesh_dim_names
    if names is None:
        raise ValueError(
            "mesh must have mesh_dim_names when dp_mesh_dims is provided: build it with "
            "init_device_mesh(..., mesh_dim_names=(...))"
        )
    for name in dims.shard_names + dims.replicate_names:
        if name not in names:
            raise ValueError(
                f"Mesh dim name '{name}' not found in mesh.mesh_dim_names {names}; "
                "fix the name in dp_mesh_dims"
            )

    if len(dims.shard_names) > 1 or len(dims.replicate_names) > 1:
        mesh = _flattened_dp_mesh(mesh, dims)
        names = mesh.mesh_dim_names
        dims = DataParallelMeshDims(
            shard=_flat_name(dims.shard_names) if dims.shard_names else None,
            replicate=_flat_name(dims.replicate_names) if dims.replicate_names else None,
        )
    shard_dim = names.index(dims.shard_names[0]) if dims.shard_names else None
    rep_dim = names.index(dims.replicate_names[0]) if dims.replicate_names else None
    return MeshInfo(
        mesh,
        shard_dim,
        rep_dim,
        mesh.get_group(shard_dim) if shard_dim is not None else None,
        mesh.get_group(rep_dim) if rep_dim is not None else None,
        spmd_mesh,
        user_dims,
    )


def _flat_name(names: tuple[str, ...]) -> str:
    """Name of the dim that several dims are flattened into (torch's: joined by ``_``)."""
    return "_".join(names)


def _flattened_dp_mesh(mesh: DeviceMesh, dims: DataParallelMeshDims) -> DeviceMesh:
    """The same ranks with each group of data-parallel dims merged into one dim.

    Dims come out as ``(replicate, shard, *other dims)``; a rank's index on a merged dim
    is its row-major index over the merged dims. Built from slices of ``mesh``
    (``_flatten`` makes, once, a process group for the merged dims and registers it on the
    root mesh; ``_concatenate`` reuses the groups of the other dims), so the result shares
    ``mesh``'s root and creates no group on later calls.

    Raises:
        ValueError: when the named dims cannot be sliced together (e.g. listed out of
            the mesh's order).
    """
    parts = []
    for group in (dims.replicate_names, dims.shard_names):
        if not group:
            continue
        try:
            parts.append(mesh[group[0]] if len(group) == 1 else
                         mesh[group]._flatten(_flat_name(group)))
        except (KeyError, ValueError, RuntimeError) as err:
            raise ValueError(
                f"cannot flatten mesh dims {group} of {mesh} into one data-parallel dim "
                f"({err}); list them in the mesh's own order {mesh.mesh_dim_names}"
            ) from err
    dp = set(dims.replicate_names + dims.shard_names)
    parts += [mesh[name] for name in mesh.mesh_dim_names if name not in dp]
    return DeviceMesh._concatenate(parts)


def check_reshard_after_forward(value: object, shard_size: int) -> None:
    """Raise unless ``value`` is a valid ``reshard_after_forward`` for ``shard_size`` ranks.

    Valid: ``None``, ``True``, ``False``, or an int that divides the shard size (1 means
    ``False`` and the shard size means ``True``, as in torch; 1 warns).

    Raises:
        ValueError: naming the value and the valid choices.
    """
    if value is None or isinstance(value, bool):
        return
    if not isinstance(value, int):
        raise ValueError(
            "reshard_after_forward should be a bool or an int representing the group size "
            f"to reshard to, not {value}: pass True, False, an int or None"
        )
    if value < 1 or value > shard_size or shard_size % value != 0:
        raise ValueError(
            "If passing reshard_after_forward as an int, it should be a factor of "
            f"{shard_size}, not {value}: a divisor of the shard world size (e.g. the number "
            f"of ranks per node); valid choices here: "
            f"{[d for d in range(1, shard_size + 1) if shard_size % d == 0]}, or True/False"
        )
    if value == 1:
        warnings.warn(
            "reshard_after_forward=1 keeps full parameters between forward and backward, "
            "the same as reshard_after_forward=False; pass False to say so",
            stacklevel=4,  # (the caller of fully_shard)
        )


def post_forward_mesh_info(reshard_after_forward: bool | int | None, info: MeshInfo,
                           is_root: bool = False) -> MeshInfo | None:
    """Where parameters live between forward and backward, for a ``reshard_after_forward``
    that :func:`check_reshard_after_forward` accepted: the one place it is resolved.

    ``True`` reshards fully (``info``); ``None`` (the default) too, except for the root
    (``is_root``, known at its lazy init), which keeps its parameters for the backward
    that follows at once; ``False`` and ``1`` keep them unsharded (``None``), the shard
    size reshards fully, any other divisor k reshards to groups of k consecutive shard
    ranks: a new 2-D mesh, whose process groups every rank creates here, so the backward
    all-gather spans only k.
    """
    k = reshard_after_forward
    if k is None:
        return None if is_root else info
    if k is True:
        return info
    if k is False or k == 1:
        return None
    if k == info.shard_size:
        return info
    sub = DeviceMesh(info.mesh.device_type, info.shard_lines(k), mesh_dim_names=("pf_outer", "pf_inner"))
    return MeshInfo(sub, 1, None, sub.get_group(1), None)
