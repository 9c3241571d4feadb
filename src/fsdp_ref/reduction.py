"""A group's gradients after its backward: reduce-scatter, [all-reduce], divide, assign.

The reduction half of a group's iteration, in two steps a reduce-scatter's flight apart::

    start_reduction   (post-backward, compute)  pack the unsharded gradients into the
                      reduce-scatter input; reshard; launch the reduce-scatter SUM on
                      its stream; queue a Reduction
    Reduction.finish  (the next group's post-backward, or the final callback)  wait;
                      HSDP: add kept partial sums, all-reduce across replicas; divide;
                      assign (or accumulate) the sharded DTensor gradients

Sums are always ``SUM`` with an explicit division (:func:`divide_factors`): gloo emulates
reduce-scatter and its ``AVG`` has had silent correctness bugs. The queue of reductions in
flight lives in :class:`~fsdp_ref.streams.CommContext`; how many may be in flight is the
group's ``max_reductions_in_flight`` setting (1 by default, as upstream).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import torch

from . import collectives
from .streams import Event, recorder, wait_work

if TYPE_CHECKING:
    from .param import FSDPParam
    from .param_group import FSDPParamGroup

__all__ = ["Reduction", "divide_factors", "start_reduction"]


@dataclass
class Reduction:
    """A reduce-scatter in flight for one group.

    Attributes:
        group: the group whose gradients these are.
        rs_input: the packed gradients, kept alive until the collective has read them (a
            deferred free: dropped by :meth:`finish` after compute waited for ``event``).
        rs_output: this rank's reduced rows.
        work: the collective's ``Work`` when issued with ``async_op=True`` (no streams).
        event: recorded on the reduce-scatter stream after the collective.
        params: the parameters reduced, in the input's column order.
        plan: where each parameter's columns are in a row.
    """

    group: FSDPParamGroup
    rs_input: torch.Tensor
    rs_output: torch.Tensor
    work: Any
    event: Event
    params: list[FSDPParam]
    plan: collectives.BufferPlan

    def finish(self) -> None:
        """Wait, all-reduce (HSDP), divide, and assign the sharded gradients."""
        _finish(self)

    def abandon(self) -> None:
        """Drop the reduction after an exception: wait until the collective has read its
        input (so no rank is left in it and the input may be freed), assign nothing."""
        ctx = self.group.comm_ctx
        compute = ctx.current()
        if self.work is not None:
            wait_work(self.work, compute, "reset_reduction_work", self.group.name)
        compute.wait_event(self.event, "reset_after_reduction", self.group.name)


def start_reduction(group: FSDPParamGroup, params: list[FSDPParam]) -> None:
    """Pack ``params``' unsharded gradients and launch their reduce-scatter(s); reshards
    the group (per its setting) once the gradients are packed.

    A sum needs one dtype: gradients are reduced in their parameter's ``reduce_dtype``
    (the policy's, else its ``param_dtype``), one reduce-scatter per distinct dtype, in the
    order the dtypes first appear among ``params`` (one collective in the usual case).
    """
    ctx, settings = group.comm_ctx, group.settings
    compute = ctx.current()
    buckets: dict[torch.dtype, list[FSDPParam]] = {}
    for p in params:
        buckets.setdefault(p.reduce_dtype, []).append(p)
    grads = {dtype: [p.unsharded_grad() for p in ps] for dtype, ps in buckets.items()}
    # Bound the reduce-scatter inputs alive at once: finish the oldest reductions before
    # allocating this one's input, so their buffers are freed first.
    ctx.finish_reductions(keep=settings.max_reductions_in_flight - 1)
    # Copy-in on the compute stream: the gradients were written there, so they can be
    # dropped right after without another event.
    recorder.log("grad_ready", compute.name, "unsharded_grads", group.name)
    recorder.log("copy_in", compute.name, "reduce_scatter_input", group.name)
    allocate = group.buffer_allocator(all_gather=False)
    packed = {}
    with torch.no_grad():
        for dtype, ps in buckets.items():
            packed[dtype] = collectives.reduce_scatter_copy_in(
                grads[dtype], [p.layout for p in ps], dtype, group.device, allocate
            )
            recorder.name_buffer(packed[dtype][1], "reduce-scatter input", group.name)
    for p in params:
        p.clear_unsharded_grad()
    if settings.reshard_after_backward:
        group.reshard()
    ctx.reduce_scatter.wait_stream(compute, "reduce_scatter_after_grads")
    for dtype, (plan, rs_input) in packed.items():
        with ctx.reduce_scatter.use():
            pre, _ = divide_factors(group, dtype)
            if pre != 1.0:
                rs_input.div_(pre)
            out, work = collectives.reduce_scatter(
                rs_input,
                settings.reduce_scatter_group or group.mesh_info.shard_group,
                not ctx.has_streams,  # without streams the host must not block: wait later
                settings.custom_reduce_scatter,
                group.name,
                phase="post_backward",
            )
            recorder.name_buffer(out, "reduce-scatter output", group.name)
            done = ctx.reduce_scatter.record_event("reduce_scatter_done", group.name)
        ctx.pending_reductions.append(
            Reduction(group, rs_input, out, work, done, buckets[dtype], plan)
        )


def _finish(red: Reduction) -> None:
    group = red.group
    ctx, settings, name = group.comm_ctx, group.settings, group.name
    compute = ctx.current()
    recorder.log("reduce", ctx.reduce_scatter.name, "finish_reduction", name)
    if red.work is not None:
        wait_work(red.work, compute, "reduction_work", name)
    out = red.rs_output
    offload = any(p.offload_to_cpu for p in red.params)
    _, post = divide_factors(group, out.dtype)
    with ctx.reduce_scatter.use():
        if group.mesh_info.is_hsdp:
            partial = group.partial_grads.pop(out.dtype, None)  # one per reduce dtype
            if partial is not None:
                out = out + partial
            if not settings.requires_all_reduce:
                # Keep the partial sum for the backward that all-reduces.
                group.partial_grads[out.dtype] = out
                compute.wait_event(red.event, "compute_after_partial_reduce", name)
                recorder.log("free", compute.name, "reduce_scatter_input", name)
                return
            # (after the add above: wait for the stream as it is now, not red.event)
            ctx.all_reduce.wait_stream(ctx.reduce_scatter, "all_reduce_after_reduce_scatter")
            with ctx.all_reduce.use():
                collectives.all_reduce(out, group.mesh_info.replicate_group, name, "post_backward")
                if settings.all_reduce_hook is not None:
                    settings.all_reduce_hook(out)
                ar_done = ctx.all_reduce.record_event("all_reduce_done", name)
            ctx.reduce_scatter.wait_event(ar_done, "reduce_scatter_after_all_reduce", name)
        elif settings.all_reduce_hook is not None:
            settings.all_reduce_hook(out)
        if post != 1.0:
            out.div_(post)
        grads = [p.reduced_grad(red.plan.columns(out, i)) for i, p in enumerate(red.params)]
        if not offload:
            for p, grad in zip(red.params, grads):
                p.accumulate_sharded_grad(grad)
        finished = ctx.reduce_scatter.record_event("reduction_done", name)
    compute.wait_event(finished, "compute_after_reduction", name)
    if offload:
        # The optimizer steps on the host, and accumulating into a host gradient is a host
        # op: the host itself must wait for the device-to-host copies first.
        if ctx.has_streams:
            finished.synchronize("host_after_offload_copy", name)
        for p, grad in zip(red.params, grads):
            p.accumulate_sharded_grad(grad)
    recorder.log("free", compute.name, "reduce_scatter_input", name)


def divide_factors(group: FSDPParamGroup, dtype: torch.dtype) -> tuple[float, float]:
    """Factors to divide by before and after the SUM reduction.

    fp32 and wider: all after. fp16/bf16: split around the sum (sqrt each side) so that
    neither the summands nor the sum overflow or underflow.
    """
    total = group.settings.gradient_divide_factor
    if total is None:
        total = group.mesh_info.shard_size * group.mesh_info.replicate_size
    if dtype in (torch.float16, torch.bfloat16) and total > 1:
        pre = 2 ** math.floor(math.log2(math.sqrt(total)))
        return float(pre), total / pre
    return 1.0, float(total)
