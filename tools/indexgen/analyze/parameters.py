"""The parameters of a function as the summary keeps them, and how a call's arguments bind
to them: read by :mod:`indexgen.analyze.overloads` (which stub a call matches) and
:mod:`indexgen.analyze.typevars` (what a type variable of the return annotation stands for).
"""

from __future__ import annotations

from indexgen.extract.model import Definition
from indexgen.extract.stubs import PARAMETERS


def parameters_of(d: Definition) -> list[tuple[str, str, str, str]] | None:
    """(kind, name, default, annotation) of each parameter a stub's summary keeps."""
    entries = d.names.get(PARAMETERS) if d.names else None
    return None if entries is None else [tuple(e.split(":", 3)) for e in entries]


def call_arguments(given: tuple) -> tuple[list, dict, bool, bool]:
    """(positional arguments' steps, keyword name -> steps, whether ``*args`` and whether
    ``**kwargs`` hand more) of a call's kept arguments (:func:`~indexgen.analyze.paths.
    arguments`); the positions after a ``*args`` are not known, and not kept."""
    positional: list = []
    keywords: dict = {}
    more = more_named = False
    for item in given:
        if item is None or type(item[0]) is tuple:
            if not more:
                positional.append(item)
        elif item[0] == "=":
            keywords[item[1]] = item[2]
        elif item[0] == "*":
            more = True
        else:
            more_named = True
    return positional, keywords, more, more_named


def bind(params: list, n: int, names, more: bool, more_named: bool, shift: int):
    """How a call of ``n`` positional arguments and the keyword ``names`` binds to a stub's
    ``params`` (``shift``: places taken before them, a bound function's instance):
    ``([(parameter index, argument: position or name)], [indexes of the parameters left
    out, which their defaults fill])``, or None when it cannot."""
    places = [i for i, p in enumerate(params) if p[0] in "pa"][shift:]
    star = next((i for i, p in enumerate(params) if p[0] == "v"), None)
    extra = next((i for i, p in enumerate(params) if p[0] == "w"), None)
    pairs = []
    for k in range(n):
        if k < len(places):
            pairs.append((places[k], k))
        elif star is None:
            return None  # too many positional arguments
        else:
            pairs.append((star, k))
    taken = {i for i, _ in pairs}
    for name in names:
        i = next((i for i, p in enumerate(params) if p[1] == name and p[0] in "ak"), None)
        if i in taken:
            return None  # given twice
        if i is None and extra is None:
            return None  # no such parameter
        pairs.append((extra if i is None else i, name))
        taken.add(i)
    left = []
    for i, p in enumerate(params):
        if i in taken or p[0] in "vw" or p[0] in "pa" and i not in places:
            continue
        if p[0] in "pa" and more or p[0] in "ak" and more_named:
            continue  # what *args or **kwargs hand may fill it
        if not p[2]:
            return None  # a parameter without a default left out
        left.append(i)
    return pairs, left
