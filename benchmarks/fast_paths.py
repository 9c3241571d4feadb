"""What each of fsdp_ref's fenced fast paths saves over the plain code it stands for.

``python benchmarks/fast_paths.py`` times, call for call, each fast path of
``src/fsdp_ref`` against the plain code its docstring says it is equivalent to, on the
shapes of ``benchmarks/overhead.py``'s model (blocks of width 32: six parameters, one
input and one output tensor per block), in one process playing rank 0 of a fake group of
8 ranks. Each figure is the median over ``--repeats`` of the thread's CPU time
(``time.thread_time``: the work is single-threaded, and CPU time leaves out what other
processes got on a shared machine) for ``--calls`` calls, per call; the saving per group
and step multiplies it by how often one block of that model takes the path in a step.

The fast paths whose saving was measured on the whole step, with ``overhead.py``
(``docs/design/performance.md``, "What was changed": the copy-in and copy-out caches of
:class:`fsdp_ref.all_gather.Gatherer`, the cached spec of the sharded DTensor), are not
repeated here.
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable

import torch
from torch.distributed.device_mesh import init_device_mesh
from torch.distributed.tensor import DTensor, Shard
from torch.utils._pytree import tree_flatten, tree_unflatten

from fsdp_ref import autograd_nodes, spmd
from fsdp_ref.all_gather import keep_versions
from fsdp_ref.autograd_nodes import PreBackward
from fsdp_ref.buffer_plan import storage_slots
from fsdp_ref.spmd import local_tensor
from fsdp_ref.tools.simulate import fake_process_group

PARAMS_PER_BLOCK = 6  # LayerNorm weight and bias, two Linear weights and biases


def per_call(fn: Callable[[], object], calls: int, repeats: int) -> float:
    """Median over ``repeats`` of this thread's CPU seconds per call of ``fn``."""
    for _ in range(calls // 10):
        fn()
    samples = []
    for _ in range(repeats):
        start = time.thread_time()
        for _ in range(calls):
            fn()
        samples.append((time.thread_time() - start) / calls)
    return statistics.median(samples)


def cases() -> list[tuple[str, int, Callable, Callable]]:
    """``(fast path, uses per block and step, fast, plain)``."""
    x = torch.randn(16, 32, requires_grad=True)

    def hook() -> None:
        pass

    def plain_tree(tree):
        flat, spec = tree_flatten(tree)
        return tree_unflatten(flat, spec)

    def fast_tree(tree):
        flat, rebuild = autograd_nodes._flatten(tree)
        return rebuild(flat)

    mesh = init_device_mesh("cpu", (8,))
    local = torch.randn(4, 32)
    spec = DTensor.from_local(local, mesh, [Shard(0)])._spec
    fulls = [torch.empty(32, 32) for _ in range(PARAMS_PER_BLOCK)]

    def fill() -> None:
        pass

    def plain_versions() -> None:
        with torch.no_grad(), torch.autograd._unsafe_preserve_version_counter(tuple(fulls)):
            fill()

    param = torch.nn.Parameter(torch.empty(32, 32))

    def plain_local():
        local = [local_tensor(param)]
        return local, storage_slots(local)

    cached = plain_local()

    def fast_local():
        return cached if cached[0][0] is param else plain_local()

    return [
        ("autograd_nodes._Node.run (C entry)", 2,
         lambda: PreBackward.run(hook, x), lambda: PreBackward.apply(hook, x)),
        ("autograd_nodes._flatten (one tensor)", 1, lambda: fast_tree(x), lambda: plain_tree(x)),
        ("autograd_nodes._flatten ((args, {}))", 1,
         lambda: fast_tree(((x,), {})), lambda: plain_tree(((x,), {}))),
        ("spmd._new_dtensor", PARAMS_PER_BLOCK,
         lambda: spmd._new_dtensor(local, spec),
         lambda: DTensor(local, spec, requires_grad=False)),
        ("all_gather.keep_versions", 2,
         lambda: keep_versions(fulls, fill), plain_versions),
        ("param_gather.ParamGather._unsharded_local", 4 * PARAMS_PER_BLOCK, fast_local, plain_local),
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--repeats", type=int, default=7)
    args = parser.parse_args()
    torch.set_num_threads(1)
    with fake_process_group(8):
        print(f"{'fast path':40} {'plain µs':>9} {'fast µs':>8} {'saved µs':>9} "
              f"{'per block-step':>15}")
        for name, uses, fast, plain in cases():
            p = per_call(plain, args.calls, args.repeats) * 1e6
            f = per_call(fast, args.calls, args.repeats) * 1e6
            print(f"{name:40} {p:9.2f} {f:8.2f} {p - f:9.2f} {uses * (p - f):12.1f} µs")


if __name__ == "__main__":
    main()
