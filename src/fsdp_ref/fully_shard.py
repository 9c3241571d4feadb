"""``fully_shard``: turn a module's parameters into one communication group of shards.

This is the only entry point that changes a model. It validates its arguments, collects
the parameters that no earlier ``fully_shard`` call (on a submodule) already manages,
replaces each by a sharded ``DTensor`` parameter (:class:`~fsdp_ref.param.FSDPParam`),
groups them (:class:`~fsdp_ref.param_group.FSDPParamGroup`), installs the hooks
(:class:`~fsdp_ref.state.FSDPState`, and :mod:`fsdp_ref.loading`'s all-or-nothing load
check) and makes the module an :class:`FSDPModule`. The first call also installs
:mod:`fsdp_ref.clean_exit`'s exit handler.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, overload

import torch
import torch.nn as nn
from torch.distributed.device_mesh import DeviceMesh
from torch.distributed.tensor import DTensor, Shard

from . import clean_exit, loading
from .api import CPUOffloadPolicy, DataParallelMeshDims, MixedPrecisionPolicy, OffloadPolicy
from .group_state import GroupSettings
from .mesh import (
    check_reshard_after_forward,
    default_mesh,
    mesh_info_for,
    post_forward_mesh_info,
)
from .module import FSDPModule
from .param import FSDPParam, ParamRef
from .param_group import FSDPParamGroup
from .state import FSDPState, get_state

__all__ = ["fully_shard"]

_MANAGED = "_fsdp_ref_managed"
_fsdp_classes: dict[type, type] = {}


@overload
def fully_shard(module: nn.Module, **kwargs: Any) -> FSDPModule: ...
@overload
def fully_shard(module: list[nn.Module], **kwargs: Any) -> list[FSDPModule]: ...


def fully_shard(
    module,
    *,
    mesh: DeviceMesh | None = None,
    reshard_after_forward: bool | int | None = None,
    shard_placement_fn: Callable[[nn.Parameter], Shard | None] | None = None,
    mp_policy: MixedPrecisionPolicy = MixedPrecisionPolicy(),  # noqa: B008 (frozen)
    offload_policy: OffloadPolicy = OffloadPolicy(),  # noqa: B008 (never mutated)
    ignored_params: set[nn.Parameter] | None = None,
    dp_mesh_dims: DataParallelMeshDims | None = None,
):
    """Shard ``module``'s parameters across the data-parallel ranks of ``mesh``.

    Call it bottom-up: first on each block (a transformer layer), then on the whole
    model. Each call groups the parameters of ``module`` that no earlier call already
    took; each group is all-gathered in one collective before its forward (and again
    before its backward if resharded), and its gradients are reduce-scattered in one
    collective after its backward. Between uses, every rank keeps only its ``Shard(0)``
    slice of each parameter, as a ``DTensor``.

    Args:
        module: a module, or a list of modules to communicate as one group (e.g. tied
            modules that live in different places of the model).
        mesh: the data-parallel mesh. 1-D: FSDP. 2-D ``(replicate, shard)``: HSDP.
            Defaults to a 1-D mesh over all ranks.
        reshard_after_forward: ``True`` frees unsharded parameters after forward and
            all-gathers again in backward; ``False`` keeps them until after backward;
            an ``int`` k reshards to groups of k ranks so the backward all-gather spans
            only k; ``None`` (default) means ``True`` except for the root module.
        shard_placement_fn: called per parameter; return ``Shard(dim)`` to shard on
            another dim (must divide evenly) or ``None`` for ``Shard(0)``.
        mp_policy: mixed precision (see :class:`~fsdp_ref.MixedPrecisionPolicy`).
        offload_policy: :class:`~fsdp_ref.CPUOffloadPolicy` keeps shards on the CPU.
        ignored_params: parameters left alone: not sharded, not moved, not reduced.
        dp_mesh_dims: names the data-parallel dims when ``mesh`` is a larger SPMD mesh
            (e.g. ``("dp", "tp")``); DTensor parameters must then live on ``mesh`` with
            ``Replicate()`` on those dims. Without it, DTensor parameters (tensor parallel,
            on another slice of the same mesh) are sharded on their local tensors; see
            :mod:`fsdp_ref.spmd`.

    Returns:
        The same module object(s), now also instances of :class:`~fsdp_ref.FSDPModule`.

    Raises:
        ValueError: for a module already sharded, overlapping modules in a list, a mesh
            of the wrong shape, an invalid ``reshard_after_forward``, a malformed
            all-gather extension (:mod:`fsdp_ref.extensions`), or a DTensor parameter FSDP
            cannot shard (see :func:`fsdp_ref.spmd.param_placement`).
    """
    modules = _validate_modules(module)
    mesh = mesh if mesh is not None else default_mesh()
    info = mesh_info_for(mesh, dp_mesh_dims)
    check_reshard_after_forward(reshard_after_forward, info.shard_size)
    device = _mesh_device(mesh)
    ignored = set(map(id, ignored_params or ()))
    offload = isinstance(offload_policy, CPUOffloadPolicy)
    pin = offload and offload_policy.pin_memory

    state = FSDPState(modules, device, mp_policy)
    loading.register(modules)  # after the state's reshard-before-load hook
    clean_exit.install()
    fsdp_params = []
    for param, refs, fqn in _unmanaged_params(modules, ignored):
        shard_dim = _shard_dim(shard_placement_fn, param)
        fsdp_param = FSDPParam(param, refs, fqn, info, device, mp_policy, shard_dim=shard_dim,
                               offload_to_cpu=offload, pin_memory=pin)
        setattr(param, _MANAGED, True)
        setattr(fsdp_param.sharded_param, _MANAGED, True)
        fsdp_params.append(fsdp_param)
    if fsdp_params:
        settings = GroupSettings(
            post_forward_mesh_info=post_forward_mesh_info(reshard_after_forward, info),
            auto_reshard_after_forward=reshard_after_forward is None,
        )
        state.groups = [FSDPParamGroup(fsdp_params, info, device, state.name, settings,
                                       state.comm_ctx)]
    _move_buffers(modules, device)
    for m in modules:
        cls = type(m)
        if cls not in _fsdp_classes:
            _fsdp_classes[cls] = type(f"FSDP{cls.__name__}", (FSDPModule, cls), {})
        m.__class__ = _fsdp_classes[cls]
    return module


def _validate_modules(module: Any) -> list[nn.Module]:
    modules = list(module) if isinstance(module, (list, tuple)) else [module]
    if not modules:
        raise ValueError("fully_shard got an empty list of modules")
    for m in modules:
        if not isinstance(m, nn.Module):
            raise ValueError(f"fully_shard expects nn.Module(s), got {type(m).__name__}")
        if get_state(m) is not None:
            raise ValueError(
                f"{type(m).__name__} was already passed to fully_shard; each module may be "
                "sharded once (to change settings, use the FSDPModule set_* methods)"
            )
        if isinstance(m, (nn.ModuleList, nn.ModuleDict)):
            raise ValueError(
                f"fully_shard does not support containers without forward "
                f"({type(m).__name__}); shard its children or pass list(container)"
            )
    if len({id(m) for m in modules}) != len(modules):
        raise ValueError("fully_shard got the same module twice in its list")
    for i, a in enumerate(modules):
        for b in modules[i + 1 :]:
            inner = _contains(a, b) or _contains(b, a)
            if inner:
                raise ValueError(
                    f"modules passed together to fully_shard overlap: {inner[1]} is a "
                    f"submodule of {inner[0]}; pass only disjoint modules (shard the "
                    "submodule in its own earlier call instead)"
                )
    return modules


def _contains(outer: nn.Module, inner: nn.Module):
    for sub in outer.modules():
        if sub is inner:
            return type(outer).__name__, type(inner).__name__
    return None


def _unmanaged_params(modules: list[nn.Module], ignored: set[int]):
    """``(param, refs, fqn)`` for every parameter no earlier call manages, in order; the
    fqn is the first path to it from the module given to ``fully_shard``."""
    found: dict[int, tuple[nn.Parameter, list[ParamRef]]] = {}
    for root in modules:
        for prefix, sub in root.named_modules(remove_duplicate=False):
            for name, param in sub._parameters.items():
                if param is None or id(param) in ignored:
                    continue
                if getattr(param, _MANAGED, False):
                    if not isinstance(param, DTensor):
                        raise ValueError(
                            f"parameter {prefix + '.' if prefix else ''}{name} is tied to a "
                            "parameter already sharded by an earlier fully_shard call; "
                            "put every module that uses it into one group, e.g. "
                            "fully_shard([embedding, lm_head]) or shard their common parent"
                        )
                    continue
                fqn = f"{prefix}.{name}" if prefix else name
                entry = found.setdefault(id(param), (param, [], fqn))
                ref = ParamRef(sub, name)
                if ref not in entry[1]:
                    entry[1].append(ref)
    return list(found.values())


def _shard_dim(fn: Callable | None, param: nn.Parameter) -> int:
    if fn is None:
        return 0
    placement = fn(param)
    if placement is None:
        return 0
    if isinstance(placement, Shard):
        return placement.dim
    raise NotImplementedError(
        f"shard_placement_fn returned {placement!r}; fsdp_ref supports Shard(dim) or None "
        "(per-parameter meshes are not supported)"
    )


def _mesh_device(mesh: DeviceMesh) -> torch.device:
    if mesh.device_type == "cpu":
        return torch.device("cpu")
    handle = torch.get_device_module(mesh.device_type)
    return torch.device(mesh.device_type, handle.current_device())


def _move_buffers(modules: list[nn.Module], device: torch.device) -> None:
    for root in modules:
        for sub in root.modules():
            for name, buf in sub._buffers.items():
                if buf is not None and buf.device.type not in ("meta", device.type):
                    sub._buffers[name] = buf.to(device)
