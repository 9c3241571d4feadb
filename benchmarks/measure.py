"""What the benchmark measures besides time: collective bytes and peak memory.

* :class:`CommCounter` counts the bytes each collective moves by wrapping the Python
  entry points that every implementation goes through (``all_gather_single``,
  ``reduce_scatter_single``, ``all_reduce`` in ``torch.distributed`` and in
  ``distributed_c10d``, whose ``*_into_tensor`` / ``*_tensor`` spellings call them).
  DDP reduces in C++ and is counted by a comm hook instead (:func:`ddp_counting_hook`).
  Bytes are the size of the full buffer on one rank: the all-gather output, the
  reduce-scatter input, the all-reduce tensor.
* :class:`PeakMemory` reports the peak of live tensor bytes on one rank. On CUDA it reads
  the caching allocator's statistics. On CPU there is no such statistic, so it replays
  the profiler's allocator log: every allocation and free of torch's CPU allocator
  (``profile_memory=True``) with its size, in time order; the running sum is the live
  bytes, its maximum over a window the peak. Gloo's internal buffers do not go through
  torch's allocator and are not counted (for any implementation).
"""

from __future__ import annotations

import contextlib
import inspect
from collections import defaultdict
from collections.abc import Iterator

import torch
import torch.distributed as dist
import torch.distributed.distributed_c10d as c10d

__all__ = ["CommCounter", "PeakMemory", "ddp_counting_hook"]

# function name -> (counter key, the argument whose size is counted)
_WRAPPED = {
    "all_gather_single": ("all_gather", "output_tensor"),
    "reduce_scatter_single": ("reduce_scatter", "input"),
    "all_reduce": ("all_reduce", "tensor"),
}


def _nbytes(t: torch.Tensor) -> int:
    return t.numel() * t.element_size()


class CommCounter:
    """Counts calls and bytes per collective while enabled (a context manager)."""

    def __init__(self) -> None:
        self.bytes: dict[str, int] = defaultdict(int)
        self.calls: dict[str, int] = defaultdict(int)
        self._saved: list[tuple[object, str, object]] = []
        self._depth = 0

    def reset(self) -> None:
        """Forget the counts so far."""
        self.bytes.clear()
        self.calls.clear()

    def add(self, kind: str, nbytes: int) -> None:
        """Count one collective of ``nbytes`` (used by the DDP comm hook)."""
        self.bytes[kind] += nbytes
        self.calls[kind] += 1

    def _wrap(self, fn, kind: str, arg: str):
        signature = inspect.signature(fn)

        def wrapper(*args, **kwargs):
            if self._depth == 0:
                self.add(kind, _nbytes(signature.bind(*args, **kwargs).arguments[arg]))
            self._depth += 1
            try:
                return fn(*args, **kwargs)
            finally:
                self._depth -= 1

        return wrapper

    def __enter__(self) -> CommCounter:
        for name, (kind, arg) in _WRAPPED.items():
            original = getattr(c10d, name)
            wrapped = self._wrap(original, kind, arg)
            for namespace in (dist, c10d):
                self._saved.append((namespace, name, getattr(namespace, name)))
                setattr(namespace, name, wrapped)
        return self

    def __exit__(self, *exc: object) -> None:
        for namespace, name, original in reversed(self._saved):
            setattr(namespace, name, original)
        self._saved.clear()

    def snapshot(self) -> dict[str, dict[str, int]]:
        """``{"all_gather": {"bytes": ..., "calls": ...}, ...}``."""
        kinds = ("all_gather", "reduce_scatter", "all_reduce")
        return {k: {"bytes": self.bytes.get(k, 0), "calls": self.calls.get(k, 0)} for k in kinds}


def ddp_counting_hook(counter: CommCounter):
    """A DDP comm hook that counts each bucket, then all-reduces it like the default."""
    from torch.distributed.algorithms.ddp_comm_hooks.default_hooks import allreduce_hook

    def hook(state, bucket):
        counter.add("all_reduce", _nbytes(bucket.buffer()))
        return allreduce_hook(state, bucket)

    return hook


class PeakMemory:
    """Live tensor bytes on this rank, absolute from :meth:`start`; peak per window."""

    def __init__(self, device: torch.device) -> None:
        self.device = device
        self._prof = None
        self._marks: list[tuple[str, int]] = []
        self._base = 0

    def start(self) -> None:
        """Begin tracking (call before building the model)."""
        if self.device.type == "cuda":
            torch.cuda.synchronize()
            self._base = torch.cuda.memory_allocated()
            return
        from torch.profiler import ProfilerActivity, profile

        self._prof = profile(activities=[ProfilerActivity.CPU], profile_memory=True)
        self._prof.__enter__()

    @contextlib.contextmanager
    def window(self, name: str) -> Iterator[None]:
        """Mark the region whose peak :meth:`stop` reports under ``name``."""
        if self.device.type == "cuda":
            torch.cuda.synchronize()
            torch.cuda.reset_peak_memory_stats()
            start = torch.cuda.memory_allocated() - self._base
            yield
            torch.cuda.synchronize()
            peak = torch.cuda.max_memory_allocated() - self._base
            end = torch.cuda.memory_allocated() - self._base
            self._marks.append((name, (start, peak, end), 0))
            return
        with torch.profiler.record_function(f"window:{name}"):
            yield
        self._marks.append((name, 0, 0))

    def stop(self) -> dict[str, dict[str, int]]:
        """Stop tracking; ``{window: {"start": bytes, "peak": bytes, "end": bytes}}``."""
        if self.device.type == "cuda":
            return {n: dict(zip(("start", "peak", "end"), v)) for n, v, _ in self._marks}
        self._prof.__exit__(None, None, None)
        raw = list(self._prof.profiler.kineto_results.events())
        events = sorted(
            (e.start_ns(), e.nbytes())
            for e in raw
            if e.name() == "[memory]" and e.device_type() == torch.autograd.DeviceType.CPU
        )
        spans = {e.name(): (e.start_ns(), e.end_ns()) for e in raw if e.name().startswith("window:")}
        out = {}
        for name, _, _ in self._marks:
            t0, t1 = spans[f"window:{name}"]
            live = peak = start = sum(n for t, n in events if t < t0)
            for t, n in events:
                if t0 <= t <= t1:
                    live += n
                    peak = max(peak, live)
            out[name] = {"start": start, "peak": peak, "end": live}
        return out

