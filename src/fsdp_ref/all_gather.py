"""A group's all-gather: copy-in, collective, wait, copy-out, and the deferred free.

The unshard half of a group's iteration, the mirror of :mod:`fsdp_ref.reduce`::

    Gatherer.start    (pre-forward, pre-backward or a prefetch)
        copy-in stream     [int reshard: wait for the post-forward shards]
                           drop the previous output (DeferredOutput.release)
                           collect the inputs (shards, extension inputs, offload copies)
                           pack them into one flat buffer: row `rank` of the output
        all-gather stream  wait for the copy-in; all-gather; record `done`
    Gatherer.finish   (the group's wait_for_unshard)
        compute stream     wait for `done` (host-ordered: the Work)
                           copy each parameter's rows out into its unsharded tensor
                           forward: keep the output until the next copy-in
                           (DeferredOutput.hold); otherwise free it now

On a one-rank shard group nothing is gathered and no output is allocated: the copy-out
reads the shards themselves (as torch 2.13 does). The root frees the last output held at
the end of its forward.

A :class:`Gatherer` belongs to one group and owns what lives between those two calls:
the all-gather in flight, the group's cached inputs and copy-out views, and whether the
ranks agreed on extension input sizes. The one buffer shared by every group under a root,
the last all-gather output whose free waits for its copy-out, is the root's
:class:`DeferredOutput`. The group (:mod:`fsdp_ref.param_group`) decides *when*; this
module says *how*, on the streams it is given.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch

from . import collectives, extensions
from .buffer_plan import BufferPlan, GatherInput, plan_gather
from .group_state import GroupSettings
from .layout import ShardLayout
from .mesh import MeshInfo
from .param import FSDPParam
from .recorder import recorder
from .streams import CommStreams, Event, Stream, wait_work

__all__ = ["DeferredOutput", "GatherInFlight", "Gatherer", "keep_versions"]


@dataclass
class GatherInFlight:
    """An all-gather issued and not yet copied out.

    Attributes:
        out: the output buffer (every rank's row); ``None`` on a one-rank mesh, where
            nothing is gathered and the copy-out reads ``inputs`` directly.
        event: recorded on the all-gather stream after the collective (``None``: none).
        work: the collective's ``Work`` when issued with ``async_op=True``, else ``None``.
        plan: where each input sits in a row.
        layouts: each input's shard layout, for the copy-out.
        inputs: on a one-rank mesh, the inputs themselves (else ``None``).
    """

    out: torch.Tensor | None
    event: Event | None
    work: Any
    plan: BufferPlan
    layouts: list[ShardLayout]
    inputs: list[GatherInput] | None = None


class DeferredOutput:
    """The previous all-gather output, kept until compute has copied out of it.

    One per root, shared by its groups (they all allocate on the copy-in stream). In
    forward, the next copy-in drops it after the copy-in stream waited for the copy-out
    event, so at most one output lives on beside the next all-gather's; elsewhere (and on
    the host-ordered path, where its storage was already released at the copy-out)
    :meth:`Gatherer.finish` drops it at once.
    """

    def __init__(self) -> None:
        self.pending: tuple[torch.Tensor, Event, str] | None = None

    def hold(self, out: torch.Tensor, copied: Event, group: str, streams: CommStreams,
             defer: bool, owned: bool) -> None:
        """Free ``out`` once the copy-in stream waited for ``copied``: at the next copy-in
        when ``defer`` (forward: the copy-out overlaps it) and the ordering keeps outputs
        past their copy-out, else now (host-ordered: its storage too, when ``owned``).
        The one place an all-gather output dies."""
        self.release(streams)
        self.pending = (out, copied, group)
        if not streams.ordering.keep_past_copy_out(out, defer, owned):
            self.release(streams)

    def release(self, streams: CommStreams) -> None:
        """Drop the held output once compute has finished reading it: the copy-in stream
        waits for the copy-out event first, so on a GPU the memory returns to the
        allocator (and the copy-in stream's next allocation) only after the readers ran."""
        if self.pending is None:
            return
        _buffer, event, group = self.pending
        streams.all_gather_copy_in.wait_event(event, "free_all_gather_output", group)
        recorder.log("free", streams.all_gather_copy_in.name, "all_gather_output", group)
        self.pending = None


class Gatherer:
    """One group's all-gathers: the one in flight and the caches that outlive it.

    Args:
        params: the group's parameters, in all-gather order.
        settings: the group's settings (custom all-gather, buffer allocation).
        device: the compute device (buffers and unsharded parameters live there).
    """

    def __init__(self, params: list[FSDPParam], settings: GroupSettings,
                 device: torch.device) -> None:
        self.params = params
        self.settings = settings
        self.device = device
        self.in_flight: GatherInFlight | None = None
        self.invalidate()

    def invalidate(self) -> None:
        """Forget cached inputs and views (``module._apply`` made new shards and dtypes);
        extension inputs are agreed on again at the next all-gather."""
        self._inputs: tuple[list[GatherInput], BufferPlan] | None = None
        self._views: tuple | None = None  # (plan, full tensors, their copy-out views)
        self._agreed = False

    def _allocator(self, group: Any) -> Callable | None:
        s = self.settings
        return collectives.buffer_allocator(
            s.custom_all_gather,
            symmetric_group=group if s.use_symm_mem else None,
            pool_group=group if s.allocate_from_process_group else None,
            device=self.device,
        )

    def start(self, streams: CommStreams, output: DeferredOutput, info: MeshInfo, name: str,
              after: Event | None, async_op: bool, phase: str | None) -> None:
        """Copy in and launch the all-gather over ``info``'s shard group.

        ``after``: the post-forward event to wait for when gathering post-forward shards
        (int ``reshard_after_forward``), else ``None``. ``async_op``: keep the ``Work`` and
        wait on it in :meth:`finish` (always so on the host-ordered path: the host must not
        block).
        """
        copy_in = streams.all_gather_copy_in
        if after is not None:
            # The post-forward shards were written on compute after this group's forward.
            copy_in.wait_event(after, "copy_in_after_post_forward_shard", name)
        output.release(streams)
        if self._gather_nothing(info, after):
            flat, plan = self._gather_inputs(False, info)
            self.in_flight = GatherInFlight(None, None, None, plan, [i.layout for i in flat],
                                            flat)
            return
        with copy_in.use():
            recorder.log("copy_in", copy_in.name, "all_gather_input", name)
            flat, plan = self._gather_inputs(after is not None, info)
            inp, out = collectives.all_gather_copy_in(
                flat, plan, info.shard_rank, self.device, self._allocator(info.shard_group)
            )
            recorder.name_buffer(out, "all-gather buffer", name)
            copy_in_done = copy_in.record_event("copy_in_done", name)
        streams.all_gather.wait_event(copy_in_done, "all_gather_after_copy_in", name)
        with streams.all_gather.use():
            work = collectives.run_all_gather(
                out, inp, info.shard_group, streams.ordering.launch_async(async_op),
                self.settings.custom_all_gather, name, phase=phase,
            )
            done = streams.all_gather.record_event("all_gather_done", name)
        self.in_flight = GatherInFlight(out, done, work, plan, [i.layout for i in flat])

    def _gather_nothing(self, info: MeshInfo, after: Event | None) -> bool:
        """Whether this all-gather has no peers and needs no buffer: a one-rank shard group
        whose parameters send their own shards (no extension hook, no post-forward shard,
        no custom all-gather). Then, as torch 2.13 does, no output buffer is allocated:
        :meth:`finish` fills the unsharded tensors from the shards, on compute."""
        return (not collectives.has_peers(info.shard_group) and after is None
                and self.settings.custom_all_gather is None
                and all(p.extension is None for p in self.params))

    def complete(self, streams: CommStreams) -> None:
        """On the host-ordered path, block the host until the all-gather in flight has
        completed (:meth:`fsdp_ref.ordering.HostOrdered.complete_prefetch`: a wait for
        gloo's staging buffer, not for order); it stays in flight for :meth:`finish`,
        which still waits on its ``Work`` and copies out. A no-op with device streams."""
        if self.in_flight is not None:
            streams.ordering.complete_prefetch(self.in_flight.work)

    def _gather_inputs(self, post_forward: bool, info: MeshInfo):
        """This all-gather's inputs and their buffer plan.

        A fast path, equivalent to :meth:`_collect` at every all-gather: the inputs it
        kept are reused (lever 5 of ``docs/design/performance.md``, with one
        ``torch.cat`` for the copy-in: 16% of the host overhead alone, 4% last)."""
        if self._inputs is not None and not post_forward:
            return self._inputs
        return self._collect(post_forward, info)

    def _collect(self, post_forward: bool, info: MeshInfo):
        """This all-gather's inputs and their buffer plan; kept for the next ones when
        every parameter sends its own padded shard, which stays the same tensor (no
        post-forward shard, no extension hook, no offload copy)."""
        flat = [i for p in self.params for i in p.gather_inputs()]  # (+ offload H2D)
        if not self._agreed:  # (the pre hooks ran: their sizes are known)
            extensions.agree_on_inputs(self.params, info.shard_group)
            self._agreed = True
        plan = plan_gather(flat)
        if not post_forward and all(i.tensor is p.padded_shard
                                    for i, p in zip(flat, self.params)):
            self._inputs = ([GatherInput(i.tensor.view(-1), i.layout, i.dtype)
                             for i in flat], plan)
        return flat, plan

    def finish(self, streams: CommStreams, output: DeferredOutput, name: str,
               defer: bool = True) -> bool:
        """Make compute wait for the all-gather in flight and copy every parameter's rows
        into its unsharded tensor; ``False`` when none was in flight.

        ``defer``: keep the output (a synchronous all-gather's) until the next copy-in, so
        the copy-out overlaps it (torch: only in forward); else free it now, once the
        copy-in stream waited for the copy-out."""
        ag, self.in_flight = self.in_flight, None
        if ag is None:
            return False
        compute = streams.current()
        if ag.work is not None:
            wait_work(ag.work, compute, "all_gather_work", name)
        if ag.event is not None:
            compute.wait_event(ag.event, "compute_after_all_gather", name)
        recorder.log("copy_out", compute.name, "unsharded_params", name)
        fulls = [t for p in self.params for t in p.alloc_unsharded()]
        # Refilling the same parameters is not a new version of them for autograd.
        keep_versions(fulls, lambda: self._copy_out(ag, fulls))
        if ag.out is None:
            return True
        copied = compute.record_event("copy_out_done", name)
        # The output may be freed only once compute has read it (a deferred free).
        output.hold(ag.out, copied, name, streams, defer and ag.work is None, self._owns())
        return True

    def _copy_out(self, ag: GatherInFlight, fulls: list[torch.Tensor]) -> None:
        """Copy out (grad mode off), through the ``(world, -1)`` views of ``fulls`` made
        once for the tensors a group refills every step
        (:func:`~fsdp_ref.collectives.copy_out_views`); on a one-rank mesh, straight
        from each input (its padded shard is the whole tensor)."""
        if ag.out is None:
            for inp, full in zip(ag.inputs, fulls):
                full.copy_(inp.tensor.reshape(full.shape))
            return
        collectives.all_gather_copy_out(ag.out, ag.plan, ag.layouts, fulls,
                                        self._copy_out_views(ag, fulls))

    def _copy_out_views(self, ag: GatherInFlight, fulls: list[torch.Tensor]) -> Any:
        """The copy-out's views of ``fulls``.

        A fast path, equivalent to ``collectives.copy_out_views(ag.plan, ag.layouts,
        fulls)`` at every copy-out: made once while the plan (the kept one while the
        inputs are) and the full tensors are the same objects (lever 2 of
        ``docs/design/performance.md``, with the one ``split_with_sizes_copy``: 28% of
        the host overhead alone, 12% last)."""
        cached = self._views
        if cached is None or cached[0] is not ag.plan or not all(
            a is b for a, b in zip(cached[1], fulls)
        ):
            cached = self._views = (ag.plan, fulls,
                                    collectives.copy_out_views(ag.plan, ag.layouts, fulls))
        return cached[2]

    def abandon(self, streams: CommStreams, output: DeferredOutput, name: str) -> None:
        """After an exception: complete the all-gather in flight without using it, so
        every rank leaves with the same collectives issued."""
        ag, self.in_flight = self.in_flight, None
        if ag is None:
            return
        compute: Stream = streams.current()
        if ag.work is not None:
            wait_work(ag.work, compute, "reset_all_gather_work", name)
        if ag.out is None:
            return
        # Nobody copied it out, but the all-gather stream may still be writing it: free
        # it like a used output, once the copy-in stream waited for the all-gather.
        output.hold(ag.out, ag.event, name, streams, True, self._owns())

    def _owns(self) -> bool:
        """Whether FSDP allocated the outputs (a custom all-gather owns its memory)."""
        return self.settings.custom_all_gather is None


def keep_versions(tensors: list[torch.Tensor], fill: Callable[[], None]) -> None:
    """Run ``fill`` with grad mode off, leaving ``tensors``' autograd versions as they
    were (autograd saved them in forward: refilling them is not a new version).

    A fast path, equivalent to ``with torch.no_grad(),
    torch.autograd._unsafe_preserve_version_counter(tuple(tensors)): fill()``, without
    that context manager's layers (about 1 µs of 4.4 per call, two calls per group and
    step, measured with ``benchmarks/fast_paths.py``). Tensors made under
    ``torch.inference_mode()`` have no version counter and are left out, as torch does.
    """
    tracked = tuple([t for t in tensors if not t.is_inference()])
    versions = tuple([t._version for t in tracked])
    try:
        with torch.no_grad():
            fill()
    finally:
        torch._C._autograd._unsafe_set_version_counter(tracked, versions)
