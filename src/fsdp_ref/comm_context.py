"""What every group under one root shares to communicate: streams and two queues.

A group's collectives are not independent of the other groups': they run on the same
side streams, the copy-in stream's next allocation may reuse the previous group's
all-gather output, and a group's reduce-scatter input is allocated only once older
reductions have freed theirs. :class:`CommContext` holds exactly that shared part:

* the four side streams (:class:`~fsdp_ref.streams.CommStreams`, which it extends);
* ``output``: the last all-gather output, kept until its copy-out is done
  (:class:`~fsdp_ref.all_gather.DeferredOutput`);
* ``reductions``: the reduce-scatters in flight, oldest first
  (:class:`~fsdp_ref.reduce.ReductionQueue`).

The root makes one at its lazy init and hands it to every group below it
(``share_comm_ctx`` hands one to several roots).
"""

from __future__ import annotations

from .all_gather import DeferredOutput
from .reduce import ReductionQueue
from .streams import CommStreams

__all__ = ["CommContext"]


class CommContext(CommStreams):
    """The streams, the deferred all-gather output and the reductions in flight of the
    groups under one root."""

    def __init__(self) -> None:
        super().__init__()
        self.output = DeferredOutput()
        self.reductions = ReductionQueue()
