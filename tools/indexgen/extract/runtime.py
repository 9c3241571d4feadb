"""How one file's analysis runs: within a time budget, with the cyclic collector paused.

Two conditions of the extraction stage, set around the analysis of each file
(:func:`indexgen.extract.pipeline.extract_source`) and around the whole build
(:mod:`indexgen.run.plan`, :mod:`indexgen.run.worker`).

The time budget
---------------
:func:`time_budget` interrupts the block it guards with :class:`OverBudget` when the block runs
longer than the budget, through ``SIGALRM`` and an interval timer: a pure-Python loop in
indexgen or griffe stops at its next bytecode, a long C call (``ast.parse``) when it returns.  The
timer exists only on POSIX systems and only in a process's main thread (each worker of the
build's process pool is one); elsewhere the block runs without a limit.  A previously installed
``SIGALRM`` handler and timer are restored afterwards.  What a build's worker leaves for later
(signatures and parsed docstrings, :func:`indexgen.extract.enrich.finish`) is made outside it.

Two places must not see the exception, and the handler accounts for both:

* Inside :func:`shielded` (around ``ast.parse``): CPython's AST constructor can run Python code
  (a garbage-collection weakref callback) while it builds the tree, and an exception raised there
  leaves it with a ``SystemError`` ("AST constructor recursion depth mismatch").  The handler
  only notes the expiry; the shield raises when it is left.
* In a callback whose exceptions the interpreter swallows (weakref, ``__del__``): the raise is
  lost, so the handler re-arms the timer for :data:`RETRY_S` before raising; the next alarm lands
  in ordinary code.

The collector
-------------
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
import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager


class OverBudget(BaseException):
    """The guarded block ran past its budget.

    It derives from :class:`BaseException` so that ``except Exception`` handlers in the code
    being timed (griffe's, indexgen's own) cannot swallow it.
    """


RETRY_S = 0.01
"""Delay before the alarm fires again when a raise may have been swallowed."""

_shield_depth = 0
_expired = False


def _raise(signum: int, frame: object) -> None:
    global _expired
    _expired = True
    if _shield_depth:
        return
    signal.setitimer(signal.ITIMER_REAL, RETRY_S)
    raise OverBudget


@contextmanager
def shielded() -> Iterator[None]:
    """Defer an expiry that happens inside the block to the block's end.

    For C calls that run arbitrary Python callbacks and cannot unwind an exception from them
    (``ast.parse``).  Outside a :func:`time_budget` block it does nothing.

    Raises:
        OverBudget: The budget expired while the block ran.
    """
    global _shield_depth
    _shield_depth += 1
    try:
        yield
    finally:
        _shield_depth -= 1
    if _expired and not _shield_depth:
        raise OverBudget


def available() -> bool:
    """Whether a budget can be enforced here (POSIX, main thread)."""
    return hasattr(signal, "setitimer") and threading.current_thread() is threading.main_thread()


@contextmanager
def time_budget(seconds: float) -> Iterator[None]:
    """Run the block with a wall-clock limit of ``seconds`` (0 or less: no limit).

    Raises:
        OverBudget: The block did not finish in time.
    """
    if seconds <= 0 or not available():
        yield
        return
    global _expired
    _expired = False
    previous = signal.signal(signal.SIGALRM, _raise)
    old_delay, old_interval = signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
        _expired = False
        if old_delay:
            signal.setitimer(signal.ITIMER_REAL, old_delay, old_interval)



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
