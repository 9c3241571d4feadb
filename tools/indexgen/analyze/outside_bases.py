"""An attribute no class of the build defines, where a base outside the build may hold it.

The member lookup (:class:`indexgen.analyze.members.Members`) walks a class's bases in
their order; when none of the build's classes defines the attribute, the first base outside
the build that may hold it answers (:func:`outside_member`).  Some bases give a class no
attribute (:data:`MARKERS`: ``abc.ABC`` only sets the metaclass, so a mixin's
``self.assertEqual`` is no ``abc.ABC.assertEqual``); some make instances of a builtin
(a ``TypedDict`` is a ``dict``, a ``NamedTuple`` a ``tuple`` with the methods
``namedtuple`` makes); and a class of the standard library that certainly lacks the
attribute is not where it comes from (:func:`indexgen.analyze.builtin_names.outside_lacks`).
"""

from __future__ import annotations

from collections import namedtuple

from indexgen.analyze.builtin_names import builtin_exists, outside_lacks

#: Bases that give a class no attribute of its own: never where one a class lacks comes from.
MARKERS = frozenset({"abc.ABC", *(f"{m}.{c}" for m in ("typing", "typing_extensions")
                                  for c in ("Protocol", "Generic"))})
#: Outside bases whose instances are a builtin's at run time.
_RUNTIME = {f"{m}.{c}": b for m in ("typing", "typing_extensions")
            for c, b in (("TypedDict", "dict"), ("NamedTuple", "tuple"))}
#: What ``namedtuple`` adds to a ``tuple`` (``_replace``, ``_asdict``...).
_MADE = frozenset(set(dir(namedtuple("T", ()))) - set(dir(tuple)))


def outside_member(base: str, attr: str) -> frozenset:
    """The value of the attribute ``attr`` of a class whose first base outside the build
    that may hold it is ``base`` (a value of :mod:`indexgen.analyze.values`): that base's
    (``("xa", "unittest.TestCase.assertEqual")``), or the builtin's its instances are
    (``("b", "dict.get")``); nothing where ``base`` is a class of the standard library
    without it (``enum.Enum``'s ``brush``: the object is another class's) or the builtin
    lacks it."""
    builtin = _RUNTIME.get(base)
    if builtin is None or builtin == "tuple" and attr in _MADE:
        return frozenset() if outside_lacks(base, attr) \
            else frozenset({("xa", f"{base}.{attr}")})
    found = f"{builtin}.{attr}"
    return frozenset({("b", found)}) if builtin_exists(found) else frozenset()


#: The classes of :mod:`io` (and their C twins' names as :mod:`_io` gives them) a project
#: class may subclass, and whether they are of bytes, of text or the base of both.
_IO = {**{f"{m}.{c}": "BinaryIO" for m in ("io", "_io") for c in (
    "BytesIO", "BufferedIOBase", "RawIOBase", "FileIO", "BufferedReader", "BufferedWriter",
    "BufferedRandom", "BufferedRWPair")},
       **{f"{m}.{c}": "TextIO" for m in ("io", "_io") for c in (
           "StringIO", "TextIOBase", "TextIOWrapper")},
       "io.IOBase": "", "_io._IOBase": ""}


def stands_for(base: tuple[str, str]) -> tuple[tuple[str, str], ...]:
    """The names ``typing`` gives the values a base of a project class makes, as the class
    hierarchy names classes outside the build (``("", "io.BytesIO")``: ``("", "typing.IO")``
    and ``("", "typing.BinaryIO")``; none for a project base): a call on a ``t.BinaryIO``
    may run that class's ``write`` (click's ``BytesIOCopy(io.BytesIO)`` handed where
    ``_output: t.BinaryIO`` is read), as a call on an ``io.BytesIO`` may."""
    kind = _IO.get(base[1]) if not base[0] else None
    if kind is None:
        return ()
    return (("", "typing.IO"), ("", f"typing.{kind}")) if kind else (("", "typing.IO"),)
