"""What the benchmark measures besides time: collective bytes and peak memory.

* :class:`CommCounter` counts the bytes each collective moves by wrapping the Python
  entry points that every implementation goes through (``all_gather_single``,
  ``reduce_scatter_single``, ``all_reduce`` in ``torch.distributed`` and in
  ``distributed_c10d``, whose ``*_into_tensor`` / ``*_tensor`` spellings call them).
  DDP reduces in C++ and is counted by a comm hook instead (:func:`ddp_counting_hook`).
  Bytes are the size of the full buffer on one rank: the all-gather output, the
  reduce-scatter input, the all-reduce tensor.
* :class:`PeakMemory` reports the peak of live tensor bytes on one rank. On CUDA it reads
  the caching allocator's statistics. On CPU there is no such statistic, so it reads the
  profiler's allocator log (``profile_memory=True``): every allocation and free of torch's
  CPU allocator in time order, each carrying the allocator's count of live bytes at that
  moment; the highest count in a window is its peak. Gloo's own buffers (its sockets and
  pairs) do not go through torch's allocator and are not counted (for any implementation);
  the tensors gloo allocates for a collective (the copy of a reduce-scatter's input, the
  staging buffer of an all-gather) are.

  The profiler logs an allocator event only on a thread whose profiler state is set. A
  collective's ``Work`` holds its tensors (the all-gather output, the reduce-scatter's copy
  of its input) and is released by whichever thread drops it last: the caller, or gloo's
  worker thread a moment after it finished. When the worker is last, the frees happen on
  it outside any profiler state and are not logged; summing the logged sizes then counts
  those tensors as alive for the rest of the run, a phantom that grows by a buffer or
  more per step, differently on each rank and in each run. So the live count is not that
  sum: :meth:`PeakMemory.start` turns on c10's ``caffe2_report_cpu_memory_usage`` flag,
  with which the CPU allocator keeps its count of live bytes over every allocation and
  free on every thread, and every logged event carries that count. (Where the flag cannot
  be set, the sum of the logged sizes is used, phantoms included, and the result says
  ``"cpu_accounting": "profiler sum"``.)
"""

from __future__ import annotations

import contextlib
import ctypes
import inspect
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path

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


def _allocator_count_flag() -> ctypes.c_bool | None:
    """c10's ``FLAGS_caffe2_report_cpu_memory_usage`` in the loaded ``libc10``: while it is
    set, torch's CPU allocator counts live bytes over every thread (see the module
    docstring). ``None`` where the library or the symbol is not found."""
    lib_dir = Path(torch.__file__).resolve().parent / "lib"
    for name in ("libc10.so", "libc10.dylib", "c10.dll"):
        if (lib_dir / name).exists():
            try:
                return ctypes.c_bool.in_dll(ctypes.CDLL(str(lib_dir / name)),
                                            "FLAGS_caffe2_report_cpu_memory_usage")
            except (OSError, ValueError):
                return None
    return None


def _cpu_memory_events(tree) -> list[tuple[int, int, int]]:
    """``(time ns, bytes (+ allocated, - freed), live bytes after it)`` of every CPU
    allocator event in the profiler's event tree, in time order."""
    out, stack = [], list(tree)
    while stack:
        e = stack.pop()
        if str(e.tag).endswith("Allocation"):
            f = e.extra_fields
            if f.device.type == "cpu":
                out.append((e.start_time_ns, f.alloc_size, f.total_allocated))
        else:
            stack.extend(e.children)
    return sorted(out)


def _window_spans(tree) -> dict[str, tuple[int, int]]:
    spans, stack = {}, list(tree)
    while stack:
        e = stack.pop()
        try:
            name = e.name
        except UnicodeDecodeError:  # (a Python frame's name, never a window's)
            name = ""
        if name.startswith("window:"):
            spans[name] = (e.start_time_ns, e.end_time_ns)
        stack.extend(e.children)
    return spans


class PeakMemory:
    """Live tensor bytes on this rank, absolute from :meth:`start`; peak per window.

    Attributes:
        cpu_accounting: on CPU, how live bytes were counted: ``"allocator count"`` (every
            thread, see the module docstring) or ``"profiler sum"`` (the fallback).
    """

    def __init__(self, device: torch.device) -> None:
        self.device = device
        self._prof = None
        self._marks: list[tuple[str, int]] = []
        self._base = 0
        self._flag: ctypes.c_bool | None = None
        self._flag_was = False
        self.cpu_accounting: str | None = None

    def start(self) -> None:
        """Begin tracking (call before building the model)."""
        if self.device.type == "cuda":
            torch.cuda.synchronize()
            self._base = torch.cuda.memory_allocated()
            return
        from torch.profiler import ProfilerActivity, profile

        self._flag = _allocator_count_flag()
        if self._flag is not None:
            self._flag_was = self._flag.value
            self._flag.value = True
        self.cpu_accounting = "profiler sum" if self._flag is None else "allocator count"
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
        if self._flag is not None:
            self._flag.value = self._flag_was
        tree = self._prof.profiler.kineto_results.experimental_event_tree()
        events = _cpu_memory_events(tree)
        spans = _window_spans(tree)
        if self._flag is None:  # the running sum of the logged sizes
            live, running = [], 0
            for t, n, _ in events:
                running += n
                live.append((t, running))
            base = 0
        else:  # the allocator's own count; from before the first event on
            live = [(t, total) for t, _, total in events]
            base = events[0][2] - events[0][1] if events else 0
        out = {}
        for name, _, _ in self._marks:
            t0, t1 = spans[f"window:{name}"]
            before = [v for t, v in live if t < t0]
            inside = [v for t, v in live if t0 <= t <= t1]
            start = (before[-1] if before else base) - base
            end = (inside[-1] - base) if inside else start
            out[name] = {"start": start, "peak": max([start, *(v - base for v in inside)]),
                         "end": end}
        return out
