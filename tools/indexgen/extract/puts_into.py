"""Stage 1e (continued): what a function's puts into a container bind.

``xs.append(v)`` says that ``xs`` holds ``v``s, ``table[key] = v`` that ``table`` maps keys
to ``v``s, and ``table[key].append(v)`` or ``table.setdefault(key, []).append(v)`` that it
maps keys to lists of ``v``s (a registry filled so, then read by ``for f in table[key]:
f(...)``).  :func:`appended` turns one such statement into the (target, source) pairs
:mod:`indexgen.extract.bindings` binds; a module's own top level puts the same way
(:mod:`indexgen.extract.module_puts`).
"""

from __future__ import annotations

import ast

from indexgen.extract.model import Definition
from indexgen.extract.needed import added, table_target
from indexgen.extract.syntax import literal, path


def appended(node: ast.Call | ast.Assign, d: Definition, i: int, first_param: dict,
             modules: set[str]) -> list[tuple[ast.AST, str]]:
    """``xs.append(v)`` (``add``, ``appendleft``, ``insert``): ``xs`` holds ``v``s; and
    ``table[key] = v`` (``table.setdefault(key, v)``): ``table`` maps keys to ``v``s.  A
    local name or an attribute of the instance gets the source ``~[v]`` (``~{v}``); a deeper
    receiver (``self.ctx.order.append(v)``) is kept as the name ``+self.ctx.order`` for the
    global pass to give to the class of ``self.ctx``; a put into a value of a table
    (``table[key].append(v)``, ``table.setdefault(key, []).append(v)``: :func:`held_in`)
    gives the table ``~{[v]}``, a mapping of lists of ``v``.  Returns the (target, source)
    pairs to bind (:func:`indexgen.extract.bindings._bind_one`)."""
    if type(node) is ast.Assign:  # table[key] = v (jinja2: extensions[tag] = ext.parse)
        value, receiver, (opens, closes) = node.value, node.targets[0].value, "{}"
    else:  # xs.insert(i, v), table.setdefault(k, v): the second argument
        (value, opens, closes), receiver = added(node), node.func.value
    found_value = (path(value) or literal(value)) if value is not None else None
    receiver = table_target(receiver, first_param.get(i), modules) if opens == "{" else receiver
    if found_value is None or d.kind == "class" or receiver is None:
        return []  # a table's keys are not told apart: a local, self.table, registry.TABLE
    source = f"~{opens}{found_value}{closes}"
    if type(receiver) is ast.Name or type(receiver) is ast.Attribute:
        return [(receiver, source)]  # a local, self.xs, or deeper (+self.ctx.order)
    table = held_in(receiver)
    if table is not None and type(table) in (ast.Name, ast.Attribute):
        # table[key].append(v), table.setdefault(key, []).append(v): the table maps keys
        # to lists of v
        return [(table, "~{" + source[1:] + "}")]
    return []


def held_in(receiver: ast.expr) -> ast.expr | None:
    """The table a value of which ``receiver`` is: ``table`` of ``table[key]`` and of
    ``table.setdefault(key, default)`` (which gives the table's value for ``key``); None for
    any other receiver."""
    t = type(receiver)
    if t is ast.Subscript:
        return receiver.value
    if t is ast.Call and type(receiver.func) is ast.Attribute \
            and receiver.func.attr == "setdefault" and receiver.args:
        return receiver.func.value
    return None
