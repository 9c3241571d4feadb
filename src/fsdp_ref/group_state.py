"""What a parameter group is at any moment, and what its user can set on it.

Two enums and one dataclass, so that everything a group can be and everything a user can
change about it reads at a glance:

* :class:`TrainingState`: where the group is in the iteration;
* :class:`ShardedState`: which face of its parameters the module shows. Every allowed
  change is a row of :data:`SHARDED_TRANSITIONS`, checked by :func:`check_transition`.
  An all-gather in flight (a prefetch) is not a state of its own: the parameters stay
  sharded until it is waited for;
* :class:`GroupSettings`: every knob of the ``FSDPModule.set_*`` methods, plus where
  ``reshard_after_forward`` (resolved once, by ``fully_shard``) keeps the parameters
  between forward and backward.
"""

from __future__ import annotations

import enum
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch

from .mesh import MeshInfo

__all__ = [
    "SHARDED_TRANSITIONS",
    "GroupSettings",
    "ShardedState",
    "TrainingState",
    "check_transition",
]


class TrainingState(enum.Enum):
    """Where a group is in the iteration."""

    IDLE = "idle"
    FORWARD = "forward"
    PRE_BACKWARD = "pre_backward"
    POST_BACKWARD = "post_backward"


class ShardedState(enum.Enum):
    """Which parameters a group's module(s) show, and which memory they hold."""

    SHARDED = "sharded"
    """Only this rank's shards: the sharded DTensors are registered."""
    SHARDED_POST_FORWARD = "sharded_post_forward"
    """Between forward and backward with ``reshard_after_forward=<int>``: the sharded
    DTensors are registered, and a shard over a smaller group is kept for the backward
    all-gather."""
    UNSHARDED = "unsharded"
    """The full parameters are registered and hold data."""


SHARDED_TRANSITIONS: dict[tuple[ShardedState, ShardedState], str] = {
    (ShardedState.SHARDED, ShardedState.UNSHARDED):
        "unshard: all-gather the shards, copy out into the full parameters",
    (ShardedState.SHARDED_POST_FORWARD, ShardedState.UNSHARDED):
        "unshard in backward, gathering from the smaller group's post-forward shards",
    (ShardedState.UNSHARDED, ShardedState.SHARDED):
        "reshard: register the shards, free the full parameters",
    (ShardedState.UNSHARDED, ShardedState.SHARDED_POST_FORWARD):
        "reshard after forward to shards over a smaller group",
    (ShardedState.SHARDED_POST_FORWARD, ShardedState.SHARDED):
        "reshard: drop the post-forward shards (after an exception, or a state dict)",
}
"""Every change of :class:`ShardedState` a group may make, and what makes it."""


def check_transition(old: ShardedState, new: ShardedState, group: str) -> None:
    """Raise if ``old -> new`` is not a row of :data:`SHARDED_TRANSITIONS` (a bug in
    fsdp_ref, not in the caller's program)."""
    if (old, new) not in SHARDED_TRANSITIONS:
        raise RuntimeError(
            f"internal error in fsdp_ref: group {group} cannot go from {old.name} to "
            f"{new.name}; please report it with the stack trace"
        )


@dataclass
class GroupSettings:
    """Everything a user can set on one group (``FSDPModule.set_*``), with the defaults.

    Attributes:
        post_forward_mesh_info: where the parameters live between forward and backward:
            the group's mesh (reshard fully), ``None`` (stay unsharded) or a smaller mesh
            (an int ``reshard_after_forward``): :func:`fsdp_ref.mesh.post_forward_mesh_info`.
        auto_reshard_after_forward: ``reshard_after_forward`` was left ``None``: reshard,
            except the root, which keeps its parameters for the backward that follows at
            once (applied when the root is known, at its lazy init).
        reshard_after_backward: free the full parameters after backward.
        requires_gradient_sync: reduce gradients in this backward (``False``: accumulate
            the unsharded gradients locally, FSDP1's ``no_sync``).
        requires_all_reduce: HSDP: all-reduce across replicas (``False``: keep partial sums).
        gradient_divide_factor: divide reduced gradients by this instead of the data
            parallel size.
        force_sum_reduction: divide before and after ``SUM`` collectives where torch would
            otherwise average in the collective (:mod:`fsdp_ref.division`).
        reduce_scatter_unused_params: reduce zeros for parameters without a gradient.
        unshard_in_backward: all-gather again before this group's backward.
        unshard_async_op: issue the forward/backward all-gathers with ``async_op=True``.
        max_reductions_in_flight: reduce-scatters (and their input buffers) alive at once.
        custom_all_gather: an ``AllGather`` that allocates and runs the all-gather.
        custom_reduce_scatter: a ``ReduceScatter`` that allocates and runs the reduce-scatter.
        all_reduce_hook: called on each reduced gradient shard (after the HSDP all-reduce).
        all_reduce_hook_stream: the device stream the hook runs on (plain FSDP, GPU path).
        reduce_scatter_group: a process group of its own for the reduce-scatters.
        allocate_from_process_group: collective buffers from NCCL's memory pool.
        use_symm_mem: all-gather buffers in symmetric memory.
    """

    post_forward_mesh_info: MeshInfo | None = None
    auto_reshard_after_forward: bool = True
    reshard_after_backward: bool = True
    requires_gradient_sync: bool = True
    requires_all_reduce: bool = True
    gradient_divide_factor: float | None = None
    force_sum_reduction: bool = False
    reduce_scatter_unused_params: bool = False
    unshard_in_backward: bool = True
    unshard_async_op: bool = False
    max_reductions_in_flight: int = 1
    custom_all_gather: Any = None
    custom_reduce_scatter: Any = None
    all_reduce_hook: Callable[[torch.Tensor], None] | None = None
    all_reduce_hook_stream: Any = None
    reduce_scatter_group: Any = None
    allocate_from_process_group: bool = False
    use_symm_mem: bool = False
