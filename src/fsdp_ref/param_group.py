"""A group of parameters communicated together: the state machine of one ``fully_shard``.

Every ``fully_shard(module)`` call makes one :class:`FSDPParamGroup`. Its parameters are
all-gathered in one collective and their gradients reduce-scattered in one collective.
One training iteration, for a group whose parameters are resharded after forward::

    pre-forward      unshard: Gatherer.start (copy-in, all-gather) ; Gatherer.finish
                     (wait, copy-out) ; register the unsharded parameters
                     hook the post-backward autograd function onto the inputs
    forward          the module runs on the unsharded parameters
    post-forward     reshard: register the sharded DTensors, free unsharded storage
    pre-backward     unshard again (often already prefetched by the next group)
    backward         autograd accumulates into the unsharded parameters' .grad
    post-backward    Reducer.pack (copy-in) ; reshard ; Reducer.launch (reduce-scatter)
    end of backward  the root finishes the queued reductions: [HSDP: all-reduce] ;
                     divide ; assign the sharded DTensor gradients

This module is the state machine: which face the parameters show
(:class:`~fsdp_ref.group_state.ShardedState`), where the group is in the iteration
(:class:`~fsdp_ref.group_state.TrainingState`) and what the user set
(:class:`~fsdp_ref.group_state.GroupSettings`). *How* the collectives run is
:mod:`fsdp_ref.all_gather` and :mod:`fsdp_ref.reduce`; *when* each transition runs, and
which group to prefetch, is :mod:`fsdp_ref.state` and :mod:`fsdp_ref.order`.
"""

from __future__ import annotations

import torch
from torch.utils._pytree import tree_flatten, tree_unflatten

from .all_gather import Gatherer
from .autograd_nodes import PostBackward
from .comm_context import CommContext
from .group_state import GroupSettings, ShardedState, TrainingState, check_transition
from .layout import ShardLayout
from .mesh import MeshInfo
from .param import FSDPParam
from .recorder import recorder
from .reduce import Reducer
from .streams import Event

__all__ = ["FSDPParamGroup"]


class FSDPParamGroup:
    """The parameters of one ``fully_shard`` call and the transitions they go through.

    Args:
        fsdp_params: the group's managed parameters.
        mesh_info: groups to shard (and replicate) over.
        device: compute device.
        name: a readable name for logs and errors (the module's class until the root
            names it by its path in the model).
        settings: the group's settings, ``reshard_after_forward`` already resolved into
            ``post_forward_mesh_info`` by ``fully_shard``.
        comm_ctx: the streams to use until the root's lazy init shares its own.
    """

    def __init__(self, fsdp_params: list[FSDPParam], mesh_info: MeshInfo, device: torch.device,
                 name: str, settings: GroupSettings, comm_ctx: CommContext) -> None:
        self.fsdp_params = fsdp_params
        self.mesh_info = mesh_info
        self.device = device
        self.name = name
        self.comm_ctx = comm_ctx
        self.settings = settings
        self.is_root = False
        self.sharded_state = ShardedState.SHARDED
        self.training_state = TrainingState.IDLE
        self.gatherer = Gatherer(fsdp_params, settings, device)
        self.reducer = Reducer(name, mesh_info, settings, device)
        self._post_forward_event: Event | None = None
        self._check_extensions()

    def attach(self, comm_ctx: CommContext, name: str, fqns: dict[int, str], is_root: bool):
        """Join a root's iteration (at its lazy init): its streams, the group's name by its
        path in the model, the parameters' names, and whether this is the root's group.
        The root keeps its parameters after forward unless the user said otherwise: they
        are needed first thing in backward."""
        self.comm_ctx, self.name, self.is_root = comm_ctx, name, is_root
        self.reducer.name = name
        if is_root and self.settings.auto_reshard_after_forward:
            self.settings.post_forward_mesh_info = None
        for p in self.fsdp_params:
            p.fqn = fqns.get(id(p.sharded_param), p.fqn)

    def _check_extensions(self) -> None:
        """Refuse an int ``reshard_after_forward`` that keeps a smaller-mesh shard (1 and the
        shard size act as bools) beside parameters with the all-gather extension."""
        ext = [p.fqn for p in self.fsdp_params if p.extension is not None]
        post = self.settings.post_forward_mesh_info
        if ext and post not in (None, self.mesh_info):
            raise ValueError(
                f"fully_shard group {self.name}: reshard_after_forward={post.shard_size} "
                "(an int) cannot be combined with parameters that define "
                f"fsdp_pre_all_gather ({', '.join(ext[:4])}): they have no post-forward shard "
                "to keep. Pass reshard_after_forward=True or False, or shard those parameters "
                "in a fully_shard call of their own"
            )

    # ---- state ---------------------------------------------------------------------

    def _become(self, new: ShardedState) -> None:
        if new is not self.sharded_state:
            check_transition(self.sharded_state, new, self.name)
            self.sharded_state = new

    @property
    def is_unsharded(self) -> bool:
        """Whether the unsharded parameters are registered and hold data."""
        return self.sharded_state is ShardedState.UNSHARDED

    @property
    def holds_gathered_data(self) -> bool:
        """Whether anything beyond the shards is alive: unsharded parameters, an
        all-gather in flight, or a post-forward shard over a smaller mesh."""
        return (self.sharded_state is not ShardedState.SHARDED
                or self.gatherer.in_flight is not None)

    def _phase(self) -> str | None:
        """The step this group is in, for the debug mode's fingerprint; ``None`` when idle
        (a prefetch or a user's unshard: the debug mode then says forward or backward)."""
        state = self.training_state
        return None if state is TrainingState.IDLE else state.value

    # ---- unshard -------------------------------------------------------------------

    def unshard(self, async_op: bool = False) -> None:
        """Start the all-gather of this group's shards (no-op if done or in flight).

        The caller later calls :meth:`wait_for_unshard` to make compute wait and to copy
        out (:mod:`fsdp_ref.all_gather`).
        """
        if self.gatherer.in_flight is not None or self.is_unsharded or not self.fsdp_params:
            return
        post_forward = self.sharded_state is ShardedState.SHARDED_POST_FORWARD
        info = self.settings.post_forward_mesh_info if post_forward else self.mesh_info
        ctx = self.comm_ctx
        self.gatherer.start(ctx, ctx.output, info, self.name,
                            self._post_forward_event if post_forward else None,
                            async_op, self._phase())

    def wait_for_unshard(self) -> None:
        """Make compute wait for the all-gather, copy out, and register unsharded params.

        In forward the all-gather output outlives the copy-out until the next group's
        copy-in (so that copy-out and the next all-gather overlap); in backward, after a
        user's ``unshard()`` and for ``async_op`` it is freed at once, as torch 2.13 does.
        """
        forward = self.training_state is TrainingState.FORWARD
        if not self.gatherer.finish(self.comm_ctx, self.comm_ctx.output, self.name, forward):
            return
        if self.sharded_state is ShardedState.SHARDED_POST_FORWARD:
            recorder.log("free", "compute", "post_forward_shard", self.name)
        for p in self.fsdp_params:
            p.to_unsharded()
        self._become(ShardedState.UNSHARDED)

    def prefetch(self, direction: str) -> None:
        """Start this group's all-gather ahead of its use (``"forward"`` or
        ``"backward"``), unless it already is (or is about to be) unsharded then.

        On the host-ordered path a backward prefetch's all-gather is completed before this
        returns (:meth:`~fsdp_ref.all_gather.Gatherer.complete`: gloo's staging buffer must
        not sit on the backward's peak); a forward prefetch keeps running behind compute."""
        if direction == "forward" and self.training_state is not TrainingState.IDLE:
            return
        if direction == "backward" and (
            not self.settings.unshard_in_backward
            or self.training_state is TrainingState.PRE_BACKWARD
        ):
            return
        recorder.log("prefetch", "compute", direction, self.name)
        self.unshard(self.settings.unshard_async_op)
        if direction == "backward":
            self.gatherer.complete(self.comm_ctx)

    # ---- reshard -------------------------------------------------------------------

    def reshard(self) -> None:
        """Register the sharded parameters and free every unsharded byte of this group."""
        if self.gatherer.in_flight is not None:
            # A prefetched all-gather nobody used: complete it so ranks stay in step.
            self.wait_for_unshard()
        for p in self.fsdp_params:
            p.to_sharded()
        if self.sharded_state is not ShardedState.SHARDED:
            recorder.log("free", "compute", "unsharded_params", self.name)
        self._become(ShardedState.SHARDED)

    def reshard_post_forward(self) -> None:
        """Apply ``reshard_after_forward``: fully, to a smaller mesh, or not at all."""
        info = self.settings.post_forward_mesh_info
        if info is None or not self.is_unsharded:
            return
        if info is self.mesh_info:
            self.reshard()
            return
        for p in self.fsdp_params:
            p.to_post_forward_shard(
                ShardLayout(p.layout.full_shape, p.layout.shard_dim, info.shard_size,
                            info.shard_rank), info.mesh
            )
        self._post_forward_event = self.comm_ctx.current().record_event(
            "post_forward_shard_done", self.name
        )
        recorder.log("free", "compute", "unsharded_params", self.name)
        self._become(ShardedState.SHARDED_POST_FORWARD)

    # ---- forward -------------------------------------------------------------------

    def pre_forward(self, args: tuple, kwargs: dict) -> tuple[tuple, dict]:
        """Unshard for forward and hook the post-backward onto the inputs."""
        self.training_state = TrainingState.FORWARD
        self.unshard(self.settings.unshard_async_op)
        self.wait_for_unshard()
        recorder.log("forward", "compute", "module_forward", self.name)
        return self._register_post_backward(args, kwargs)

    def post_forward(self) -> None:
        """Reshard per ``reshard_after_forward``."""
        self.reshard_post_forward()
        self.training_state = TrainingState.IDLE

    def _register_post_backward(self, args: tuple, kwargs: dict) -> tuple[tuple, dict]:
        if not torch.is_grad_enabled():
            return args, kwargs
        if not kwargs and all(torch.is_tensor(a) for a in args):  # the usual call: no pytree
            flat, spec = list(args), None
        else:
            flat, spec = tree_flatten((args, kwargs))
        idx = [i for i, t in enumerate(flat) if torch.is_tensor(t) and t.requires_grad]
        if not idx:
            return args, kwargs
        outs = PostBackward.run(self.post_backward, *(flat[i] for i in idx))
        for i, t in zip(idx, outs):
            flat[i] = t
        return (tuple(flat), kwargs) if spec is None else tree_unflatten(flat, spec)

    # ---- backward ------------------------------------------------------------------

    def pre_backward(self) -> bool:
        """Unshard before this group's backward; ``False`` if it already ran in this
        backward (each output's gradient hook calls it)."""
        if self.training_state is TrainingState.PRE_BACKWARD:
            return False
        self.training_state = TrainingState.PRE_BACKWARD
        if self.settings.unshard_in_backward:
            self.unshard(self.settings.unshard_async_op)
            self.wait_for_unshard()
        recorder.log("backward", "compute", "module_backward", self.name)
        return True

    def post_backward(self) -> None:
        """Reduce this group's gradients (or keep accumulating them) and reshard.

        With gradient sync off the gradients stay unsharded until a backward that reduces;
        under a ``reduce_dtype`` other than ``param_dtype`` they are summed in
        ``reduce_dtype`` (:meth:`~fsdp_ref.param.FSDPParam.keep_unreduced_grad`), as
        torch does.
        """
        self.training_state = TrainingState.POST_BACKWARD
        for p in self.fsdp_params:
            p.accumulate_unsharded_grad()  # (into an accumulator an earlier backward left)
        if not self.settings.requires_gradient_sync:
            if self.settings.reshard_after_backward:
                self.reshard()
            for p in self.fsdp_params:
                p.keep_unreduced_grad()
            return
        params = [p for p in self.fsdp_params if p.requires_grad]
        if not self.settings.reduce_scatter_unused_params:
            params = [p for p in params if p.has_unsharded_grad()]
        if not params:
            if self.settings.reshard_after_backward:
                self.reshard()
            return
        ctx = self.comm_ctx
        taken = self.reducer.take_grads(params)
        if self.settings.reshard_after_backward:
            self.reshard()  # (the gradients are taken: the parameters may go first)
        # When earlier reductions complete: the oldest finish (their gradients land in
        # .grad, their inputs are freed) before this group allocates its own input, so
        # that at most max_reductions_in_flight are alive; the rest at the end of backward.
        ctx.reductions.finish(keep=self.settings.max_reductions_in_flight - 1)
        packed = self.reducer.pack(taken, ctx)
        self.reducer.launch(packed, ctx, ctx.reductions)

    # ---- after a conversion or an exception ----------------------------------------

    def refresh_after_apply(self) -> None:
        """Re-derive cached facts after ``module._apply`` changed dtypes or devices."""
        self._check_extensions()
        self.gatherer.invalidate()  # new shard buffers, dtypes, full tensors

    def reset(self) -> None:
        """Forget per-iteration state after an aborted iteration (an exception).

        Any in-flight all-gather is completed first, so every rank leaves with the same
        collectives issued, then the group reshards and discards unreduced gradients.
        """
        self.gatherer.abandon(self.comm_ctx, self.comm_ctx.output, self.name)
        for p in self.fsdp_params:
            p.clear_unsharded_grad()
        self.reshard()
        self.reducer.partial = {}
        self.training_state = TrainingState.IDLE
