"""Python's cyclic garbage collector during a build: paused where it only costs time.

A build makes millions of long-lived objects (syntax trees, summaries, contexts) and almost no
reference cycles: syntax trees and the records made from them are acyclic, so reference
counting frees them.  The collector's passes would walk all of them again and again while they
only grow; in the global pass of a build of torch that was a third of the calling process's
time, and it made the analysis of one large module grow faster than its size.

:func:`collector_paused` turns the collector off for a block and restores it afterwards, moving
what the block made and kept straight to the oldest generation: otherwise the first allocation
after the block starts a young-generation pass over every object the block made (half a second
at the end of a build of torch, with all the workers done); :func:`tune_worker` turns the
collector off in a worker process of the build.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def collector_paused() -> Iterator[None]:
    """Run the block with the cyclic garbage collector off, then restore its state.

    Reference counting still frees everything the block drops; cycles it makes are collected
    by a later full pass (what the block kept is moved to the oldest generation, see
    :func:`_promote`).  Blocks nest.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            _promote()
            gc.enable()


def _promote() -> None:
    """Move every object the collector tracks to its oldest generation, which full passes
    alone visit (rare: they wait until that generation has grown by a quarter).

    Done by freezing (into the permanent generation) and unfreezing (into the oldest one), two
    list splices; skipped when the process froze objects of its own, which unfreezing would
    release.
    """
    if hasattr(gc, "freeze") and gc.get_freeze_count() == 0:
        gc.freeze()
        gc.unfreeze()


def tune_worker() -> None:
    """Turn the cyclic collector off in a worker process of the build.

    A worker lives for one build, and what it makes there is acyclic (syntax trees, summaries,
    page text), so reference counting frees it; a collector pass could only walk the full
    summaries the worker holds for its renders, and the two or three young passes of a worker
    cost about 0.12 s each in a build of torch.  A cycle made by accident stays until the
    worker exits at the end of the build.  Nothing is frozen: with the collector off, the
    worker's paused blocks have nothing to promote.
    """
    gc.disable()
