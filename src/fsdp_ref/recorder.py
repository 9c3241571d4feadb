"""The recorder: an observable log of the stream protocol.

Every stream operation of :mod:`fsdp_ref.streams` (each wait, event record, collective,
copy and free) is logged here as a :class:`TraceEvent`. The log is off and costs one
attribute test per step unless something asks for it:

* a test turns it on with :func:`record` and reads the events (protocol-order tests, the
  timeline figure of :mod:`fsdp_ref.tools.timeline`, the memory replay of the benchmarks);
* the race detector (:mod:`fsdp_ref.sanitizer`) sets itself as the :attr:`Recorder.listener`
  and learns from :meth:`Recorder.name_buffer` what each buffer is (an all-gather output, a
  parameter's gradient...) and whether it lives in host memory, so that its reports can
  name the tensors involved.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Protocol

import torch

__all__ = ["Recorder", "TraceEvent", "TraceListener", "record", "recorder"]


@dataclass(frozen=True)
class TraceEvent:
    """One logged step of the protocol.

    Attributes:
        kind: what happened: ``"wait_stream"``, ``"wait_event"``, ``"wait_work"``,
            ``"synchronize"``, ``"record_event"``, ``"collective"``, ``"copy_in"``,
            ``"copy_out"``, ``"free"``, ``"forward"``, ``"backward"``, ``"prefetch"``,
            ``"grad_ready"`` or ``"reduce"`` (a reduction's completion begins).
        stream: the stream the step is issued on (``"compute"``, ``"all_gather"`` ...).
        detail: a short label: the wait's site name, the collective, the buffer freed.
        group: label of the parameter group concerned, or ``""``.
        event_id: id of the event recorded or waited on, or ``-1``.
    """

    kind: str
    stream: str
    detail: str = ""
    group: str = ""
    event_id: int = -1


class TraceListener(Protocol):
    """What a recorder listener (the race detector) is told."""

    def on_trace(self, event: TraceEvent) -> None:
        """One protocol step was logged (whether or not the recorder is enabled)."""

    def on_buffer(self, tensor: torch.Tensor, what: str, group: str, host: bool) -> None:
        """``tensor``'s memory is ``what`` (of ``group``), in host memory if ``host``."""


@dataclass
class Recorder:
    """An append-only log of :class:`TraceEvent` s, off unless a test turns it on.

    Attributes:
        enabled: whether :meth:`log` appends to ``events``.
        events: the log.
        listener: an object told about every event and named buffer while set, whether
            or not ``enabled`` (the race detector sets it).
    """

    enabled: bool = False
    events: list[TraceEvent] = field(default_factory=list)
    listener: TraceListener | None = None

    def log(self, kind: str, stream: str, detail: str = "", group: str = "", event_id=-1):
        """Append one event when recording is on; a cheap no-op otherwise."""
        if self.enabled or self.listener is not None:
            event = TraceEvent(kind, stream, detail, group, event_id)
            if self.enabled:
                self.events.append(event)
            if self.listener is not None:
                self.listener.on_trace(event)

    def name_buffer(
        self, tensor: torch.Tensor, what: str, group: str = "", host: bool = False
    ) -> None:
        """Say what ``tensor``'s memory is, for the race detector's reports.

        ``host`` marks (pinned) host memory of CPU offload: on a GPU its device says so,
        but when the detector runs the GPU path on CPU every tensor is a CPU tensor.
        A no-op unless a listener is set.
        """
        if self.listener is not None:
            for plain in _plain_tensors(tensor):
                self.listener.on_buffer(plain, what, group, host)

    def clear(self) -> None:
        """Forget all logged events."""
        self.events.clear()


def _plain_tensors(tensor: torch.Tensor) -> list[torch.Tensor]:
    """The plain tensors holding ``tensor``'s memory: itself, or for a wrapper subclass
    (``NF4Tensor``, a float8 weight) its inner tensors (``__tensor_flatten__``), which are
    what the race detector tracks."""
    if type(tensor) is torch.Tensor or not hasattr(tensor, "__tensor_flatten__"):
        return [tensor]
    names, _ = tensor.__tensor_flatten__()
    return [t for name in names for t in _plain_tensors(getattr(tensor, name))]


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
