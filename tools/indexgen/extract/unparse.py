"""Source text of small expressions, as :func:`ast.unparse` writes it, made faster.

Signatures, annotations and defaults are mostly names, attribute chains, subscripts,
constants, calls, tuples and lists: :func:`unparse` writes those itself and leaves anything
else to :func:`ast.unparse`.
"""

from __future__ import annotations

import ast


def dotted(node: ast.AST) -> str:
    """``a.b.c`` for a Name/Attribute chain; an unnamed receiver shows as ``(...)``."""
    parts = []
    while type(node) is ast.Attribute:
        parts.append(node.attr)
        node = node.value
    parts.append(node.id if type(node) is ast.Name else "(...)")
    return ".".join(reversed(parts))


_ATOMS = (ast.Name, ast.Attribute, ast.Subscript, ast.Constant, ast.Call, ast.Tuple, ast.List)
_REPR_TYPES = (int, bool, str, type(None))


def unparse(node: ast.AST) -> str:
    """What :func:`ast.unparse` writes for ``node``, without its visitor for the expressions
    signatures and annotations are mostly made of (names, attribute chains, subscripts,
    constants, calls, tuples, lists, ``X | Y`` and negative numbers): 31,000 of them in a
    build of torch, where the visitor cost a quarter of the signature work.  Anything else
    goes to :func:`ast.unparse` (tested to write the same text on every expression of the
    installed torch)."""
    text = _quick(node)
    return ast.unparse(node) if text is None else text


def _quick(node: ast.AST) -> str | None:  # noqa: PLR0911, PLR0912 - one case per node type
    """The text of ``node`` as :func:`ast.unparse` writes it at the precedence of a whole
    expression, or None for forms it leaves to :func:`ast.unparse`."""
    t = type(node)
    if t is ast.Name:
        return node.id
    if t is ast.Constant:
        value = node.value
        vt = type(value)
        if node.kind is not None:
            return None
        if vt in _REPR_TYPES:
            return repr(value)
        if vt is float:
            text = repr(value)
            return None if ("inf" in text or "nan" in text) else text
        return "..." if value is ... else None
    if t is ast.Attribute:
        base = node.value
        while type(base) is ast.Attribute:
            base = base.value
        return dotted(node) if type(base) is ast.Name else None
    if t is ast.Subscript:
        value, index = node.value, node.slice
        if type(value) not in (ast.Name, ast.Attribute, ast.Subscript):
            return None
        head = _quick(value)
        if type(index) is ast.Tuple and len(index.elts) > 1:
            inner = _join(index.elts)
        elif type(index) is ast.Tuple:
            return None
        else:
            inner = _quick(index)
        return None if head is None or inner is None else f"{head}[{inner}]"
    if t is ast.Tuple:
        inner = _join(node.elts)
        if inner is None:
            return None
        return f"({inner},)" if len(node.elts) == 1 else f"({inner})"
    if t is ast.List:
        inner = _join(node.elts)
        return None if inner is None else f"[{inner}]"
    if t is ast.BinOp:
        left, right = node.left, node.right
        if type(node.op) is not ast.BitOr or type(right) not in _ATOMS or not (
                type(left) in _ATOMS or type(left) is ast.BinOp):
            return None
        a, b = _quick(left), _quick(right)
        return None if a is None or b is None else f"{a} | {b}"
    if t is ast.UnaryOp:
        operand = node.operand
        if (type(node.op) is ast.USub and type(operand) is ast.Constant
                and type(operand.value) in (int, float)):
            text = _quick(operand)
            return None if text is None else "-" + text
        return None
    if t is ast.Call:
        func = node.func
        if type(func) not in (ast.Name, ast.Attribute):
            return None
        parts = [_quick(a) for a in node.args]
        for k in node.keywords:
            if k.arg is None:
                return None
            text = _quick(k.value)
            parts.append(None if text is None else f"{k.arg}={text}")
        head = _quick(func)
        if head is None or None in parts:
            return None
        return f"{head}({', '.join(parts)})"
    return None


def _join(elements: list[ast.expr]) -> str | None:
    parts = [_quick(e) for e in elements]
    return None if None in parts else ", ".join(parts)
