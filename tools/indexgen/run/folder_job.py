"""The folder pages of a build as one job: made in a process forked beside the global pass
where a core is free for them (:meth:`indexgen.run.plan.Plan.relate`), else where the render
asks for them."""

from __future__ import annotations

from collections.abc import Callable

from indexgen.run import fanout

#: page -> (hash of its text, emit status)
Made = dict[str, tuple[str, str]]


class FolderJob:
    """``emit()`` (render and emit the folder pages) run once: in a forked process from
    :meth:`fork` on, else by :meth:`result` itself."""

    def __init__(self, emit: Callable[[], Made]) -> None:
        self._emit = emit
        self._forked: fanout.Forked | None = None

    def fork(self) -> None:
        """Start ``emit()`` in a forked process, unless it was started already."""
        if self._forked is None:
            self._forked = fanout.Forked(self._emit)

    def result(self) -> Made:
        """What ``emit()`` returned: the forked process's, or computed here."""
        forked, self._forked = self._forked, None
        return forked.result() if forked is not None else self._emit()

    def cancel(self) -> None:
        """Stop the forked process if it still runs (a build that failed first)."""
        if self._forked is not None:
            self._forked.cancel()
