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

Why this module is longer than the house's ~300 lines: one parameter's two faces, its
dtypes, its shard under offload and after a post-forward reshard, its gradient in both
faces and its all-gather inputs (plain or through an extension) are one object's state,
which the rest of the core reads through this class only.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
import torch.nn as nn
from torch.distributed.tensor import DTensor, Replicate, Shard

from .api import MixedPrecisionPolicy
from .buffer_plan import GatherInput, allocate_storage, free_storage, storage_slots
from .extensions import find_extension, shard_mesh
from .layout import ShardLayout, contiguous_stride
from .mesh import MeshInfo
from .recorder import recorder
from .spmd import local_tensor, param_placement

__all__ = ["MANAGED", "FSDPParam", "ParamRef", "meta_error"]

MANAGED = "_fsdp_ref_managed"
"""Attribute set on every parameter an FSDP group manages (the original one and each
sharded one it registers, adopted ones included), so that ``fully_shard`` on a parent
leaves it to its group."""


@dataclass(frozen=True)
class ParamRef:
    """A place a parameter is registered: ``getattr(module, name)``."""

    module: nn.Module
    name: str


class FSDPParam:
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

    def adopt(self) -> bool:
        """Adopt what the module holds now, as torch's lazy init does: a parameter
        registered in place of the sharded one (a norm vector computed after
        ``to_empty``, ``load_state_dict(assign=True)``) becomes the sharded parameter, and
        the all-gather extension is looked up again on the local tensor (its hooks may be
        attached to the tensor object after ``fully_shard``).

        Runs at the root's lazy init, at an ``unshard()`` before it and after a load with
        ``assign=True``. Returns whether anything changed: the group must then drop what
        it cached about the shards.
        """
        current = self.refs[0].module._parameters.get(self.refs[0].name)
        if current is not None and current is self.unsharded_param:
            return False  # unsharded by the user: nothing was replaced
        if current is not self.sharded_param:
            with torch.no_grad():
                self.reset_sharded_param()
            return True
        found = find_extension(local_tensor(current), self.fqn, self.layout.shard_dim)
        if (found is None) == (self.extension is None):
            return False
        self.extension, self.unsharded_param = found, None
        return True

    @property
    def on_meta(self) -> bool:
        """Whether the shard is still on the meta device (no values yet)."""
        return self.padded_shard.device.type == "meta"

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

    def alloc_unsharded(self) -> list[torch.Tensor]:
        """Make sure the unsharded parameter has storage; return the tensors to copy the
        gathered inputs into (the parameter itself, or its local tensor for a DTensor; the
        extension's all-gather outputs)."""
        if self.extension is not None:
            outputs = self.extension.alloc_outputs(self.layout.world_size, self.device)
            for t in outputs:
                recorder.name_buffer(t, f"all-gather output of {self.fqn}")
            return outputs
        if self.unsharded_param is None:
            full = torch.empty(
                self.layout.full_shape, dtype=self.param_dtype, device=self.device
            )
            self.unsharded_param = self.placement.unsharded(full, self.requires_grad)
        local, slots = self._unsharded_local()
        allocate_storage(slots)
        if recorder.listener is not None:  # (the name is only formatted for a listener)
            recorder.name_buffer(local[0], f"unsharded {self.fqn}")
        return local

    def _unsharded_local(self) -> tuple[list[torch.Tensor], list]:
        """The unsharded parameter's local tensor (itself, unless tensor parallel), in a
        list, and its :func:`~fsdp_ref.buffer_plan.storage_slots`, looked up once per
        unsharded parameter: every unshard and reshard uses them."""
        cached = self._local
        if cached is None or cached[0] is not self.unsharded_param:
            local = [local_tensor(self.unsharded_param)]
            cached = self._local = (self.unsharded_param, local, storage_slots(local))
        return cached[1], cached[2]

    def free_unsharded(self) -> None:
        """Release the unsharded parameter's memory; the tensor object stays."""
        if self.extension is not None:
            self.extension.free()
        elif self.unsharded_param is not None:
            free_storage(self._unsharded_local()[1])

    # ---- data for the collectives ---------------------------------------------------

    def gather_inputs(self) -> list[GatherInput]:
        """What this rank puts into the group's all-gather: the post-forward shard after
        an int ``reshard_after_forward``, the extension's pre hook inputs, or the shard."""
        if self.post_forward_shard is not None:
            return [GatherInput(self.post_forward_shard, self.post_forward_layout,
                                self.param_dtype)]
        if self.extension is None:
            return [GatherInput(self.all_gather_input(), self.layout, self.param_dtype)]
        self._check_materialized()
        local = local_tensor(self.sharded_param)
        if self.offload_to_cpu:  # the pre hook runs on the device copy
            local = local.to(self.device, non_blocking=True, copy=True)
            recorder.name_buffer(local, f"device copy of sharded {self.fqn}")
        inputs = self.extension.pre_all_gather(
            local, shard_mesh(self.mesh_info), self.layout.full_shape, self.refs[0].module,
            self.mp_policy, self.fqn,
        )
        world, rank = self.layout.world_size, self.layout.rank
        return [GatherInput(t, ShardLayout(torch.Size([world * t.numel()]), 0, world, rank),
                            t.dtype) for t in inputs]

    def all_gather_input(self) -> torch.Tensor:
        """This rank's padded shard, on the compute device, for the all-gather copy-in."""
        self._check_materialized()
        if self.offload_to_cpu or self.padded_shard.device != self.device:
            # Host to device on the copy-in stream. Offloaded shards are copied on a CPU
            # mesh too (where it is a host copy) so that CPU runs take the GPU's path.
            copy = self.padded_shard.to(self.device, non_blocking=True, copy=True)
            recorder.name_buffer(copy, f"device copy of sharded {self.fqn}")
            return copy
        return self.padded_shard

    def _check_materialized(self) -> None:
        if self.on_meta:  # (an unshard() before the root's lazy init checks every group)
            raise meta_error([self.fqn])

    def has_unsharded_grad(self) -> bool:
        """Whether an unreduced gradient waits: in the reduce-dtype accumulator or in the
        unsharded parameter's ``.grad``."""
        return self.accumulated_grad is not None or (
            self.unsharded_param is not None and self.unsharded_param.grad is not None
        )

    def unsharded_grad(self) -> torch.Tensor | None:
        """The local tensor of the unsharded gradient, ready for the reduce-scatter, if any:
        the accumulator when a backward without reduction left one, else ``.grad``.

        For a tensor-parallel parameter this redistributes the DTensor gradient over the
        tensor-parallel dims (a collective there), so call it once per reduction.
        """
        if not self.has_unsharded_grad():
            return None
        grad = self.accumulated_grad
        return self.placement.grad_local(self.unsharded_param.grad if grad is None else grad)

    def accumulate_unsharded_grad(self) -> None:
        """Add what autograd produced in this backward into the reduce-dtype accumulator
        kept by an earlier backward without reduction (see :meth:`keep_unreduced_grad`).
        Runs first thing in every post-backward, whether it reduces or not."""
        grad = None if self.unsharded_param is None else self.unsharded_param.grad
        if self.accumulated_grad is not None and grad is not None:
            self.accumulated_grad += grad
            self.unsharded_param.grad = None

    def keep_unreduced_grad(self) -> None:
        """After a backward that does not reduce (gradient sync off): move ``.grad`` into
        an accumulator in ``accumulate_dtype`` (the policy's ``reduce_dtype``, e.g. fp32
        for bf16 parameters) and drop it, so that the microbatches are summed at the
        precision they will be reduced in. Without a ``reduce_dtype`` other than
        ``param_dtype``, autograd keeps accumulating into ``.grad`` itself.

        This is torch 2.13's rule (``FSDPParam.to_accumulated_grad_if_needed``): the same
        point (after the reshard), the same dtype, the same memory (one accumulator in
        ``reduce_dtype``; the ``param_dtype`` gradient is freed).
        """
        grad = None if self.unsharded_param is None else self.unsharded_param.grad
        if self.accumulate_dtype is None or grad is None or grad.dtype == self.accumulate_dtype:
            return
        self.unsharded_param.grad = None
        self.accumulated_grad = grad.to(self.accumulate_dtype)

    def clear_unsharded_grad(self) -> None:
        """Drop the unsharded gradient (and accumulator) once it has been reduced."""
        self.accumulated_grad = None
        if self.unsharded_param is not None:
            self.unsharded_param.grad = None

    def reduced_grad(self, out: torch.Tensor, offset: int) -> torch.Tensor:
        """This rank's gradient shard from the reduce-scatter output ``out``, where its
        padded shard starts at element ``offset``: the unpadded rows, in the parameter's
        dtype, where the shard lives.

        Under CPU offload this is a device-to-host copy (always a copy, as on a GPU) that
        the host must wait for before it reads it (:meth:`~fsdp_ref.reduce.Reducer.finish`).
        """
        local = self.layout.local_in(out, offset)
        target_device = self.padded_shard.device
        if self.offload_to_cpu:
            local = local.to(dtype=self.orig_dtype, device=target_device, non_blocking=True,
                             copy=True)
            recorder.name_buffer(local, f"grad of {self.fqn}", host=True)
        elif local.dtype != self.orig_dtype or local.device != target_device:
            local = local.to(dtype=self.orig_dtype, device=target_device, non_blocking=True)
        return local

    def accumulate_sharded_grad(self, grad: torch.Tensor) -> None:
        """Set the sharded parameter's DTensor gradient to ``grad`` (from
        :meth:`reduced_grad`), or add it to the gradient already there; then run the
        sharded parameter's ``register_post_accumulate_grad_hook`` hooks, as autograd
        would for a leaf it accumulated into (torch 2.13 runs them at the same point, in
        ``foreach_reduce``). An optimizer stepped in backward (torchtune's
        ``optimizer_in_bwd``) steps from them."""
        param = self.sharded_param
        existing = param.grad
        if existing is None:
            param.grad = self.placement.sharded(grad)
        else:
            existing._local_tensor.add_(grad)
        hooks = getattr(param, "_post_accumulate_grad_hooks", None)
        for hook in (hooks or {}).values():
            hook(param)

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


def meta_error(fqns: list[str]) -> RuntimeError:
    """Torch's error for parameters (named ``fqns``) still on the meta device when FSDP
    needs their values, with what to do."""
    return RuntimeError(
        "FSDP parameters should be materialized from meta device before training, "
        f"but the following were still on meta device: {fqns}\n"
        "For example, call module.to_empty(device) to materialize to device and call "
        "module.reset_parameters() on each module to initialize values. (Or load a "
        "checkpoint into the sharded model before its first forward.)"
    )
