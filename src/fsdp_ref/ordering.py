"""Who orders communication against compute: device streams, or the host itself.

FSDP's protocol is written once, against streams and events (:mod:`fsdp_ref.streams`).
On an accelerator those are real: collectives run on side streams and events order them.
On CPU (gloo) there are no streams: the host's program order *is* the order, collectives
are waited for through their ``Work``, and a few things must be done differently because
of that, not because the algorithm differs. This module names the two paths and holds
every such difference in one place, chosen once per root when its streams are created
(:meth:`fsdp_ref.streams.CommStreams.lazy_init`):

* :class:`DeviceOrdered` (an accelerator, or the race detector's virtual streams): the
  protocol's waits and events do everything; each method here is an explicit no-op, or
  the device's own operation.
* :class:`HostOrdered` (no device streams: gloo on CPU). Four things differ, each for a
  reason of memory or of the host blocking, never of numbers:

  ====================================  ===============================================
  collectives are launched ``async``    a synchronous gloo collective blocks the host;
                                        launched async, the host runs ahead and waits on
                                        the ``Work`` where the result is needed
  a backward prefetch is completed      gloo stages an all-gather through a buffer the
  before the block's backward           size of its output, on its own thread, for as
                                        long as it runs: left running, it sits on the
                                        backward's peak
  reduce-scatters whose ``Work`` has    gloo keeps a finished ``Work`` (and its buffers)
  completed are finished early          until its next collective; finishing them frees
                                        their inputs before the next backward allocates
  the all-gather output is freed at     nothing reads it after the copy-out, and no
  its copy-out                          stream can still be writing it
  ====================================  ===============================================

  A user's stream for the all-reduce hook is ignored (the host orders the hook), and the
  host need not wait for offload copies (they were synchronous).

"The host-ordered path" is the one term for the second in code and docs.
"""

from __future__ import annotations

from typing import Any

import torch

__all__ = ["DeviceOrdered", "HostOrdered", "Ordering"]


class DeviceOrdered:
    """Device streams order everything (a GPU, or the race detector's virtual streams)."""

    name = "device-ordered"

    def launch_async(self, async_op: bool) -> bool:
        """Launch a collective with ``async_op``? As asked: its stream orders it."""
        return async_op

    def complete_prefetch(self, work: Any) -> None:
        """Nothing: a prefetch's all-gather runs on its stream, no host-side buffer."""

    finishes_completed_early = False
    """Reductions complete by events and are finished oldest first by their queue."""

    def free_at_copy_out(self, out: torch.Tensor) -> None:
        """Nothing: the output is freed by the deferred free, after an event."""

    def keep_past_copy_out(self, defer: bool) -> bool:
        """Keep the output past its copy-out when the caller defers its free (forward)."""
        return defer

    host_waits_for_copies = True
    """Device-to-host copies run on a stream: the host must wait before reading them."""

    def user_stream(self, raw: Any) -> Any:
        """A stream the user gave (the all-reduce hook's): used as given."""
        return raw


class HostOrdered:
    """No device streams: the host's program order is the order (gloo on CPU)."""

    name = "host-ordered"

    def launch_async(self, async_op: bool) -> bool:
        """Always async: the host must not block inside a gloo collective."""
        return True

    def complete_prefetch(self, work: Any) -> None:
        """Wait for a backward prefetch's all-gather now: gloo's staging buffer goes
        before the block's backward allocates (a wait for memory, not for order)."""
        if work is not None:
            work.wait()

    finishes_completed_early = True
    """Finish the reductions whose ``Work`` has completed before each module's backward
    (:meth:`fsdp_ref.reduce.ReductionQueue.finish_completed`: frees gloo's buffers)."""

    def free_at_copy_out(self, out: torch.Tensor) -> None:
        """Free the all-gather output at once: gloo's thread may hold the finished
        ``Work`` (and so the output) until its next collective."""
        out.untyped_storage().resize_(0)

    def keep_past_copy_out(self, defer: bool) -> bool:
        """Never: nothing can still read or write it."""
        return False

    host_waits_for_copies = False
    """Every copy already ran on the host, in order: nothing to wait for."""

    def user_stream(self, raw: Any) -> Any:
        """``None``: the host orders the hook; a stream has nothing to order."""
        return None


Ordering = DeviceOrdered | HostOrdered
"""The policy a root's :class:`~fsdp_ref.streams.CommStreams` chose."""

DEVICE_ORDERED = DeviceOrdered()
HOST_ORDERED = HostOrdered()
