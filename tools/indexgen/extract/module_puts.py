"""What a module's own top level puts into its tables (a registry filled at import).

``HANDLERS = {}`` then ``HANDLERS["json"] = dump_json`` or ``HOOKS.append(on_exit)`` as
statements of the module: the table holds those functions, and a call through it in a
function (``HANDLERS[name](x)``, ``for hook in HOOKS: hook()``) may run each.  The puts a
module's functions make are in their ``names`` (:mod:`indexgen.extract.bindings`); these,
made by no function, are :attr:`~indexgen.extract.model.FileSummary.module_puts`, each a
``~{v}`` (a mapping's value) or ``~[v]`` (a sequence's element) source read at module level
(:class:`indexgen.analyze.puts.ModulePuts` gathers both).  The statements read are the
module's own and those of its top-level blocks (``if``, ``try``, ``with``, loops: a
handler registered under a condition, or under ``contextlib.suppress(ImportError)``, is
registered too).
"""

from __future__ import annotations

import ast

from indexgen.extract.identifiers import APPENDS
from indexgen.extract.needed import added
from indexgen.extract.puts_into import held_in
from indexgen.extract.syntax import literal, path
from indexgen.extract.unparse import dotted


def module_puts(tree: ast.Module) -> dict[str, list[str]]:
    """Name of a module-level table -> the sources of what the module's top level puts into
    it, in source order, each once."""
    found: dict[str, list[str]] = {}
    for node in _statements(tree.body):
        put = _put(node)
        if put is not None and put[1] not in found.setdefault(put[0], []):
            found[put[0]].append(put[1])
    return {name: sources for name, sources in found.items() if sources}


def _statements(body: list[ast.stmt]):
    """The statements of ``body`` and of its blocks (``if``, ``try``, ``with``, loops), in
    order."""
    for node in body:
        t = type(node)
        if t is ast.If or t is ast.For or t is ast.While:
            yield from _statements(node.body)
            yield from _statements(node.orelse)
        elif t is ast.With:  # with contextlib.suppress(ImportError): ...
            yield from _statements(node.body)
        elif t is ast.Try or t is getattr(ast, "TryStar", None):
            yield from _statements(node.body)
            for handler in node.handlers:
                yield from _statements(handler.body)
            yield from _statements(node.orelse)
            yield from _statements(node.finalbody)
        else:
            yield node


def _put(node: ast.stmt) -> tuple[str, str] | None:
    """(table, source) of one put statement: ``T[k] = v`` and ``T.setdefault(k, v)`` put a
    value (``~{v}``), ``T.append(v)`` (``add``, ``appendleft``, ``insert(i, v)``) an
    element (``~[v]``), ``T[k].append(v)`` and ``T.setdefault(k, []).append(v)`` a list of
    them (``~{[v]}``), as in a function (:func:`indexgen.extract.needed.added`), ``T`` a
    name or an imported module's (``registry.T``); None for any other statement or a value
    that is no path."""
    if type(node) is ast.Assign and len(node.targets) == 1:
        target = node.targets[0]
        table = _table(target.value) if type(target) is ast.Subscript else None
        return _source(table, node.value, "{}") if table else None
    if type(node) is not ast.Expr or type(node.value) is not ast.Call:
        return None
    call = node.value
    func = call.func
    if type(func) is not ast.Attribute or call.keywords or func.attr not in APPENDS:
        return None
    value, opens, closes = added(call)  # what a function's put of the same call is
    held = held_in(func.value) if opens == "[" else None  # T[k].append(v): lists of v
    table = _table(func.value if held is None else held)
    if not table or value is None:
        return None
    return _source(table, value, opens + closes if held is None else "{[]}")


def _table(node: ast.expr) -> str | None:
    """The name of a table as written: a name, or a module's attribute (``registry.HANDLERS``,
    a chain of names); None for anything else."""
    name = dotted(node)
    return None if name.startswith("(") else name


def _source(table: str, value: ast.expr, brackets: str) -> tuple[str, str] | None:
    found = path(value) or literal(value)
    half = len(brackets) // 2  # "{[]}": a mapping of lists
    return (table, f"~{brackets[:half]}{found}{brackets[half:]}") if found else None
