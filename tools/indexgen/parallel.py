"""Parallel work: run one function over many inputs in a process pool, in order.

With the ``fork`` start method the inputs reach the workers through the fork itself (the pool's
initializer receives them without pickling) and each task only names the index of its input, so
large summaries are never pushed through a pipe.  Small batches and ``jobs <= 1`` run in the
calling process.  Worker processes tune their own garbage collector (what they inherited is
frozen, syntax trees are large and acyclic); the calling process pauses its own for the length
of a build (:func:`collector_paused`).
"""

from __future__ import annotations

import gc
import multiprocessing
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

Progress = Callable[[str, int, int], None]
"""A progress callback: ``progress(phase, done, total)``; phases are ``extract`` and ``render``."""

# Set in worker processes only, by the pool initializer.
_WORKER_FUNC: Callable[[Any], Any] | None = None
_WORKER_ITEMS: Sequence[Any] = ()


def _init_worker(func: Callable[[Any], Any] | None, items: Sequence[Any]) -> None:
    global _WORKER_FUNC, _WORKER_ITEMS
    _WORKER_FUNC, _WORKER_ITEMS = func, items
    # What the worker inherited from the parent is never garbage here: keep the collector
    # off it (its passes would also copy every inherited page), and collect the worker's own
    # short-lived objects rarely.
    if hasattr(gc, "freeze"):
        gc.freeze()
    gc.set_threshold(100_000, 50, 100)
    gc.enable()


@contextmanager
def collector_paused() -> Iterator[None]:
    """Run the block with Python's cyclic garbage collector off, then restore it.

    A build holds millions of long-lived, acyclic objects (summaries, contexts); each full
    collection would walk all of them again while they only grow -- a third of the calling
    process's time in the global pass.  Reference counting still frees everything the build
    drops; cycles it makes wait until the block ends.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def _run_index(index: int) -> Any:
    return _WORKER_FUNC(_WORKER_ITEMS[index])


def pool_method(jobs: int, total: int) -> str | None:
    """Start method of the worker pool, or None to run in this process."""
    if jobs <= 1 or total < 8:
        return None
    return "fork" if "fork" in multiprocessing.get_all_start_methods() else "spawn"


def parallel_map(func: Callable[[Any], Any], items: Sequence[Any], jobs: int, phase: str,
                 progress: Progress | None) -> list:
    """``[func(x) for x in items]``, in a process pool when it is worth it, in order.

    Args:
        func: A module-level function (it must be picklable by reference).
        items: Its inputs.
        jobs: Worker processes.
        phase: Name passed to ``progress``.
        progress: Called with ``(phase, done, total)`` as results arrive, or None.
    """
    total = len(items)
    results = []
    if progress:
        progress(phase, 0, total)
    method = pool_method(jobs, total)
    if method is None:
        for i, item in enumerate(items, 1):
            results.append(func(item))
            if progress:
                progress(phase, i, total)
        return results
    ctx = multiprocessing.get_context(method)
    chunk = max(1, min(16, total // (jobs * 8)))
    if method == "fork":
        pool = ctx.Pool(jobs, initializer=_init_worker, initargs=(func, items))
        task, inputs = _run_index, range(total)
    else:
        pool = ctx.Pool(jobs, initializer=_init_worker, initargs=(None, ()))
        task, inputs = func, items
    with pool:
        for i, result in enumerate(pool.imap(task, inputs, chunksize=chunk), 1):
            results.append(result)
            if progress and (i % 25 == 0 or i == total):
                progress(phase, i, total)
    return results
