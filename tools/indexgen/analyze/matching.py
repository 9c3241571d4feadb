"""Attributes a ``getattr`` with a computed name may read: ``getattr(self, "visit_" +
kind)`` is written as the pattern ``visit_*`` (:func:`indexgen.extract.syntax.name_pattern`),
and :meth:`Matching.matching` gives every attribute whose name fits it.

:class:`Matching` is mixed into :class:`~indexgen.analyze.members.Members` (moved out of it
whole), whose ``member``, ``_class_member``, tables, cycle guard, ``mro`` and
``subclasses`` it uses.
"""

from __future__ import annotations

import re
from functools import lru_cache

from indexgen.analyze.values import NONE, Value, Values, union

_METHOD_KINDS = frozenset({"method", "classmethod", "staticmethod"})


@lru_cache(maxsize=256)
def _fits(pattern: str):
    """A test of names against a ``getattr`` pattern (``visit_*``: ``*`` any characters)."""
    return re.compile(".*".join(map(re.escape, pattern.split("*")))).fullmatch


class Matching:
    """``getattr`` with a name pattern; mixed into :class:`~indexgen.analyze.members.
    Members`."""

    resolver: object
    _defs: dict

    def matching(self, value: Value, pattern: str) -> Values:
        """``getattr(value, "visit_*")``: the attributes of ``value`` whose names fit the
        pattern (``*``: any characters): of an instance or a class, those its class and its
        project bases define and those its documented subclasses define or bind (the value
        may be one of theirs); of a module, its names."""
        return self._guard.get(("\10", value, pattern), self._matching, value, pattern)

    def _matching(self, value: Value, pattern: str) -> Values:
        fits = _fits(pattern)
        kind = value[0]
        if kind == "m":
            names = {q for q in self._defs[value[1]][1] if "." not in q}
            names.update(self.resolver.module(value[1]).attrs)
            return union(self.member(value, n) for n in sorted(names) if fits(n))
        if kind != "i" and kind != "c":
            return NONE
        names = set()
        for k, c in self.mro(value[1], value[2]):
            by_name = self._defs[k][1] if k else {}
            owner = by_name.get(c)
            if owner is not None:
                names.update(owner.members)
            names.update(q.rpartition(".")[2] for q, d in by_name.items() if d.parent == c)
        found = [self._class_member(value[1], value[2], n, kind == "i")
                 for n in sorted(names) if fits(n)]
        for k, c in self.subclasses(value[1], value[2]):
            by_name = self._defs[k][1]
            found += [frozenset({("f", k, q)}) for q, d in by_name.items()
                      if d.parent == c and d.kind in _METHOD_KINDS and not d.overload
                      and fits(q.rpartition(".")[2])]
            owner = by_name.get(c)  # and what it binds otherwise (visit_Add = make("+"))
            found += [self._class_member(k, c, n, kind == "i") for n in sorted(
                getattr(owner, "members", ())) if fits(n) and f"{c}.{n}" not in by_name]
        return union(found)
