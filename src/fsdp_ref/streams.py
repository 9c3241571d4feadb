"""Streams, events and the recorder that makes their ordering observable.

On a GPU, FSDP overlaps communication with compute by running collectives on side
streams and ordering them against the compute stream with events. The protocol (who
waits on whom, and when each buffer may be freed) is written once, against the small
:class:`Stream` / :class:`Event` wrappers below. On CUDA they wrap real
``torch.cuda.Stream`` / ``torch.cuda.Event`` objects; on CPU every operation is already
ordered by the host thread, so they do nothing, but they still *log* what they would do.

The :class:`Recorder` is that log. A test turns it on with :func:`record`, runs a step,
and checks the invariants of the protocol on the list of :class:`TraceEvent` s, the same
on CPU as on a GPU:

* compute never reads an unsharded parameter before it waited for that all-gather;
* an all-gather output is not freed while compute may still read it;
* a reduce-scatter input is not reused before that reduce-scatter finished;
* the optimizer's writes are ordered before the next all-gather reads the shards.

No ``record_stream`` is used anywhere: a buffer allocated on a side stream is kept alive
by a Python reference until an event proves that every reader is done, and only then is
the reference dropped.
"""

from __future__ import annotations

import contextlib
import itertools
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import torch

__all__ = [
    "CommContext",
    "Event",
    "Recorder",
    "Stream",
    "TraceEvent",
    "record",
    "recorder",
]


@dataclass(frozen=True)
class TraceEvent:
    """One logged step of the protocol.

    Attributes:
        kind: what happened: ``"wait_stream"``, ``"wait_event"``, ``"record_event"``,
            ``"collective"``, ``"copy_in"``, ``"copy_out"``, ``"free"``, ``"forward"``,
            ``"backward"``, ``"grad_ready"`` or ``"optim_event"``.
        stream: the stream the step is issued on (``"compute"``, ``"all_gather"`` ...).
        detail: a short label: the collective's name, the group, the event id.
        group: label of the parameter group concerned, or ``""``.
        event_id: id of the event recorded or waited on, or ``-1``.
    """

    kind: str
    stream: str
    detail: str = ""
    group: str = ""
    event_id: int = -1


@dataclass
class Recorder:
    """An append-only log of :class:`TraceEvent` s, off unless a test turns it on."""

    enabled: bool = False
    events: list[TraceEvent] = field(default_factory=list)

    def log(self, kind: str, stream: str, detail: str = "", group: str = "", event_id=-1):
        """Append one event when recording is on; a cheap no-op otherwise."""
        if self.enabled:
            self.events.append(TraceEvent(kind, stream, detail, group, event_id))

    def clear(self) -> None:
        """Forget all logged events."""
        self.events.clear()


recorder = Recorder()
"""The process-wide recorder that every stream operation logs to."""


@contextlib.contextmanager
def record() -> Iterator[list[TraceEvent]]:
    """Record the protocol while the block runs; yields the (growing) event list."""
    prev = recorder.enabled
    recorder.clear()
    recorder.enabled = True
    try:
        yield recorder.events
    finally:
        recorder.enabled = prev


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

    def synchronize(self) -> None:
        """Block the host until the event has completed (no-op on CPU)."""
        if self.raw is not None:
            self.raw.synchronize()


class Stream:
    """A named execution stream: a device stream on accelerators, the host thread on CPU."""

    __slots__ = ("name", "raw")

    def __init__(self, name: str, raw: Any = None) -> None:
        self.name = name
        self.raw = raw

    def wait_stream(self, other: Stream) -> None:
        """Make future work on this stream wait for all work queued on ``other``."""
        recorder.log("wait_stream", self.name, other.name)
        if self.raw is not None and other.raw is not None and self.raw != other.raw:
            self.raw.wait_stream(other.raw)

    def record_event(self, detail: str = "", group: str = "") -> Event:
        """Record an event after the work queued so far on this stream."""
        event = Event(self.raw.record_event() if self.raw is not None else None, self.name)
        recorder.log("record_event", self.name, detail, group, event.id)
        return event

    def wait_event(self, event: Event, detail: str = "", group: str = "") -> None:
        """Make future work on this stream wait until ``event`` has completed."""
        recorder.log("wait_event", self.name, detail or event.stream_name, group, event.id)
        if self.raw is not None and event.raw is not None:
            self.raw.wait_event(event.raw)

    @contextlib.contextmanager
    def use(self) -> Iterator[None]:
        """Run the enclosed kernels on this stream (no-op on CPU)."""
        if self.raw is None:
            yield
            return
        with torch.get_device_module(self.raw.device.type).stream(self.raw):
            yield


class CommContext:
    """The streams FSDP communicates on, shared by every group under one root.

    Four side streams plus the compute stream:

    ======================  ==========================================================
    ``all_gather_copy_in``  copies (and casts) shards into the flat all-gather input
    ``all_gather``          runs the all-gather collective
    ``reduce_scatter``      builds the reduce-scatter input and runs the collective
    ``all_reduce``          runs the HSDP all-reduce across replicas
    ``compute``             the current stream: forward, backward, optimizer
    ======================  ==========================================================

    Who waits on whom (each arrow is an event or stream wait):

    * root pre-forward: ``all_gather_copy_in`` and ``all_gather`` wait for ``compute``
      (or for the user's post-optimizer event) so the shards the optimizer wrote are
      read only after the write;
    * ``all_gather`` waits for the copy-in event; ``compute`` waits for the all-gather
      event before copy-out into the unsharded parameters;
    * the next copy-in waits for the previous copy-out event, and only then drops the
      previous all-gather output (compute has finished reading it);
    * ``reduce_scatter`` waits for ``compute`` (gradients written), ``all_reduce`` waits
      for the reduce-scatter event, and ``compute`` waits for the last reduction event in
      the final backward callback before the optimizer may read gradients.
    """

    def __init__(self) -> None:
        self.device: torch.device | None = None
        self.all_gather_copy_in = Stream("all_gather_copy_in")
        self.all_gather = Stream("all_gather")
        self.reduce_scatter = Stream("reduce_scatter")
        self.all_reduce = Stream("all_reduce")
        self.pending_all_gather_free: tuple[Any, Event, str] | None = None
        self.post_forward_order: list[Any] = []
        self.forward_order: list[Any] = []
        self.last_forward_order: list[Any] = []
        self.pending_reductions: list[Any] = []

    def lazy_init(self, device: torch.device) -> None:
        """Create real side streams when ``device`` is an accelerator with streams."""
        if self.device is not None:
            return
        self.device = device
        if device.type == "cpu":
            return
        module = torch.get_device_module(device.type)
        high_priority = -1
        for stream in (self.all_gather_copy_in, self.all_gather, self.reduce_scatter):
            stream.raw = module.Stream(priority=high_priority)
        self.all_reduce.raw = module.Stream(priority=high_priority)

    def current(self) -> Stream:
        """The compute stream (the device's current stream)."""
        if self.device is None or self.device.type == "cpu":
            return Stream("compute")
        return Stream("compute", torch.get_device_module(self.device.type).current_stream())

    def release_all_gather_output(self) -> None:
        """Drop the previous all-gather output once compute has finished reading it.

        The copy-in stream waits for the copy-out event first, so on a GPU the memory is
        returned to the allocator only after the reading kernels ran.
        """
        if self.pending_all_gather_free is None:
            return
        _buffer, event, group = self.pending_all_gather_free
        self.all_gather_copy_in.wait_event(event, "copy_out_done", group)
        recorder.log("free", self.all_gather_copy_in.name, "all_gather_output", group)
        self.pending_all_gather_free = None
