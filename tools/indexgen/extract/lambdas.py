"""Stage 1e (continued): a lambda as a value, and its parameters as what its callers hand.

A lambda has no name and no definition of its own: its calls belong to the innermost
definition around it (:mod:`indexgen.extract.calls`), a class body's lambda to the class.
So that a call through it can still type its parameters (``T = {"a": lambda self, e:
self.binary(e)}``, then ``self.T["a"](self, e)``; ``g = make()`` where ``make`` returns
``lambda a: a.run()``, then ``g(A())``), a lambda written as a value is the path
:func:`token` (``_λ12_self_e``: its line and its parameters), which the global pass reads as
a closure of that definition (:func:`indexgen.analyze.lambdas.lambda_value`): one closure,
``_λself_e``, for all its lambdas of the same parameters (a union of lambdas a table holds
stays small; their calls are listed under the same definition anyway, and a parameter's name
is one name of the definition already); each of its parameters is a
name of the definition whose sources are what the closure's callers hand it
(``<λ_λself_e|0:self``, :meth:`indexgen.analyze.flows.Flows._flow`), as a nested function's
are (:func:`indexgen.extract.sources.nested_function`).  In a class body, where no name is
local, a lambda's parameters are local over the lambda's lines (:func:`class_locals`).
"""

from __future__ import annotations

import ast

from indexgen.extract.shadows import MARK, SELF_NAMES
from indexgen.extract.syntax import lambda_name, path

#: What starts the path of a lambda (:func:`token`): no name a program writes.
PREFIX = "_λ"


def token(node: ast.Lambda) -> str:
    """The path of a lambda written as a value: ``_λ<line>_`` and its parameters' names
    (``_λ12_self_e``: the line finds its definition; the closure is
    :func:`~indexgen.extract.syntax.lambda_name`'s, ``_λself_e``)."""
    return path(node)


def parameters(node: ast.Lambda, in_method: bool, cls: str = "") -> list[tuple[str, str]]:
    """(name, source) of each positional or keyword-only parameter of a lambda: what the
    callers of the lambda hand it; in a method (``in_method``), its own ``self`` or ``cls``
    named apart, as :mod:`indexgen.extract.shadows` writes it in the lambda's calls.  In
    the body of the class ``cls``, a first parameter ``self`` is an instance of that class
    (``T = {"a": lambda self, e: self.binary(e)}``: the class's method in all but name,
    called with the instance), not what a base's method hands (``self.T[k](self, e)`` in a
    base, whose ``self`` would reach a sibling class's overrides)."""
    args = node.args
    positional = [*args.posonlyargs, *args.args]
    name = lambda_name(node)
    out = []
    for k, a in enumerate((*positional, *args.kwonlyargs)):
        spot = k if k < len(positional) else "k"
        bound = a.arg + MARK if in_method and a.arg in SELF_NAMES else a.arg
        out.append((bound, f":{cls}" if cls and k == 0 and a.arg == "self"
                    else f"<λ{name}|{spot}:{a.arg}"))
    if args.vararg is not None:
        out.append((args.vararg.arg, f"<λ{name}|*{len(positional)}:{args.vararg.arg}"))
    return out


def class_locals(lambdas: list[ast.Lambda], owner: list[int], classes: set[int]
                 ) -> dict[int, set[str]]:
    """Line -> the parameters of the lambdas of a class body (``owner``: the innermost
    definition of each line; ``classes``: the indexes of the classes) whose lines hold it:
    the names local there."""
    found: dict[int, set[str]] = {}
    top = len(owner) - 1
    for node in lambdas:
        if not 0 <= node.lineno <= top or owner[node.lineno] not in classes:
            continue
        args = node.args
        names = {a.arg for a in (*args.posonlyargs, *args.args, *args.kwonlyargs)}
        if args.vararg is not None:
            names.add(args.vararg.arg)
        for line in range(node.lineno, node.end_lineno + 1):
            found.setdefault(line, set()).update(names)
    return found
