"""Stage 1e (continued): the parameters of ``typing.overload`` stubs, for the global pass.

A function with ``@overload`` stubs says, stub by stub, which return type goes with which
arguments; :mod:`indexgen.analyze.overloads` matches a call against them.  For that a
summary keeps, of each stub and of the implementation beside them (whose defaults say what
a parameter a call leaves out is), the parameters in order as the name ``/`` of the
definition's ``names``: one entry ``kind:name:default:annotation`` each, ``kind`` one of
``p`` (positional only), ``a`` (positional or keyword), ``k`` (keyword only), ``v``
(``*args``) and ``w`` (``**kwargs``); ``default`` empty for none, else what
:func:`~indexgen.extract.syntax.constant_text` writes of a constant (``#None``,
``#Ellipsis`` for a stub's ``...``) or ``_``; ``annotation`` as written ('' for none).  The
instance (``self``, ``cls``) is left out: a call does not hand it.  Other functions keep no
such entry.
"""

from __future__ import annotations

import ast

from indexgen.extract.arguments import constant_text
from indexgen.extract.syntax import annotation

#: The key of a definition's ``names`` that holds its parameters (see the module's doc).
PARAMETERS = "/"


def overloaded(defs: list) -> set[str]:
    """The qualnames of a file's definitions that have ``typing.overload`` stubs."""
    return {d.qualname for d in defs if d.overload}


def parameters(node: ast.FunctionDef | ast.AsyncFunctionDef, instance: bool) -> list[str]:
    """The entries of a function's parameters (see the module's doc); ``instance``: its
    first parameter is the instance or the class, left out."""
    args = node.args
    positional = [*args.posonlyargs, *args.args]
    defaults = [None] * (len(positional) - len(args.defaults)) + list(args.defaults)
    kinds = ["p"] * len(args.posonlyargs) + ["a"] * len(args.args)
    entries = [(kind, a, default) for kind, a, default in zip(kinds, positional, defaults)]
    if args.vararg is not None:
        entries.append(("v", args.vararg, None))
    entries += [("k", a, default) for a, default in zip(args.kwonlyargs, args.kw_defaults)]
    if args.kwarg is not None:
        entries.append(("w", args.kwarg, None))
    if instance and entries and entries[0][0] in "pa":
        entries.pop(0)
    return [f"{kind}:{a.arg}:{_default(default)}:"
            f"{annotation(a.annotation) if a.annotation is not None else ''}"
            for kind, a, default in entries]


def _default(node: ast.AST | None) -> str:
    if node is None:
        return ""
    return constant_text(node.value) if type(node) is ast.Constant else "_"
