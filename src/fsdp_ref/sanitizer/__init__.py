"""A happens-before race detector that runs fsdp_ref's GPU code path on CPU.

On CPU every "stream" is the host thread, so a missing wait, a buffer freed too early or
memory reused too soon never shows up as a wrong number. Under :func:`detect`, fsdp_ref
takes the code path it takes on a GPU instead: real side streams (virtual ones here),
event records and waits, the accelerator's buffer lifetimes, no CPU-only shortcut. Every
tensor access of every aten op is checked against the order those waits establish, as
PyTorch's CUDA sanitizer (CSAN) does on a GPU, and one step further: a buffer freed while
another stream may still use it is reported where the allocator could hand its memory to
a new tensor (a use after free, the bug that avoiding ``record_stream`` invites)::

    from fsdp_ref.sanitizer import detect

    with detect() as detector:          # before the model's first forward
        for x, y in batches:
            loss_fn(model(x), y).backward()
            optim.step()
            optim.zero_grad()
    # leaving the block raises RaceDetected if any race was found;
    # detect(raise_on_race=False) keeps them in detector.races instead.

Each :class:`~fsdp_ref.sanitizer.report.Race` names both accesses: the op, the stream,
the tensor (what FSDP says it is, and its group), the protocol step and the Python stack.

What is modelled, and what is not (see ``docs/design/sanitizer.md``): kernels are aten
ops (forward, backward, optimizer, collectives), accesses are per storage, ``Work.wait``
orders the current stream, ``Event.synchronize`` and ``.item()`` order the host; host
memory (CPU offload) is what fsdp_ref names as such. Kernels inside other libraries'
C++ code that bypass the dispatcher are not seen.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

import torch

from ..recorder import TraceEvent, recorder
from ..streams import override_device_streams
from .comm import track_collectives
from .dispatch import AccessMode, track_storage_resize
from .engine import Engine
from .report import Access, Race, race_from
from .virtual import VirtualDevice, VirtualStream

__all__ = ["Access", "Detector", "Race", "RaceDetected", "detect"]

_active: Detector | None = None


class RaceDetected(AssertionError):
    """Raised when :func:`detect` leaves its block and races were found."""

    def __init__(self, races: list[Race]) -> None:
        self.races = races
        body = "\n".join(str(r) for r in races)
        super().__init__(f"{len(races)} race(s) detected:\n{body}")


class Detector:
    """One detection session: the engine, the virtual device, and what they found.

    Also the recorder's listener: protocol steps become the context of each access, and
    buffers FSDP names get their names (and host-memory flag).
    """

    def __init__(self, engine: Engine, device: VirtualDevice) -> None:
        self.engine = engine
        self.device = device

    @property
    def races(self) -> list[Race]:
        """The races found so far, each distinct one once, in the order found."""
        seen: dict[tuple, Race] = {}
        for conflict in self.engine.conflicts:
            race = race_from(conflict, self.engine.stream_names)
            seen.setdefault(race.key, race)
        return list(seen.values())

    def current_stream(self) -> VirtualStream:
        """The virtual compute stream; e.g. to record a post-optimizer event:
        ``model.set_post_optim_event(detector.current_stream().record_event())``."""
        return self.device.current_stream()

    # ---- recorder listener --------------------------------------------------------------

    def on_trace(self, event: TraceEvent) -> None:
        """Remember the protocol step that the next kernels belong to."""
        if event.kind in ("record_event", "wait_event", "wait_stream"):
            return
        group = f" ({event.group})" if event.group else ""
        self.engine.context = f"{event.kind} {event.detail}{group} on {event.stream}"

    def on_buffer(self, tensor: torch.Tensor, what: str, group: str, host: bool) -> None:
        """Give the buffer behind ``tensor`` its name (and mark host memory)."""
        storage = tensor.untyped_storage()
        if storage.data_ptr() == 0:
            return
        engine = self.engine
        buf = engine.lookup(storage) or engine.allocate(storage, 0, seen=False)
        buf.what, buf.group = what, group or buf.group
        if host:
            engine.mark_host(buf)


@contextlib.contextmanager
def _listening(detector: Detector) -> Iterator[None]:
    prev, recorder.listener = recorder.listener, detector
    try:
        yield
    finally:
        recorder.listener = prev


@contextlib.contextmanager
def detect(
    *, gpu_path: bool = True, raise_on_race: bool = True, device_module: Any = None
) -> Iterator[Detector]:
    """Run fsdp_ref's GPU code path on virtual streams and check every tensor access.

    Enter it before the model's first forward under it (fsdp_ref's stream contexts are
    re-created for the virtual streams at the next root forward).

    Args:
        gpu_path: ``True``: fsdp_ref takes the accelerator's path (side streams, events,
            the GPU's buffer lifetimes). ``False``: it keeps its CPU path (no side
            streams; gloo's asynchronous collectives waited on through ``Work``), and the
            detector checks that path: each asynchronous collective on a stream of its
            own (gloo's thread), joined by ``work.wait()``.
        raise_on_race: raise :class:`RaceDetected` when the block ends and races were
            found (not when the block raised: that exception wins).
        device_module: a device module (``torch.cuda``) whose real streams the virtual
            ones wrap; ``None`` runs every kernel on the host thread in program order.

    Yields:
        The :class:`Detector`; ``detector.races`` lists what was found.

    Raises:
        RuntimeError: when a detector is already active in this process.
    """
    global _active
    if _active is not None:
        raise RuntimeError("a race detector is already active; nest no detect() blocks")
    engine = Engine()
    device = VirtualDevice(engine, device_module)
    detector = Detector(engine, device)
    _active = detector
    try:
        with contextlib.ExitStack() as stack:
            if gpu_path:
                stack.enter_context(override_device_streams(device))
            stack.enter_context(_listening(detector))
            stack.enter_context(track_collectives(engine, device))
            stack.enter_context(track_storage_resize(engine, device))
            stack.enter_context(AccessMode(engine, device, host_ops=gpu_path))
            yield detector
    finally:
        _active = None
    races = detector.races
    if raise_on_race and races:
        raise RaceDetected(races)
