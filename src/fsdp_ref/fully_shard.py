"""``fully_shard``: turn a module's parameters into one communication group of shards.

This is the only entry point that changes a model. It validates its arguments, collects
the parameters that no earlier ``fully_shard`` call (on a submodule) already manages,
replaces each by a sharded ``DTensor`` parameter (:class:`~fsdp_ref.param.FSDPParam`),
groups them (:class:`~fsdp_ref.param_group.FSDPParamGroup`), installs the hooks
(:class:`~fsdp_ref.state.FSDPState`, and :mod:`fsdp_ref.loading`'s all-or-nothing load
check) and makes the module an :class:`FSDPModule`. The first call also installs
:mod:`fsdp_ref.clean_exit`'s exit handler.

:func:`apply_fsdp` is that machinery for a mesh already read; :func:`fully_shard` and
:func:`fsdp_ref.replicate.replicate` (parameters replicated, not sharded: a mesh with no
shard dim) both call it. :func:`validate_modules` holds the checks both share, with torch's
exception types and the start of torch's messages (see ``docs/design/errors.md``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, overload

import torch
import torch.nn as nn
from torch.distributed.device_mesh import DeviceMesh
from torch.distributed.tensor import Shard

from . import clean_exit, compat, loading
from .api import CPUOffloadPolicy, DataParallelMeshDims, MixedPrecisionPolicy, OffloadPolicy
from .collect import managed_modules, unmanaged_params
from .group_state import GroupSettings
from .mesh import (
    MeshInfo,
    check_reshard_after_forward,
    default_mesh,
    mesh_info_for,
    post_forward_mesh_info,
)
from .module import FSDPModule
from .param import MANAGED, FSDPParam
from .param_group import FSDPParamGroup
from .placement import ShardPlacementResult, resolve_placement
from .state import FSDPState, get_state

__all__ = ["apply_fsdp", "fully_shard", "validate_modules"]


@overload
def fully_shard(module: nn.Module, **kwargs: Any) -> FSDPModule: ...
@overload
def fully_shard(module: list[nn.Module], **kwargs: Any) -> list[FSDPModule]: ...


def fully_shard(
    module,
    *,
    mesh: DeviceMesh | None = None,
    reshard_after_forward: bool | int | None = None,
    shard_placement_fn: Callable[[nn.Parameter], Shard | ShardPlacementResult | None]
    | None = None,
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
            another dim (must divide evenly), ``None`` for ``Shard(0)``, or a
            :class:`~fsdp_ref.placement.ShardPlacementResult` (fsdp_ref's or torch's) that
            also names a mesh: its parameters then form a group of their own, all-gathered
            and reduced over that mesh (a Mixture-of-Experts' expert weights over their
            expert-FSDP ranks; see ``docs/design/moe.md``).
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
        AssertionError: for a module already passed to ``fully_shard`` or ``replicate``,
            a 2-D mesh without dim names, or a shard dim out of range from
            ``shard_placement_fn`` (torch's types and wording).
        NotImplementedError: for a non-contiguous parameter, or a split of a dim other
            than 0 that does not divide evenly across the shard ranks (as torch).
        ValueError: for a 0-dim parameter, a container without ``forward``, overlapping
            modules in a list, a parameter already managed by another group, a mesh of the
            wrong shape, an invalid ``reshard_after_forward``, a malformed all-gather
            extension (:mod:`fsdp_ref.extensions`), or a DTensor parameter FSDP cannot
            shard (see :func:`fsdp_ref.spmd.param_placement`).
    """
    modules = validate_modules(module, "fully_shard")
    mesh = mesh if mesh is not None else default_mesh()
    apply_fsdp(
        modules, mesh_info_for(mesh, compat.from_torch(dp_mesh_dims)), FSDPModule, "fully_shard",
        reshard_after_forward=reshard_after_forward,
        shard_placement_fn=shard_placement_fn,
        mp_policy=mp_policy,
        offload_policy=offload_policy,
        ignored_params=ignored_params,
    )
    for managed in managed_modules(modules):  # (torch marks them; replicate does not)
        managed._is_fsdp_managed_module = True
        managed._fsdp_use_orig_params = True
    return module


def apply_fsdp(
    modules: list[nn.Module],
    info: MeshInfo,
    wrapper: type,
    api: str,
    *,
    reshard_after_forward: bool | int | None,
    shard_placement_fn: Callable | None,
    mp_policy: MixedPrecisionPolicy,
    offload_policy: OffloadPolicy,
    ignored_params: set[nn.Parameter] | None,
) -> None:
    """Manage ``modules``' parameters on ``info``'s mesh (the body of ``fully_shard``
    once the mesh is read, shared with ``replicate``): one group per distinct mesh that
    ``shard_placement_fn`` places parameters on (one all-gather and one reduction each,
    in the order the meshes first appear), a single group in the usual case.
    ``reshard_after_forward`` is checked against every one of those meshes before
    anything on the modules changes.

    ``wrapper`` is the mixin the modules' classes gain (:class:`FSDPModule` or
    ``ReplicateModule``) and ``api`` the caller (``"fully_shard"`` or ``"replicate"``);
    the classes also derive from torch's counterpart
    (:func:`fsdp_ref.compat.wrapper_class`). Torch's policy objects are accepted
    (:func:`fsdp_ref.compat.from_torch`).
    """
    mp_policy = compat.from_torch(mp_policy)
    offload_policy = compat.from_torch(offload_policy)
    device = _mesh_device(info.mesh)
    ignored = set(map(id, ignored_params or ()))
    offload = isinstance(offload_policy, CPUOffloadPolicy)
    pin = offload and offload_policy.pin_memory

    by_mesh: dict[tuple, tuple[MeshInfo, list[FSDPParam]]] = {}
    placed = []
    for param, refs, fqn in unmanaged_params(modules, ignored):
        shard_dim, param_info = _placement(shard_placement_fn, param, info)
        key = (param_info.shard_group, param_info.replicate_group)
        placed.append((param, refs, fqn, shard_dim, by_mesh.setdefault(key, (param_info, []))))
    for mesh_info in {id(i): i for i in (info, *(i for i, _ in by_mesh.values()))}.values():
        check_reshard_after_forward(reshard_after_forward, mesh_info.shard_size)
    state = FSDPState(modules, device, mp_policy)  # (the changes to the modules start here)
    loading.register(modules)  # after the state's reshard-before-load hook
    clean_exit.install()
    for param, refs, fqn, shard_dim, (param_info, group_params) in placed:
        group_params.append(FSDPParam(param, refs, fqn, param_info, device, mp_policy,
                                      shard_dim=shard_dim, offload_to_cpu=offload,
                                      pin_memory=pin))
        setattr(param, MANAGED, True)
    for group_info, group_params in by_mesh.values():
        settings = GroupSettings(
            reshard_after_forward=reshard_after_forward,
            post_forward_mesh_info=post_forward_mesh_info(reshard_after_forward, group_info),
        )
        state.groups.append(FSDPParamGroup(group_params, group_info, device, state.name,
                                           settings, state.comm_ctx))
    _move_buffers(modules, device)
    for m in modules:
        m.__class__ = compat.wrapper_class(type(m), wrapper, api)


def validate_modules(module: Any, api: str) -> list[nn.Module]:
    """The modules of one ``fully_shard`` / ``replicate`` call (``api`` names it), checked.

    Refused, with torch's exception type and the start of its message: a module already
    given to the same API (``AssertionError``), a module given to the other one
    (``fully_shard`` after ``replicate``: ``AssertionError``; the reverse:
    ``RuntimeError``), an ``nn.ModuleList`` / ``nn.ModuleDict`` whose class has no
    ``forward`` of its own (``ValueError``). fsdp_ref also refuses an empty list, a non
    module, and the same module twice in a list (``ValueError``).
    """
    modules = list(module) if isinstance(module, (list, tuple)) else [module]
    if not modules:
        raise ValueError(f"{api} got an empty list of modules")
    for m in modules:
        if not isinstance(m, nn.Module):
            raise ValueError(f"{api} expects nn.Module(s), got {type(m).__name__}")
        _check_not_applied(m, api)
        if isinstance(m, (nn.ModuleList, nn.ModuleDict)) and type(m).forward is nn.Module.forward:
            raise ValueError(
                f"{api} does not support containers that do not implement forward: {m}\n"
                f"Apply {api} to its children (or pass list(container)), or subclass "
                f"{type(m).__name__} with a forward"
            )
    if len({id(m) for m in modules}) != len(modules):
        raise ValueError(f"{api} got the same module twice in its list")
    for i, a in enumerate(modules):
        for b in modules[i + 1 :]:
            inner = _contains(a, b) or _contains(b, a)
            if inner:
                raise ValueError(
                    f"modules passed together to {api} overlap: {inner[1]} is a "
                    f"submodule of {inner[0]}; pass only disjoint modules (shard the "
                    "submodule in its own earlier call instead)"
                )
    return modules


def _check_not_applied(m: nn.Module, api: str) -> None:
    if get_state(m) is None:
        return
    applied = getattr(type(m), "_fsdp_ref_api", "fully_shard")
    if applied == api:
        raise AssertionError(
            "Each distinct composable distributed API can only be applied to a module "
            f"once. {api} has already been applied to the following module:\n{m}\n"
            "To change its settings, use the FSDPModule set_* methods"
        )
    if api == "replicate":
        raise RuntimeError(
            "Cannot apply `replicate()` on a Module already managed by `fully_shard`. "
            "Replicate a parent module instead (its children stay sharded)"
        )
    raise AssertionError(
        f"Inserting {m} more than once.\nfully_shard cannot be applied to a module "
        "already managed by replicate; shard a parent module instead (the replicated "
        "child keeps its replicated parameters)"
    )


def _contains(outer: nn.Module, inner: nn.Module):
    for sub in outer.modules():
        if sub is inner:
            return type(outer).__name__, type(inner).__name__
    return None


def _placement(fn: Callable | None, param: nn.Parameter, info: MeshInfo
               ) -> tuple[int, MeshInfo]:
    """The tensor dim to shard ``param`` on and the mesh to shard it over: ``Shard(0)`` on
    ``fully_shard``'s mesh unless ``shard_placement_fn`` says otherwise
    (:func:`fsdp_ref.placement.resolve_placement`). Parameters placed on the same process
    groups as ``fully_shard``'s mesh share its :class:`~fsdp_ref.mesh.MeshInfo`."""
    if fn is None:
        return 0, info
    result = resolve_placement(compat.from_torch(fn(param)), info)
    mine = result.mesh_info
    if (mine.shard_group, mine.replicate_group) == (info.shard_group, info.replicate_group):
        mine = info
    return result.placement.dim, mine


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
