"""A method a subclass gets from a sibling base: the other side of multiple inheritance.

Class hierarchy analysis lists, for a call ``self.tokens()`` in ``class Lexer``, the
``tokens`` of ``Lexer`` and those its documented subclasses define themselves
(:meth:`indexgen.analyze.hierarchy.Hierarchy.overrides`).  A subclass with several bases
may also take the method from a base that is no subclass of ``Lexer``: in ::

    class PostgresBase:                      # a mixin
        def tokens(self): ...

    class PostgresLexer(PostgresBase, Lexer):
        pass

an instance of ``PostgresLexer`` is a ``Lexer``, and ``self.tokens()`` in ``Lexer`` runs
``PostgresBase.tokens``, which comes first in ``PostgresLexer``'s method order.  So for
each documented subclass of the receiver's class whose method order holds classes that are
neither that class's own bases nor its subclasses (its *foreign* classes), the method
Python finds first is listed when a foreign class defines it (:func:`sibling_methods`).
Only classes with several bases have foreign classes, so single inheritance costs nothing
here but the table of them, made once.
"""

from __future__ import annotations

from typing import Any

#: The kinds of definitions a call on an instance may run (a ``function`` in a class body is
#: one bound to a class attribute); :mod:`indexgen.analyze.hierarchy` reads it too.
CALLABLE_KINDS = frozenset({"method", "classmethod", "staticmethod", "function"})


def sibling_methods(h: Any, key: str, cls: str, attr: str) -> list[tuple[str, str]]:
    """``[(file key, qualname)]`` of the methods ``attr`` that documented subclasses of the
    class ``cls`` of file ``key`` find first in a foreign class of their method order (see
    the module's doc), in the subclasses' order; ``h``: the
    :class:`~indexgen.analyze.hierarchy.Hierarchy` (its ``mro``, ``subclasses`` and
    tables)."""
    if attr not in sibling_names(h):
        return []
    found: list[tuple[str, str]] = []
    for sub, foreign in _foreign(h, key, cls):
        hit = _first_foreign(h, h.mro(*sub), attr, foreign)
        if hit is not None and hit not in found:
            found.append(hit)
    return found


def sibling_names(h: Any) -> frozenset[str]:
    """The names of the methods of the build's classes that are foreign to some class (in
    the method order of a class with several bases): a quick exit for
    :func:`sibling_methods`, made once."""
    found = h._memo.get("sibling names")
    if found is None:
        bases: set[tuple[str, str]] = set()  # the classes some class with several bases has
        for k, s in h.resolver.files.items():
            for d in s.definitions:
                if d.kind == "class" and _several(h, k, d):
                    bases.update(h.mro(k, d.qualname)[1:])
        found = h._memo["sibling names"] = frozenset(
            d.name for k, s in h.resolver.files.items() for d in s.definitions
            if d.kind in CALLABLE_KINDS and d.parent and (k, d.parent) in bases)
    return found


def _several(h: Any, key: str, d: Any) -> bool:
    """Whether the class ``d`` of file ``key`` names several bases."""
    return len(h.resolver.module(key).bases.get(d.qualname, ())) > 1


def _foreign(h: Any, key: str, cls: str) -> list[tuple[tuple[str, str], frozenset]]:
    """The documented subclasses of the class with foreign classes in their method order,
    each with those classes (of the build only: a method outside has no page); made once a
    class."""
    memo = ("siblings", key, cls)
    found = h._memo.get(memo)
    if found is None:
        subclasses = h.subclasses(key, cls)
        known = {*(h.mro(key, cls) if key else [(key, cls)]), *subclasses}  # ("", dotted)
        found = []
        for sub in subclasses:
            foreign = frozenset(x for x in h.mro(*sub) if x[0] and x not in known)
            if foreign:
                found.append((sub, foreign))
        h._memo[memo] = found
    return found


def after_in_subclasses(h: Any, key: str, cls: str, attr: str) -> list[tuple[str, str]]:
    """``[(file key, qualname)]`` of the methods ``attr`` that ``super().attr(...)`` in a
    method of the class ``cls`` runs on instances of its documented subclasses whose method
    order puts a foreign class after ``cls`` (a mixin's ``super()`` reaches the class after
    it: ``class PgLexer(PgMixin, Lexer)``, ``super().tokens()`` in ``PgMixin`` runs
    ``Lexer.tokens``): for each, the first class after ``cls`` that defines it, when that
    class is foreign to ``cls``."""
    if attr not in sibling_names(h):
        return []
    found: list[tuple[str, str]] = []
    for sub, foreign in _foreign(h, key, cls):
        order = h.mro(*sub)
        if (key, cls) in order:
            hit = _first_foreign(h, order[order.index((key, cls)) + 1:], attr, foreign)
            if hit is not None and hit not in found:
                found.append(hit)
    return found


def _first_foreign(h: Any, order: list[tuple[str, str]], attr: str, foreign: frozenset
                   ) -> tuple[str, str] | None:
    """``(file key, qualname)`` of the method ``attr`` of the first class of ``order`` that
    defines ``attr`` (as Python looks it up), when that class is one of ``foreign`` and
    defines a method; else None."""
    for owner in order:
        d = h._defs[owner[0]][1].get(f"{owner[1]}.{attr}") if owner[0] else None
        if d is not None:
            return (owner[0], d.qualname) if owner in foreign and d.kind in CALLABLE_KINDS \
                and not d.overload else None
    return None
