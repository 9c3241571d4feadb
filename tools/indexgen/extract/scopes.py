"""Stage 1e (continued): the names a function nested in another binds for itself.

A function nested in another (a closure: no definition of its own) has its calls listed
under the enclosing function, and its bindings were read as that function's: ``x = B()``
in ``def inner(): ...`` gave the enclosing function's ``x`` (``x = A()``) a ``B`` too, and
the other way round.  In Python they are two variables: a name a nested function binds
(an assignment, a loop's target, ``with ... as``, ``except ... as``, a walrus, a parameter)
and does not declare ``nonlocal`` or ``global`` is its own over its body; a name it only
reads is the enclosing function's (or, declared ``nonlocal``, what it binds is).

:func:`own_scopes` takes such bindings out of the enclosing function's names and gives them
as narrowings (:mod:`indexgen.extract.narrowing`) over the nested body, ``x@first`` ->
``^`` and each source (:data:`~indexgen.extract.sources.OWN`: what the name is there, not
what the enclosing function binds), as a nested function's parameters were before; an
``isinstance`` test of such a name there narrows the nested function's value.  Where the
enclosing function binds the name nowhere itself, its names keep the nested bindings (its
reads of the name are the module's, which the build reads as before), and a nested
function that alone binds it needs no narrowing.
"""

from __future__ import annotations

import ast
from bisect import bisect_right

from indexgen.extract.narrowing import at_line, line_of
from indexgen.extract.nodes import HOLDERS, blocks
from indexgen.extract.shadows import SELF_NAMES
from indexgen.extract.sources import (
    OWN,
    nested_parameters,
    pairs,
    parameter_bindings,
    parameter_source,
)

#: The binding statements that make a name the nested function's own.
_BINDS = frozenset({ast.Assign, ast.AnnAssign, ast.AugAssign, ast.For, ast.AsyncFor,
                    ast.withitem, ast.ExceptHandler, ast.NamedExpr})
_SCOPED = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)


class Scope:
    """One nested function: its lines, body lines, enclosing nested function, own names."""

    __slots__ = ("node", "first", "last", "parent", "own", "_declared")

    def __init__(self, node: ast.AST, parent: Scope | None) -> None:
        self.node, self.parent = node, parent
        self.first, self.last = node.body[0].lineno, node.body[-1].end_lineno
        self._declared: set[str] | None = None
        # (a parameter cannot be declared nonlocal or global)
        self.own = {a.arg for a, *_ in nested_parameters(node)} - SELF_NAMES

    @property
    def declared(self) -> set[str]:
        """What its ``nonlocal`` and ``global`` statements declare (read once, if asked)."""
        if self._declared is None:
            self._declared = _declared(self.node.body)
        return self._declared


def _declared(body: list[ast.stmt]) -> set[str]:
    """The names the ``nonlocal`` and ``global`` statements of a function body declare (not
    those of the functions and classes in it)."""
    out: set[str] = set()
    todo = list(body)
    while todo:
        st = todo.pop()
        t = type(st)
        if t is ast.Nonlocal or t is ast.Global:
            out.update(st.names)
        elif t in HOLDERS and t not in _SCOPED:
            for block in blocks(st):
                todo += block
    return out


def own_scopes(funcs: list[ast.AST], lazy: dict[str, list], found: dict[str, list[str]],
               pending: list, consts: dict[str, list[str]], narrowed: list
               ) -> tuple[dict[str, list], list, set[int]]:
    """Move the bindings the nested functions ``funcs`` of one function make for
    themselves out of its ``lazy`` names and ``pending`` bindings (those of its targets
    other than plain names; ``found``: its other names), and add to ``narrowed`` (its
    narrowings) their own scopes (see the module's docstring).  Returns (the bindings
    moved, by name, for cutting narrowings; what :func:`rewrite` needs; the ids of the
    pending bindings moved)."""
    scopes: list[Scope] = []
    stack: list[Scope] = []
    for node in sorted(funcs, key=lambda n: n.lineno):
        while stack and stack[-1].node.end_lineno < node.lineno:
            stack.pop()
        stack.append(Scope(node, stack[-1] if stack else None))
        scopes.append(stack[-1])
    starts = [s.node.lineno for s in scopes]

    def innermost(line: int) -> Scope | None:
        k = bisect_right(starts, line) - 1
        s = scopes[k] if k >= 0 else None
        while s is not None and not s.node.lineno <= line <= s.node.end_lineno:
            s = s.parent
        return s

    low, high = scopes[0].node.lineno, max(s.node.end_lineno for s in scopes)
    for name, nodes in lazy.items():
        for n in nodes:
            t = type(n)
            if t in _BINDS:
                line = n.lineno if t is not ast.withitem else n.context_expr.lineno
                s = innermost(line) if low <= line <= high else None
                if s is not None and name not in SELF_NAMES and name not in s.declared:
                    s.own.add(name)

    def scope_of(line: int, name: str) -> Scope | None:
        s = innermost(line)
        while s is not None and name not in s.own:
            s = s.parent
        return s

    names = {n for s in scopes for n in s.own}
    moved_all: dict[str, list] = {}
    records = []
    taken: set[int] = set()
    for name in names:
        moved: dict[Scope, list] = {}
        kept = []
        for n in lazy.get(name, ()):
            t = type(n)
            s = scope_of(line_of(n), name) if t in _BINDS or t is ast.Call else None
            (moved.setdefault(s, []) if s is not None else kept).append(n)
        given = [p for p in pending if type(p[0]) is ast.Name and p[0].id == name]
        put = [(p, s) for p in given if (s := scope_of(p[4], name)) is not None]
        owners = [s for s in scopes if name in s.own]
        alone = not kept and name not in found and len(put) == len(given)
        if alone:  # the enclosing function binds it nowhere: its names keep them all
            for s in owners:
                _parameters_as_names(s.node, name, lazy)
            if len(owners) == 1 or not moved and not put and len(
                    {tuple(x for x, _line in _parameter_sources(s.node, name))
                     for s in owners}) == 1:
                continue  # one scope, or parameters alike: the names say it (and a test
                # of an attribute path on it, isinstance(x.text, T), narrows that path)
        else:
            lazy[name] = kept
            moved_all[name] = [n for nodes in moved.values() for n in nodes]
            taken.update(id(p) for p, _s in put)
        tested = [f for f in narrowed if f[0] == name and f[3][0] not in "=^" and f[4] != []]
        for s in owners:
            params = _parameter_sources(s.node, name)
            binds = [(x, line_of(n), type(n) is ast.Call) for n in moved.get(s, ())
                     for target, x in pairs(n, consts)
                     if type(target) is ast.Name and target.id == name]
            binds += [(p[1], p[4], False) for p, where in put if where is s]
            own = list({x: (x, line) for x, line in [*params, *((x, line) for x, line, _t
                                                               in binds)]}.values())
            first = s.first
            if params and not all(test for _x, _line, test in binds):
                # a parameter it binds again: the parameter alone up to there
                alone = list({x: (x, line) for x, line in [
                    *params, *((x, line) for x, line, test in binds if test)]}.values())
                narrowed += [(name, s.first, s.last, OWN + x, None) for x, _line in alone]
                records.append((name, s.first, s.first, alone))
                first = s.node.lineno  # then all it binds it to (a key of its own)
            narrowed += [(name, first, s.last, OWN + x, []) for x, _line in own]
            narrowed += [(name, f[1], f[2], OWN + x, f[4]) for f in tested
                         if s.first <= f[1] <= s.last and scope_of(f[1], name) is s
                         for x, _line in own]
            records.append((name, first, s.last, own))
    return moved_all, records, taken


def _parameter_sources(node: ast.AST, name: str) -> list[tuple[str, int]]:
    """What a nested function's parameter ``name`` is: its annotation, default, what the
    closure's callers hand it (a default read on the ``def``'s line)."""
    out = []
    for a, stars, given, flow in nested_parameters(node):
        if a.arg == name:
            if a.annotation is not None:
                out.append((parameter_source(a, stars), 0))
            if given:
                out.append((given, node.lineno))
            if flow:
                out.append((flow, 0))
    return out


def _parameters_as_names(node: ast.AST, name: str, lazy: dict[str, list]) -> None:
    """A nested function's parameter ``name`` in the enclosing function's names."""
    for a, *parameter in nested_parameters(node):
        if a.arg == name:
            lazy.setdefault(name, []).extend(parameter_bindings(a, *parameter))


def rewrite(spanned: dict[str, tuple[list[str], int]], records: list,
            where: dict[str, list[tuple[int, int, str]]] | None) -> None:
    """Write the own sources of the narrowings ``spanned`` of a function with each name
    that starts a path read where a narrowing holds (``where``) the narrowed name, as
    :func:`~indexgen.extract.narrowing.at_line` does the function's other values: ``y =
    x.get()`` in a nested function that binds ``x`` reads its ``x``."""
    if not where:
        return
    keys: dict[str, list[tuple[int, str]]] = {}  # name -> (first line, key) of its own
    for key, (sources, _end) in spanned.items():
        if any(x[0] == OWN for x in sources):
            base, _, at = key.partition("@")
            keys.setdefault(base, []).append((int(at), key))
    for name, first, last, own in sorted(records, key=lambda r: (r[1], -r[2])):  # inner last
        new = [OWN + (at_line(x, line, where) if line and x[0] in "=~" else x)
               for x, line in own]
        for at, key in keys.get(name, ()):
            if first <= at <= last:
                sources, end = spanned[key]
                spanned[key] = ([*(x for x in sources if x[0] != OWN), *new], end)


def needed_from(records: list) -> dict[str, list[str]]:
    """Name -> the own sources of its nested scopes (whose names a kept name needs)."""
    out: dict[str, list[str]] = {}
    for name, _first, _last, own in records:
        out.setdefault(name, []).extend(x for x, _line in own)
    return out


def nested_scopes(nested: dict[int, list[ast.AST]], lazy: dict[int, dict[str, list]],
                  found: dict[int, dict[str, list[str]]], pending: list,
                  consts: dict[str, list[str]], narrowed: dict[int, list]
                  ) -> tuple[dict[int, dict[str, list]], dict[int, list]]:
    """:func:`own_scopes` of each function with nested functions (``nested``: by index of
    the function; ``pending``: the file's bindings of other targets, ``(target, source,
    definition, index, line)``, those moved taken out).  Returns (each function's lazy
    names with the moved bindings back, for :func:`~indexgen.extract.narrowing.spans` to
    cut its narrowings with; each function's records for :func:`rewrite`)."""
    by_function: dict[int, list] = {}
    for p in pending if nested else ():
        if p[3] in nested:
            by_function.setdefault(p[3], []).append(p)
    cutting, records, taken = {}, {}, set()
    for i, funcs in nested.items():
        scope = lazy.setdefault(i, {})
        moved, records[i], gone = own_scopes(funcs, scope, found.get(i, {}),
                                             by_function.get(i, []), consts,
                                             narrowed.setdefault(i, []))
        taken |= gone
        cutting[i] = {**scope, **{n: [*scope.get(n, ()), *m] for n, m in moved.items()}}
    if taken:
        pending[:] = [p for p in pending if id(p) not in taken]
    return cutting, records
