"""Streams and events: the protocol that orders communication against compute.

On a GPU, FSDP overlaps communication with compute by running collectives on side
streams and ordering them against the compute stream with events. The protocol (who
waits on whom, and when each buffer may be freed) is written once, against the small
:class:`Stream` / :class:`Event` wrappers below, which get their device objects from a
:class:`DeviceStreams` backend:

* on CUDA (or any accelerator with streams) the backend is the device module itself
  (``torch.cuda``): real streams, real events;
* on CPU there is no backend: every operation is already ordered by the host thread, so
  the wrappers hold nothing and do nothing, but they still *log* what they would do;
* under the race detector (:mod:`fsdp_ref.sanitizer`) the backend is a set of virtual
  streams, so that the accelerator's code path runs on CPU and every tensor access is
  checked against the waits below.

Every wait has a *site* name (its ``detail`` argument, unique in the code base): the
design page ``design/streams.md`` lists each site, the race it prevents and the scenario
that proves it, and the mutation tests remove one site at a time.

Every operation is logged to :data:`fsdp_ref.recorder.recorder`, which tests and the race
detector read.

No ``record_stream`` is used anywhere: a buffer allocated on a side stream is kept alive
by a Python reference until an event proves that every reader is done, and only then is
the reference dropped (the *deferred frees*).
"""

from __future__ import annotations

import contextlib
import itertools
from collections.abc import Iterator
from typing import Any, Protocol

import torch

from .ordering import DEVICE_ORDERED, HOST_ORDERED, Ordering
from .recorder import recorder

__all__ = [
    "CommStreams",
    "DeviceStreams",
    "Event",
    "Stream",
    "device_streams",
    "override_device_streams",
    "wait_work",
]


# ---- where device streams come from -----------------------------------------------------


class DeviceStreams(Protocol):
    """A source of device streams: the three things FSDP asks of a device module.

    The raw streams it returns must offer ``wait_stream(raw)``, ``record_event()`` and
    ``wait_event(raw_event)``, and raw events ``synchronize()``, as ``torch.cuda``'s do.
    """

    def new_stream(self, name: str) -> Any:
        """A new (high-priority) side stream; ``name`` is for logs and reports."""

    def current_stream(self) -> Any:
        """The stream kernels are issued on now: the compute stream."""

    def use(self, raw: Any) -> contextlib.AbstractContextManager:
        """A context manager issuing the enclosed kernels on ``raw``."""

    def adopt(self, raw: Any) -> Any:
        """The raw stream to use for a stream the user created (the all-reduce hook's):
        ``raw`` itself, or what stands for it (the race detector's virtual stream)."""


class _TorchDeviceStreams:
    """The accelerator's own streams (``torch.cuda`` and friends), high priority."""

    def __init__(self, device_type: str) -> None:
        self.module = torch.get_device_module(device_type)

    def new_stream(self, name: str) -> Any:
        return self.module.Stream(priority=-1)

    def current_stream(self) -> Any:
        return self.module.current_stream()

    def use(self, raw: Any) -> contextlib.AbstractContextManager:
        return self.module.stream(raw)

    def adopt(self, raw: Any) -> Any:
        return raw


_override: DeviceStreams | None = None
_generation = 0  # bumped whenever the override changes; contexts re-create their streams


def device_streams(device: torch.device) -> DeviceStreams | None:
    """The stream backend for ``device``: the override if one is set, ``None`` on CPU."""
    if _override is not None:
        return _override
    if device.type in ("cpu", "meta"):
        return None
    return _TorchDeviceStreams(device.type)


@contextlib.contextmanager
def override_device_streams(backend: DeviceStreams) -> Iterator[None]:
    """Make every :class:`CommStreams` use ``backend``'s streams while the block runs.

    Contexts notice at their next root pre-forward (or ``unshard()``) and create their
    side streams anew; the race detector installs its virtual streams this way.
    """
    global _override, _generation
    prev = _override
    _override, _generation = backend, _generation + 1
    try:
        yield
    finally:
        _override, _generation = prev, _generation + 1


# ---- the wrappers the protocol is written against ----------------------------------------

_event_ids = itertools.count()


class Event:
    """A point on a stream that other streams can wait for.

    Wraps a device event when the stream is real, else ``None``. ``id`` links the record
    and the waits of one event in the recorder's log.
    """

    __slots__ = ("id", "raw", "stream_name")

    def __init__(self, raw: Any, stream_name: str) -> None:
        self.raw = raw
        self.stream_name = stream_name
        self.id = next(_event_ids)

    def synchronize(self, site: str, group: str = "") -> None:
        """Block the host until the event has completed (no-op without streams)."""
        recorder.log("synchronize", "host", site, group, self.id)
        if self.raw is not None:
            self.raw.synchronize()


class Stream:
    """A named execution stream: a device stream, or the host thread when ``raw`` is None."""

    __slots__ = ("backend", "name", "raw")

    def __init__(self, name: str, raw: Any = None, backend: DeviceStreams | None = None) -> None:
        self.name = name
        self.raw = raw
        self.backend = backend

    def wait_stream(self, other: Stream, site: str) -> None:
        """Make future work on this stream wait for all work queued on ``other``."""
        recorder.log("wait_stream", self.name, site)
        if self.raw is not None and other.raw is not None and self.raw is not other.raw:
            self.raw.wait_stream(other.raw)

    def record_event(self, detail: str = "", group: str = "") -> Event:
        """Record an event after the work queued so far on this stream."""
        event = Event(self.raw.record_event() if self.raw is not None else None, self.name)
        recorder.log("record_event", self.name, detail, group, event.id)
        return event

    def wait_event(self, event: Event, site: str, group: str = "") -> None:
        """Make future work on this stream wait until ``event`` has completed."""
        recorder.log("wait_event", self.name, site, group, event.id)
        if self.raw is not None and event.raw is not None:
            self.raw.wait_event(event.raw)

    def use(self) -> contextlib.AbstractContextManager:
        """Run the enclosed kernels on this stream (no-op on CPU: one shared empty context,
        entered several times per group and step)."""
        if self.backend is None:
            return _NO_STREAM
        return self.backend.use(self.raw)


# Without device streams: the empty context of Stream.use, and the compute stream (the host).
_NO_STREAM, _HOST_COMPUTE = contextlib.nullcontext(), Stream("compute")


def wait_work(work: Any, stream: Stream, site: str, group: str = "") -> None:
    """Wait for an ``async_op=True`` collective's ``Work``.

    With NCCL the *current* stream (``stream``) waits for the collective; with gloo the
    host blocks until the data has arrived. Either way, nothing after this reads the
    collective's output early.
    """
    recorder.log("wait_work", stream.name, site, group)
    work.wait()


class CommStreams:
    """The streams FSDP communicates on, shared by every group under one root.

    Four side streams plus the compute stream:

    ======================  ==========================================================
    ``all_gather_copy_in``  copies (and casts) shards into the flat all-gather input
    ``all_gather``          runs the all-gather collective
    ``reduce_scatter``      runs the reduce-scatter collective, divides, assigns grads
    ``all_reduce``          runs the HSDP all-reduce across replicas
    ``compute``             the current stream: forward, backward, optimizer, the
                            all-gather copy-out and the reduce-scatter copy-in
    ======================  ==========================================================

    Who waits on whom is tabulated, site by site, in ``docs/design/streams.md``. Without
    streams (plain CPU) :attr:`has_streams` is false, the groups wait on ``Work``
    handles instead, and :attr:`ordering` is the host-ordered path
    (:mod:`fsdp_ref.ordering`), which says what else differs. What else the groups under a root share (the all-gather output
    awaiting its free, the reductions in flight) is
    :class:`fsdp_ref.comm_context.CommContext`, which extends this class.
    """

    def __init__(self) -> None:
        self.device: torch.device | None = None
        self.backend: DeviceStreams | None = None
        self.ordering: Ordering = HOST_ORDERED
        self._generation = -1
        self.all_gather_copy_in = Stream("all_gather_copy_in")
        self.all_gather = Stream("all_gather")
        self.reduce_scatter = Stream("reduce_scatter")
        self.all_reduce = Stream("all_reduce")

    def lazy_init(self, device: torch.device) -> None:
        """Create the side streams for ``device`` (again, if the backend changed)."""
        if self.device == device and self._generation == _generation:
            return
        self.device, self._generation = device, _generation
        self.backend = device_streams(device)
        self.ordering = DEVICE_ORDERED if self.backend is not None else HOST_ORDERED
        for stream in (self.all_gather_copy_in, self.all_gather, self.reduce_scatter,
                       self.all_reduce):
            stream.backend = self.backend
            stream.raw = self.backend.new_stream(stream.name) if self.backend else None

    @property
    def has_streams(self) -> bool:
        """Whether work is ordered by device streams (else by the host and ``Work``)."""
        return self.backend is not None

    def current(self) -> Stream:
        """The compute stream (the device's current stream; the host's, one object)."""
        if self.backend is None:
            return _HOST_COMPUTE
        return Stream("compute", self.backend.current_stream(), self.backend)
