"""Stage 1c (continued): the names a class body binds for itself, as its own code reads them.

While a class body runs, it is a namespace of its own: a name it has bound by then (a
``def``, a nested ``class``, an assignment) is its local, and a call at class-body level
reaches that, not the module's name::

    class Lexer:
        def call_indent(level): ...
        tokens = [call_indent(7)]      # Lexer.call_indent, as the body sees it

:func:`class_scoped` writes such a name in the records of those calls as the class's
attribute (``Lexer.call_indent``): the call, what it hands (a flow record, a reference), a
decorator's application (``@_deco`` above a method, with ``_deco`` defined before it).
Only what runs in the class's own scope counts: its statements, the decorators, defaults
and bases of what it defines, the first iterable of a comprehension -- not the bodies of
its methods, lambdas and comprehensions, which see the module's names.  A class nested in
a function is left alone (its qualname is no path from the module).  A name a record reads
elsewhere than at its start (``("::" + word).named()``) is the type evaluation's to read
(:meth:`indexgen.analyze.types.Types._name` takes a class body's names as its members,
whatever their order): this module writes only what a record starts with, where the order
of the bindings decides between the body's name and the module's.

A function called by its name in the body is a plain function there, handed every
argument itself; the global pass reads a method's arguments one place on, its first
parameter being the instance (:data:`indexgen.analyze.flows.BOUND_KINDS`), so the flow
record of such a call writes its positions one place back (the first one's is left out:
that parameter is read as the instance, whatever it is handed).
"""

from __future__ import annotations

import ast
from operator import itemgetter

from indexgen.extract.calls import call_line, imported_names, receiver_name
from indexgen.extract.model import Call, FileSummary

_FUNCS = (ast.FunctionDef, ast.AsyncFunctionDef)
_BRANCHES = (ast.If, ast.While, ast.For, ast.AsyncFor, ast.With, ast.AsyncWith, ast.Try,
             *((ast.TryStar,) if hasattr(ast, "TryStar") else ()))
_COMPREHENSIONS = (ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp)
_LINE_TEXT = itemgetter(2, 1)  # a Call's (line, text)
#: ``(line, name) -> (class qualname, whether the name is a function the global pass
#: reads as a method)``: a name of a class's own namespace, read at that record's line.
Scoped = dict[tuple[int, str], tuple[str, bool]]


def class_scoped(summary: FileSummary, tree: ast.Module) -> None:
    """Write the class-body names the calls of ``summary`` read at class-body level as
    the class's attributes (see the module's docstring)."""
    found: Scoped = {}
    imported: list = []  # imported_names, made when a call spans lines
    for node, qualname in _classes(tree.body, ""):
        _scan(node.body, qualname, {}, found, imported, summary)
    if not found:
        return
    calls = []
    changed = False
    for call in summary.calls:
        text = call[1]
        if not call[3] and text[0] != "(":
            new = _flow(text, call[2], found) if text[0] == "<" else _path(text, call[2],
                                                                           found)
            if new != text:
                changed = True
                if new is None:  # a flow record left with nothing it hands
                    continue
                call = tuple.__new__(Call, (call[0], new, call[2], call[3]))
        calls.append(call)
    if changed:
        calls.sort(key=_LINE_TEXT)
        summary.calls = calls


def _path(text: str, line: int, found: Scoped, shift: list | None = None) -> str:
    """``text`` (a path, ``&`` or ``^`` and a path) with its head written as the class's
    attribute where it is a name of the class's namespace at ``line``."""
    mark = text[0] if text[0] in "&^@" else ""
    head = receiver_name(text[len(mark):])
    scoped = found.get((line, head))
    if scoped is None or not text.startswith(head, len(mark)):
        return text
    if shift is not None and text[len(mark):] == head:
        shift.append(scoped[1])
    return f"{mark}{scoped[0]}.{text[len(mark):]}"


def _flow(text: str, line: int, found: Scoped) -> str | None:
    """A flow record (``<``, the call's path, a tab, ``slot=path`` items) with the names
    of the class's namespace written so, in the path and the items; a plain function of the
    body called by its name gets its positions one place back (see the module's
    docstring); None where that leaves it nothing."""
    called, tab, items = text[1:].partition("\t")
    shift: list[bool] = []
    new = _path(called, line, found, shift)
    out = []
    for item in items.split(",") if tab else ():
        slot, _, given = item.partition("=")
        # read one place on, a method's: written one place back (not what a call returns)
        if shift and shift[0] and slot.isdigit() and called[0] != "@":
            if slot == "0":
                continue  # to the first parameter, which is read as the instance
            slot = str(int(slot) - 1)
        out.append(f"{slot}={_path(given, line, found) if slot != '#' else given}")
    return f"<{new}{tab}{','.join(out)}" if out else None


def _classes(body: list[ast.stmt], outer: str):
    """The classes a module's statements define, outside functions, with their qualnames
    (not those nested in another class: :func:`_scan` meets them in its body)."""
    for stmt in body:
        if type(stmt) is ast.ClassDef:
            yield stmt, f"{outer}{stmt.name}"
        elif type(stmt) in _BRANCHES or type(stmt) is ast.Match:
            for block in _blocks(stmt):
                yield from _classes(block, outer)


def _blocks(stmt: ast.stmt) -> list[list[ast.stmt]]:
    """The statement lists of a compound statement that run in its own scope."""
    if type(stmt) is ast.Match:
        return [case.body for case in stmt.cases]
    blocks = [stmt.body, getattr(stmt, "orelse", []), getattr(stmt, "finalbody", [])]
    return blocks + [h.body for h in getattr(stmt, "handlers", ())]


def _scan(body: list[ast.stmt], qualname: str, bound: dict[str, bool], found: Scoped,
          imported: list, summary: FileSummary) -> None:
    """Record in ``found`` the reads of ``bound`` (a class body's names bound so far:
    name -> whether a method's kind) at class-body level of ``body``, binding its names
    in order."""
    for stmt in body:
        t = type(stmt)
        if t in _FUNCS:
            args = stmt.args
            _reads([*stmt.decorator_list, *args.defaults, *args.kw_defaults], qualname,
                   bound, found, imported, summary, stmt.decorator_list)
            bound[stmt.name] = not any(_last(d) == "staticmethod"
                                       for d in stmt.decorator_list)
        elif t is ast.ClassDef:
            _reads([*stmt.decorator_list, *stmt.bases, *(k.value for k in stmt.keywords)],
                   qualname, bound, found, imported, summary, stmt.decorator_list)
            _scan(stmt.body, f"{qualname}.{stmt.name}", {}, found, imported, summary)
            bound[stmt.name] = False
        elif t in _BRANCHES or t is ast.Match:
            heads = [getattr(stmt, "test", None), getattr(stmt, "iter", None),
                     getattr(stmt, "subject", None),
                     *(i.context_expr for i in getattr(stmt, "items", ()))]
            _reads([h for h in heads if h is not None], qualname, bound, found, imported,
                   summary, ())
            for block in _blocks(stmt):
                _scan(block, qualname, bound, found, imported, summary)
        else:
            _reads([stmt], qualname, bound, found, imported, summary, ())
            if t is ast.Assign:
                for target in stmt.targets:
                    if type(target) is ast.Name:
                        bound[target.id] = False
            elif t is ast.AnnAssign and stmt.value is not None and type(
                    stmt.target) is ast.Name:
                bound[stmt.target.id] = False


def _last(node: ast.expr) -> str:
    """The last name of a decorator (``staticmethod``, ``abc.abstractmethod``)."""
    return node.id if type(node) is ast.Name else node.attr if type(
        node) is ast.Attribute else ""


def _reads(roots: list[ast.AST], qualname: str, bound: dict[str, bool], found: Scoped,
           imported: list, summary: FileSummary, decorators) -> None:
    """Record each read of a name of ``bound`` in ``roots`` (expressions, or a simple
    statement, of the class body) at the line of each call it is part of (a decorator's
    application: at the decorator's line), skipping what runs in a scope of its own."""
    if not bound:
        return
    applied = {id(d) for d in decorators}
    stack = [(r, (r.lineno,) if id(r) in applied else ()) for r in roots if r is not None]
    while stack:
        node, lines = stack.pop()
        t = type(node)
        if t is ast.Name:
            if node.id in bound and type(node.ctx) is ast.Load:
                for line in lines:
                    found[(line, node.id)] = (qualname, bound[node.id])
            continue
        if t is ast.Lambda:
            stack += [(d, lines) for d in (*node.args.defaults, *node.args.kw_defaults) if d]
            continue
        if t in _COMPREHENSIONS:  # only its first iterable runs in the class's scope
            stack.append((node.generators[0].iter, lines))
            continue
        if t is ast.Call:
            line = node.lineno
            if node.func.end_lineno != line:  # the line Python reports
                if not imported:
                    imported.append(imported_names(summary.imports))
                line = call_line(node, imported[0])
            lines = (*lines, line)
        stack += [(child, lines) for child in ast.iter_child_nodes(node)]
