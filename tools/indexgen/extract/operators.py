"""Operator expressions as paths: what ``a | b``, ``~a`` and their like give is what the
dunder method Python picks returns (:func:`operator_path`).

A binary operation is written as the left operand's dunder called with the right operand,
``a.__or__(b)``, with no ``(:`` (an explicit call ``a.__or__(b)`` keeps its arguments as
``a.__or__(:b)``): :func:`indexgen.analyze.paths.parse` reads it as the pair of operands and
the operator, and :meth:`indexgen.analyze.results.Results.call` picks the left operand's
``__or__`` or the right one's ``__ror__`` as Python does.  A unary operation is its dunder
called, ``a.__invert__()``: a method call like any other.
"""

from __future__ import annotations

import ast
from collections.abc import Callable

#: The dunder method of each binary operator; its reflected one is ``__r`` + the rest.
BINARY = {ast.Add: "__add__", ast.Sub: "__sub__", ast.Mult: "__mul__",
          ast.MatMult: "__matmul__", ast.Div: "__truediv__", ast.FloorDiv: "__floordiv__",
          ast.Mod: "__mod__", ast.Pow: "__pow__", ast.LShift: "__lshift__",
          ast.RShift: "__rshift__", ast.BitAnd: "__and__", ast.BitOr: "__or__",
          ast.BitXor: "__xor__"}
#: The names of :data:`BINARY`, which :func:`indexgen.analyze.paths.parse` reads.
BINARY_NAMES = frozenset(BINARY.values())
#: The dunder method of each unary operator (``not`` is no method's).
UNARY = {ast.Invert: "__invert__", ast.USub: "__neg__", ast.UAdd: "__pos__"}
#: Literal left operands and the builtin type they are of (``"(" + expr``: ``str.__add__``).
_LITERAL_TYPES = frozenset({str, bytes, int, float, complex})


def operator_path(node: ast.BinOp | ast.UnaryOp, path: Callable[..., str | None],
                  given: bool) -> str | None:
    """``node`` as a path (``path``: :func:`indexgen.extract.syntax.path`, which reads the
    operands with ``given``): ``a.__or__(b)`` for ``a | b`` (``_`` for a right operand that is
    no path), ``str.__add__(e)`` for ``"(" + e`` (a literal's type, which has no dunder of
    the build: the right operand's reflected one is read), ``a.__invert__()`` for ``~a``;
    None for a left operand that is neither (and for a string formatted with ``%``: a
    string, whatever the right operand is)."""
    if type(node) is ast.UnaryOp:
        name = UNARY.get(type(node.op))
        operand = path(node.operand, given) if name else None
        return f"{operand}.{name}()" if operand else None
    name = BINARY[type(node.op)]
    left = node.left
    if type(left) is ast.Constant or type(left) is ast.JoinedStr:
        kind = str if type(left) is ast.JoinedStr else type(left.value)
        if kind not in _LITERAL_TYPES or kind in (str, bytes) and name == "__mod__":
            return None
        head = kind.__name__
    else:
        head = path(left, given)
        if head is None:
            return None
    return f"{head}.{name}({path(node.right, given) or '_'})"
