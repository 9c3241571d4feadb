"""A lambda as the global pass reads it: a closure of the definition around it.

The extraction writes a lambda used as a value as ``_λ<line>_<parameters>``
(:mod:`indexgen.extract.lambdas`), and its parameters as names of the innermost definition
holding its line, whose sources are what the closure's callers hand them.  That path, read
anywhere (in the class body's table, in a function that returns it), is the closure
``("n", key, D, "_λ<parameters>")`` of that definition ``D`` (one for its lambdas of the same
parameters), whose call sites
:mod:`indexgen.analyze.flows` joins as a nested function's.
"""

from __future__ import annotations

from indexgen.analyze.values import NONE, Values
from indexgen.extract.lambdas import PREFIX
from indexgen.extract.model import Definition


def is_lambda(name: str) -> bool:
    """Whether a path's name is a lambda's (:func:`indexgen.extract.lambdas.token`)."""
    return name[:2] == PREFIX


def lambda_value(defs: dict[str, Definition], key: str, name: str) -> Values:
    """The closure a lambda's path ``name`` stands for in file ``key`` (``defs``: its
    definitions by qualname): of the innermost definition holding its line; nothing at a
    module's top level (no definition to hold its parameters)."""
    line, _, params = name[2:].partition("_")
    line = int(line)
    best = None
    for d in defs.values():
        if d.lineno <= line <= d.end_lineno and (best is None or d.lineno >= best.lineno):
            best = d
    return frozenset({("n", key, best.qualname, PREFIX + params)}) if best is not None \
        else NONE


def lambdas_apart(values: Values) -> Values:
    """``values`` without the lambdas (a field's default ``lambda node: True`` says no more
    of the field than its ``Callable`` annotation: what the constructor's callers hand it
    may)."""
    return frozenset(v for v in values if not (v[0] == "n" and is_lambda(v[3])))
