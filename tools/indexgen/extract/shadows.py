"""Stage 1c (continued): where a nested function or lambda of a method has a ``self`` (or
``cls``) of its own.

A method's calls on ``self`` and ``cls`` are resolved in its class
(:mod:`indexgen.extract.calls`), and the calls of the functions and lambdas nested in it
count for the method.  A nested scope that takes a parameter of that name binds another
object: ``def __str__(self): return self.__repr__()`` inside a class factory's method, or
``lambda self, **kw: evolve(self, **kw)``, is handed an instance of the class being built,
not the method's.  :func:`shadowed` finds the lines where that is so, and :func:`renamed`
writes such a name apart (``selfʹ``) in a call or flow record of those lines, so that the
global pass reads it as a name of unknown value instead of the method's instance.

A nested ``def`` covers its lines; a lambda (or another binding of the name in the
method's body) its own line only.
"""

from __future__ import annotations

import ast
import re

from indexgen.extract.structure import FUNCS
from indexgen.extract.syntax import targets

#: The names a method's calls are resolved by in its class.
SELF_NAMES = frozenset({"self", "cls"})
#: What a shadowed name becomes: a letter no source writes after these names.
MARK = "\u02b9"
#: The statements with one ``target`` that may bind a name.
_TARGETED = (ast.AnnAssign, ast.For, ast.AsyncFor, ast.NamedExpr)
_WORD = re.compile(r"\b(self|cls)\b(?!\u02b9)")


def shadowed(method_params: set[tuple[str, int]], nested: list[ast.AST],
             bindings: list[tuple[str, int]]) -> dict[int, frozenset[str]]:
    """Line -> the names of :data:`SELF_NAMES` a nested scope binds there as its own.

    Args:
        method_params: ``(name, line)`` of the parameters of the file's own definitions
            (those are the method's own ``self`` and ``cls``).
        nested: The nested function definitions of the file (not definitions of their
            own), each covering its lines.
        bindings: Every ``(name, line)`` the walk found bound; a ``self`` or ``cls`` bound
            elsewhere than as a definition's own parameter (a lambda's) covers its line.
    """
    found: dict[int, set[str]] = {}
    for node in nested:
        args = node.args
        names = {a.arg for a in (*args.posonlyargs, *args.args)} & SELF_NAMES
        for line in range(node.lineno, node.end_lineno + 1) if names else ():
            found.setdefault(line, set()).update(names)
    for name, line in bindings:
        if name in SELF_NAMES and (name, line) not in method_params:
            found.setdefault(line, set()).add(name)
    return {line: frozenset(names) for line, names in found.items()}


def renamed(text: str, names: frozenset[str]) -> str:
    """A call's path or flow record with ``names`` written apart (``selfʹ``): the head of a
    path, every such name of a flow record (``<evolve\\t0=self``)."""
    if text[0] == "<":
        return _WORD.sub(lambda m: m[0] + MARK if m[0] in names else m[0], text)
    head = text.partition(".")[0]
    return head + MARK + text[len(head):] if head in names else text


def rebound(binders: list[ast.AST]) -> list[tuple[str, int]]:
    """``(name, line)`` of each ``self``/``cls`` a statement binds by assignment, loop or
    ``with`` (``cls = Out if flag else Alloc``): in its function, a value of its own.  One a
    nested function binds is that function's own (``def stubs(m): cls = type(m)``)."""
    out = []
    inner = {line for node in binders if type(node) in FUNCS
             for line in range(node.lineno, node.end_lineno + 1)}
    for node in binders:
        t = type(node)
        if t is ast.Assign or t is ast.withitem or t in _TARGETED:
            out += [(x.id, x.lineno) for x in targets(node) if type(x) is ast.Name
                    and x.id in SELF_NAMES and x.lineno not in inner]
    return out


def own_parameters(defs: list[tuple[object, ast.AST]]) -> set[tuple[str, int]]:
    """``(name, line)`` of the ``self``/``cls`` parameters of the file's own definitions
    (``structure.defs``: definition and node pairs)."""
    found = set()
    for _d, node in defs:
        if type(node) in FUNCS:
            args = node.args
            found.update((a.arg, a.lineno) for a in (*args.posonlyargs, *args.args)
                         if a.arg in SELF_NAMES)
    return found


def own_rebinding(defs: list, first_param: dict[int, str], mine: set[tuple[int, str]]
                  ) -> None:
    """Settle the sources of each method's ``self`` or ``cls`` (``first_param``: definition
    index -> its first parameter's name) that its names hold assignments for: where the
    method itself assigns it (``mine``: ``(definition index, name)``, from :func:`rebound`;
    ``self = self.parent``) it is the instance (``@``) or what is assigned; otherwise the
    assignments are a nested function's own name (``cls = type(m)``), not the method's."""
    for i, first in first_param.items():
        sources = defs[i].names.get(first) if first in SELF_NAMES else None
        if not sources or not any(x[0] == "=" for x in sources):
            continue
        if (i, first) in mine:
            if "@" not in sources:
                sources.insert(0, "@")
        else:
            sources[:] = [x for x in sources if x[0] != "="]
            if not sources:
                del defs[i].names[first]
