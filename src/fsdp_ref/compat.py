"""Torch's FSDP2 names, seeing fsdp_ref: ``isinstance`` checks, torch's objects, ``install()``.

Code written for torch's FSDP2 meets fsdp_ref in three places, and each is handled here:

* **isinstance.** Training frameworks walk a sharded model and test
  ``isinstance(module, torch.distributed.fsdp.FSDPModule)`` to configure it (for example
  ``set_gradient_divide_factor(1.0)`` when they scale the loss themselves). A module
  sharded by fsdp_ref gets the class :func:`wrapper_class` builds::

      FSDP<Name>(fsdp_ref.FSDPModule, <Name>, torch's FSDPModule)

  Torch's class comes *last*, after ``nn.Module`` in the method resolution order, so every
  attribute resolves to fsdp_ref or to the user's class first; torch's class contributes
  only the ``isinstance`` answer. ``fsdp_ref.FSDPModule`` defines every public method of
  torch's and its ``__new__``, so no torch FSDP code runs through it (a test walks torch's
  class and proves it). ``replicate`` does the same with torch's ``ReplicateModule``.
* **torch's objects as arguments.** A torch ``MixedPrecisionPolicy``,
  ``CPUOffloadPolicy``, ``DataParallelMeshDims`` or ``ShardPlacementResult`` (with its
  ``FSDPMeshInfo`` / ``HSDPMeshInfo``) passed to fsdp_ref becomes fsdp_ref's equivalent
  (:func:`from_torch`), so a torch offload policy is not silently ignored.
* **torch's names.** :func:`install` points the names code imports from torch
  (``torch.distributed.fsdp.fully_shard``, ``torch.distributed._composable.fsdp``, the
  ``replicate_with_fsdp.replicate`` of torch 2.13, the policy classes) at fsdp_ref, so a
  framework imported *after* the call shards with fsdp_ref without a line changed.
  :func:`uninstall` puts torch's names back; :func:`installed` does both around a block.

This is the only module of fsdp_ref that imports ``torch.distributed.fsdp`` or
``torch.distributed._composable``; everything else stays torch-FSDP free.
"""

from __future__ import annotations

import contextlib
import importlib
from collections.abc import Iterator
from typing import Any

import torch.distributed.fsdp as _torch_fsdp
from torch.distributed._composable import replicate_with_fsdp as _torch_replicate
from torch.distributed.fsdp._fully_shard import _fsdp_api, _fsdp_common

from . import api, placement
from .mesh import MeshInfo

__all__ = ["REDIRECTED", "from_torch", "install", "installed", "is_installed", "uninstall",
           "wrapper_class"]

# Per API: the prefix of the class names it makes, and torch's class they also derive from.
_WRAPPERS = {"fully_shard": ("FSDP", _torch_fsdp.FSDPModule),
             "replicate": ("Replicate", _torch_replicate.ReplicateModule)}
_classes: dict[tuple[type, type], type] = {}


def wrapper_class(orig: type, ours: type, api: str) -> type:
    """The class a module of class ``orig`` becomes under ``api`` (``"fully_shard"``:
    ``FSDP<Name>``; ``"replicate"``: ``Replicate<Name>``), made once per pair.

    Its bases are ``(ours, orig, theirs)``: fsdp_ref's mixin first (its methods and
    ``__new__`` win), the user's class next (``isinstance(m, orig)`` still holds, and its
    methods beat torch's), torch's ``FSDPModule`` / ``ReplicateModule`` last
    (``isinstance(m, theirs)`` holds, nothing of it runs). The class also records ``orig``
    as ``_fsdp_orig_cls`` (what ``FSDPModule.__new__`` constructs when a container is
    sliced), its index in the MRO under torch's attribute name ``_orig_cls_mro_index``,
    and ``api`` as ``_fsdp_ref_api``, which the composition checks read.
    """
    cls = _classes.get((ours, orig))
    if cls is None:
        prefix, theirs = _WRAPPERS[api]
        bases = (ours, orig) if issubclass(orig, theirs) else (ours, orig, theirs)
        cls = type(f"{prefix}{orig.__name__}", bases, {"_fsdp_orig_cls": orig,
                                                        "_fsdp_ref_api": api})
        cls._orig_cls_mro_index = cls.__mro__.index(orig)
        _classes[ours, orig] = cls
    return cls


def from_torch(value: Any) -> Any:
    """fsdp_ref's equivalent of one of torch's FSDP2 argument objects; anything else as is.

    Converts ``MixedPrecisionPolicy``, ``OffloadPolicy``/``CPUOffloadPolicy``,
    ``DataParallelMeshDims``, ``FSDPMeshInfo`` / ``HSDPMeshInfo`` (to an
    :class:`~fsdp_ref.mesh.MeshInfo` on the same mesh dims) and ``ShardPlacementResult``
    (torch's, or fsdp_ref's holding torch's mesh info).
    """
    if isinstance(value, _fsdp_api.MixedPrecisionPolicy):
        return api.MixedPrecisionPolicy(value.param_dtype, value.reduce_dtype,
                                        value.output_dtype, value.cast_forward_inputs)
    if isinstance(value, _fsdp_api.OffloadPolicy):
        pin = getattr(value, "pin_memory", None)
        return api.OffloadPolicy() if pin is None else api.CPUOffloadPolicy(pin_memory=pin)
    # Looked up by name: torch 2.11 (as on the GPU machines) lacks DataParallelMeshDims,
    # and isinstance against the empty tuple is simply false.
    if isinstance(value, getattr(_fsdp_api, "DataParallelMeshDims", ())):
        return api.DataParallelMeshDims(shard=value.shard, replicate=value.replicate)
    if isinstance(value, (getattr(_fsdp_common, "ShardPlacementResult", ()),
                          placement.ShardPlacementResult)):
        return placement.ShardPlacementResult(value.placement, from_torch(value.mesh_info))
    if isinstance(value, getattr(_fsdp_common, "DataParallelMeshInfo", ())):
        return _mesh_info_from_torch(value)
    return value


def _mesh_info_from_torch(info: Any):
    """fsdp_ref's :class:`~fsdp_ref.mesh.MeshInfo` for torch's ``FSDPMeshInfo`` /
    ``HSDPMeshInfo`` (the same mesh, dims and process groups)."""
    dims = (info.shard_mesh_dim, info.replicate_mesh_dim)
    groups = [info.mesh.get_group(d) if d is not None else None for d in dims]
    return MeshInfo(info.mesh, *dims, *groups, getattr(info, "spmd_mesh", None),
                    from_torch(getattr(info, "dp_mesh_dims", None)))


# ---- install ---------------------------------------------------------------------------

#: The torch modules whose names :func:`install` replaces, and which names. A name a
#: module does not define is left alone (older releases lack some).
_FSDP2_NAMES = ("fully_shard", "register_fsdp_forward_method", "share_comm_ctx",
                "UnshardHandle", "MixedPrecisionPolicy", "OffloadPolicy", "CPUOffloadPolicy",
                "DataParallelMeshDims")
REDIRECTED = (*_FSDP2_NAMES, "replicate")
"""Every name :func:`install` may redirect: the package hands over its objects of these
names (``fsdp_ref.install``)."""
_TARGETS: dict[str, tuple[str, ...]] = {
    "torch.distributed.fsdp": _FSDP2_NAMES,
    "torch.distributed.fsdp._fully_shard": _FSDP2_NAMES,
    "torch.distributed._composable.fsdp": _FSDP2_NAMES,
    "torch.distributed._composable.fsdp.fully_shard": _FSDP2_NAMES,
    "torch.distributed._composable.replicate_with_fsdp": ("replicate",),
}
_saved: dict[tuple[str, str], Any] = {}


def install(ours: dict[str, Any]) -> None:
    """Point torch's FSDP2 names at ``ours`` (fsdp_ref's objects of the same names, handed
    over by :func:`fsdp_ref.install`, which lives in the package so that this module imports
    nothing above it; that function says what the switch does for the user). Each name of
    :data:`_TARGETS` a torch module defines is saved and replaced; torch's ``FSDPModule``
    and ``ReplicateModule`` stay (:func:`wrapper_class` makes ours their instances).
    Calling it twice changes nothing.
    """
    if _saved:
        return
    for module_name, names in _TARGETS.items():
        module = importlib.import_module(module_name)
        for name in names:
            if hasattr(module, name):
                _saved[module_name, name] = getattr(module, name)
                setattr(module, name, ours[name])


def uninstall() -> None:
    """Put back every torch name :func:`install` replaced (a no-op when not installed)."""
    for (module_name, name), original in _saved.items():
        setattr(importlib.import_module(module_name), name, original)
    _saved.clear()


def is_installed() -> bool:
    """Whether :func:`install` is in effect."""
    return bool(_saved)


@contextlib.contextmanager
def installed(ours: dict[str, Any]) -> Iterator[None]:
    """Torch's names point at ``ours`` inside the block only (``fsdp_ref.installed()``).
    Leaves an :func:`install` made before the block in place."""
    already = is_installed()
    install(ours)
    try:
        yield
    finally:
        if not already:
            uninstall()
