"""Stage 1e (continued): which names of a function its summary keeps.

A function's names are bound by many statements; the global pass needs only those its calls
on local values start from (their receivers) and what those are bound to in turn, so a
summary keeps those alone (:func:`keep_needed`), and a call on a local value whose receiver
has no kept sources is one the pass is not given (:func:`typed_local`: the pages and the
call accounting ask the same question).
"""

from __future__ import annotations

import ast
import re
from bisect import bisect_right

from indexgen.extract.calls import receiver_name
from indexgen.extract.model import Call, FileSummary
from indexgen.extract.narrowing import at_line, line_of
from indexgen.extract.sources import pairs, parameter_source

_NAME = re.compile(r"[A-Za-z_]\w*")


def imported_tables(summary: FileSummary) -> set[str]:
    """The names the module's own imports bind by name (not ``*``): tables of other modules
    a function may put into (:mod:`indexgen.analyze.puts`)."""
    return {i.bound_name for i in summary.imports if i.scope == "module" and i.name != "*"}


def imported_names(summary: FileSummary) -> set[str]:
    """Every name the file's imports bind, at its top level or in a function (not ``*``):
    the modules whose tables a function may put into through an attribute
    (``registry.HANDLERS[k] = f``; :func:`table_target`)."""
    return {i.bound_name for i in summary.imports if i.name != "*"}


def added(call: ast.Call) -> tuple[ast.expr | None, str, str]:
    """What a call of :data:`~indexgen.extract.identifiers.APPENDS` puts, and the brackets
    of its source: ``xs.append(v)`` (``add``, ``appendleft``) and ``xs.insert(i, v)`` an
    element (``[]``), ``table.setdefault(k, v)`` a value (``{}``; none for
    ``setdefault(k)``)."""
    args = call.args
    if call.func.attr == "setdefault":
        return (args[1] if len(args) == 2 else None), "{", "}"
    return (args[1] if call.func.attr == "insert" and len(args) > 1 else
            args[0] if args else None), "[", "]"


def table_target(receiver: ast.expr, first: str | None, modules: set[str]) -> ast.expr | None:
    """What a function's item assignment ``receiver[k] = v`` binds, where the summary keeps
    it: a name (a local, or the module's table), an attribute of the instance
    (``self.table``: ``first`` is the method's first parameter), or, for a chain of names
    from a name the file imports (``modules``), the name ``{registry.HANDLERS`` (an
    imported module's table, which :mod:`indexgen.analyze.puts` looks up; not ``+``,
    which would give it to another object's class: a table's keys are not told apart, so
    no other object's attribute is kept); None for any other."""
    t = type(receiver)
    if t is ast.Name:
        return receiver
    if t is not ast.Attribute:
        return None
    base = receiver.value
    if type(base) is ast.Name and base.id == first:
        return receiver
    chain = [receiver.attr]
    while type(base) is ast.Attribute:
        chain.append(base.attr)
        base = base.value
    if type(base) is not ast.Name or base.id not in modules:
        return None
    return ast.Name("{" + ".".join([base.id, *reversed(chain)]))


def keep_needed(summary: FileSummary, found: dict[int, dict[str, list[str]]],
                lazy: dict[int, dict[str, list]], consts: dict[str, list[str]],
                needed: dict[int, set[str]],
                narrowed: dict[int, dict[str, list[tuple[int, int, str]]]],
                declared: list[tuple[str, int]] = (),
                extra: dict[int, dict[str, list[str]]] | None = None) -> None:
    """Keep in each function's ``names`` what its calls on local values (their receivers:
    ``needed``) and the member sources it holds need, and what those names are bound to in
    turn; the sources of names bound only by plain assignments (``lazy``) are made here, for
    the names kept: a value read where an ``isinstance`` test narrows it is the narrowed name
    (``y = item``: ``=item@12``; ``narrowed``: the narrowings of each function by name,
    :func:`~indexgen.extract.narrowing.held`; ``declared``: the ``global`` statements'
    ``(name, line)``, :func:`global_rebinds`)."""
    defs = summary.definitions
    index = {d.anchor: i for i, d in enumerate(defs)}
    for d in defs:
        for sources in d.members.values():
            for anchor, source in sources:
                if anchor:
                    needed.setdefault(index[anchor], set()).update(_NAME.findall(source[1:]))
    # what a function puts into these, the module's tables or those it imports: the pass
    attrs = {a.name for a in summary.attributes}
    bound = attrs | imported_tables(summary)
    rebinds = global_rebinds(summary, declared, lazy, attrs)  # global f; f = g
    for i, names in rebinds.items():
        needed.setdefault(i, set()).update(names)
    for i, scope in found.items():  # a function's return and its deeper appends
        for name in scope:
            if name == "return" or name[0] == "+" or name[0] == "{":  # {registry.HANDLERS
                needed.setdefault(i, set()).update((name, *_NAME.findall(name)))
            elif name in bound and name not in lazy.get(i, ()) and all(
                    x[0] == "~" for x in scope[name]):  # _REGISTRY[f.__name__] = f
                needed.setdefault(i, set()).add(name)
    made: dict[int, list] = {}  # id of a binding node -> its (target, source) pairs
    for i, names in needed.items():
        scope = found.get(i, {})
        nodes = lazy.get(i, {})
        where = narrowed.get(i)
        if not scope and not nodes:
            continue
        held = _held_runs(where) if where else None
        more = extra.get(i, {}) if extra else {}
        kept: dict[str, list[str]] = {}
        todo = [n for n in names if n in scope or n in nodes]
        while todo:
            name = todo.pop()
            if name in kept:
                continue
            sources = list(scope.get(name, ()))
            flows = []
            binders = nodes.get(name, ())
            for node in binders:
                if type(node) is str:  # what a parameter's callers hand it: last
                    flows.append(node)
                elif type(node) is tuple:  # a parameter's annotation: first
                    sources.insert(0, parameter_source(*node))
                else:  # a binding statement: its pairs made once, whatever it binds
                    given = made.get(id(node))
                    if given is None:
                        given = made[id(node)] = pairs(node, consts)
                        if held and _holds(held, at := line_of(node)):
                            given = made[id(node)] = [(t, at_line(s, at, where))
                                                      for t, s in given]
                    sources += [s for target, s in given if target.id == name]
            sources = list(dict.fromkeys(sources + flows))
            if i in rebinds and name in rebinds[i]:  # the module's, which it may hold: puts
                sources = [x if x[0] == "~" else "~" + x[1:] for x in sources
                           if x[0] == "~" or x[0] == "="]
            elif sources and sources[0][0] == "~" and binders and all(
                    x[0] == "~" for x in sources):
                # bound here to what says nothing (xs = {}): a local, not the module's
                sources.insert(0, "={}" if sources[0][1] == "{" else "=[]")
            kept[name] = sources
            for source in (*sources, *more[name]) if name in more else sources:
                if source[0] == "=" or source[0] == "~" or name[0] == "+":
                    todo += [n for n in _NAME.findall(source, 1)
                             if (n in scope or n in nodes) and n not in kept]
        defs[i].names = {n: s for n, s in sorted(kept.items()) if s}


def global_rebinds(summary: FileSummary, declared: list[tuple[str, int]],
                   lazy: dict[int, dict[str, list]], attrs: set[str]) -> dict[int, set[str]]:
    """Index of a function -> the module attributes (``attrs``) it declares ``global`` and
    binds (by a statement of ``lazy``: ``global _handler; _handler = f``, ``_REG = {**_REG,
    k: f}``): what it binds them to is what the module's attribute may hold, a put into it
    (``~f``, read by :mod:`indexgen.analyze.puts` as any put; ``_HOOKS = _HOOKS + [f]``, an
    operator, gives nothing).  ``declared``: ``(name, line)`` of the ``global`` statements
    (``Walked.declared_global`` of :func:`indexgen.extract.identifiers.walk`), each the
    function's that holds its line (a closure's is its enclosing function's, as its
    bindings are)."""
    found: dict[int, set[str]] = {}
    for name, line in declared:
        if name not in attrs:
            continue
        i, start = -1, -1
        for k, d in enumerate(summary.definitions):  # the innermost holding the line
            if d.lineno <= line <= d.end_lineno and d.lineno > start:
                i, start = k, d.lineno
        scope = lazy.get(i)
        if scope and name in scope and summary.definitions[i].kind != "class":
            found.setdefault(i, set()).add(name)
    return found


def _held_runs(where: dict[str, list[tuple[int, int, str]]]) -> tuple[list[int], list[int]]:
    """The lines some narrowing of a function holds (``where``: its narrowings by name,
    :func:`~indexgen.extract.narrowing.held`), as runs that neither touch nor overlap: (their
    first lines, their last lines), in line order.  A value bound on a line outside them
    names nothing :func:`~indexgen.extract.narrowing.at_line` would rewrite."""
    firsts: list[int] = []
    lasts: list[int] = []
    for first, last in sorted((a, b) for runs in where.values() for a, b, _key in runs):
        if lasts and first <= lasts[-1] + 1:
            lasts[-1] = max(lasts[-1], last)
        else:
            firsts.append(first)
            lasts.append(last)
    return firsts, lasts


def _holds(runs: tuple[list[int], list[int]], line: int) -> bool:
    """Whether ``line`` is in one of the runs of :func:`_held_runs`."""
    k = bisect_right(runs[0], line) - 1
    return k >= 0 and line <= runs[1][k]


def typed_local(call: Call, names: dict[str, dict[str, list[str]]]) -> bool:
    """Whether a call on a local value is kept for the global pass: its receiver's name has
    sources in its function's ``names`` (given by function anchor)."""
    scope = names.get(call.caller)
    return bool(scope) and receiver_name(call.text) in scope
