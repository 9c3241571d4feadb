"""FSDP on top of tensor parallelism: where a parameter lives, as a DTensor, before and after.

A plain parameter becomes ``Shard(0)`` on the data-parallel mesh and its unsharded face is
a plain tensor. A parameter that already *is* a ``DTensor`` (tensor parallel, or any
placement on a larger SPMD mesh) keeps that placement as its unsharded face, and FSDP
shards only its **local** tensor over the data-parallel ranks. Everything FSDP does to
the data, the padding, the all-gather, the reduce-scatter, works on local tensors, exactly
as for plain parameters; this module only says which ``DTensor`` describes the result.

Two ways to get there, as in torch:

* **TP mesh + DP mesh** (``fully_shard(m, mesh=world["dp"])`` after
  ``parallelize_module(m, world["tp"], plan)``): the parameter is a DTensor on the ``tp``
  mesh. The sharded parameter lives on the two meshes concatenated, ``(dp, tp)``
  (``(replicate, shard, tp)`` under HSDP), with placements ``(<fsdp>, *tp_placements)``.
* **one SPMD mesh** (``fully_shard(m, mesh=world, dp_mesh_dims=DataParallelMeshDims(...))``):
  the parameter is a DTensor on ``world`` with ``Replicate()`` on every data-parallel
  dim. The sharded parameter stays on ``world`` (or on the mesh with the data-parallel
  dims flattened, when several were named) with the shard dim's ``Replicate()`` replaced.

``<fsdp>`` is ``Shard(d)`` unless a mesh dim to its right also shards tensor dim ``d``.
DTensor applies placements left to right, but FSDP split the *tensor-parallel local*
tensor, i.e. it sharded *after* the dims to its right. ``_StridedShard(d, split_factor=k)``
(k = how many pieces those dims cut dim ``d`` into) says exactly that: take chunk ``i``
of each of the k pieces. Example, an ``(8, 4)`` weight, ``ColwiseParallel`` on tp=2 and
FSDP on dp=2: rank ``(dp=1, tp=0)`` holds the second half of tp-chunk 0 (rows 0..3), that
is global rows ``[2:4]``: ``(_StridedShard(0, split_factor=2), Shard(0))``. Plain
``(Shard(0), Shard(0))`` would mean tp-chunk 0 of dp-chunk 1, global rows ``[4:6]``.

Gradients come back as DTensors on the unsharded mesh. Their tensor-parallel dims are
redistributed to the parameter's placements (a ``Partial`` gradient is reduced over tp);
their data-parallel dims are left as they are (``Partial`` or ``Replicate``), because the
reduce-scatter that follows *is* the data-parallel reduction.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import torch
import torch.nn as nn
from torch.distributed.device_mesh import DeviceMesh
from torch.distributed.tensor import DTensor, Partial, Placement, Replicate, Shard
from torch.distributed.tensor._dtensor_spec import DTensorSpec, TensorMeta
from torch.distributed.tensor.placement_types import _StridedShard

from .layout import contiguous_stride
from .mesh import MeshInfo

_dtensor_new = DTensor.__new__  # (see ParamPlacement.sharded)
_compiling, _function_mode = torch.compiler.is_compiling, torch._C._is_torch_function_mode_enabled

__all__ = ["ParamPlacement", "local_tensor", "param_placement"]


def local_tensor(t: torch.Tensor) -> torch.Tensor:
    """The tensor holding this rank's data: a DTensor's local tensor, or ``t`` itself."""
    return t._local_tensor if isinstance(t, DTensor) else t


@dataclass(frozen=True)
class ParamPlacement:
    """The DTensor descriptions of one parameter, sharded and unsharded.

    Attributes:
        mesh: mesh of the sharded parameter and of its gradient.
        placements: their placements on ``mesh``.
        global_shape: the parameter's logical (global) shape.
        unsharded_mesh: mesh of the unsharded parameter when it is a DTensor
            (tensor parallel); ``None`` when it is a plain tensor.
        unsharded_placements: its placements (the user's original ones).
        dp_dims: dims of ``unsharded_mesh`` that are data parallel: a gradient's
            placement there is left to FSDP's own reduction.
    """

    mesh: DeviceMesh
    placements: tuple[Placement, ...]
    global_shape: torch.Size
    unsharded_mesh: DeviceMesh | None = None
    unsharded_placements: tuple[Placement, ...] | None = None
    dp_dims: frozenset[int] = frozenset()

    @property
    def is_dtensor(self) -> bool:
        """Whether the unsharded parameter is a DTensor (the original parameter was one)."""
        return self.unsharded_mesh is not None

    def _wrap(self, local: torch.Tensor, mesh: DeviceMesh, placements: tuple) -> DTensor:
        """``local`` as this rank's piece of the global tensor (no communication)."""
        return DTensor.from_local(
            local,
            mesh,
            placements,
            run_check=False,
            shape=self.global_shape,
            stride=contiguous_stride(self.global_shape),
        )

    @functools.cached_property
    def _sharded_specs(self) -> dict[torch.dtype, DTensorSpec]:
        return {}

    def share_spec(self, param: DTensor) -> None:
        """Make the sharded parameter's own spec the one its gradients are built with.

        ``nn.Parameter(dtensor)`` detaches, so the registered parameter carries a new spec,
        not the one :meth:`sharded` made. Optimizer updates are in-place ops on the
        parameter with the gradient as argument; when both carry the same spec object, the
        sharding propagation's checks end at an identity test instead of comparing meshes,
        placements and shapes for every parameter of every step (torch's FSDP gets this by
        building gradients on the parameter's spec).
        """
        self._sharded_specs[param.dtype] = param._spec

    def sharded(self, local: torch.Tensor) -> DTensor:
        """Wrap this rank's unpadded shard (data or gradient) as the sharded DTensor.

        Every gradient of every step goes through here, so the DTensor is built by its own
        constructor from one spec per dtype, made once (the parameter's own, see
        :meth:`share_spec`): no autograd ``Function`` (what ``DTensor.from_local`` runs), no
        new spec to validate, and the optimizer's sharding propagation cache, keyed by
        spec, hits on the same object every step. Outside
        ``torch.compile`` and any torch function mode (``torch.export`` traces through
        one) only ``DTensor.__new__`` runs: ``DTensor.__init__`` does nothing else than go
        through two wrappers for the compiler and ``torch.export``, two thirds of the
        construction's time.
        """
        spec = self._sharded_specs.get(local.dtype)
        if spec is None:
            meta = TensorMeta(self.global_shape, contiguous_stride(self.global_shape), local.dtype)
            spec = self._sharded_specs[local.dtype] = DTensorSpec(
                self.mesh, self.placements, tensor_meta=meta
            )
        if _compiling() or _function_mode():
            return DTensor(local, spec, requires_grad=local.requires_grad)
        return _dtensor_new(DTensor, local, spec, requires_grad=local.requires_grad)

    def unsharded(self, local: torch.Tensor, requires_grad: bool) -> nn.Parameter:
        """The unsharded parameter around ``local`` (the all-gathered local tensor).

        Its storage is ``local``'s, so freeing or re-allocating ``local``'s storage frees or
        refills the parameter that autograd saw.
        """
        if self.unsharded_mesh is None:
            return nn.Parameter(local, requires_grad=requires_grad)
        with torch.no_grad():
            dt = self._wrap(local, self.unsharded_mesh, self.unsharded_placements)
        return nn.Parameter(dt, requires_grad=requires_grad)

    def grad_local(self, grad: torch.Tensor) -> torch.Tensor:
        """The local tensor FSDP reduces from an unsharded gradient.

        A DTensor gradient is first redistributed to the parameter's placements on every
        non-data-parallel dim (e.g. ``Partial()`` over tp becomes the parameter's
        ``Shard``/``Replicate``), so that each rank's local gradient lines up with its local
        parameter.
        """
        if not self.is_dtensor:
            return grad
        if not isinstance(grad, DTensor):
            raise RuntimeError(
                "the gradient of a tensor-parallel parameter is a plain tensor; something "
                "outside FSDP replaced the DTensor gradient. Leave .grad of unsharded "
                "parameters to autograd"
            )
        target = tuple(
            have if i in self.dp_dims else want
            for i, (have, want) in enumerate(zip(grad.placements, self.unsharded_placements))
        )
        if target != tuple(grad.placements):
            grad = grad.redistribute(placements=target)
        local = grad._local_tensor
        wait = getattr(local, "wait", None)  # an AsyncCollectiveTensor from redistribute
        return wait() if callable(wait) else local


def _shards_dim(p: Placement, dim: int) -> bool:
    return isinstance(p, (Shard, _StridedShard)) and p.dim == dim


def _fsdp_placements(
    dims: list[Placement | None], sizes: list[int], shard_mesh_dim: int | None, shard_dim: int
) -> tuple[Placement, ...]:
    """Fill the shard mesh dim (``None`` in ``dims``) with FSDP's placement.

    ``Shard(shard_dim)``, or ``_StridedShard`` when mesh dims to its right also shard
    ``shard_dim`` (see the module docstring): those split the tensor first.
    """
    out = list(dims)
    if shard_mesh_dim is not None:
        split = math.prod(
            sizes[j] for j in range(shard_mesh_dim + 1, len(dims)) if _shards_dim(dims[j], shard_dim)
        )
        out[shard_mesh_dim] = (
            _StridedShard(shard_dim, split_factor=split) if split > 1 else Shard(shard_dim)
        )
    return tuple(out)


def param_placement(
    param: torch.Tensor, info: MeshInfo, shard_dim: int, fqn: str = ""
) -> ParamPlacement:
    """How ``param`` is described before and after FSDP shards it over ``info``.

    Raises:
        ValueError: a DTensor parameter with a ``Partial`` placement; with
            ``dp_mesh_dims``, one on another mesh or not ``Replicate()`` on a
            data-parallel dim; without, one whose mesh cannot be joined to the FSDP mesh
            (different root mesh, overlapping or unnamed dims).
    """
    name = fqn
    if not isinstance(param, DTensor):
        return ParamPlacement(info.mesh, info.placements(shard_dim), param.shape)
    placements = tuple(param.placements)
    if any(isinstance(p, Partial) for p in placements):
        raise ValueError(
            f"{name} is a DTensor with placements {placements}; a parameter cannot be "
            "Partial(). Give it Shard()/Replicate() placements (redistribute it first)"
        )
    if info.dp_mesh_dims is not None:
        return _on_spmd_mesh(param, info, shard_dim, name)
    return _on_tp_mesh(param, info, shard_dim, name)


def _on_spmd_mesh(param: DTensor, info: MeshInfo, shard_dim: int, name: str) -> ParamPlacement:
    """``dp_mesh_dims``: the parameter is a DTensor on the full mesh given to fully_shard."""
    spmd = info.spmd_mesh
    if param.device_mesh != spmd:
        raise ValueError(
            f"{name} is a DTensor on {param.device_mesh}, but fully_shard got "
            f"mesh={spmd} with dp_mesh_dims: with dp_mesh_dims, every DTensor parameter must "
            "live on that same (full SPMD) mesh; distribute it on that mesh, or pass its "
            "data-parallel mesh without dp_mesh_dims"
        )
    names = spmd.mesh_dim_names
    own = dict(zip(names, param.placements))
    dp_names = set(info.dp_mesh_dims.shard_names + info.dp_mesh_dims.replicate_names)
    for dim_name in names:
        if dim_name in dp_names and not isinstance(own[dim_name], Replicate):
            raise ValueError(
                f"{name} has placement {own[dim_name]} on mesh dim {dim_name!r}, which "
                "dp_mesh_dims names as data parallel; FSDP shards and replicates along "
                "that dim itself, so the parameter must be Replicate() there"
            )
    dims: list[Placement | None] = []
    for i, dim_name in enumerate(info.mesh.mesh_dim_names):
        if i == info.shard_mesh_dim:
            dims.append(None)
        elif i == info.replicate_mesh_dim:
            dims.append(Replicate())
        else:
            dims.append(own[dim_name])
    sizes = list(info.mesh.mesh.shape)
    return ParamPlacement(
        info.mesh,
        _fsdp_placements(dims, sizes, info.shard_mesh_dim, shard_dim),
        param.shape,
        spmd,
        tuple(param.placements),
        frozenset(i for i, n in enumerate(names) if n in dp_names),
    )


def _on_tp_mesh(param: DTensor, info: MeshInfo, shard_dim: int, name: str) -> ParamPlacement:
    """No ``dp_mesh_dims``: the parameter lives on its own (tensor-parallel) mesh."""
    tp_mesh = param.device_mesh
    fix = ("Slice both from one named mesh, e.g. world = init_device_mesh(device, (dp, tp), "
           "mesh_dim_names=('dp', 'tp')); parallelize_module(model, world['tp'], plan); "
           "fully_shard(model, mesh=world['dp']), or pass mesh=world with dp_mesh_dims")
    try:
        mesh = DeviceMesh._concatenate([info.mesh, tp_mesh])
    except RuntimeError as err:  # torch 2.13 raises this one itself: its text first
        raise RuntimeError(f"{err}. {name} is a DTensor on {tp_mesh}, which cannot be "
                           f"combined with the FSDP mesh {info.mesh}. {fix}") from err
    except (TypeError, AttributeError) as err:
        raise ValueError(
            f"{name} is a DTensor on {tp_mesh}, which cannot be combined with the FSDP mesh "
            f"{info.mesh} ({err}). {fix}"
        ) from err
    dp_dims: list[Placement | None] = [
        None if i == info.shard_mesh_dim else Replicate() for i in range(info.mesh.ndim)
    ]
    dims = dp_dims + list(param.placements)
    sizes = list(info.mesh.mesh.shape) + list(tp_mesh.mesh.shape)
    return ParamPlacement(
        mesh,
        _fsdp_placements(dims, sizes, info.shard_mesh_dim, shard_dim),
        param.shape,
        tp_mesh,
        tuple(param.placements),
        frozenset(),
    )
