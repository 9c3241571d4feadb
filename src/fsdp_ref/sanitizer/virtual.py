"""Virtual streams and events: the accelerator's stream API, reported to the engine.

:class:`VirtualDevice` is a :class:`fsdp_ref.streams.DeviceStreams` backend. Installed
with :func:`fsdp_ref.streams.override_device_streams`, it makes every ``CommContext``
take the code path of a GPU: side streams exist, events are recorded and waited on,
buffers live as long as they would on a GPU. On CPU nothing runs concurrently (every
kernel still executes in program order on the host, so the numbers stay right), but each
record, wait and kernel is reported to the :class:`~fsdp_ref.sanitizer.engine.Engine`,
which checks the order a GPU would enforce.

On a machine with CUDA, ``VirtualDevice(torch.cuda)`` wraps real streams: work really
runs on them, and the engine checks the same protocol there (where CSAN can check it
too, from CUDA's own trace).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

from .engine import COMPUTE, Engine

__all__ = ["VirtualDevice", "VirtualEvent", "VirtualStream"]


class VirtualEvent:
    """An event recorded on a :class:`VirtualStream` (and on its real stream, if any)."""

    def __init__(self, engine: Engine, eid: int, real: Any = None) -> None:
        self.engine, self.eid, self.real = engine, eid, real

    def synchronize(self) -> None:
        """The host waits for the event."""
        if self.real is not None:
            self.real.synchronize()
        self.engine.host_waits_event(self.eid)

    def __del__(self) -> None:
        # Nobody can wait for an event nobody holds: let the engine forget its clock.
        try:
            self.engine.delete_event(self.eid)
        except Exception:  # interpreter shutdown
            pass


class VirtualStream:
    """A stream known to the engine by id, with the methods FSDP calls on raw streams."""

    def __init__(self, engine: Engine, sid: int, real: Any = None) -> None:
        self.engine, self.sid, self.real = engine, sid, real

    @property
    def name(self) -> str:
        """The stream's name in reports."""
        return self.engine.stream_names[self.sid]

    def wait_stream(self, other: VirtualStream) -> None:
        """Future work here waits for everything queued on ``other``."""
        if self.real is not None and other.real is not None:
            self.real.wait_stream(other.real)
        self.engine.wait_stream(self.sid, _virtual(other, "wait_stream").sid)

    def record_event(self) -> VirtualEvent:
        """A new event after the work queued so far."""
        real = self.real.record_event() if self.real is not None else None
        return VirtualEvent(self.engine, self.engine.record(self.sid), real)

    def wait_event(self, event: VirtualEvent) -> None:
        """Future work here waits for ``event``."""
        event = _virtual(event, "wait_event")
        if self.real is not None and event.real is not None:
            self.real.wait_event(event.real)
        self.engine.wait(self.sid, event.eid)

    def synchronize(self) -> None:
        """The host waits until this stream drained."""
        if self.real is not None:
            self.real.synchronize()
        self.engine.host_waits_stream(self.sid)


def _virtual(obj: Any, method: str) -> Any:
    if not isinstance(obj, (VirtualStream, VirtualEvent)):
        raise TypeError(
            f"{method} got a {type(obj).__name__} while the race detector runs FSDP on "
            "virtual streams; record events on the detector's streams, e.g. "
            "set_post_optim_event(detector.current_stream().record_event())"
        )
    return obj


class VirtualDevice:
    """The stream backend of the race detector (see :class:`fsdp_ref.streams.DeviceStreams`).

    Args:
        engine: where records, waits and kernels are reported.
        real_module: a device module (``torch.cuda``) whose streams to wrap, or ``None``
            to run everything on the host thread.
    """

    def __init__(self, engine: Engine, real_module: Any = None) -> None:
        self.engine = engine
        self.real_module = real_module
        real = real_module.current_stream() if real_module is not None else None
        self.compute = VirtualStream(engine, COMPUTE, real)
        self.current = self.compute
        self._adopted: dict[int, VirtualStream] = {}

    def new_stream(self, name: str) -> VirtualStream:
        """A new side stream (high priority on a real device)."""
        real = self.real_module.Stream(priority=-1) if self.real_module is not None else None
        return VirtualStream(self.engine, self.engine.new_stream(name), real)

    def current_stream(self) -> VirtualStream:
        """The stream kernels are issued on now."""
        return self.current

    def adopt(self, raw: Any) -> VirtualStream:
        """A virtual stream for ``raw``: itself if virtual already, else (a real stream the
        user made, e.g. for ``set_all_reduce_hook``) one wrapping it, the same each time."""
        if isinstance(raw, VirtualStream):
            return raw
        found = self._adopted.get(id(raw))
        if found is None or found.real is not raw:
            found = VirtualStream(self.engine, self.engine.new_stream("user_stream"), raw)
            self._adopted[id(raw)] = found
        return found

    @contextlib.contextmanager
    def use(self, raw: VirtualStream) -> Iterator[None]:
        """Issue the enclosed kernels on ``raw``."""
        prev, self.current = self.current, raw
        try:
            if raw.real is not None:
                with self.real_module.stream(raw.real):
                    yield
            else:
                yield
        finally:
            self.current = prev
