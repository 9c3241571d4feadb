"""Collectives under the detector: kernels on a stream, and ``Work.wait``.

The c10d op itself is seen by :class:`~fsdp_ref.sanitizer.dispatch.AccessMode` like any
kernel: it reads its input and writes its output. Where it runs:

* ``async_op=False``: on the stream it is issued on. On a GPU, NCCL's stream first
  waits for that stream and that stream then waits for NCCL; gloo blocks the host.
* ``async_op=True``: on a stream of its own (NCCL's internal stream, or gloo's worker
  thread) that starts after the work queued on the issuing stream, and that nothing
  waits for until ``work.wait()``, which makes the *then-current* stream wait for it.

The dispatcher sees neither the choice of stream nor ``work.wait()``, so the
``torch.distributed`` functions are wrapped while the detector runs: an asynchronous call
returns a :class:`TrackedWork` whose ``wait()`` tells the engine.
"""

from __future__ import annotations

import contextlib
import inspect
from collections.abc import Iterator
from typing import Any

import torch.distributed as dist

from .engine import Engine
from .virtual import VirtualDevice, VirtualStream

__all__ = ["TrackedWork", "track_collectives"]

_WRAPPED = (
    "all_gather_single",
    "all_gather_into_tensor",
    "reduce_scatter_single",
    "reduce_scatter_tensor",
    "all_reduce",
    "all_gather",
    "reduce_scatter",
    "broadcast",
)


class TrackedWork:
    """An ``async_op=True`` collective's ``Work``; ``wait()`` also orders the current
    stream after the collective's kernel. Every other attribute is the real ``Work``'s."""

    def __init__(self, work: Any, event: int, engine: Engine, device: VirtualDevice) -> None:
        self._work, self._event, self._engine, self._device = work, event, engine, device

    def wait(self, *args: Any, **kwargs: Any) -> Any:
        """Wait for the collective (host or stream, as the backend does), and tell the
        engine that the current stream is now ordered after it."""
        with _inside(self._engine):
            result = self._work.wait(*args, **kwargs)
        self._engine.wait(self._device.current.sid, self._event)
        return result

    def __getattr__(self, name: str) -> Any:
        return getattr(self._work, name)


@contextlib.contextmanager
def _inside(engine: Engine) -> Iterator[None]:
    """Inside a collective call: only the c10d op itself is a kernel of the program."""
    engine.in_collective_call += 1
    try:
        yield
    finally:
        engine.in_collective_call -= 1


@contextlib.contextmanager
def track_collectives(engine: Engine, device: VirtualDevice) -> Iterator[None]:
    """Wrap ``torch.distributed``'s collectives while the block runs."""
    originals = {name: getattr(dist, name) for name in _WRAPPED if hasattr(dist, name)}

    def wrap(name, fn):
        signature = inspect.signature(fn)

        def tracked(*args: Any, **kwargs: Any) -> Any:
            if not signature.bind(*args, **kwargs).arguments.get("async_op", False):
                with _inside(engine):
                    return fn(*args, **kwargs)
            work_stream = VirtualStream(engine, engine.new_stream(f"{name} work"))
            engine.wait_stream(work_stream.sid, device.current.sid)
            with device.use(work_stream), _inside(engine):
                work = fn(*args, **kwargs)
            if work is None:
                return None
            event = engine.record(work_stream.sid)
            return TrackedWork(work, event, engine, device)

        tracked.__wrapped__ = fn
        return tracked

    for name, fn in originals.items():
        setattr(dist, name, wrap(name, fn))
    try:
        yield
    finally:
        for name, fn in originals.items():
            setattr(dist, name, fn)
