"""Stage 1f (continued): the names a module's ``__getattr__`` answers for (PEP 562).

A module that defines ``def __getattr__(name)`` at its top level serves attributes no
statement binds: a deprecated alias (click's ``BaseCommand``), a submodule imported on first
use (torch's ``torch.ao.nn``), a value computed late. Python asks that function for every
name the module does not bind, so only the names its body compares its parameter with are
known to be served:

- ``name == "X"`` (either side), ``name in ("X", "Y")`` (a tuple, list, set or dict literal
  of strings), ``match name: case "X":``;
- ``name in __all__``: the names of the module's static ``__all__``;
- ``name in TABLE`` where ``TABLE`` is a literal the module binds at its top level (a
  collection of strings, or a dict: its keys).

Anything else (a prefix test, a computed table) serves names this reading cannot list, and
none is made up for it.
"""

from __future__ import annotations

import ast


def served_names(tree: ast.Module, exports: list[str] | None) -> list[str]:
    """The names the module-level ``__getattr__`` of ``tree`` compares its parameter with
    (see the module's docstring), sorted; none when the module defines no such function.
    ``exports``: the module's static ``__all__``, for ``name in __all__``."""
    func = next((n for n in tree.body if type(n) in (ast.FunctionDef, ast.AsyncFunctionDef)
                 and n.name == "__getattr__"), None)
    params = func.args.posonlyargs + func.args.args if func is not None else []
    if not params:
        return []
    name = params[0].arg
    found: set[str] = set()
    for node in ast.walk(func):
        if type(node) is ast.Compare and len(node.ops) == 1:
            left, op, right = node.left, type(node.ops[0]), node.comparators[0]
            if op is ast.Eq:
                for a, b in ((left, right), (right, left)):
                    if _is(a, name) and type(b) is ast.Constant and type(b.value) is str:
                        found.add(b.value)
            elif op in (ast.In, ast.NotIn) and _is(left, name):
                found.update(_members(right, tree, exports))
        elif type(node) is ast.Match and _is(node.subject, name):
            for case in node.cases:
                found.update(_case_strings(case.pattern))
    return sorted(found)


def _is(node: ast.AST, name: str) -> bool:
    return type(node) is ast.Name and node.id == name


def _members(node: ast.AST, tree: ast.Module, exports: list[str] | None) -> list[str]:
    """The strings of ``name in node``: a literal, ``__all__`` or a module-level literal."""
    if type(node) is ast.Name:
        if node.id == "__all__":
            return list(exports or ())
        bound = _module_literal(tree, node.id)
        return _literal_strings(bound) if bound is not None else []
    return _literal_strings(node)


def _literal_strings(node: ast.AST) -> list[str]:
    """The strings of a tuple, list or set literal, or the keys of a dict literal."""
    t = type(node)
    items = node.keys if t is ast.Dict else node.elts if t in (ast.Tuple, ast.List, ast.Set) \
        else ()
    return [i.value for i in items if type(i) is ast.Constant and type(i.value) is str]


def _module_literal(tree: ast.Module, name: str) -> ast.AST | None:
    """The literal the module's last top-level assignment of ``name`` binds, or None."""
    value = None
    for node in tree.body:
        if type(node) is ast.Assign and any(_is(t, name) for t in node.targets):
            value = node.value
        elif type(node) is ast.AnnAssign and _is(node.target, name) and node.value is not None:
            value = node.value
    return value if type(value) in (ast.Tuple, ast.List, ast.Set, ast.Dict) else None


def _case_strings(pattern: ast.AST) -> list[str]:
    """The strings a ``case`` pattern matches by value (``"X"``, ``"X" | "Y"``)."""
    if type(pattern) is ast.MatchValue:
        v = pattern.value
        return [v.value] if type(v) is ast.Constant and type(v.value) is str else []
    if type(pattern) is ast.MatchOr:
        return [s for p in pattern.patterns for s in _case_strings(p)]
    return []
