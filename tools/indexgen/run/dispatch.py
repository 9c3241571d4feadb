"""How a :class:`~indexgen.run.team.Team` hands out work: chunks, feeder threads, a helper thread.

:func:`chunks` cuts a batch largest item first into chunks of about equal cost, so that the
last chunks -- the ones that decide when the last worker finishes -- are small.  A
:class:`Feeder` thread per worker sends its chunks, at most :data:`AHEAD` unanswered, so that
the calling process only ever reads answers (two processes blocked on large sends to each other
would wait forever).  A :class:`Helper` thread runs work of the calling process while the
workers run theirs.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable, Sequence
from typing import Any

AHEAD = 2
"""Chunks each worker has been sent and not yet answered."""
MAX_CHUNK = 64
"""Most items in one chunk."""


def chunks(indices: Sequence[int], costs: Sequence[float], parts: int) -> list[list[int]]:
    """``indices`` largest cost first, cut into chunks of about ``sum(costs) / parts`` each
    (at most :data:`MAX_CHUNK` items; an item costing more than that is a chunk of its own)."""
    order = sorted(range(len(indices)), key=lambda i: -costs[i])
    target = max(sum(costs) / max(parts, 1), 1e-9)
    found: list[list[int]] = []
    current: list[int] = []
    weight = 0.0
    for i in order:
        current.append(i)
        weight += costs[i]
        if weight >= target or len(current) >= MAX_CHUNK:
            found.append(current)
            current, weight = [], 0.0
    if current:
        found.append(current)
    return found


class Feeder(threading.Thread):
    """Sends one worker its chunks, at most :data:`AHEAD` unanswered at a time."""

    def __init__(self, conn: Any, op: str, items: list, take: Callable[[], list | None]
                 ) -> None:
        super().__init__(daemon=True)
        self.conn, self.op, self.items, self.take = conn, op, items, take
        self.slots = threading.Semaphore(AHEAD)
        self.sent: deque[list[int]] = deque()  # in the order sent
        self.stopped = False

    def run(self) -> None:
        """Send the next chunk whenever a slot is free, until there is none or it is
        stopped."""
        while True:
            self.slots.acquire()
            chunk = None if self.stopped else self.take()
            if chunk is None:
                return
            self.sent.append(chunk)
            try:
                self.conn.send((self.op, [self.items[p] for p in chunk]))
            except OSError:
                return  # the worker is gone: the caller sees its sentinel

    def answered(self) -> list[int]:
        """The oldest unanswered chunk, now answered; frees a slot for the next one."""
        chunk = self.sent.popleft()
        self.slots.release()
        return chunk

    def stop(self) -> None:
        """Let the thread end (it sends nothing more)."""
        self.stopped = True
        self.slots.release()
        self.join(timeout=5)


class Helper:
    """Runs ``meanwhile`` in a thread of the calling process; :meth:`finish` waits for it and
    raises what it raised."""

    def __init__(self, func: Callable[[], None] | None) -> None:
        self.func, self.error = func, None
        self.thread: threading.Thread | None = None

    def _run(self) -> None:
        try:
            self.func()
        except BaseException as exc:  # noqa: BLE001 - raised again in finish()
            self.error = exc

    def start(self) -> None:
        """Start ``meanwhile`` in its thread (once)."""
        if self.func is not None and self.thread is None:
            self.thread = threading.Thread(target=self._run, daemon=True)
            self.thread.start()

    def finish(self) -> None:
        """Wait for ``meanwhile`` (run it here if it was never started); raise its error."""
        if self.func is not None and self.thread is None:
            self.func()  # nothing ran in parallel: run it here
        elif self.thread is not None:
            self.thread.join()
            if self.error is not None:
                raise self.error
