"""The name a ``getattr`` call reads, stated in a local or changed in case (issue 31;
sqlparse's filters, 15 missed calls of its suite)::

    func_name = f'_process_{type(tlist).__name__}'
    func = getattr(self, func_name.lower(), self._process_default)

A path reads a ``getattr`` name stated in the call (``getattr(self, f"_process_{kind}")``:
the pattern ``_process_*``, :func:`indexgen.extract.syntax.name_pattern`) and writes any
other as ``_``, which names nothing.  :func:`refine_getattr_names` gives each function's
recorded sources (:attr:`~indexgen.extract.model.Definition.names`) and calls
(``getattr(self, name)(x)``) the pattern of a name
that is a local the function binds once, by a plain assignment, to a string the pattern
reads (an f-string or ``"_process_" + kind`` with a stated part), and of such a name, or one
stated in the call, lowered or uppered (``.lower()``, ``.upper()``: the stated characters so
changed).  A local bound otherwise too (a parameter, a second assignment, a loop) is left
as it was.
"""

from __future__ import annotations

import ast

from indexgen.extract.nodes import subtree
from indexgen.extract.structure import FUNCS, Structure
from indexgen.extract.syntax import name_pattern, path

_CASES = ("lower", "upper")
_UNSTATED = ", _"  # how a path writes a getattr name it does not read: getattr(self, _)
_SCOPES = (*FUNCS, ast.ClassDef)


def _scan(function: ast.AST) -> tuple[list[ast.Call], dict[str, ast.AST]]:
    """In one walk of ``function``: its ``getattr(obj, name, ...)`` calls, and the names it
    binds exactly once, each by a plain ``name = value`` statement of its own, and never as
    a parameter (its nested scopes' bindings counted as its own, to be safe): name ->
    value."""
    counts: dict[str, int] = {}
    values: dict[str, ast.AST] = {}
    calls: list[ast.Call] = []
    args = function.args
    for a in (*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg):
        if a is not None:
            counts[a.arg] = 2
    for node in subtree(function):  # ast.walk's order, less contexts and operators
        t = type(node)
        if t is ast.Call:
            f = node.func
            if type(f) is ast.Name and f.id == "getattr" and len(node.args) >= 2 and \
                    not node.keywords:
                calls.append(node)
        elif t is ast.Name and type(node.ctx) is not ast.Load:
            counts[node.id] = counts.get(node.id, 0) + 1
        elif t is ast.Assign and len(node.targets) == 1 and type(node.targets[0]) is ast.Name:
            values[node.targets[0].id] = node.value
        elif t in _SCOPES and node is not function:
            counts[node.name] = 2
        elif t is ast.ExceptHandler and node.name:
            counts[node.name] = 2
        elif t is ast.Import or t is ast.ImportFrom:
            for alias in node.names:
                counts[(alias.asname or alias.name).partition(".")[0]] = 2
        elif t is ast.Global or t is ast.Nonlocal:
            for name in node.names:
                counts[name] = 2
    return calls, {n: v for n, v in values.items() if counts.get(n) == 1}


def _stated(node: ast.AST, once: dict[str, ast.AST]) -> str | None:
    """The pattern (``_process_*``, unquoted) of a ``getattr`` name: stated in the call, in
    a local bound once, or either of those lowered or uppered; None when none is read."""
    case = None
    if type(node) is ast.Call and type(node.func) is ast.Attribute and \
            node.func.attr in _CASES and not node.args and not node.keywords:
        case, node = node.func.attr, node.func.value
    if type(node) is ast.Name:
        node = once.get(node.id)
        if node is None:
            return None
    found = name_pattern(node)
    if found is None:
        return None
    return getattr(found[1:-1], case)() if case else found[1:-1]


def _written(pattern: str) -> ast.AST:
    """An expression :func:`~indexgen.extract.syntax.name_pattern` reads as ``pattern``:
    its stated parts as strings, each ``*`` a name, joined by ``+``."""
    parts = [ast.Constant(p) if p else None for p in pattern.split("*")]
    items: list[ast.AST] = []
    for i, part in enumerate(parts):
        if i:
            items.append(ast.Name("_", ast.Load()))
        if part is not None:
            items.append(part)
    node = items[0]
    for item in items[1:]:
        node = ast.BinOp(node, ast.Add(), item)
    return node


def refine_getattr_names(structure: Structure) -> None:
    """Write in each function's recorded sources the pattern of the ``getattr`` names its
    module docstring describes, where the path wrote ``_``."""
    calling = {c.caller for c in structure.s.calls if "getattr(" in c.text and _UNSTATED in c.text}
    for d, node in structure.defs:
        if d.kind == "class" or d.anchor not in calling and not any(
                "getattr(" in x and _UNSTATED in x for sources in d.names.values()
                for x in sources):
            continue  # no path of it reads a getattr name the path could not state
        calls, once = _scan(node)
        found: dict[str, str | None] = {}
        for call in calls:
            pattern = _stated(call.args[1], once)
            if pattern is None:
                continue
            old = path(call)
            given = ast.Call(call.func, [call.args[0], _written(pattern), *call.args[2:]], [])
            new = path(given)
            if old is None or new is None or old == new:
                continue
            found[old] = new if found.get(old, new) == new else None  # two ways: neither
        for old, new in found.items():
            if new is None:
                continue
            for name, sources in d.names.items():
                if any(old in x for x in sources):
                    d.names[name] = [x.replace(old, new) for x in sources]
            calls = structure.s.calls  # getattr(self, name)(x): the call's own text
            for i, c in enumerate(calls):
                if c.caller == d.anchor and old in c.text:
                    calls[i] = c._replace(text=c.text.replace(old, new))
