"""Stage 1e (continued): the sources one binding statement gives the names it binds.

A *source* is ``:`` and an annotation as written, ``=`` and the path of a value
(:func:`~indexgen.extract.syntax.path`, a literal of paths
:func:`~indexgen.extract.syntax.literal`), or ``%`` and the name of a module imported by a
name the source gives (``importlib.import_module("pkg.mod")``).  :func:`pairs` says which
target of an assignment, annotation, loop, comprehension, ``with ... as``, walrus or
``isinstance`` test gets which source; :mod:`indexgen.extract.bindings` decides where each
goes.
"""

from __future__ import annotations

import ast

from indexgen.extract.syntax import annotation, literal, path, strings

#: (target node, source) pairs of one binder.
Pairs = list[tuple[ast.AST, str]]


def pairs(node: ast.AST, consts: dict[str, list[str]]) -> Pairs:
    """(target, source) of every name or attribute ``node`` binds to something typed
    (``consts``: the module's constants of strings, for dynamic imports)."""
    t = type(node)
    if t is ast.Assign:
        value = node.value
        pairs = []
        for target in node.targets:
            if (type(target) in (ast.Tuple, ast.List) and type(value) in (ast.Tuple, ast.List)
                    and len(target.elts) == len(value.elts)):  # a, b = x, y
                pairs += [pair for element, v in zip(target.elts, value.elts)
                          for s in values(v, consts) for pair in _unpack(element, s)]
            else:
                pairs += [pair for s in values(value, consts) for pair in _unpack(target, s)]
        return pairs
    if t is ast.AnnAssign:
        pairs = [(node.target, ":" + annotation(node.annotation))]
        if node.value is not None:
            pairs += [(node.target, s) for s in values(node.value, consts)]
        return pairs
    if t is ast.NamedExpr:
        return [(node.target, s) for s in values(node.value, consts)]
    if t is ast.Call:  # isinstance(name, T): the name may be a T
        kind = node.args[1]
        types = kind.elts if type(kind) is ast.Tuple else [kind]
        texts = [annotation(k) for k in types if type(k) in (ast.Name, ast.Attribute)]
        return [(node.args[0], ":" + " | ".join(texts))] if texts else []
    if t is ast.withitem:
        found = path(node.context_expr)
        if node.optional_vars is None or found is None:
            return []
        return _unpack(node.optional_vars, f"={found}.__enter__()")
    # for loops and comprehensions: the target takes the elements of the iterable
    found = path(node.iter)
    if found:
        return _unpack(node.target, f"=next(iter({found}))")
    if type(node.iter) is ast.IfExp:  # for x in xs if c else ys: the elements of either
        return [pair for s in values(node.iter, consts) if s[0] == "="
                for pair in _unpack(node.target, f"=next(iter({s[1:]}))")]
    return []


def values(value: ast.AST, consts: dict[str, list[str]]) -> list[str]:
    """Sources of an assigned value: its path, or the paths of ``a if c else b`` and
    ``a or b``; none for literals and operators."""
    t = type(value)
    if t is ast.IfExp:
        return values(value.body, consts) + values(value.orelse, consts)
    if t is ast.BoolOp:
        return [s for v in value.values for s in values(v, consts)]
    if t is ast.Call and _imports(value):  # a module imported by a name the source gives
        return ["%" + m for m in strings(value.args[0], consts)]
    held = literal(value)
    if held is not None:
        return ["=" + held]
    found = path(value)
    return [f"={found}"] if found is not None and found != "None" else []


def _imports(call: ast.Call) -> bool:
    """Whether ``call`` is ``importlib.import_module(x)`` or ``__import__(x)``."""
    func = call.func
    name = func.attr if type(func) is ast.Attribute else func.id if type(func) is ast.Name \
        else ""
    return name in ("import_module", "__import__") and bool(call.args)


def _unpack(target: ast.AST, source: str) -> Pairs:
    """``target`` bound to ``source``; each element of a tuple target to an index of it."""
    t = type(target)
    if t is ast.Name or t is ast.Attribute:
        return [(target, source)]
    if (t is ast.Tuple or t is ast.List) and source[0] == "=":
        pairs = []
        for k, element in enumerate(target.elts):
            if type(element) is ast.Starred:
                break
            pairs += _unpack(element, f"{source}[{k}]")
        return pairs
    return []
