"""Small readers of syntax-tree expressions shared by the extraction stages."""

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


def expr_text(node: ast.AST) -> str:
    """Source-like text of a small expression (decorators, bases)."""
    t = type(node)
    if t is ast.Name or t is ast.Attribute:
        return dotted(node)
    if t is ast.Call:
        return expr_text(node.func) + ("(...)" if (node.args or node.keywords) else "()")
    try:
        return ast.unparse(node)
    except Exception:  # noqa: BLE001 - unparse of odd trees must not stop extraction
        return "..."


def is_type_checking(test: ast.AST) -> bool:
    """Whether an ``if`` test is ``TYPE_CHECKING`` (imports under it are for type checkers)."""
    return expr_text(test) in ("TYPE_CHECKING", "typing.TYPE_CHECKING", "t.TYPE_CHECKING")
