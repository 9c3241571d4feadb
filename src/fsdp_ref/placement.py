"""What ``shard_placement_fn`` may return: a dim to shard, and the mesh to shard it on.

``fully_shard(module, shard_placement_fn=fn)`` calls ``fn(param)`` for each parameter it
takes. As in torch 2.13, the answer is one of:

* ``None``: ``Shard(0)`` on the mesh given to ``fully_shard``;
* ``Shard(dim)``: that dim, on the same mesh;
* a :class:`ShardPlacementResult` ``(placement, mesh_info)``: a placement (``None`` for
  ``Shard(0)``) *and* a mesh of its own. This is how a Mixture-of-Experts model shards its
  expert weights over the ranks of one expert-parallel group (torchtitan's ``efsdp``
  dim) while the rest of the block is sharded over the whole data-parallel mesh. Torch's
  own ``ShardPlacementResult`` from ``torch.distributed.fsdp._fully_shard._fsdp_common``,
  with its ``FSDPMeshInfo`` / ``HSDPMeshInfo``, is accepted too: ``fully_shard`` turns it
  into this module's with :func:`fsdp_ref.compat.from_torch` first.

:func:`resolve_placement` turns any of these into one :class:`ShardPlacementResult` whose
``mesh_info`` is fsdp_ref's :class:`~fsdp_ref.mesh.MeshInfo`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from torch.distributed.device_mesh import DeviceMesh
from torch.distributed.tensor import Shard

from .mesh import MeshInfo, mesh_info_for

__all__ = ["ShardPlacementResult", "resolve_placement"]


@dataclass
class ShardPlacementResult:
    """A parameter's shard placement and the mesh it is sharded on.

    Attributes:
        placement: ``Shard(dim)``, or ``None`` for ``Shard(0)``.
        mesh_info: where to shard: a :class:`~fsdp_ref.mesh.MeshInfo`, a ``DeviceMesh``
            (1-D: FSDP over it; 2-D ``(replicate, shard)``: HSDP, as ``fully_shard`` reads
            a mesh), or torch's ``FSDPMeshInfo`` / ``HSDPMeshInfo``.
    """

    placement: Shard | None
    mesh_info: Any


def resolve_placement(result: Any, default: MeshInfo) -> ShardPlacementResult:
    """``shard_placement_fn``'s answer as a :class:`ShardPlacementResult` whose
    ``placement`` is a ``Shard`` and whose ``mesh_info`` is a
    :class:`~fsdp_ref.mesh.MeshInfo` (``default``, the ``fully_shard`` mesh, unless the
    answer names another).

    Raises:
        ValueError: for anything but ``None``, a ``Shard`` or a placement result (torch's
            message first, then what to return instead).
    """
    if result is None:
        return ShardPlacementResult(Shard(0), default)
    if isinstance(result, Shard):
        return ShardPlacementResult(result, default)
    if isinstance(result, ShardPlacementResult):
        info = result.mesh_info
        if isinstance(info, DeviceMesh):
            info = mesh_info_for(info, None)
        if not isinstance(info, MeshInfo):
            raise ValueError(
                f"Invalid shard_placement_fn result: {result}. Its mesh_info must be a "
                "DeviceMesh, an fsdp_ref MeshInfo or torch's FSDPMeshInfo/HSDPMeshInfo"
            )
        return ShardPlacementResult(result.placement or Shard(0), info)
    raise ValueError(
        f"Invalid shard_placement_fn result: {result}. Return None (Shard(0)), Shard(dim) "
        "or ShardPlacementResult(placement, mesh_info) for each parameter"
    )
