"""Whether an instance of a project class passes an ``isinstance`` test for a class outside
the build: boltons' ``OrderedMultiDict(dict)`` is a ``dict`` and a
``collections.abc.Mapping``, a ``Color(enum.Enum)`` an ``enum.Enum``.

The class hierarchy (:meth:`indexgen.analyze.hierarchy.Hierarchy.mro`) lists a class's
bases outside the build by their dotted names and leaves the builtins out; an
``isinstance`` test reads its classes as values (``dict`` and ``Mapping`` a mapping of
unknown items, ``io.IOBase`` an outside instance), which no project instance is.
:func:`passes` reads both as names: a base passes a test it equals, or, where both are
classes of the builtins or of a few modules of the standard library that this process has
loaded already (:data:`_MODULES`), one whose class Python says it is a subclass of
(``issubclass(dict, collections.abc.Mapping)``; ``typing.Dict`` is read as ``dict``).
"""

from __future__ import annotations

import abc
import builtins
import collections
import collections.abc
import enum
import io
import numbers
import typing
from collections.abc import Iterable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from indexgen.analyze.hierarchy import Hierarchy

#: The modules whose classes are compared as Python's classes (all imported at start-up).
_MODULES = {m.__name__: m for m in (abc, builtins, collections, collections.abc, enum, io,
                                    numbers, typing)}


def runtime_class(dotted: str) -> type | None:
    """The class ``dotted`` names among :data:`_MODULES` (a builtin's name alone: ``dict``;
    ``typing.Mapping``: ``collections.abc.Mapping``), or None."""
    module, _, name = dotted.rpartition(".")
    found = getattr(_MODULES.get(module or "builtins"), name, None)
    found = typing.get_origin(found) or found
    return found if isinstance(found, type) else None


def passes(bases: Iterable[str], tests: Iterable[str]) -> bool:
    """Whether a class whose bases outside the build are ``bases`` (dotted names) is a
    subclass of one of the outside classes ``tests``."""
    for test in tests:
        wanted = runtime_class(test)
        for base in bases:
            if base == test:
                return True
            have = runtime_class(base) if wanted is not None else None
            if have is not None and issubclass(have, wanted):  # type: ignore[arg-type]
                return True
    return False


def tested_outside(h: Hierarchy, key: str, text: str) -> tuple[str, ...]:
    """The dotted names of the classes outside the build that the test ``text`` (``dict |
    list``, ``cabc.Mapping``: :mod:`indexgen.extract.narrowing`) of file ``key`` names; a
    name the module does not bind (a function's own import) by its last part, as the
    annotations read ``Mapping`` (:data:`indexgen.analyze.values.MAPPING_TYPES`)."""
    return h.remembered(("outside-tests", key, text), lambda: _tested_outside(h, key, text))


def _tested_outside(h: Hierarchy, key: str, text: str) -> tuple[str, ...]:
    names = []
    for part in text.split("|"):
        part = part.strip()
        target = h.resolver.name_in(key, part)
        if target is None:
            last = part.rpartition(".")[2]
            names.append(last if runtime_class(last) else f"collections.abc.{last}"
                         if runtime_class(f"collections.abc.{last}") else part)
        elif target.kind != "project":
            names.append(target.qualname)
    return tuple(names)


def outside_bases(h: Hierarchy, key: str, cls: str) -> tuple[str, ...]:
    """The dotted names of the bases outside the build of the project class ``cls`` of
    file ``key`` and of its project bases, builtins (``dict``) included."""
    return h.remembered(("outside-bases", key, cls), lambda: _outside_bases(h, key, cls))


def _outside_bases(h: Hierarchy, key: str, cls: str) -> tuple[str, ...]:
    names = []
    for k, c in h.mro(key, cls):
        if not k:
            names.append(c)
            continue
        for base in h.resolver.module(k).bases.get(c, []):
            target = h.resolver.name_in(k, base.split("[", 1)[0]) if "(" not in base \
                else None
            if target is not None and target.kind == "builtin":
                names.append(target.qualname)
    return tuple(names)
