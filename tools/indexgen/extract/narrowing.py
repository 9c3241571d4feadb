"""Stage 1e (continued): where an ``isinstance`` test narrows what a name is.

A function's name gets every type its ``isinstance`` tests name as a source
(:func:`indexgen.extract.sources.pairs`): ``x`` may be an ``A`` or a ``B`` somewhere in the
function.  Inside ``if isinstance(x, A):`` it is an ``A`` only, and in its ``else:`` branch
anything but an ``A`` -- so a call ``x.run()`` there reaches ``A.run`` (or, in the ``else``,
not ``A.run``), never the ``run`` of every type the function tests for.

:func:`narrowings` finds, for one ``if`` or ``assert`` statement, the lines where a name is
narrowed and how: ``(name, first line, last line, source)``, the source ``:T`` (it is a
``T``) or ``-T`` (it is not).  Recognized: ``if isinstance(x, T)`` (also as a conjunct of
``and``), ``if not isinstance(x, T)``, their ``else`` branches, what follows an ``if`` whose
body always leaves (``return``, ``raise``, ``continue``, ``break``), and what follows
``assert isinstance(x, T)`` -- each up to the line where the function binds ``x`` again.
:mod:`indexgen.extract.bindings` keeps them in the function's ``names`` as ``x@first`` with
the sources ``[":T" or "-T", "#last"]``, for :class:`indexgen.analyze.types.Types`.
"""

from __future__ import annotations

import ast

from indexgen.extract.syntax import annotation

#: One narrowing: (name, first line, last line, ``:T`` or ``-T``).
Narrowing = tuple[str, int, int, str]
_LEAVES = (ast.Return, ast.Raise, ast.Continue, ast.Break)


def _test(node: ast.AST) -> tuple[str, str] | None:
    """``(name, 'A | B')`` of ``isinstance(name, A)`` or ``isinstance(name, (A, B))``."""
    if not (type(node) is ast.Call and type(node.func) is ast.Name
            and node.func.id == "isinstance" and len(node.args) == 2 and not node.keywords
            and type(node.args[0]) is ast.Name):
        return None
    kind = node.args[1]
    types = kind.elts if type(kind) is ast.Tuple else [kind]
    if not types or not all(type(k) in (ast.Name, ast.Attribute) for k in types):
        return None
    return node.args[0].id, " | ".join(annotation(k) for k in types)


def _tests(test: ast.AST) -> tuple[list[tuple[str, str]], list[tuple[str, str]], bool]:
    """(what holds when ``test`` is true, what does not hold then, whether the opposite holds
    when it is false), the first two lists of ``(name, types)``: an ``isinstance`` test, a
    ``not`` of one, or those of an ``and`` (``callable(x) and not isinstance(x, M)``: x is no
    M inside; false, the ``and`` says nothing of x)."""
    one = _test(test)
    if one is not None:
        return [one], [], True
    if type(test) is ast.UnaryOp and type(test.op) is ast.Not:
        one = _test(test.operand)
        return ([], [one], True) if one is not None else ([], [], False)
    if type(test) is ast.BoolOp and type(test.op) is ast.And:
        true = [t for v in test.values if (t := _test(v)) is not None]
        false = [t for v in test.values if type(v) is ast.UnaryOp and type(v.op) is ast.Not
                 and (t := _test(v.operand)) is not None]
        return true, false, False
    return [], [], False


def narrowings(node: ast.If | ast.Assert, end: int) -> list[Narrowing]:
    """The narrowings of one ``if`` or ``assert`` statement of a function that ends at line
    ``end`` (before the function's rebindings are applied: :func:`cut`)."""
    found: list[Narrowing] = []
    true, false, exact = _tests(node.test)
    if not true and not false:
        return found
    if type(node) is ast.Assert:
        return [(name, node.end_lineno + 1, end, ":" + types) for name, types in true]
    body, orelse = node.body, node.orelse
    first, last = body[0].lineno, body[-1].end_lineno
    found += [(name, first, last, ":" + types) for name, types in true]
    found += [(name, first, last, "-" + types) for name, types in false]
    # the else branch, and what follows an if whose body always leaves, know the opposite
    # of a single test (not of one conjunct of an ``and``)
    if not exact:
        return found
    spans = [(orelse[0].lineno, orelse[-1].end_lineno)] if orelse else []
    if type(body[-1]) in _LEAVES:
        spans.append((node.end_lineno + 1, end))
    for span in spans:
        found += [(name, *span, "-" + types) for name, types in true]
        found += [(name, *span, ":" + types) for name, types in false]
    return found


def cut(found: list[Narrowing], rebound: dict[str, list[int]]) -> list[Narrowing]:
    """The narrowings up to the first line in their range where the name is bound again
    (``rebound``: name -> lines of its bindings), the binding's line included (its value is
    read before the name is bound)."""
    out = []
    for name, first, last, source in found:
        last = min([line for line in rebound.get(name, ()) if first <= line <= last],
                   default=last)
        if first <= last:
            out.append((name, first, last, source))
    return out


def narrow(names: dict[str, list[str]], found: list[Narrowing], lazy: dict[str, list]
            ) -> None:
    """Add to a function's ``names`` the narrowings of the names it keeps
    (:mod:`indexgen.extract.narrowing`: ``x@first`` -> ``[":T" or "-T"..., "#last"]``), each
    up to the line where the function binds the name again."""
    rebound = {name: [_line(n) for n in lazy.get(name, ())
                      if isinstance(n, ast.AST) and type(n) is not ast.Call]
               for name, *_ in found}
    spans: dict[str, tuple[list[str], int]] = {}
    for name, first, last, source in cut(found, rebound):
        if name in names and "@" not in name:
            key = f"{name}@{first}"
            tests, end = spans.get(key, ([], last))
            spans[key] = ([*tests, source], min(end, last))
    for key, (tests, end) in spans.items():
        names[key] = [*tests, f"#{end}"]


def _line(node: ast.AST) -> int:
    """The line a binding node binds its names at."""
    t = type(node)
    if t is ast.comprehension:
        return node.target.lineno
    if t is ast.withitem:
        return node.context_expr.lineno
    return node.lineno
