"""One parameter's gradient, in both faces: the unsharded gradient autograd writes and the
reduced shard FSDP assigns to the sharded parameter.

The unsharded face's ``.grad`` is written by autograd in backward. With gradient sync off
it is kept across backwards, summed in the policy's ``reduce_dtype`` when one is given
(:meth:`ParamGrad.keep_unreduced_grad`, :meth:`ParamGrad.accumulate_unsharded_grad`); a
reduction reads it once (:meth:`ParamGrad.unsharded_grad`) and then drops it. The
reduce-scatter's output is cut back to this rank's unpadded rows
(:meth:`ParamGrad.reduced_grad`) and set or added as the sharded parameter's DTensor
gradient (:meth:`ParamGrad.accumulate_sharded_grad`), which the optimizer reads.

:class:`ParamGrad` is a part of :class:`~fsdp_ref.param.FSDPParam` (one of its bases): it
reads the faces, dtypes and accumulator that :class:`~fsdp_ref.param.FSDPParam` sets, and
calls only what this module imports.
"""

from __future__ import annotations

import torch

from .layout import ShardLayout
from .recorder import recorder
from .spmd import ParamPlacement

__all__ = ["ParamGrad"]


class ParamGrad:
    """The gradient methods of :class:`~fsdp_ref.param.FSDPParam` (see the module)."""

    layout: ShardLayout
    placement: ParamPlacement

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
