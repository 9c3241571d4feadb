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
from typing import Any

import torch
from torch.utils._pytree import tree_flatten, tree_unflatten

__all__ = ["PostBackward", "PreBackward"]

# The C entry point that torch.autograd.Function.apply ends in, and the two checks that
# send a call through Function.apply instead (see _Node.run).
_C_APPLY = torch._C._FunctionBase.__dict__["apply"]
_functorch_active, _compiling = torch._C._are_functorch_transforms_active, torch.compiler.is_compiling


class _Node(torch.autograd.Function):
    """What the two nodes share: :meth:`through`, which puts one node into the graph."""

    @classmethod
    def through(cls, hook: Callable[[], None], tree: Any) -> Any:
        """``tree`` (a module's output, or its ``(args, kwargs)``) with every tensor that
        requires grad passed through one ``cls`` node that calls ``hook``; ``tree`` itself
        when none does."""
        flat, rebuild = _flatten(tree)
        idx = [i for i, t in enumerate(flat) if torch.is_tensor(t) and t.requires_grad]
        if not idx:
            return tree
        for i, t in zip(idx, cls.run(hook, *(flat[i] for i in idx))):
            flat[i] = t
        return rebuild(flat)

    @classmethod
    def run(cls, hook: Callable[[], None], *tensors: torch.Tensor) -> tuple[torch.Tensor, ...]:
        """``cls.apply(hook, *tensors)``, straight into autograd's C entry point.

        A fast path, equivalent to ``cls.apply(hook, *tensors)``; it saves about 1 µs of 6
        per call, two calls per group and step (``benchmarks/fast_paths.py``).
        ``Function.apply``'s Python layer checks for ``setup_context`` (these nodes have
        none) and unwraps functorch's dead wrappers (a pytree walk over the arguments)
        before calling that entry point. Under a functorch
        transform or while ``torch.compile`` traces (which recognises ``Function.apply``
        itself), ``apply`` is called as usual.
        """
        if _functorch_active() or _compiling():
            return cls.apply(hook, *tensors)
        return cls._c_apply(hook, *tensors)

    def __init_subclass__(cls, **kwargs) -> None:
        super().__init_subclass__(**kwargs)
        cls._c_apply = _C_APPLY.__get__(None, cls)  # (bound once per node class)


class PreBackward(_Node):
    """Identity on a module's outputs; its backward calls ``hook()`` first."""

    @staticmethod
    def forward(ctx, hook: Callable[[], None], *outputs: torch.Tensor):
        """Keep ``hook``; return the outputs as ``detach()`` es (modifiable in place)."""
        ctx.hook = hook
        return tuple([t.detach() for t in outputs])

    @staticmethod
    def backward(ctx, *grads: torch.Tensor):
        """Call ``hook()`` (unshard the module) and pass the gradients on unchanged."""
        ctx.hook()
        return (None, *grads)


class PostBackward(_Node):
    """Identity on a module's inputs; its backward calls ``hook()`` (the module's
    parameter gradients are complete by then). Modules whose inputs do not require grad
    (an embedding on token ids) never reach it: the root's final callback covers them."""

    @staticmethod
    def forward(ctx, hook: Callable[[], None], *inputs: torch.Tensor):
        """Keep ``hook``; return the inputs as ``detach()`` es."""
        ctx.hook = hook
        return tuple([t.detach() for t in inputs])

    @staticmethod
    def backward(ctx, *grads: torch.Tensor):
        """Call ``hook()`` (reduce the module's gradients) and pass the input gradients
        on unchanged."""
        ctx.hook()
        return (None, *grads)


def _flatten(tree: Any) -> tuple[list, Callable[[list], Any]]:
    """``tree``'s leaves, and the function that builds a tree of the same shape from a new
    list of them.

    A fast path, equivalent to ``flat, spec = tree_flatten(tree)`` and
    ``lambda flat: tree_unflatten(flat, spec)``, for the two shapes nearly every call
    has: one tensor (a module's output) and ``(args, {})`` with tensors only (a block's
    inputs); it saves about 1 µs per output and 10 µs per input
    (``benchmarks/fast_paths.py``; lever 4 of ``docs/design/performance.md``).
    """
    if torch.is_tensor(tree):
        return [tree], _only
    if (type(tree) is tuple and len(tree) == 2 and type(tree[0]) is tuple
            and type(tree[1]) is dict and not tree[1]
            and all(torch.is_tensor(a) for a in tree[0])):
        kwargs = tree[1]
        return list(tree[0]), lambda flat: (tuple(flat), kwargs)
    flat, spec = tree_flatten(tree)
    return flat, lambda new: tree_unflatten(new, spec)


def _only(flat: list) -> Any:
    return flat[0]
