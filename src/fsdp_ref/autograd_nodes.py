"""The two autograd nodes through which backward reaches FSDP: before and after a module.

FSDP has to act twice in each module's backward, and autograd offers no module-level
event for either, so fsdp_ref puts an identity node into the graph at each boundary:

* :class:`PreBackward` wraps the module's **outputs** after its forward. Autograd runs
  its backward when the gradients w.r.t. those outputs arrive, i.e. before any op of
  the module runs backward: the moment to all-gather the parameters again.
* :class:`PostBackward` wraps the module's **inputs** before its forward. Gradients
  w.r.t. a module's inputs are computed after the gradients w.r.t. its parameters
  (autograd runs the parameters' AccumulateGrad first), so its backward runs when the
  module's gradients are complete: the moment to reduce them.

Why nodes and not ``Tensor.register_hook``: a hook belongs to a tensor, and an in-place op
on that tensor (``y = block(x); y += 1``, or any in-place op on an output that is a view)
makes the tensor's history start at the in-place op, so the hook is silently dropped and
backward runs on freed parameters. A node stays in the graph whatever happens to the
tensors after it. The outputs of both nodes are ``detach()`` es of their inputs: same storage and version
counter (autograd still catches an in-place change of a tensor it saved), but not views,
so they may be modified in place, which autograd forbids for views a custom Function
returns.
"""

from __future__ import annotations

from collections.abc import Callable

import torch

__all__ = ["PostBackward", "PreBackward"]


class PreBackward(torch.autograd.Function):
    """Identity on a module's outputs; its backward calls ``hook()`` first."""

    @staticmethod
    def forward(ctx, hook: Callable[[], None], *outputs: torch.Tensor):
        """Keep ``hook``; return the outputs as ``detach()`` es (modifiable in place)."""
        ctx.hook = hook
        return tuple(t.detach() for t in outputs)

    @staticmethod
    def backward(ctx, *grads: torch.Tensor):
        """Call ``hook()`` (unshard the module) and pass the gradients on unchanged."""
        ctx.hook()
        return (None, *grads)


class PostBackward(torch.autograd.Function):
    """Identity on a module's inputs; its backward calls ``hook()`` (the module's
    parameter gradients are complete by then). Modules whose inputs do not require grad
    (an embedding on token ids) never reach it: the root's final callback covers them."""

    @staticmethod
    def forward(ctx, hook: Callable[[], None], *inputs: torch.Tensor):
        """Keep ``hook``; return the inputs as ``detach()`` es."""
        ctx.hook = hook
        return tuple(t.detach() for t in inputs)

    @staticmethod
    def backward(ctx, *grads: torch.Tensor):
        """Call ``hook()`` (reduce the module's gradients) and pass the input gradients
        on unchanged."""
        ctx.hook()
        return (None, *grads)
