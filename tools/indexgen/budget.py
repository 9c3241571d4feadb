"""A per-file time budget for analysis (``time-budget`` in ``[tool.indexgen]``).

:func:`time_budget` interrupts the block it guards with :class:`OverBudget` when the block runs
longer than the budget, through ``SIGALRM`` and an interval timer: a pure-Python loop in
indexgen or griffe stops at its next bytecode, a long C call (``ast.parse``) when it returns.  The
timer exists only on POSIX systems and only in a process's main thread (each worker of the
build's process pool is one); elsewhere the block runs without a limit.  A previously installed
``SIGALRM`` handler and timer are restored afterwards.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager


class OverBudget(BaseException):
    """The guarded block ran past its budget.

    It derives from :class:`BaseException` so that ``except Exception`` handlers in the code
    being timed (griffe's, indexgen's own) cannot swallow it.
    """


def _raise(signum: int, frame: object) -> None:
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
    previous = signal.signal(signal.SIGALRM, _raise)
    old_delay, old_interval = signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
        if old_delay:
            signal.setitimer(signal.ITIMER_REAL, old_delay, old_interval)
