"""A group's gradients after its backward: reduce-scatter, [all-reduce], divide, assign.

The reduction half of a group's iteration, the mirror of :mod:`fsdp_ref.all_gather`. Its
*when* is :meth:`fsdp_ref.param_group.FSDPParamGroup.post_backward`'s; its *what* is here,
in two halves a reduce-scatter's flight apart::

    FSDPParamGroup.post_backward (compute)
        Reducer.take_grads    the unsharded gradients, by reduce dtype
                              -- the group reshards --
        ReductionQueue.finish the oldest reductions in flight complete (below), so that
                              at most max_reductions_in_flight inputs are alive
        Reducer.pack          copy the gradients into the reduce-scatter input, one
                              buffer per reduce dtype; drop the gradients
        Reducer.launch        reduce-scatter SUM on its stream; queue a Reduction
    Reducer.finish (a later group's post-backward, or the end of backward)
        wait                  compute (the host, on the host-ordered path) waits;
                              divide where torch's reduce-scatter would average
        _across_replicas      HSDP: add a kept partial sum, all-reduce, run the hook (or
                              keep the sum: set_requires_all_reduce(False)); plain: the hook
        (divide)              by what the division leaves for after the hook
        _assign               each shard into its parameter's .grad, then that
                              parameter's post-accumulate-grad hooks

These are the sections of torch 2.13's ``foreach_reduce``, which issues them all in the
group's post-backward on the reduce-scatter stream. fsdp_ref finishes a reduction at the
next group's post-backward instead: the host-ordered path, where the host itself waits,
never blocks inside a running reduce-scatter.

A :class:`Reducer` belongs to one group and owns what outlives a backward: the partial
sums that HSDP keeps while ``set_requires_all_reduce(False)``. The reductions in flight of
every group under a root wait in one :class:`ReductionQueue`, oldest first.

Collectives are always ``SUM``; the division by the data-parallel size happens where
torch 2.13's collectives would divide (:mod:`fsdp_ref.division`), so the numbers, and what
an all-reduce hook sees, are torch's.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch

from . import collectives
from .buffer_plan import BufferPlan
from .division import Division, division
from .group_state import GroupSettings
from .mesh import MeshInfo
from .param import FSDPParam
from .recorder import recorder
from .streams import CommStreams, Event, Stream, wait_work

__all__ = ["Packed", "Reducer", "Reduction", "ReductionQueue"]


@dataclass
class Packed:
    """Gradients of one reduce dtype, packed and waiting for their reduce-scatter."""

    dtype: torch.dtype
    params: list[FSDPParam]
    plan: BufferPlan
    rs_input: torch.Tensor


@dataclass
class Reduction:
    """A reduce-scatter in flight for one group.

    Attributes:
        reducer: the group's reducer, which finishes it.
        streams: the streams it was issued on.
        rs_input: the packed gradients, kept alive until the collective has read them (a
            deferred free: dropped by :meth:`finish` after compute waited for ``event``).
        rs_output: this rank's reduced rows.
        work: the collective's ``Work`` when issued with ``async_op=True`` (no streams).
        event: recorded on the reduce-scatter stream after the collective.
        params: the parameters reduced, in the input's column order.
        plan: where each parameter's columns are in a row.
    """

    reducer: Reducer
    streams: CommStreams
    rs_input: torch.Tensor
    rs_output: torch.Tensor
    work: Any
    event: Event
    params: list[FSDPParam]
    plan: BufferPlan

    def finish(self) -> None:
        """Wait, all-reduce (HSDP), divide, and assign the sharded gradients."""
        self.reducer.finish(self)

    def abandon(self) -> None:
        """Drop the reduction after an exception: wait until the collective has read its
        input (so no rank is left in it and the input may be freed), assign nothing."""
        name = self.reducer.name
        compute = self.streams.current()
        if self.work is not None:
            wait_work(self.work, compute, "reset_reduction_work", name)
        compute.wait_event(self.event, "reset_after_reduction", name)


class ReductionQueue:
    """The reductions in flight under one root, oldest first."""

    def __init__(self) -> None:
        self.pending: list[Reduction] = []

    def push(self, reduction: Reduction) -> None:
        """Queue a launched reduction."""
        self.pending.append(reduction)

    def finish(self, keep: int = 0) -> None:
        """Finish the oldest reductions until at most ``keep`` are in flight."""
        while len(self.pending) > keep:
            self.pending.pop(0).finish()

    def finish_completed(self) -> None:
        """Finish, oldest first, the reductions whose collective has already completed.

        Only the host-ordered path (:class:`fsdp_ref.ordering.HostOrdered`, whose
        ``finishes_completed_early`` says to call this) launches reductions with a ``Work`` to ask; with device streams completion
        is an event, and they wait for :meth:`finish`. Called before a module's backward,
        and again after each backward prefetch (for which the host waited,
        :meth:`fsdp_ref.all_gather.Gatherer.complete`): a reduce-scatter that completed
        meanwhile frees its input (and gloo its own copy of it) now, not after the next
        module's backward.
        """
        while self.pending and self.pending[0].work is not None \
                and self.pending[0].work.is_completed():
            self.pending.pop(0).finish()

    def abandon(self) -> None:
        """After an exception: complete every reduce-scatter without using it."""
        while self.pending:
            self.pending.pop(0).abandon()


class Reducer:
    """One group's gradient reductions.

    Args:
        name: the group's name (for logs; the root renames groups at its lazy init).
        mesh_info: the mesh gradients are reduced over.
        settings: the group's settings (hooks, divide factor, all-reduce on or off).
        device: where the reduce-scatter buffers live.

    Attributes:
        partial: HSDP sums kept while the all-reduce is off, one per reduce dtype.
    """

    def __init__(self, name: str, mesh_info: MeshInfo, settings: GroupSettings,
                 device: torch.device) -> None:
        self.name = name
        self.mesh_info = mesh_info
        self.settings = settings
        self.device = device
        self.partial: dict[torch.dtype, torch.Tensor] = {}

    def division(self, dtype: torch.dtype) -> Division:
        """Where a reduction in ``dtype`` divides (:func:`fsdp_ref.division.division`)."""
        settings, info = self.settings, self.mesh_info
        group = settings.reduce_scatter_group or info.shard_group
        return division(dtype, 1 if group is None else group.size(),
                        info.replicate_size if info.is_hsdp else 1,
                        settings.gradient_divide_factor, settings.force_sum_reduction)

    def _allocator(self) -> Callable | None:
        group = self.mesh_info.shard_group
        return collectives.buffer_allocator(
            self.settings.custom_reduce_scatter,
            pool_group=group if self.settings.allocate_from_process_group else None,
            device=self.device,
        )

    def take_grads(self, params: list[FSDPParam]) -> dict[torch.dtype, tuple[list, list]]:
        """``params``' unsharded gradients, by reduce dtype: ``{dtype: (params, grads)}``,
        taken before the group reshards (a tensor-parallel gradient is redistributed here,
        once).

        A sum needs one dtype: gradients are reduced in their parameter's ``reduce_dtype``
        (the policy's, else its ``param_dtype``), one reduce-scatter per distinct dtype, in
        the order the dtypes first appear among ``params`` (one in the usual case).
        """
        buckets: dict[torch.dtype, tuple[list, list]] = {}
        for p in params:
            ps, grads = buckets.setdefault(p.reduce_dtype, ([], []))
            ps.append(p)
            grads.append(p.unsharded_grad())
        return buckets

    def pack(self, taken: dict[torch.dtype, tuple[list, list]],
             streams: CommStreams) -> list[Packed]:
        """Pack the gradients :meth:`take_grads` took into reduce-scatter inputs, on
        compute, and drop them."""
        compute = streams.current()
        # Copy-in on the compute stream: the gradients were written there, so they can be
        # dropped right after without another event.
        recorder.log("grad_ready", compute.name, "unsharded_grads", self.name)
        recorder.log("copy_in", compute.name, "reduce_scatter_input", self.name)
        allocate = self._allocator()
        packed = []
        with torch.no_grad():
            for dtype, (ps, grads) in taken.items():
                plan, rs_input = collectives.reduce_scatter_copy_in(
                    grads, [p.layout for p in ps], dtype, self.device, allocate
                )
                recorder.name_buffer(rs_input, "reduce-scatter input", self.name)
                packed.append(Packed(dtype, ps, plan, rs_input))
        for ps, _ in taken.values():
            for p in ps:
                p.clear_unsharded_grad()
        return packed

    def launch(self, packed: list[Packed], streams: CommStreams, queue: ReductionQueue) -> None:
        """Launch the reduce-scatter SUM of each packed input and queue its reduction."""
        streams.reduce_scatter.wait_stream(streams.current(), "reduce_scatter_after_grads")
        for item in packed:
            with streams.reduce_scatter.use():
                div = self.division(item.dtype)
                if div.pre != 1.0:
                    item.rs_input.div_(div.pre)
                if div.premul is not None:
                    item.rs_input.mul_(div.premul)
                out, work = collectives.reduce_scatter(
                    item.rs_input,
                    self.settings.reduce_scatter_group or self.mesh_info.shard_group,
                    streams.ordering.launch_async(False),
                    self.settings.custom_reduce_scatter,
                    self.name,
                    phase="post_backward",
                )
                recorder.name_buffer(out, "reduce-scatter output", self.name)
                done = streams.reduce_scatter.record_event("reduce_scatter_done", self.name)
            queue.push(Reduction(self, streams, item.rs_input, out, work, done, item.params,
                                 item.plan))

    def finish(self, red: Reduction) -> None:
        """Complete ``red``, in the steps of torch's ``foreach_reduce`` after its
        reduce-scatter: wait; reduce across replicas (HSDP) or run the all-reduce hook;
        divide; assign each parameter's shard to its ``.grad`` and run its
        post-accumulate-grad hooks. All but the host's own work run on the reduce-scatter
        stream, which compute then waits for."""
        streams, name = red.streams, self.name
        compute = streams.current()
        recorder.log("reduce", streams.reduce_scatter.name, "finish_reduction", name)
        if red.work is not None:  # (the host-ordered path's collectives)
            wait_work(red.work, compute, "reduction_work", name)
        offload = any(p.offload_to_cpu for p in red.params)
        div = self.division(red.rs_output.dtype)
        with streams.reduce_scatter.use():
            if div.after_reduce_scatter != 1.0:  # (torch's averaging reduce-scatter)
                red.rs_output.div_(div.after_reduce_scatter)
            out = self._across_replicas(red, compute, div)
            if out is None:  # a partial sum kept for a later backward
                return
            if div.post != 1.0:
                out.div_(div.post)
            shards = [p.reduced_grad(out, off) for off, p in zip(red.plan.offsets, red.params)]
            if not offload:
                self._assign(red.params, shards)
            finished = streams.reduce_scatter.record_event("reduction_done", name)
        compute.wait_event(finished, "compute_after_reduction", name)
        if offload:
            # The optimizer steps on the host, and accumulating into a host gradient is a
            # host op: the host itself waits for the device-to-host copies first.
            if streams.ordering.host_waits_for_copies:
                finished.synchronize("host_after_offload_copy", name)
            self._assign(red.params, shards)
        recorder.log("free", compute.name, "reduce_scatter_input", name)

    def _across_replicas(self, red: Reduction, compute: Stream,
                         div: Division) -> torch.Tensor | None:
        """The reduce-scatter output reduced across replicas: HSDP adds a kept partial
        sum and all-reduces (averaging as torch's ``AVG`` would, then the hook); with
        ``set_requires_all_reduce(False)`` it keeps the sum for later and returns
        ``None``. Plain FSDP runs the hook only."""
        streams, settings, name = red.streams, self.settings, self.name
        out = red.rs_output
        if not self.mesh_info.is_hsdp:
            if settings.all_reduce_hook is not None:
                self._run_hook(out, streams)
            return out
        partial = self.partial.pop(out.dtype, None)  # one per reduce dtype
        if partial is not None:
            out = out + partial
        if not settings.requires_all_reduce:
            self.partial[out.dtype] = out  # for the backward that all-reduces
            compute.wait_event(red.event, "compute_after_partial_reduce", name)
            recorder.log("free", compute.name, "reduce_scatter_input", name)
            return None
        # (after the add above: wait for the stream as it is now, not red.event)
        streams.all_reduce.wait_stream(streams.reduce_scatter, "all_reduce_after_reduce_scatter")
        with streams.all_reduce.use():
            collectives.all_reduce(out, self.mesh_info.replicate_group, name, "post_backward")
            if div.after_all_reduce != 1.0:
                out.div_(div.after_all_reduce)
            if settings.all_reduce_hook is not None:
                settings.all_reduce_hook(out)
            ar_done = streams.all_reduce.record_event("all_reduce_done", name)
        streams.reduce_scatter.wait_event(ar_done, "reduce_scatter_after_all_reduce", name)
        return out

    @staticmethod
    def _assign(params: list[FSDPParam], shards: list[torch.Tensor]) -> None:
        """Each parameter's shard (:meth:`~fsdp_ref.param.FSDPParam.reduced_grad`) into
        its sharded ``.grad`` (set, or added), then that parameter's post-accumulate-grad
        hooks, parameter by parameter as torch does
        (:meth:`~fsdp_ref.param.FSDPParam.accumulate_sharded_grad`)."""
        for p, shard in zip(params, shards):
            p.accumulate_sharded_grad(shard)

    def _run_hook(self, out: torch.Tensor, streams: CommStreams) -> None:
        """The all-reduce hook of plain FSDP, on the user's stream when one was given
        (and device streams order it), between two waits on the reduce-scatter stream."""
        hook = self.settings.all_reduce_hook
        raw = streams.ordering.user_stream(self.settings.all_reduce_hook_stream)
        if raw is None:
            hook(out)
            return
        stream = Stream("all_reduce_hook", streams.backend.adopt(raw), streams.backend)
        stream.wait_stream(streams.reduce_scatter, "all_reduce_hook_after_reduce_scatter")
        with stream.use():
            hook(out)
            done = stream.record_event("all_reduce_hook_done", self.name)
        streams.reduce_scatter.wait_event(done, "reduce_scatter_after_all_reduce_hook", self.name)
