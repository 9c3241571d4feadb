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
    post-backward    reduce-scatter copy-in (compute stream) ; reshard ;
                     reduce-scatter SUM (side stream) ; [HSDP: all-reduce] ; divide
    final callback   (root) wait for every reduction, assign the sharded DTensor grads

State lives here and in :class:`~fsdp_ref.streams.CommContext` only: the training state,
the in-flight all-gather, the pending reductions. :mod:`fsdp_ref.state` decides *when*
each transition runs; this module decides *what* it does.
"""

from __future__ import annotations

import enum
import math
from dataclasses import dataclass
from typing import Any

import torch
import torch.nn as nn
from torch.utils._pytree import tree_flatten, tree_unflatten

from . import collectives as C
from .layout import ShardLayout
from .mesh import MeshInfo
from .param import FSDPParam
from .streams import CommContext, Event, recorder, wait_work

__all__ = ["FSDPParamGroup", "TrainingState"]


class TrainingState(enum.Enum):
    """Where a group is in the iteration."""

    IDLE = "idle"
    FORWARD = "forward"
    PRE_BACKWARD = "pre_backward"
    POST_BACKWARD = "post_backward"


@dataclass
class _AllGather:
    """An all-gather in flight: its output buffer, how to wait for it, what it holds."""

    out: torch.Tensor
    event: Event
    work: Any
    layouts: list[ShardLayout]


@dataclass
class _Reduction:
    """A reduce-scatter in flight for one group, finished by :meth:`FSDPParamGroup.finish`."""

    group: FSDPParamGroup
    rs_input: torch.Tensor
    rs_output: torch.Tensor
    work: Any
    event: Event
    params: list[FSDPParam]


class FSDPParamGroup:
    """The parameters of one ``fully_shard`` call and the transitions they go through.

    Args:
        fsdp_params: the group's managed parameters.
        modules: the module(s) passed to ``fully_shard``.
        mesh_info: groups to shard (and replicate) over.
        post_forward_mesh_info: where parameters live between forward and backward:
            ``mesh_info`` (reshard fully), ``None`` (stay unsharded) or a smaller mesh.
        device: compute device.
        label: a readable name for logs and errors (the module's class or path).
    """

    def __init__(
        self,
        fsdp_params: list[FSDPParam],
        modules: list[nn.Module],
        mesh_info: MeshInfo,
        post_forward_mesh_info: MeshInfo | None,
        device: torch.device,
        label: str,
    ) -> None:
        self.fsdp_params = fsdp_params
        self.modules = modules
        self.mesh_info = mesh_info
        self.post_forward_mesh_info = post_forward_mesh_info
        self.device = device
        self.label = label
        self.comm_ctx = CommContext()
        self.training_state = TrainingState.IDLE
        self._check_uniform_dtypes()
        # Settings changed through FSDPModule.set_* methods.
        self.reshard_after_backward = True
        self.requires_gradient_sync = True
        self.requires_all_reduce = True
        self.gradient_divide_factor: float | None = None
        self.reduce_scatter_unused_params = False
        self.unshard_in_backward = True
        self.custom_all_gather = None
        self.custom_reduce_scatter = None
        self.all_reduce_hook = None
        self.max_reductions_in_flight = 1
        self.reduce_scatter_group = None
        self.allocate_from_process_group = False
        self.use_symm_mem = False
        self.unshard_async_op = False
        # Per-iteration state.
        self._all_gather: _AllGather | None = None
        self._post_forward_indices: list[int] = []
        self._partial_reduce: torch.Tensor | None = None
        self._is_unsharded = False
        self._is_post_forward_sharded = False
        self._post_forward_event: Event | None = None

    def _check_uniform_dtypes(self) -> None:
        dtypes = {p.param_dtype for p in self.fsdp_params}
        if len(dtypes) > 1:
            names = ", ".join(f"{p.fqn or '?'}:{p.param_dtype}" for p in self.fsdp_params[:6])
            raise ValueError(
                f"fully_shard group {self.label} mixes parameter dtypes {sorted(map(str, dtypes))} "
                f"({names}); one all-gather needs one dtype. Pass "
                "mp_policy=MixedPrecisionPolicy(param_dtype=...) to gather in one dtype, or "
                "shard the differently typed submodules in their own fully_shard calls"
            )

    # ---- unshard -------------------------------------------------------------------

    @property
    def is_unsharded(self) -> bool:
        """Whether the unsharded parameters are registered and hold data."""
        return self._is_unsharded

    @property
    def holds_gathered_data(self) -> bool:
        """Whether anything beyond the shards is alive: unsharded parameters, an
        all-gather in flight, or a post-forward shard over a smaller mesh."""
        return self._is_unsharded or self._all_gather is not None or self._is_post_forward_sharded

    def unshard(self, async_op: bool = False) -> None:
        """Start the all-gather of this group's shards (no-op if done or in flight).

        Copy-in runs on the copy-in stream, the collective on the all-gather stream. The
        caller later calls :meth:`wait_for_unshard` to make compute wait and to copy out.
        """
        if self._all_gather is not None or self._is_unsharded or not self.fsdp_params:
            return
        ctx = self.comm_ctx
        post_forward = self._is_post_forward_sharded
        info = self.post_forward_mesh_info if post_forward else self.mesh_info
        if post_forward:
            # The post-forward shards were written on compute after this group's forward.
            ctx.all_gather_copy_in.wait_event(
                self._post_forward_event, "copy_in_after_post_forward_shard", self.label
            )
        ctx.release_all_gather_output()
        dtype = self.fsdp_params[0].param_dtype
        allocate = self._allocator(self.custom_all_gather, symmetric=self.use_symm_mem)
        with ctx.all_gather_copy_in.use():
            recorder.log("copy_in", ctx.all_gather_copy_in.name, "all_gather_input", self.label)
            if post_forward:
                layouts = [p.post_forward_layout for p in self.fsdp_params]
                sources = [p.post_forward_shard for p in self.fsdp_params]
            else:  # (offloaded shards are copied to the device here, on this stream)
                layouts = [p.layout for p in self.fsdp_params]
                sources = [p.all_gather_input() for p in self.fsdp_params]
            inp, out = C.all_gather_copy_in(
                sources, layouts, info.shard_rank, dtype, self.device, allocate
            )
            recorder.name_buffer(out, "all-gather buffer", self.label)
            copy_in_done = ctx.all_gather_copy_in.record_event("copy_in_done", self.label)
        ctx.all_gather.wait_event(copy_in_done, "all_gather_after_copy_in", self.label)
        with ctx.all_gather.use():
            # Without streams (CPU, gloo) the host must not block: keep the Work and wait
            # later. With streams the side stream already makes the collective
            # asynchronous to compute.
            use_work = not ctx.has_streams or async_op
            work = C.run_all_gather(
                out, inp, info.shard_group, use_work, self.custom_all_gather, self.label
            )
            done = ctx.all_gather.record_event("all_gather_done", self.label)
        self._all_gather = _AllGather(out, done, work, layouts)

    def wait_for_unshard(self) -> None:
        """Make compute wait for the all-gather, copy out, and register unsharded params."""
        ag = self._all_gather
        if ag is None:
            return
        self._all_gather = None
        ctx = self.comm_ctx
        compute = ctx.current()
        if ag.work is not None:
            wait_work(ag.work, compute, "all_gather_work", self.label)
        compute.wait_event(ag.event, "compute_after_all_gather", self.label)
        recorder.log("copy_out", compute.name, "unsharded_params", self.label)
        fulls = [p.alloc_unsharded() for p in self.fsdp_params]
        with torch.no_grad():
            guards = [torch.autograd._unsafe_preserve_version_counter(t) for t in fulls]
            for guard in guards:
                guard.__enter__()
            try:
                C.all_gather_copy_out(ag.out, ag.layouts, fulls)
            finally:
                for guard in reversed(guards):
                    guard.__exit__(None, None, None)
        copied = compute.record_event("copy_out_done", self.label)
        # The output buffer may be freed only once compute has read it (a deferred free).
        ctx.defer_all_gather_free(ag.out, copied, self.label)
        if self._is_post_forward_sharded:
            recorder.log("free", compute.name, "post_forward_shard", self.label)
        for p in self.fsdp_params:
            p.to_unsharded()
        self._is_unsharded = True
        self._is_post_forward_sharded = False

    # ---- reshard -------------------------------------------------------------------

    def reshard(self) -> None:
        """Register the sharded parameters and free every unsharded byte of this group."""
        if self._all_gather is not None:
            # A prefetched all-gather nobody used: complete it so ranks stay in step.
            self.wait_for_unshard()
        for p in self.fsdp_params:
            p.to_sharded()
        if self._is_unsharded or self._is_post_forward_sharded:
            recorder.log("free", "compute", "unsharded_params", self.label)
        self._is_unsharded = False
        self._is_post_forward_sharded = False

    def reshard_post_forward(self) -> None:
        """Apply ``reshard_after_forward``: fully, to a smaller mesh, or not at all."""
        info = self.post_forward_mesh_info
        if info is None or not self._is_unsharded:
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
            "post_forward_shard_done", self.label
        )
        recorder.log("free", "compute", "unsharded_params", self.label)
        self._is_unsharded = False
        self._is_post_forward_sharded = True

    # ---- forward -------------------------------------------------------------------

    def pre_forward(self, args: tuple, kwargs: dict) -> tuple[tuple, dict]:
        """Unshard for forward and hook the post-backward onto the inputs."""
        self.training_state = TrainingState.FORWARD
        self.comm_ctx.forward_order.append(self)
        self.unshard(self.unshard_async_op)
        self.wait_for_unshard()
        recorder.log("forward", "compute", "module_forward", self.label)
        return self._register_post_backward(args, kwargs)

    def prefetch_next_forward(self) -> None:
        """Implicit forward prefetch: start the all-gather of the group that ran forward
        right after this one in the previous iteration, so it overlaps with this group's
        forward compute. The first iteration has no order yet and prefetches nothing."""
        order = self.comm_ctx.last_forward_order
        try:
            index = order.index(self)
        except ValueError:
            return
        if index + 1 < len(order):
            target = order[index + 1]
            if target is not self and target.training_state == TrainingState.IDLE:
                recorder.log("prefetch", "compute", "forward", target.label)
                target.unshard(target.unshard_async_op)

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
        if self.training_state == TrainingState.PRE_BACKWARD:
            return
        self.training_state = TrainingState.PRE_BACKWARD
        if self.unshard_in_backward:
            self.unshard(self.unshard_async_op)
            self.wait_for_unshard()
        recorder.log("backward", "compute", "module_backward", self.label)
        if prefetch:
            self._prefetch_previous()

    def _prefetch_previous(self) -> None:
        """Implicit backward prefetch: start the all-gather of the group that ran forward
        just before this one, so it overlaps with this group's backward compute."""
        if not self._post_forward_indices:
            return
        index = self._post_forward_indices.pop()
        if index > 0:
            target = self.comm_ctx.post_forward_order[index - 1]
            if target.training_state != TrainingState.PRE_BACKWARD and target.unshard_in_backward:
                recorder.log("prefetch", "compute", "backward", target.label)
                target.unshard()

    def post_backward(self) -> None:
        """Reduce this group's gradients (or keep accumulating them) and reshard."""
        self.training_state = TrainingState.POST_BACKWARD
        if not self.requires_gradient_sync:
            if self.reshard_after_backward:
                self.reshard()
            return
        params = [p for p in self.fsdp_params if p.requires_grad]
        if not self.reduce_scatter_unused_params:
            params = [p for p in params if p.has_unsharded_grad()]
        grads = [p.unsharded_grad() for p in params]
        if not params:
            if self.reshard_after_backward:
                self.reshard()
            return
        ctx = self.comm_ctx
        compute = ctx.current()
        reduce_dtype = params[0].reduce_dtype
        # Bound the reduce-scatter inputs alive at once (1 by default, as upstream): finish
        # the oldest reduction before allocating this one's input, so its buffer is freed
        # first. More in flight (set_reduce_scatter_max_input_buffers) trades memory for
        # overlap.
        while len(ctx.pending_reductions) >= self.max_reductions_in_flight:
            previous = ctx.pending_reductions.pop(0)
            previous.group.finish(previous)
        # Copy-in on the compute stream: the gradients were written there, so they can be
        # dropped right after without another event.
        recorder.log("grad_ready", compute.name, "unsharded_grads", self.label)
        recorder.log("copy_in", compute.name, "reduce_scatter_input", self.label)
        allocate = self._allocator(self.custom_reduce_scatter, symmetric=False)
        with torch.no_grad():
            rs_input = C.reduce_scatter_copy_in(
                grads, [p.layout for p in params], reduce_dtype, self.device, allocate
            )
        recorder.name_buffer(rs_input, "reduce-scatter input", self.label)
        for p in params:
            p.clear_unsharded_grad()
        if self.reshard_after_backward:
            self.reshard()
        ctx.reduce_scatter.wait_stream(compute, "reduce_scatter_after_grads")
        use_work = not ctx.has_streams
        with ctx.reduce_scatter.use():
            pre, _ = self._divide_factors(reduce_dtype)
            if pre != 1.0:
                rs_input.div_(pre)
            out, work = C.reduce_scatter(
                rs_input,
                self.reduce_scatter_group or self.mesh_info.shard_group,
                use_work,
                self.custom_reduce_scatter,
                self.label,
            )
            recorder.name_buffer(out, "reduce-scatter output", self.label)
            done = ctx.reduce_scatter.record_event("reduce_scatter_done", self.label)
        ctx.pending_reductions.append(_Reduction(self, rs_input, out, work, done, params))

    def finish(self, red: _Reduction) -> None:
        """Complete a reduction: wait, divide, all-reduce (HSDP), assign sharded grads."""
        ctx = self.comm_ctx
        compute = ctx.current()
        recorder.log("reduce", ctx.reduce_scatter.name, "finish_reduction", self.label)
        if red.work is not None:
            wait_work(red.work, compute, "reduction_work", self.label)
        out = red.rs_output
        offload = any(p.offload_to_cpu for p in red.params)
        _, post = self._divide_factors(out.dtype)
        with ctx.reduce_scatter.use():
            if self.mesh_info.is_hsdp:
                if not self.requires_all_reduce:
                    self._partial_reduce = (
                        out if self._partial_reduce is None else self._partial_reduce + out
                    )
                    compute.wait_event(red.event, "compute_after_partial_reduce", self.label)
                    recorder.log("free", compute.name, "reduce_scatter_input", self.label)
                    return
                if self._partial_reduce is not None:
                    out = out + self._partial_reduce
                    self._partial_reduce = None
                # (after the add above: wait for the stream as it is now, not red.event)
                ctx.all_reduce.wait_stream(ctx.reduce_scatter, "all_reduce_after_reduce_scatter")
                with ctx.all_reduce.use():
                    C.all_reduce(out, self.mesh_info.replicate_group, self.label)
                    if self.all_reduce_hook is not None:
                        self.all_reduce_hook(out)
                    ar_done = ctx.all_reduce.record_event("all_reduce_done", self.label)
                ctx.reduce_scatter.wait_event(ar_done, "reduce_scatter_after_all_reduce", self.label)
            elif self.all_reduce_hook is not None:
                self.all_reduce_hook(out)
            if post != 1.0:
                out.div_(post)
            offsets, _ = C.group_offsets([p.layout for p in red.params])
            grads = [p.reduced_grad(out.narrow(0, off, p.layout.padded_shard_numel))
                     for off, p in zip(offsets, red.params)]
            if not offload:
                for p, grad in zip(red.params, grads):
                    p.accumulate_sharded_grad(grad)
            finished = ctx.reduce_scatter.record_event("reduction_done", self.label)
        compute.wait_event(finished, "compute_after_reduction", self.label)
        if offload:
            # The optimizer steps on the host, and accumulating into a host gradient is a
            # host op: the host itself must wait for the device-to-host copies first.
            if ctx.has_streams:
                finished.synchronize("host_after_offload_copy", self.label)
            for p, grad in zip(red.params, grads):
                p.accumulate_sharded_grad(grad)
        recorder.log("free", compute.name, "reduce_scatter_input", self.label)

    def _allocator(self, comm, symmetric: bool):
        """How collective buffers are allocated: a custom comm's ``allocate``, the NCCL
        process group's memory pool, symmetric memory, or plain ``torch.empty``."""
        if comm is not None:
            return lambda numel, dt, dev: comm.allocate((numel,), dtype=dt, device=dev)
        if symmetric:
            from torch.distributed import _symmetric_memory as symm_mem

            group = self.mesh_info.shard_group

            def symmetric_alloc(numel, dt, dev):
                buf = symm_mem.empty(numel, dtype=dt, device=dev)
                symm_mem.rendezvous(buf, group=group)
                return buf

            return symmetric_alloc
        if self.allocate_from_process_group:
            group = self.mesh_info.shard_group
            backend = group._get_backend(self.device)
            pool = torch.cuda.MemPool(backend.mem_allocator)

            def pool_alloc(numel, dt, dev):
                with torch.cuda.use_mem_pool(pool):
                    return torch.empty(numel, dtype=dt, device=dev)

            return pool_alloc
        return None

    def refresh_after_apply(self) -> None:
        """Re-derive cached facts after ``module._apply`` changed dtypes or devices."""
        self._check_uniform_dtypes()
        self._is_unsharded = False
        self._is_post_forward_sharded = False

    def _divide_factors(self, dtype: torch.dtype) -> tuple[float, float]:
        """Factors to divide by before and after the SUM reduction.

        fp32 and wider: all after. fp16/bf16: split around the sum (sqrt each side) so
        that neither the summands nor the sum overflow or underflow.
        """
        total = self.gradient_divide_factor
        if total is None:
            total = self.mesh_info.shard_size * self.mesh_info.replicate_size
        if dtype in (torch.float16, torch.bfloat16) and total > 1:
            pre = 2 ** math.floor(math.log2(math.sqrt(total)))
            return float(pre), total / pre
        return 1.0, float(total)

    # ---- end of iteration ----------------------------------------------------------

    def reset(self) -> None:
        """Forget per-iteration state after an aborted iteration (an exception).

        Any in-flight collective is completed first, so every rank leaves with the same
        collectives issued, then the group reshards and discards unreduced gradients.
        """
        ag, self._all_gather = self._all_gather, None
        if ag is not None:
            if ag.work is not None:
                wait_work(ag.work, self.comm_ctx.current(), "reset_all_gather_work", self.label)
            # Nobody copied it out, but the all-gather stream may still be writing it: free
            # it like a used output, once the copy-in stream waited for the all-gather.
            self.comm_ctx.defer_all_gather_free(ag.out, ag.event, self.label)
        for p in self.fsdp_params:
            p.clear_unsharded_grad()
        self.reshard()
        self._post_forward_indices.clear()
        self._partial_reduce = None
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

