"""The line Python reports a call at (tracebacks, ``frame.f_lineno``, the profiler's call
events), told by CPython's own compiler: the oracles' call lines, independent of indexgen.

A call's first line (``node.lineno``) is not always it: CPython 3.11+ reports a method call
written over lines at the line of the method's name (``update_start_location_to_match_attr``
in its compiler).  :func:`reported_lines` compiles the syntax tree and reads the position of
each call instruction back; :func:`by_syntax` says the same from the tree alone, for the
calls the compiler drops as unreachable (``return`` then ``f()``), and is checked against
the compiler on real code (``test_call_lines.py``).
"""

from __future__ import annotations

import ast
import dis
import types
from collections.abc import Callable

#: The instructions that make a call (3.11: ``PRECALL`` comes before ``CALL``; 3.13 adds
#: ``CALL_KW``).
_CALLS = frozenset({"CALL", "CALL_FUNCTION_EX", "CALL_KW"})


def _compiled(tree: ast.Module) -> dict[tuple[int, int], set[tuple[int, int]]]:
    """End (line, column) -> the start (line, column) of the call instructions ending there,
    in every code object of the module."""
    found: dict[tuple[int, int], set[tuple[int, int]]] = {}
    todo = [compile(tree, "<oracle>", "exec", dont_inherit=True)]
    while todo:
        code = todo.pop()
        todo += [c for c in code.co_consts if isinstance(c, types.CodeType)]
        for ins in dis.get_instructions(code):
            if ins.opname in _CALLS and ins.positions.lineno is not None:
                p = ins.positions
                found.setdefault((p.end_lineno, p.end_col_offset), set()).add(
                    (p.lineno, p.col_offset))
    return found


def module_imports(tree: ast.Module) -> set[str]:
    """The names ``import`` statements bind in the module's own scope (at its top level or
    in its ``if``/``try``/``with``/loop blocks; not in a function or class body)."""
    names: set[str] = set()
    todo = list(tree.body)
    while todo:
        node = todo.pop()
        if isinstance(node, ast.Import):
            names |= {a.asname or a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            names |= {a.asname or a.name for a in node.names if a.name != "*"}
        elif not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            for name in ("body", "orelse", "finalbody", "handlers", "cases"):
                todo += getattr(node, name, None) or []
    return names


def by_syntax(node: ast.Call, imports: set[str]) -> int:
    """The reported line as the syntax gives it: the line of the method's name where the
    compiler makes the call a method call (``LOAD_METHOD``: an attribute of anything but a
    name the module imports, no ``*``/``**`` argument, under 30 stack items), else the
    call's first line."""
    func = node.func
    method = (isinstance(func, ast.Attribute)
              and not (isinstance(func.value, ast.Name) and func.value.id in imports)
              and not any(isinstance(a, ast.Starred) for a in node.args)
              and all(k.arg is not None for k in node.keywords)
              and len(node.args) + len(node.keywords) + bool(node.keywords) < 30)
    return func.end_lineno if method else node.lineno


def reported_lines(tree: ast.Module, fallback: Callable | None = by_syntax) -> dict[int, int]:
    """``id`` of each ``ast.Call`` of ``tree`` -> the line Python reports the call at: the
    start of the compiled call instruction that ends where the call ends and starts where it
    does or at its method's name (a decorator's application ends there too, starting where
    the decorator does); ``fallback`` (:func:`by_syntax`) for a call compiled to nothing,
    which is left out if it is None."""
    compiled = _compiled(tree)
    imports = module_imports(tree)
    out = {}
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        starts = {(node.lineno, node.col_offset)}
        func = node.func
        if isinstance(func, ast.Attribute):
            starts.add((func.end_lineno, func.end_col_offset - len(func.attr)))
        found = compiled.get((node.end_lineno, node.end_col_offset), set()) & starts
        if found:
            out[id(node)] = max(found)[0]
        elif fallback is not None:
            out[id(node)] = fallback(node, imports)
    return out
