"""Python's cyclic garbage collector during a build: paused where it only costs time.

A build makes millions of long-lived objects (syntax trees, summaries, contexts) and almost no
reference cycles: syntax trees and the records made from them are acyclic, so reference
counting frees them.  The collector's passes would walk all of them again and again while they
only grow; in the global pass of a build of torch that was a third of the calling process's
time, and it made the analysis of one large module grow faster than its size.

:func:`collector_paused` turns the collector off for a block and restores it afterwards;
:func:`tune_worker` sets it up once in a worker process of the build.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def collector_paused() -> Iterator[None]:
    """Run the block with the cyclic garbage collector off, then restore its state.

    Reference counting still frees everything the block drops; cycles it makes are collected
    after it ends.  Blocks nest.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def tune_worker() -> None:
    """Collector settings for a worker process of the build.

    What the worker inherited from the calling process is never garbage there: it is frozen
    out of the collector's reach (a pass over it would also copy every inherited memory page),
    and the worker's own short-lived objects are collected rarely.
    """
    if hasattr(gc, "freeze"):
        gc.freeze()
    gc.set_threshold(100_000, 50, 100)
    gc.enable()
