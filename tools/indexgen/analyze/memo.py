"""One memo for the type evaluation, whose answers do not depend on the order of the files.

The evaluation of :class:`~indexgen.analyze.types.Types` is one recursion (a name's value
is its sources' values, a source is a path of names, members and calls...) with two cuts
that keep it finite: a value asked for while it is being computed counts as no value (the
*cycle guard*: ``x = x.next()``), and paths nested deeper than a limit count as no value
(the *depth limit*).  Where a cut falls depends on where the recursion was entered: ask
for ``parts`` first and the cycle through ``part`` is cut at ``parts``; ask for ``part``
first and it is cut at ``part``.  A memo that kept every value for the whole build would
hand the first caller's cut to every later caller, in any file, so the pages would depend
on the order in which the files were resolved -- and a build could not give the files to
several processes.

:class:`GuardedMemo` holds the rule that prevents that, in one place:

- a value whose computation met no cut (no cycle guard, no depth limit, no value kept
  under the next rule) is the same whoever asks, wherever: it is kept for the build.  (A
  caller could only see it cut if a value in progress were among those it reads, and
  that value would then read it back: a cycle, which its own computation would have met.)
  It is reused only at a depth where computing it again would not reach the limit either:
  the memo keeps how deep its computation went;
- a value shaped by a cut is kept only within one *scope* (:meth:`begin`: the file whose
  calls are being resolved), whose queries come in the same order in every build: the
  next file computes it again, from its own entry.

So the values a file's calls are resolved with depend on that file alone (and on the
tables built before any file, from a clean state: :meth:`isolated`); the cost is that a
cycle touched by many files is evaluated again in each.

A value may also read something a later round will know better (the call graph's first
round does not yet know what call sites hand a parameter): the evaluation notes it
(:meth:`note_provisional`), and the memo carries the note with the value to whoever reads
it.  A top-level query that is :meth:`settled` (neither cut nor provisional) gives the same
answer in every later round, so that round need not ask it again.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import Any


class GuardedMemo:
    """A memo and a cycle guard shared by the recursive methods of an evaluation, and the
    depth of paths nested inside one another.

    Args:
        limit: How deep paths may nest (:meth:`enter` returns False beyond it).
        empty: The value a cut gives (the value of nothing).
    """

    __slots__ = ("limit", "empty", "depth", "_table", "_scoped", "_at", "_cut", "_reach",
                 "_provisional")

    def __init__(self, limit: int, empty: Any) -> None:
        self.limit = limit
        self.empty = empty
        self.depth = 0  # paths being evaluated inside one another now
        # key -> (value, how deep it went, whether it read a provisional value)
        self._table: dict[Hashable, tuple[Any, int, bool]] = {}
        self._scoped: dict[Hashable, Any] = {}  # key -> value shaped by a cut, this scope's
        self._at: set[Hashable] = set()  # keys in progress
        self._cut = False  # whether a cut shaped the computation in progress
        self._reach = 0  # the deepest depth the computation in progress reached
        self._provisional = False  # whether it read a value a later round may change

    def clear(self) -> None:
        """Forget every value kept (what they were computed from has changed)."""
        self._table.clear()
        self._scoped.clear()

    def forget_provisional(self) -> None:
        """Forget the values kept that read something provisional, and those shaped by a
        cut: what was provisional is known now.  The others are the same in any round
        (neither cut nor provisional), and are kept."""
        self._table = {k: v for k, v in self._table.items() if not v[2]}
        self._scoped.clear()

    def begin(self) -> None:
        """Start a new scope: forget the values shaped by a cut."""
        self._scoped.clear()

    def get(self, key: Hashable, compute: Callable[..., Any], *args: Any) -> Any:
        """The value for ``key``: kept, else ``compute(*args)`` under the guard;
        :attr:`empty` when ``key`` is in progress already (a cycle, cut here)."""
        hit = self._table.get(key)
        if hit is not None:
            reach = self.depth + hit[1]
            if reach <= self.limit + 1:  # computed again here, it would not be cut either
                if reach > self._reach:
                    self._reach = reach
                if hit[2]:
                    self._provisional = True
                return hit[0]
        found = self._scoped.get(key)
        if found is not None:
            self._cut = True
            return found
        if key in self._at:
            self._cut = True
            return self.empty
        self._at.add(key)
        cut, reach, provisional = self._cut, self._reach, self._provisional
        self._cut, self._reach, self._provisional = False, self.depth, False
        try:
            value = compute(*args)
        finally:
            self._at.discard(key)
            mine_cut, mine_reach, mine_provisional = self._cut, self._reach, self._provisional
            self._cut = cut or mine_cut
            self._reach = reach if reach > mine_reach else mine_reach
            self._provisional = provisional or mine_provisional
        if mine_cut:
            self._scoped[key] = value
        else:
            self._table[key] = (value, mine_reach - self.depth, mine_provisional)
        return value

    def note_provisional(self) -> None:
        """The computation in progress read a value that a later round may know better
        (what call sites hand a parameter, before the call graph is complete)."""
        self._provisional = True

    def watch(self) -> None:
        """Start a top-level query (nothing in progress): :meth:`settled` then says whether
        its computations, until the next :meth:`watch`, met no cut and read nothing
        provisional."""
        self._cut = self._provisional = False

    def settled(self) -> bool:
        """Whether the top-level query since :meth:`watch` would give the same answer in
        any later round, asked anywhere: no cut shaped it, nothing provisional fed it."""
        return not (self._cut or self._provisional)

    def enter(self) -> bool:
        """One path deeper: False (the cut noted, the depth unchanged) beyond the limit;
        else True, and :meth:`leave` must follow."""
        if self.depth > self.limit:
            self._cut = True
            return False
        self.depth += 1
        if self.depth > self._reach:
            self._reach = self.depth
        return True

    def leave(self) -> None:
        """Back one path (after :meth:`enter` returned True)."""
        self.depth -= 1

    def isolated(self, compute: Callable[[], Any]) -> Any:
        """``compute()`` as if no computation were in progress (a table built on first use
        must not depend on where it was first asked for); the computations in progress
        count as cut, since what they read before it may differ from what they read after."""
        saved = self._at, self._cut, self._reach, self.depth, self._provisional
        self._at, self._cut, self._reach, self.depth = set(), False, 0, 0
        try:
            return compute()
        finally:
            self._at, self._cut, self._reach, self.depth, self._provisional = saved
            self._cut = self._cut or bool(self._at)
