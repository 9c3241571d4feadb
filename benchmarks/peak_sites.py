"""What is alive at a step's memory peak, grouped by where it was allocated.

The GPU benchmark (``benchmarks/gpu.py``) explains each implementation's peak by its
allocations: every allocation and free of the step in order, each allocation with the
Python stack that made it, replayed to the moment the most bytes were alive. Two sources
give the same events:

* **CUDA**: the caching allocator's history
  (``torch.cuda.memory._record_memory_history(stacks="python")``, read back with
  ``torch.cuda.memory._snapshot()``): ``alloc`` and ``free_completed`` entries with the
  block's address, its size as the allocator counts it, and the frames, innermost first;
* **CPU**: the profiler's allocator log (``profile_memory=True, with_stack=True``): each
  allocation event with its pointer and signed size, under the Python calls that made it.

The step is delimited by two marker allocations (:func:`mark_begin`, :func:`mark_end`),
found by their function names in the frames, so no clock needs to agree with the trace.
Each allocation alive at the peak is given a *site* (the innermost frame in FSDP's,
the optimizer's, the model's or this benchmark's code) and a *category* (what it is, by
the functions on its stack, named for fsdp_ref and for torch 2.11-2.13's ``fully_shard``
alike), so that the two implementations' peaks can be compared group by group.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence

import torch

__all__ = ["CATEGORIES", "category", "cpu_events", "cuda_events", "group", "live_at_peak",
           "mark_begin", "mark_end", "site"]

Event = tuple[str, int, int, tuple[str, ...]]  # (alloc | free, address, bytes, frames)

# (category, function names any of which on the stack puts an allocation in it), first
# match wins: fsdp_ref's names, then torch's (_fully_shard/_fsdp_*.py).
CATEGORIES: tuple[tuple[str, frozenset[str]], ...] = (
    ("all-gather output", frozenset({"all_gather_copy_in", "foreach_all_gather"})),
    ("unsharded parameters", frozenset({"alloc_unsharded", "alloc_all_gather_outputs",
                                         "init_all_gather_outputs"})),
    ("reduce-scatter buffers and sharded gradients",
     frozenset({"reduce_scatter_copy_in", "reduce_scatter", "foreach_reduce"})),
    ("sharded parameters", frozenset({"_init_sharded", "_init_sharded_param"})),
    ("optimizer state", frozenset({"_init_group"})),
    ("optimizer temporaries", frozenset({"_multi_tensor_adam", "_single_tensor_adam",
                                          "_fused_adam", "_multi_tensor_adamw",
                                          "_single_tensor_adamw"})),
    ("backward (gradients)", frozenset({"_engine_run_backward", "run_backward"})),
    ("forward (activations)", frozenset({"forward"})),
)
_MARKERS = ("mark_begin", "mark_end")
_KEEP = ("fsdp_ref/", "torch/distributed/fsdp/", "torch/optim/", "benchmarks/")


def mark_begin(device: torch.device) -> torch.Tensor:
    """Allocate the marker that opens the measured step (keep it until :func:`mark_end`)."""
    return torch.empty(1, device=device)


def mark_end(device: torch.device) -> torch.Tensor:
    """Allocate the marker that closes the measured step."""
    return torch.empty(1, device=device)


def _short(path: str) -> str:
    for cut in ("site-packages/", "/src/", "/benchmarks/"):
        if cut in path:
            return ("benchmarks/" if cut == "/benchmarks/" else "") + path.split(cut, 1)[1]
    return path


def cuda_events(snapshot: dict, device: int = 0) -> list[Event]:
    """The allocation events of a ``torch.cuda.memory._snapshot()`` taken with history."""
    out = []
    for e in snapshot["device_traces"][device]:
        action = {"alloc": "alloc", "free_completed": "free"}.get(e["action"])
        if action is not None:
            frames = tuple(f"{_short(f['filename'])}:{f['line']} {f['name']}"
                           for f in e.get("frames", ()))
            out.append((action, e["addr"], e["size"], frames))
    return out


def cpu_events(prof) -> list[Event]:
    """The CPU allocation events of a finished ``torch.profiler.profile`` run with
    ``profile_memory=True, with_stack=True``, in time order."""
    found = []

    def walk(nodes, stack: tuple[str, ...]) -> None:
        for e in nodes:
            tag = str(e.tag)
            if tag.endswith("Allocation"):
                f = e.extra_fields
                if f.device.type == "cpu":
                    found.append((e.start_time_ns, "alloc" if f.alloc_size > 0 else "free",
                                  f.ptr, abs(f.alloc_size), stack))
                continue
            inner = stack
            if tag.endswith("PyCall"):  # name: "path(line): function"
                try:
                    where, _, fn = e.name.partition("): ")
                except UnicodeDecodeError:  # (seen for frames of torch's own internals)
                    where, fn = "?(0", "?"
                path, _, line = where.rpartition("(")
                inner = (f"{_short(path)}:{line} {fn}", *stack)
            walk(e.children, inner)

    walk(prof.profiler.kineto_results.experimental_event_tree(), ())
    return [ev[1:] for ev in sorted(found, key=lambda ev: ev[0])]


def _fn(frame: str) -> str:
    return frame.rsplit(" ", 1)[-1]


def live_at_peak(events: Sequence[Event]) -> tuple[int, list[tuple[int, tuple[str, ...]]]]:
    """Replay ``events``; between the two markers, the most bytes alive at once and the
    allocations alive then (``(bytes, frames)``), the markers left out.

    Raises:
        ValueError: when the markers are not both in the trace (history recorded too
            late, or the trace's ring buffer overflowed).
    """
    bounds = {}
    for i, (action, _, _, frames) in enumerate(events):
        if action == "alloc":
            for name in _MARKERS:
                if name not in bounds and any(_fn(f) == name for f in frames):
                    bounds[name] = i
    if len(bounds) != 2:
        raise ValueError(f"step markers not found in the allocation trace (found {bounds}); "
                         "record the history from the process start with enough entries")
    begin, end = bounds["mark_begin"], bounds["mark_end"]

    def replay(stop: int) -> tuple[dict, int, int]:
        live, cur, best, at = {}, 0, -1, begin
        for i, (action, addr, size, frames) in enumerate(events[:stop + 1]):
            if action == "alloc":
                live[addr] = (size, frames)
                cur += size
            elif addr in live:
                cur -= live.pop(addr)[0]
            if begin < i < end and cur > best:
                best, at = cur, i
        return live, best, at

    _, _, at = replay(end)
    live, _, _ = replay(at)
    marker = events[begin][1]
    blocks = [v for addr, v in live.items() if addr != marker]
    return sum(size for size, _ in blocks), blocks


def site(frames: Sequence[str]) -> str:
    """The innermost frame in FSDP's, the optimizer's, the model's or the benchmark's
    code (else the innermost frame; ``"<no Python frame>"`` for an allocation made by C++
    alone, e.g. on CUDA's autograd thread)."""
    for f in frames:
        if any(k in f for k in _KEEP):
            return f
    return frames[0] if frames else "<no Python frame>"


def category(frames: Sequence[str]) -> str:
    """What an allocation is, by the functions on its stack (:data:`CATEGORIES`); with no
    Python frame, a backward op's (CUDA runs backward on a thread of its own)."""
    names = {_fn(f) for f in frames}
    for cat, fns in CATEGORIES:
        if names & fns:
            return cat
    return "backward (gradients)" if not frames else "other"


def group(blocks: Iterable[tuple[int, Sequence[str]]], top: int = 25) -> dict:
    """``{"categories": {category: bytes}, "sites": [{site, category, bytes, count}]}``,
    sites by bytes, the ``top`` largest."""
    sites: dict[tuple[str, str], list[int]] = defaultdict(lambda: [0, 0])
    cats: dict[str, int] = defaultdict(int)
    for size, frames in blocks:
        key = (site(frames), category(frames))
        sites[key][0] += size
        sites[key][1] += 1
        cats[key[1]] += size
    ranked = sorted(sites.items(), key=lambda kv: -kv[1][0])[:top]
    return {"categories": dict(sorted(cats.items(), key=lambda kv: -kv[1])),
            "sites": [{"site": s, "category": c, "bytes": b, "count": n}
                      for (s, c), (b, n) in ranked]}
