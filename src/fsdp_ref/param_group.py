"""A group of parameters communicated together: the per-iteration life of one ``fully_shard``.

Every ``fully_shard(module)`` call makes one :class:`FSDPParamGroup`. Its parameters are
all-gathered in one collective and their gradients reduce-scattered in one collective.
One training iteration, for a group whose ``reshard_after_forward`` is ``True``::

    pre-forward      unshard: copy-in -> all-gather (side streams) ; wait ; copy-out
                     register the post-backward autograd function on the inputs
    forward          the module runs on the unsharded parameters
    post-forward     reshard: register the sharded DTensors, free unsharded storage
                     register pre-backward hooks on the outputs
    pre-backward     unshard again (often already prefetched by the next group)
                     prefetch the group that ran forward before this one
    backward         autograd accumulates into the unsharded parameters' .grad
    post-backward    reduce-scatter copy-in (compute) ; reshard ; reduce-scatter SUM (side
                     stream): fsdp_ref.reduction
    final callback   (root) finish every reduction: [HSDP: all-reduce] ; divide ; assign
                     the sharded DTensor grads

State lives in few places: the group's :class:`~fsdp_ref.group_state.ShardedState`,
:class:`~fsdp_ref.group_state.TrainingState` and
:class:`~fsdp_ref.group_state.GroupSettings`, the all-gather in flight here, and the
streams and pending reductions of the shared :class:`~fsdp_ref.streams.CommContext`.
:mod:`fsdp_ref.state` decides *when* each transition runs; this module decides *what* it
does.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import torch
from torch.utils._pytree import tree_flatten, tree_unflatten

from . import collectives, extensions
from .group_state import GroupSettings, ShardedState, TrainingState, check_transition
from .layout import ShardLayout
from .mesh import MeshInfo, post_forward_mesh_info
from .param import FSDPParam
from .reduction import start_reduction
from .streams import CommContext, Event, recorder, wait_work

__all__ = ["FSDPParamGroup"]


@dataclass
class _AllGather:
    """An all-gather in flight: its output buffer, how to wait for it, what it holds."""

    out: torch.Tensor
    event: Event
    work: Any
    plan: collectives.BufferPlan
    layouts: list[ShardLayout]


class FSDPParamGroup:
    """The parameters of one ``fully_shard`` call and the transitions they go through.

    Args:
        fsdp_params: the group's managed parameters.
        mesh_info: groups to shard (and replicate) over.
        device: compute device.
        name: a readable name for logs and errors (the module's class until the root
            names it by its path in the model).
        reshard_after_forward: as given to ``fully_shard`` (validated there).
        comm_ctx: the streams to use until the root's lazy init shares its own.
    """

    def __init__(
        self,
        fsdp_params: list[FSDPParam],
        mesh_info: MeshInfo,
        device: torch.device,
        name: str,
        reshard_after_forward: bool | int | None,
        comm_ctx: CommContext,
    ) -> None:
        self.fsdp_params = fsdp_params
        self.mesh_info = mesh_info
        self.device = device
        self.name = name
        self.comm_ctx = comm_ctx
        self.settings = GroupSettings(reshard_after_forward=reshard_after_forward)
        self.is_root = False
        self.sharded_state = ShardedState.SHARDED
        self.training_state = TrainingState.IDLE
        # reshard_after_forward=<int>: the smaller mesh, built once (it creates groups).
        self._int_post_forward_mesh = (
            post_forward_mesh_info(reshard_after_forward, mesh_info)
            if isinstance(reshard_after_forward, int)
            and not isinstance(reshard_after_forward, bool)
            else None
        )
        self._check_extensions()
        # Per-iteration state.
        self._all_gather: _AllGather | None = None
        self._post_forward_event: Event | None = None
        self._post_forward_indices: list[int] = []
        self.partial_grads: dict[torch.dtype, torch.Tensor] = {}  # HSDP sums, no all-reduce

    def attach(self, comm_ctx: CommContext, name: str, fqns: dict[int, str], is_root: bool):
        """Join a root's iteration (at its lazy init): its streams, the group's name by its
        path in the model, the parameters' names, and whether this is the root's group."""
        self.comm_ctx, self.name, self.is_root = comm_ctx, name, is_root
        for p in self.fsdp_params:
            p.fqn = fqns.get(id(p.sharded_param), p.fqn)

    def _check_extensions(self) -> None:
        """Refuse an int ``reshard_after_forward`` that keeps a smaller-mesh shard (1 and the
        shard size act as bools) beside parameters with the all-gather extension."""
        self._inputs_agreed = False  # extension inputs: exchange sizes at the next unshard
        ext = [p.fqn or "?" for p in self.fsdp_params if p.extension is not None]
        if ext and self._int_post_forward_mesh not in (None, self.mesh_info):
            raise ValueError(
                f"fully_shard group {self.name}: reshard_after_forward="
                f"{self.settings.reshard_after_forward} (an int) cannot be combined with "
                f"parameters that define fsdp_pre_all_gather ({', '.join(ext[:4])}): they "
                "have no post-forward shard to keep. Pass reshard_after_forward=True or "
                "False, or shard those parameters in a fully_shard call of their own"
            )

    # ---- state ---------------------------------------------------------------------

    @property
    def post_forward_mesh_info(self) -> MeshInfo | None:
        """Where the parameters live between forward and backward: ``mesh_info`` (reshard
        fully), ``None`` (stay unsharded) or a smaller mesh (``reshard_after_forward=<int>``).

        ``None`` resolves here, and only here: ``True``, except for the root.
        """
        value = self.settings.reshard_after_forward
        if value is None:
            value = not self.is_root
        if isinstance(value, bool):
            return self.mesh_info if value else None
        return self._int_post_forward_mesh

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
        return self.sharded_state is not ShardedState.SHARDED or self._all_gather is not None

    def _phase(self) -> str | None:
        """The step this group is in, for the debug mode's fingerprint; ``None`` when idle
        (a prefetch or a user's unshard: the debug mode then says forward or backward)."""
        state = self.training_state
        return None if state is TrainingState.IDLE else state.value

    def buffer_allocator(self, all_gather: bool):
        """The allocation policy of this group's all-gather (or reduce-scatter) buffers."""
        s, group = self.settings, self.mesh_info.shard_group
        return collectives.buffer_allocator(
            s.custom_all_gather if all_gather else s.custom_reduce_scatter,
            symmetric_group=group if all_gather and s.use_symm_mem else None,
            pool_group=group if s.allocate_from_process_group else None,
            device=self.device,
        )

    # ---- unshard -------------------------------------------------------------------

    def unshard(self, async_op: bool = False) -> None:
        """Start the all-gather of this group's shards (no-op if done or in flight).

        Copy-in runs on the copy-in stream, the collective on the all-gather stream. The
        caller later calls :meth:`wait_for_unshard` to make compute wait and to copy out.
        """
        if self._all_gather is not None or self.is_unsharded or not self.fsdp_params:
            return
        ctx = self.comm_ctx
        post_forward = self.sharded_state is ShardedState.SHARDED_POST_FORWARD
        info = self.post_forward_mesh_info if post_forward else self.mesh_info
        if post_forward:
            # The post-forward shards were written on compute after this group's forward.
            ctx.all_gather_copy_in.wait_event(
                self._post_forward_event, "copy_in_after_post_forward_shard", self.name
            )
        ctx.release_all_gather_output()
        with ctx.all_gather_copy_in.use():
            recorder.log("copy_in", ctx.all_gather_copy_in.name, "all_gather_input", self.name)
            flat = [i for p in self.fsdp_params for i in p.gather_inputs()]  # (+ offload H2D)
            if not self._inputs_agreed:  # (the pre hooks ran: their sizes are known)
                extensions.agree_on_inputs(self.fsdp_params, info.shard_group)
                self._inputs_agreed = True
            plan, inp, out = collectives.all_gather_copy_in(
                flat, info.shard_rank, self.device, self.buffer_allocator(all_gather=True)
            )
            recorder.name_buffer(out, "all-gather buffer", self.name)
            copy_in_done = ctx.all_gather_copy_in.record_event("copy_in_done", self.name)
        ctx.all_gather.wait_event(copy_in_done, "all_gather_after_copy_in", self.name)
        with ctx.all_gather.use():
            # Without streams (CPU, gloo) the host must not block: keep the Work and wait
            # later. With streams the side stream already makes the collective
            # asynchronous to compute.
            work = collectives.run_all_gather(
                out, inp, info.shard_group, not ctx.has_streams or async_op,
                self.settings.custom_all_gather, self.name, phase=self._phase(),
            )
            done = ctx.all_gather.record_event("all_gather_done", self.name)
        self._all_gather = _AllGather(out, done, work, plan, [i.layout for i in flat])

    def wait_for_unshard(self) -> None:
        """Make compute wait for the all-gather, copy out, and register unsharded params."""
        ag, self._all_gather = self._all_gather, None
        if ag is None:
            return
        ctx = self.comm_ctx
        compute = ctx.current()
        if ag.work is not None:
            wait_work(ag.work, compute, "all_gather_work", self.name)
        compute.wait_event(ag.event, "compute_after_all_gather", self.name)
        recorder.log("copy_out", compute.name, "unsharded_params", self.name)
        fulls = [t for p in self.fsdp_params for t in p.alloc_unsharded()]
        with torch.no_grad():
            guards = [torch.autograd._unsafe_preserve_version_counter(t) for t in fulls]
            for guard in guards:
                guard.__enter__()
            try:
                collectives.all_gather_copy_out(ag.out, ag.plan, ag.layouts, fulls)
            finally:
                for guard in reversed(guards):
                    guard.__exit__(None, None, None)
        copied = compute.record_event("copy_out_done", self.name)
        # The output buffer may be freed only once compute has read it (a deferred free).
        ctx.defer_all_gather_free(ag.out, copied, self.name)
        if self.sharded_state is ShardedState.SHARDED_POST_FORWARD:
            recorder.log("free", compute.name, "post_forward_shard", self.name)
        for p in self.fsdp_params:
            p.to_unsharded()
        self._become(ShardedState.UNSHARDED)

    def prefetch(self, direction: str) -> None:
        """Start this group's all-gather ahead of its use (``"forward"`` or
        ``"backward"``), unless it already is (or is about to be) unsharded then."""
        if direction == "forward" and self.training_state is not TrainingState.IDLE:
            return
        if direction == "backward" and (
            not self.settings.unshard_in_backward
            or self.training_state is TrainingState.PRE_BACKWARD
        ):
            return
        recorder.log("prefetch", "compute", direction, self.name)
        self.unshard(self.settings.unshard_async_op)

    # ---- reshard -------------------------------------------------------------------

    def reshard(self) -> None:
        """Register the sharded parameters and free every unsharded byte of this group."""
        if self._all_gather is not None:
            # A prefetched all-gather nobody used: complete it so ranks stay in step.
            self.wait_for_unshard()
        for p in self.fsdp_params:
            p.to_sharded()
        if self.sharded_state is not ShardedState.SHARDED:
            recorder.log("free", "compute", "unsharded_params", self.name)
        self._become(ShardedState.SHARDED)

    def reshard_post_forward(self) -> None:
        """Apply ``reshard_after_forward``: fully, to a smaller mesh, or not at all."""
        info = self.post_forward_mesh_info
        if info is None or not self.is_unsharded:
            return
        if info is self.mesh_info:
            self.reshard()
            return
        for p in self.fsdp_params:
            p.to_post_forward_shard(
                ShardLayout(p.layout.full_shape, p.layout.shard_dim, info.shard_size,
                            info.shard_rank)
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
        self.comm_ctx.forward_order.append(self)
        self.unshard(self.settings.unshard_async_op)
        self.wait_for_unshard()
        recorder.log("forward", "compute", "module_forward", self.name)
        return self._register_post_backward(args, kwargs)

    def prefetch_next_forward(self) -> None:
        """Implicit forward prefetch: start the all-gather of the group that ran forward
        right after this one in the previous iteration, so it overlaps with this group's
        forward compute. The first iteration has no order yet and prefetches nothing."""
        order = self.comm_ctx.last_forward_order
        if self in order:
            index = order.index(self)
            if index + 1 < len(order) and order[index + 1] is not self:
                order[index + 1].prefetch("forward")

    def post_forward(self) -> None:
        """Reshard per ``reshard_after_forward`` and remember the forward order."""
        self._post_forward_indices.append(len(self.comm_ctx.post_forward_order))
        self.comm_ctx.post_forward_order.append(self)
        self.reshard_post_forward()
        self.training_state = TrainingState.IDLE

    def _register_post_backward(self, args: tuple, kwargs: dict) -> tuple[tuple, dict]:
        if not torch.is_grad_enabled():
            return args, kwargs
        flat, spec = tree_flatten((args, kwargs))
        idx = [i for i, t in enumerate(flat) if torch.is_tensor(t) and t.requires_grad]
        if not idx:
            return args, kwargs
        outs = _PostBackward.apply(self, *(flat[i] for i in idx))
        for i, t in zip(idx, outs):
            flat[i] = t
        return tree_unflatten(flat, spec)

    # ---- backward ------------------------------------------------------------------

    def pre_backward(self, prefetch: bool) -> None:
        """Unshard before this group's backward and prefetch the previous group's."""
        if self.training_state is TrainingState.PRE_BACKWARD:
            return
        self.training_state = TrainingState.PRE_BACKWARD
        if self.settings.unshard_in_backward:
            self.unshard(self.settings.unshard_async_op)
            self.wait_for_unshard()
        recorder.log("backward", "compute", "module_backward", self.name)
        if prefetch and self._post_forward_indices:
            # Implicit backward prefetch: the group that ran forward just before this one.
            index = self._post_forward_indices.pop()
            if index > 0:
                self.comm_ctx.post_forward_order[index - 1].prefetch("backward")

    def post_backward(self) -> None:
        """Reduce this group's gradients (or keep accumulating them) and reshard."""
        self.training_state = TrainingState.POST_BACKWARD
        params = [p for p in self.fsdp_params if p.requires_grad]
        if not self.settings.reduce_scatter_unused_params:
            params = [p for p in params if p.has_unsharded_grad()]
        if self.settings.requires_gradient_sync and params:
            start_reduction(self, params)  # reshards once the gradients are packed
        elif self.settings.reshard_after_backward:
            self.reshard()

    # ---- end of iteration ----------------------------------------------------------

    def end_iteration(self) -> None:
        """Forget the forward order this iteration recorded (root's final callback)."""
        self._post_forward_indices.clear()

    def refresh_after_apply(self) -> None:
        """Re-derive cached facts after ``module._apply`` changed dtypes or devices."""
        self._check_extensions()

    def reset(self) -> None:
        """Forget per-iteration state after an aborted iteration (an exception).

        Any in-flight collective is completed first, so every rank leaves with the same
        collectives issued, then the group reshards and discards unreduced gradients.
        """
        ag, self._all_gather = self._all_gather, None
        if ag is not None:
            if ag.work is not None:
                wait_work(ag.work, self.comm_ctx.current(), "reset_all_gather_work", self.name)
            # Nobody copied it out, but the all-gather stream may still be writing it: free
            # it like a used output, once the copy-in stream waited for the all-gather.
            self.comm_ctx.defer_all_gather_free(ag.out, ag.event, self.name)
        for p in self.fsdp_params:
            p.clear_unsharded_grad()
        self.reshard()
        self._post_forward_indices.clear()
        self.partial_grads = {}
        self.training_state = TrainingState.IDLE


class _PostBackward(torch.autograd.Function):
    """Identity on the module's inputs whose backward runs the group's post-backward.

    Gradients w.r.t. a module's inputs are computed after the gradients w.r.t. its
    parameters (autograd runs AccumulateGrad nodes first), so this is the point where the
    group's gradients are complete. Modules whose inputs do not require grad (an
    embedding on token ids) are handled by the root's final callback instead.
    """

    @staticmethod
    def forward(ctx, group: FSDPParamGroup, *inputs: torch.Tensor):
        ctx.group = group
        return tuple(t.view_as(t) for t in inputs)

    @staticmethod
    def backward(ctx, *grads: torch.Tensor):
        ctx.group.post_backward()
        return (None, *grads)
