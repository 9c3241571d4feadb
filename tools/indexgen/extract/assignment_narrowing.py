"""Stage 1e (continued): an attribute path read after the function assigned it.

``self.field: Field = String()`` then ``self.field._serialize(...)`` on the next line calls
``String._serialize``: the attribute holds what was just assigned, not any value its
annotation or the class's other assignments allow (every ``Field`` subclass's
``_serialize``).  Python's type checkers narrow so too (pyright's "narrowing on
assignment").  An assignment of an attribute path of one or two dots (``self.field``,
``node.meta.val``) narrows that path over the statements that follow it in its block, and
the blocks those hold, as an ``isinstance`` narrowing (:mod:`indexgen.extract.
attribute_narrowing`) is kept: only where a call of the function starts with the path, and
cut where the function assigns the path or a prefix of it again (a later turn of a loop, a
branch that assigns it: :func:`indexgen.extract.narrowing.cut`).  Like mypy and pyright, a
call in between (``self.reset()``) does not end it.

Its source is the assigned value's (``=String()``); where the global pass finds nothing in
that value it reads the path as it would without the narrowing
(:meth:`indexgen.analyze.types.Types._name_uncached`).  An attribute of ``self`` that the
class defines as a method of its own (a property, whose setter may keep something else) is
not narrowed.
"""

from __future__ import annotations

import ast

from indexgen.extract.narrowing import Narrowing
from indexgen.extract.sources import values
from indexgen.extract.syntax import blocks, path

_NESTED = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)


def attribute_path(node: ast.AST) -> str | None:
    """``self.data`` of an attribute node that is a path of one or two attributes on a name
    (``self.data``, ``self.a.b``; the paths a narrowing keeps), else None."""
    if type(node) is not ast.Attribute:
        return None
    found = path(node)
    if found is None or not 1 <= found.count(".") <= 2 or not all(
            p.isidentifier() for p in found.split(".")):
        return None
    return found


def assigned_path(node: ast.AST) -> str | None:
    """``self.field`` of ``self.field = v`` or ``self.field: T = v`` (one target: an
    :func:`attribute_path`); None for any other statement."""
    t = type(node)
    if t is ast.Assign:
        return attribute_path(node.targets[0]) if len(node.targets) == 1 else None
    return attribute_path(node.target) if t is ast.AnnAssign and node.value is not None \
        else None


def assignment_narrowings(function: ast.AST, called: set[str]) -> list[Narrowing]:
    """The narrowings of the attribute paths of ``called`` that ``function``'s own
    statements assign (not those of the functions and classes it holds): each over the
    statements after the assignment in its block."""
    found: list[Narrowing] = []
    todo = [function.body]
    while todo:
        block = todo.pop()
        for k, st in enumerate(block):
            if type(st) in _NESTED:
                continue
            todo.extend(blocks(st))
            p = assigned_path(st)
            if p is None or p not in called or k + 1 == len(block):
                continue
            sources = values(st.value, {})
            if not sources or any(s[0] != "=" for s in sources):
                continue
            after = block[k + 1:]
            found += [(p, after[0].lineno, after[-1].end_lineno, s, after) for s in sources]
    return found
