"""One parameter under FSDP: its sharded DTensor, its unsharded tensor, and the swaps.

Each managed parameter has two faces, and the module shows one at a time:

* the **sharded** parameter, an ``nn.Parameter`` wrapping a ``DTensor`` with placement
  ``Shard(dim)`` (``(Replicate(), Shard(dim))`` under HSDP). Its local tensor is a view of
  a padded buffer (``padded_shard``, of the padded shard shape) so the all-gather can read
  every rank's shard at the same size. It is cut with the few ops tensor subclasses
  support (:mod:`fsdp_ref.layout`), so an ``NF4Tensor`` or a float8 weight stays one. The optimizer, ``state_dict`` and ``clip_grad_norm_`` see this one.
* the **unsharded** parameter, a plain ``nn.Parameter`` of the full shape in the compute
  dtype. It is created once and kept for the life of the module: autograd saves
  references to it in forward, so it must be the *same* tensor in backward. Resharding
  frees its storage (``untyped_storage().resize_(0)``) and unsharding re-allocates it
  before the all-gather output is copied in; the object survives both.

A parameter whose local tensor defines ``fsdp_pre_all_gather`` / ``fsdp_post_all_gather``
(torchao's ``NF4Tensor``, its float8 weights) is gathered through those hooks instead:
:mod:`fsdp_ref.extensions` holds what that needs, and :meth:`FSDPParam.gather_inputs`,
:meth:`FSDPParam.alloc_unsharded` and :meth:`FSDPParam.to_unsharded` branch to it.

A parameter that already is a ``DTensor`` (tensor parallel) is handled the same way on
its *local* tensor: FSDP shards, gathers and reduces local tensors, the unsharded face is
a DTensor with the user's placements again, and :mod:`fsdp_ref.spmd` says which placements
describe the sharded face.

Swapping which face is registered is a dict assignment on ``module._parameters`` for
every (module, name) that holds the parameter, so tied parameters stay tied.

What the user registers instead of the sharded parameter before the first forward (a
vector computed from other sharded weights after ``to_empty``), like what
``load_state_dict(assign=True)`` registers, is adopted as the sharded parameter
(:meth:`FSDPParam.adopt`); the parameters torch refuses (0-dim, non-contiguous, a shard
dim out of range, an uneven dim other than 0) are refused with torch's exception and
message first.

:class:`FSDPParam` is one object, which the rest of the core reads through; its code is in
three modules, one concept each: this one (construction, adoption, which face the module
shows, and the post-forward shard of an int ``reshard_after_forward``),
:mod:`fsdp_ref.param_gather` (what the all-gather reads and writes) and
:mod:`fsdp_ref.param_grad` (the gradient in both faces).
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
import torch.nn as nn
from torch.distributed.tensor import DTensor, Replicate, Shard

from .api import MixedPrecisionPolicy
from .extensions import find_extension
from .layout import ShardLayout, contiguous_stride
from .mesh import MeshInfo
from .param_gather import ParamGather
from .param_grad import ParamGrad
from .recorder import recorder
from .spmd import local_tensor, param_placement

__all__ = ["MANAGED", "FSDPParam", "ParamRef"]

MANAGED = "_fsdp_ref_managed"
"""Attribute set on every parameter an FSDP group manages (the original one and each
sharded one it registers, adopted ones included), so that ``fully_shard`` on a parent
leaves it to its group."""


@dataclass(frozen=True)
class ParamRef:
    """A place a parameter is registered: ``getattr(module, name)``."""

    module: nn.Module
    name: str


class FSDPParam(ParamGather, ParamGrad):
    """State and transitions of one managed parameter.

    Args:
        param: the original parameter (full shape; any device, including ``meta``), a
            plain tensor or a DTensor (tensor parallel: its local tensor is sharded).
        refs: every (module, name) that holds ``param``.
        fqn: the parameter's name (from the module given to ``fully_shard``, then from the
            root), for errors, logs and the race detector's reports.
        mesh_info: the mesh and groups to shard over.
        device: the compute device (where unsharded parameters live).
        mp_policy: the group's policy: ``param_dtype`` is the unsharded parameter's dtype
            (``None``: the original one), ``reduce_dtype`` the gradient reduction's
            (``None``: ``param_dtype``); handed to a five-argument ``fsdp_pre_all_gather``.
        shard_dim: the tensor dim to shard (0 unless ``shard_placement_fn`` says otherwise).
        offload_to_cpu: keep the sharded parameter and its gradient on the CPU.
        pin_memory: pin the CPU shard (only when an accelerator is present).

    Attributes:
        extension: the :class:`~fsdp_ref.extensions.Extension` state when the sharded
            local tensor defines the all-gather hooks, else ``None``.

    Raises:
        ValueError: a 0-dim parameter.
        NotImplementedError: a non-contiguous parameter, or an uneven split of a dim
            other than 0.
        AssertionError: a shard dim the parameter does not have.
    """

    def __init__(
        self,
        param: nn.Parameter,
        refs: list[ParamRef],
        fqn: str,
        mesh_info: MeshInfo,
        device: torch.device,
        mp_policy: MixedPrecisionPolicy,
        shard_dim: int = 0,
        offload_to_cpu: bool = False,
        pin_memory: bool = False,
    ) -> None:
        ndim = param.dim()
        if ndim == 0:
            raise ValueError(
                "fully_shard doesn't support scalar parameters. Change "
                f"{refs[0].name} to a 1D tensor with numel equal to 1. (FSDP shards {fqn} "
                "along a dim; give it shape (1,), or pass it in ignored_params)"
            )
        if not param.is_contiguous():
            raise NotImplementedError(
                "FSDP does not support non-contiguous parameters yet: "
                f"{param.shape=} {param.stride()=}. Make {fqn} contiguous before "
                "fully_shard (e.g. module.<name> = nn.Parameter(param.contiguous()))"
            )
        if shard_dim < 0:
            shard_dim += ndim
        if not 0 <= shard_dim < ndim:
            raise AssertionError(
                f"Shard dim {shard_dim} is invalid for {ndim}D tensor: {param.shape}. "
                f"shard_placement_fn must return Shard(d) with -{ndim} <= d < {ndim} for {fqn}"
            )
        self.refs = refs
        self.mesh_info = mesh_info
        self.device = device
        self.fqn = fqn
        self.mp_policy = mp_policy
        self._resolve_dtypes(param.dtype)
        self.requires_grad = param.requires_grad
        self.offload_to_cpu = offload_to_cpu
        self.pin_memory = pin_memory
        self.placement = param_placement(param, mesh_info, shard_dim, fqn)
        local = local_tensor(param)
        self.layout = ShardLayout(
            local.shape, shard_dim, mesh_info.shard_size, mesh_info.shard_rank
        )
        world = self.layout.world_size
        if shard_dim != 0 and local.shape[shard_dim] % world != 0:
            what = "local (tensor-parallel) shape" if self.placement.is_dtensor else "shape"
            raise NotImplementedError(
                f"FSDP does not support uneven sharding on dim {shard_dim}: {local.shape} "
                f"(world size: {world}). {fqn} of {what} {tuple(local.shape)}: size "
                f"{local.shape[shard_dim]} on dim {shard_dim} is not divisible by the shard "
                "world size. Only dim 0 may be uneven; return Shard(0) (or None) from "
                "shard_placement_fn for this parameter"
            )
        self.unsharded_param: nn.Parameter | None = None
        self.accumulated_grad: torch.Tensor | None = None  # see keep_unreduced_grad
        self._local: tuple | None = None  # see _unsharded_local
        self.post_forward_layout: ShardLayout | None = None
        self.post_forward_shard: torch.Tensor | None = None
        self._init_sharded(param)

    # ---- construction ---------------------------------------------------------------

    def _resolve_dtypes(self, orig_dtype: torch.dtype) -> None:
        """The parameter's own dtype, and those it is gathered (``param_dtype``) and
        reduced (``reduce_dtype``) in: the policy's where given, else the one before."""
        self.orig_dtype = orig_dtype
        self.param_dtype = self.mp_policy.param_dtype or orig_dtype
        self.reduce_dtype = self.mp_policy.reduce_dtype or self.param_dtype
        # A gradient kept unreduced across backwards (sync off) is accumulated in the
        # policy's reduce_dtype when it names one other than param_dtype, as torch does
        # (torch 2.13 clamps its reduce_dtype to None when the two are equal).
        given = self.mp_policy.reduce_dtype
        self.accumulate_dtype = given if given != self.mp_policy.param_dtype else None

    def _init_sharded(self, param: torch.Tensor) -> None:
        """Cut this rank's chunk out of the full (local) ``param`` into a padded buffer."""
        param = local_tensor(param).detach()
        store_device = param.device
        if param.device.type != "meta":
            store_device = torch.device("cpu") if self.offload_to_cpu else self.device
        self._set_padded_shard(self.layout.padded_shard(param, store_device))

    def _set_padded_shard(self, padded: torch.Tensor, param: nn.Parameter | None = None) -> None:
        """Adopt ``padded`` as this rank's shard storage and (re)build the DTensor on it.

        When ``param`` (the registered sharded parameter) is given, it keeps its identity,
        so an optimizer built before a module conversion still holds the right object.
        """
        if self.offload_to_cpu and self.pin_memory and torch.cuda.is_available():
            padded = padded.pin_memory()
        self.padded_shard = padded
        recorder.name_buffer(padded, f"sharded {self.fqn}", host=self.offload_to_cpu)
        local = self.layout.local_view(padded)
        if param is not None:
            param._local_tensor = local
            self.sharded_param = param
        else:
            with torch.no_grad():
                dt = self.placement.sharded(local)
            self.sharded_param = nn.Parameter(dt, requires_grad=self.requires_grad)
        self.placement.share_spec(self.sharded_param)
        setattr(self.sharded_param, MANAGED, True)
        self.extension = find_extension(local, self.fqn, self.layout.shard_dim)
        self.to_sharded()

    def reset_sharded_param(self) -> None:
        """Re-adopt the parameter registered on the module after ``module._apply``.

        ``to_empty``, ``.to()`` and ``.double()`` replace (or swap) parameter tensors, and
        :meth:`adopt` brings in a parameter the user or ``load_state_dict(assign=True)``
        registered instead; the new local tensor is copied into a fresh padded buffer so
        that the all-gather can keep reading equal-size shards and the optimizer keeps
        writing into them.
        """
        current = self.refs[0].module._parameters.get(self.refs[0].name)
        self._check_replacement(current)
        self._resolve_dtypes(current.dtype)
        self.requires_grad = current.requires_grad
        self.unsharded_param = None
        self._set_padded_shard(self.layout.pad(current._local_tensor), current)

    def _check_replacement(self, new: object) -> None:
        """Refuse a registered parameter that cannot become this sharded parameter: only
        a DTensor laid out like it (global shape, mesh, placements, local shape) can."""
        p = self.placement
        if isinstance(new, DTensor) and (
            new.shape, new.device_mesh, tuple(new.placements), new._local_tensor.shape
        ) == (p.global_shape, p.mesh, p.placements, self.layout.local_shape):
            return
        raise RuntimeError(
            f"{self.fqn} of {type(self.refs[0].module).__name__} was replaced by a "
            f"{type(new).__name__} of shape "
            f"{tuple(getattr(new, 'shape', ()))}; FSDP can adopt only a DTensor laid out like "
            f"the sharded parameter (shape {tuple(p.global_shape)}, placements "
            f"{p.placements} on {p.mesh}). Compute the new value from sharded parameters "
            "(the result is such a DTensor) or distribute_tensor() it onto that mesh first"
        )

    def adopt(self, converted: bool = False) -> bool:
        """Adopt what the module holds now, as torch's lazy init does: a parameter
        registered in place of the sharded one (a norm vector computed after
        ``to_empty``, ``load_state_dict(assign=True)``) becomes the sharded parameter, and
        the all-gather extension is looked up again on the local tensor (its hooks may be
        attached to the tensor object after ``fully_shard``). ``converted``: the module's
        tensors were converted (``module._apply``, in place or swapped), so the
        parameter is adopted even where it is the same object.

        Runs at the root's lazy init, at an ``unshard()`` before it, after a load with
        ``assign=True`` and after ``module._apply``. Returns whether anything changed: the
        group must then drop what it cached about the shards.
        """
        current = self.refs[0].module._parameters.get(self.refs[0].name)
        if current is not None and current is self.unsharded_param:
            return False  # unsharded by the user: nothing was replaced
        if converted or current is not self.sharded_param:
            with torch.no_grad():
                self.reset_sharded_param()
            return True
        found = find_extension(local_tensor(current), self.fqn, self.layout.shard_dim)
        if (found is None) == (self.extension is None):
            return False
        self.extension, self.unsharded_param = found, None
        return True

    # ---- the two faces --------------------------------------------------------------

    def _register(self, param: nn.Parameter) -> None:
        for ref in self.refs:
            ref.module._parameters[ref.name] = param

    def to_sharded(self) -> None:
        """Register the sharded DTensor parameter and free the unsharded storage."""
        self._register(self.sharded_param)
        self.free_unsharded()
        self.post_forward_shard = None

    def to_unsharded(self) -> None:
        """Register the unsharded parameter (its storage must already hold the data) and
        drop the post-forward shard it was gathered from, if any: compute has waited for
        that all-gather, so nothing reads the shard any more.

        With the extension, the post hook builds the unsharded parameter from the gathered
        outputs first (the first time), or refills it in place.
        """
        if self.extension is not None:
            local = local_tensor(self.sharded_param)
            full = self.extension.post_all_gather(local, self.param_dtype, self.unsharded_param)
            if full is not None:  # the first time: keep the full shape (padding falls off)
                shape = self.layout.full_shape
                full = torch.as_strided(full, shape, contiguous_stride(shape), 0)
                self.unsharded_param = self.placement.unsharded(full, self.requires_grad)
        self._register(self.unsharded_param)
        self.post_forward_shard = None

    # ---- reshard_after_forward=<int> ------------------------------------------------

    def to_post_forward_shard(self, layout: ShardLayout, mesh=None) -> None:
        """Keep a shard over a smaller group between forward and backward (int reshard).

        What the module shows meanwhile is torch 2.13's: a DTensor of that shard, in
        ``param_dtype``, ``(Replicate(), Shard(dim))`` on the post-forward 2-D ``mesh``
        (a tensor-parallel parameter, which torch refuses to reshard so, shows its
        sharded parameter)."""
        self.post_forward_layout = layout
        padded = layout.padded_shard(local_tensor(self.unsharded_param).detach())
        recorder.name_buffer(padded, f"post-forward shard of {self.fqn}")
        shown = self.sharded_param
        if mesh is not None and not self.placement.is_dtensor:
            shape = layout.full_shape
            with torch.no_grad():
                dt = DTensor.from_local(layout.local_view(padded), mesh,
                                        (Replicate(), Shard(layout.shard_dim)), run_check=False,
                                        shape=shape, stride=contiguous_stride(shape))
            shown = nn.Parameter(dt, requires_grad=self.requires_grad)
        self._register(shown)
        self.free_unsharded()
        self.post_forward_shard = padded

