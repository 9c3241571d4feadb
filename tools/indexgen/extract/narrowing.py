"""Stage 1e (continued): where an ``isinstance`` test narrows what a name is.

A function's name gets every type its ``isinstance`` tests name as a source
(:func:`indexgen.extract.sources.pairs`): ``x`` may be an ``A`` or a ``B`` somewhere in the
function.  Inside ``if isinstance(x, A):`` it is an ``A`` only, and in its ``else:`` branch
anything but an ``A`` -- so a call ``x.run()`` there reaches ``A.run`` (or, in the ``else``,
not ``A.run``), never the ``run`` of every type the function tests for.

:func:`narrowings` finds, for one ``if`` or ``assert`` statement, the lines where a name is
narrowed and how: ``(name, first line, last line, source)``, the source ``:T`` (it is a
``T``) or ``-T`` (it is not).  Recognized (:func:`~indexgen.extract.instance_tests.says`):
``if isinstance(x, T)`` (also as a conjunct of ``and``, or in an ``or`` of tests of ``x``),
``if not isinstance(x, T)``, ``if type(x) is T`` (not its ``else``), their ``else``
branches, what follows an ``if`` whose body always leaves (``return``, ``raise``,
``continue``, ``break``), and what follows ``assert isinstance(x, T)``; a test that a
function's first parameter is ``self`` (:func:`~indexgen.extract.instance_tests.self_first`)
likewise -- each up to where the function binds ``x`` again on the way
there (a binding in one branch of an ``if`` or ``try`` leaves the other branches narrowed,
and ends the narrowing after that statement; one in a loop, from the loop on).  The ``if``
clauses of a comprehension narrow the names its ``for`` clauses bind over all its lines
(:func:`~indexgen.extract.instance_tests.comprehension_tests`): ``[p.m() for p in ps if
isinstance(p, A)]`` calls ``A.m``, and the list it makes holds ``p@line``
(:func:`~indexgen.extract.syntax.literal`), an ``A``.  Tested or not, a comprehension's
targets are names of its own (a comprehension is a scope of its own): over its lines each
is its element, not what the function's other bindings of that name give (``[x.f() for x
in args]`` then ``[x.g() for x in pairs]``), and it rebinds nothing of the function's.  A
function nested in another (no definition of its own) is a scope of its own too: over its
body each name it binds itself is what its own sources say (``^:T``: a parameter's
annotation, default, callers, its own assignments: :mod:`indexgen.extract.scopes`), not the
enclosing function's.
:mod:`indexgen.extract.bindings` keeps them in the function's ``names`` as ``x@first`` with
the sources ``[":T" or "-T", "#last"]``, for :class:`indexgen.analyze.types.Types`.
"""

from __future__ import annotations

import ast
import re
from bisect import bisect_left

from indexgen.extract.builtin_tests import NO_NAMES, builtin_type
from indexgen.extract.instance_tests import (
    COMPREHENSIONS,
    comprehension_tests,
    conditional,
    inner_runs,
    isinstance_test,
    matched,
    narrowing_test,
    operands,
    says,
)
from indexgen.extract.nodes import HOLDERS, blocks
from indexgen.extract.sources import pairs, rebinding

#: One narrowing: (name, first line, last line, ``:T`` or ``-T``, the statements of the
#: branch it holds in, or None for what follows a statement, or [] for a comprehension).
Narrowing = tuple[str, int, int, str, list | None]
LEAVES = (ast.Return, ast.Raise, ast.Continue, ast.Break)  # statements that leave a block
_FORS = (ast.For, ast.AsyncFor)
_LOOPS = (*_FORS, ast.While)
#: The statements (and comprehensions) :func:`narrowings` reads.
NARROWERS = frozenset({ast.If, ast.Assert, ast.While, ast.Match, ast.For, ast.AsyncFor,
                       *COMPREHENSIONS})
#: Those of them that bind nothing themselves.
NARROW_ONLY = frozenset({ast.If, ast.Assert, ast.While, ast.Match, *COMPREHENSIONS})
#: The statements whose value, a conditional expression or an ``and``/``or``, may narrow
#: its parts.
VALUED = frozenset({ast.Assign, ast.AnnAssign, ast.Return})
#: The values of :data:`VALUED` statements that narrow.
NARROWING_VALUES = frozenset({ast.IfExp, ast.BoolOp})
_MAY_NARROW = frozenset({ast.Call, ast.Compare, ast.UnaryOp, ast.BoolOp})  # tests that may narrow


def _reads(node: ast.AST, name: str) -> bool:
    return type(node) is ast.Name and node.id == name


def narrowings(node: ast.AST, end: int, tests: dict[int, list[ast.Call]] | None = None,
               one=narrowing_test, reads=None) -> list[Narrowing]:
    """The narrowings of one ``if`` or ``assert`` statement of a function that ends at line
    ``end`` (before the function's rebindings are applied: :func:`cut`); of a ``for``
    loop, that its target name is the loop's element in its body (``=`` and the element's
    path: the name's other bindings, another loop's, do not reach there); of a
    comprehension, its own names and its ``if`` clauses' (:func:`_comprehension`, given
    ``tests``: the file's ``isinstance`` tests of a name by line).  ``one`` reads one test
    (:mod:`indexgen.extract.attribute_narrowing`'s reads a test of an attribute path, and
    ``reads`` whether a node reads that path).  The tests of an ``and`` or ``or`` narrow its
    later operands, in an ``if`` or ``assert`` test and in the value of an assignment or a
    ``return`` (:func:`~indexgen.extract.instance_tests.operands`)."""
    reads = reads or _reads
    if type(node) in VALUED:  # y = x.run() if isinstance(x, A) else None
        return conditional(node.value, one, reads) + operands(node.value, one, reads)
    if type(node) in COMPREHENSIONS:
        return _comprehension(node, tests or {})
    if type(node) is ast.Match:  # match x: case A(): ...
        return matched(node, one)
    if type(node) in _FORS:  # for p in (x for x in xs if isinstance(x, A)): [x@line]
        body = node.body         # for k, f in [("a", run)]: f is run there
        return [(target.id, body[0].lineno, body[-1].end_lineno, source, body)
                for target, source in pairs(node, {}) if type(target) is ast.Name]
    if type(node.test) not in _MAY_NARROW:  # if x:, while self.running: (a third of them)
        return []  # no reader of a test (says, operands) reads anything else
    found: list[Narrowing] = operands(node.test, one, reads)  # isinstance(x, A) and x.f()
    inside, outside = says(node.test, one)
    if not inside and not outside:
        return found
    if type(node) is ast.Assert:
        return found + [(name, node.end_lineno + 1, end, said, None) for name, said in inside]
    body, orelse = node.body, node.orelse
    found += [(name, body[0].lineno, body[-1].end_lineno, said, body) for name, said in inside]
    # the else branch, and what follows an if whose body always leaves, know what the test
    # says false; a while loop's body only
    if not outside or type(node) is ast.While:
        return found
    spans = [(orelse[0].lineno, orelse[-1].end_lineno, orelse)] if orelse else []
    if type(body[-1]) in LEAVES:
        spans.append((node.end_lineno + 1, end, None))
    elif not orelse:  # if isinstance(x, T): x = convert(x) -- after it, x is no T or that
        for name, said in inside:
            given = (said[0] == ":" and (name, "-" + said[1:]) in outside
                     and rebinding(body, name))
            if given:
                found += [(name, node.end_lineno + 1, end, "-" + said[1:], None),
                          (name, node.end_lineno + 1, end, "+" + given, None)]
    for a, b, stmts in spans:
        found += [(name, a, b, said, stmts) for name, said in outside]
    return found


def _comprehension(node: ast.ListComp | ast.SetComp | ast.GeneratorExp | ast.DictComp,
                   tests: dict[int, list[ast.Call]]) -> list[Narrowing]:
    """The names a comprehension's ``for`` clauses bind, each its element (``=``), and the
    narrowings of its ``if`` clauses
    (:func:`~indexgen.extract.instance_tests.comprehension_tests`), over its lines but those
    only its first iterable is on (:func:`~indexgen.extract.instance_tests.inner_runs`); the
    block is ``[]``: nothing outside binds the comprehension's names there."""
    clause_tests = comprehension_tests(node)
    own = [(target.id, source) for gen in node.generators for target, source in pairs(gen, {})
           if type(target) is ast.Name and source[0] == "="]
    # an isinstance test elsewhere in it (x.f() if isinstance(x, A) else x): x may be an A
    # (the source +:A), as such a test says of a function's name (sources.pairs); not the
    # if clauses' tests
    start, stop = (node.lineno, node.col_offset), (node.end_lineno, node.end_col_offset)
    inside = [c for n in range(node.lineno, node.end_lineno + 1) for c in tests.get(n, ())
              if start <= (c.lineno, c.col_offset) and (c.end_lineno, c.end_col_offset) <= stop]
    may = []
    if inside:
        names = {name for name, _ in own}
        clauses = {id(term.operand if type(term) is ast.UnaryOp else term)
                   for gen in node.generators for cond in gen.ifs for term in (
                       cond.values if type(cond) is ast.BoolOp and type(cond.op) is ast.And
                       else [cond])}
        may = [(found[0], f"+:{kind}") for c in inside if id(c) not in clauses
               and (found := isinstance_test(c)) is not None and found[0] in names
               for kind in found[1].split(" | ")]
    return [(name, first, last, source, []) for first, last in inner_runs(node)
            for name, source in [*own, *may, *clause_tests]]


def cut(found: list[Narrowing], rebound: dict[str, list[int]]
        ) -> list[tuple[str, int, int, str]]:
    """Each narrowing as the runs of lines no binding of its name comes before
    (``rebound``: name -> lines of its bindings), a binding's line included (its value is
    read before the name is bound).  In a branch, a binding ends the narrowing in the block
    that holds it, and after the statement that block belongs to, not in the other
    branches of that statement (``if e: x = f(x)`` then ``else: x.g()``); a loop that
    binds the name ends it from the loop on (a later turn sees the new value)."""
    out = []
    for name, first, last, source, stmts in found:
        lines = sorted(set(rebound.get(name, ())))
        if stmts is None:
            last = min([line for line in lines if first <= line <= last], default=last)
            runs = [(first, last)] if first <= last else []
        elif not stmts:  # a comprehension: its own names, all its lines
            runs = [(first, last)]
        else:
            runs = _runs(stmts, lines)[0]
        out += [(name, a, b, source) for a, b in _merged(runs)]
    return out


def _runs(stmts: list[ast.stmt], bound: list[int]) -> tuple[list[tuple[int, int]], bool]:
    """The line runs of ``stmts`` that no binding (a line of ``bound``, sorted) comes before
    on the way there, and whether the block binds on some way through it."""
    runs: list[tuple[int, int]] = []
    for st in stmts:
        t = type(st)
        held = blocks(st) if t in HOLDERS else None  # (a simple statement, most: none)
        if not held:  # a simple statement: its lines, then the name may be bound
            runs.append((st.lineno, st.end_lineno))
            if bound and _binds(bound, st.lineno, st.end_lineno):
                return runs, True  # (no binding of the name at all: the common case)
            continue
        head_end = min(b[0].lineno for b in held) - 1
        runs.append((st.lineno, max(st.lineno, head_end)))
        if bound and (t in _LOOPS and _binds(bound, st.lineno, st.end_lineno)
                      or _binds(bound, st.lineno, head_end)):
            return runs, True  # a loop's later turn, or its header, sees a new value
        killed = False
        for block in held:  # each branch from the state before the statement
            inner, k = _runs(block, bound)
            runs += inner
            killed = killed or k
        if killed:  # after the statement the name may be either: no longer narrowed
            return runs, True
    return runs, False


def _binds(bound: list[int], first: int, last: int) -> bool:
    """Whether a line of ``bound`` (sorted) is one of ``first`` to ``last``."""
    k = bisect_left(bound, first)
    return k < len(bound) and bound[k] <= last


def _merged(runs: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Line runs sorted, those that touch or overlap made one."""
    out: list[tuple[int, int]] = []
    for a, b in sorted(runs):
        if out and a <= out[-1][1] + 1:
            out[-1] = (out[-1][0], max(out[-1][1], b))
        else:
            out.append((a, b))
    return out


def spans(found: list[Narrowing], lazy: dict[str, list]) -> dict[str, tuple[list[str], int]]:
    """The narrowings of a function (:mod:`indexgen.extract.narrowing`) by narrowed name:
    ``x@first`` -> (the ``:T``, ``-T`` or ``=`` sources, last line), each up to the line
    where the function binds the name again (``lazy``: its plain binding statements and
    parameters; a comprehension's target binds none of the function's names).  A loop's or
    comprehension's target that nothing else binds (no other statement; for a
    comprehension's, no parameter either) is its element everywhere: no narrowing."""
    # not cut: what the loop below drops on every run (len(bound[n]) <= len(lazy[n]))
    kept = [f for f in found if not (f[3][0] == "=" and len(lazy.get(f[0], ())) < 2
                                     or "@" in f[0])]
    if not kept:
        return {}
    bound = {name: [n for n in lazy.get(name, ()) if isinstance(n, ast.AST)
                    and type(n) is not ast.Call] for name in {f[0] for f in kept}}
    # a comprehension's target is its own name, never the function's: it rebinds nothing
    rebound = {name: [read_until(n) for n in nodes if type(n) is not ast.comprehension]
               for name, nodes in bound.items()}
    own = {(f[0], f[1]) for f in found if f[4] == []}  # a comprehension's names, where
    out: dict[str, tuple[list[str], int]] = {}
    for name, first, last, source in cut(kept, rebound):
        comprehension = (name, first) in own
        if (source[0] == "=" or comprehension and source[0] == "+") and (
                len(lazy.get(name, ())) < 2 if comprehension else len(bound[name]) < 2):
            continue  # a target bound nowhere else (no parameter): its element all the same
        if "@" not in name:
            key = f"{name}@{first}"
            tests, end = out.get(key, ([], last))
            out[key] = ([*tests, source], min(end, last))
    return out


def narrow(names: dict[str, list[str]], found: dict[str, tuple[list[str], int]]) -> None:
    """Add to a function's ``names`` the narrowings (:func:`spans`) of the names it keeps:
    ``x@first`` -> ``[":T" or "-T"..., "#last"]``."""
    for key, (tests, end) in found.items():
        if key.partition("@")[0] in names:
            names[key] = [*tests, f"#{end}"]


#: A name that may start a path in a source: not an attribute, nor already narrowed, nor
#: the name of a keyword argument (``f(:key=x)``).
_NAME = re.compile(r"(?<![\w.@])[A-Za-z_]\w*(?![\w@\u00b7=])")


def held(found: dict[str, tuple[list[str], int]],
         names: tuple[frozenset[str], frozenset[str]] = NO_NAMES
         ) -> dict[str, list[tuple[int, int, str]]]:
    """The narrowings of :func:`spans` by name: (first line, last line, ``x@first``), by
    first line, as the global pass reads a call's narrowed receiver; but those that test a
    builtin type or an abstract container (``isinstance(x, dict)``, ``Iterable``; ``names``:
    :func:`~indexgen.extract.builtin_tests.type_names`)."""
    out: dict[str, list[tuple[int, int, str]]] = {}
    for key, (tests, end) in found.items():
        if any(t[0] == ":" and any(builtin_type(k, names) for k in t[1:].split(" | "))
               for t in tests):
            continue
        name, _, first = key.partition("@")
        out.setdefault(name, []).append((int(first), end, key))
    for runs in out.values():
        runs.sort()
    return out


def at_line(source: str, line: int, narrowed: dict[str, list[tuple[int, int, str]]]) -> str:
    """``source``, a value bound on ``line`` (``=item``, ``~[item]``), with each name that
    starts a path written ``item@first`` where the innermost narrowing of that name
    (:func:`held`) holds the line: ``self.comment = item`` under ``if isinstance(item,
    Comment)`` binds a ``Comment``."""
    if not any(name in source for name in narrowed):
        return source

    def one(m: re.Match) -> str:
        found = m.group()
        for first, last, key in narrowed.get(found, ()):
            if first <= line <= last:
                found = key  # a later first line: an inner branch
        return found
    parts = source.split('"')  # not within a string: getattr(x, "name")
    parts[::2] = [_NAME.sub(one, part) for part in parts[::2]]
    return '"'.join(parts)


def read_until(node: ast.AST) -> int:
    """The last line on which a binding node still reads the old value: an assignment's
    last (``self.data = Box(\n size=self.data.size())`` reads it on every line of its value,
    then binds), a loop's or a ``with``'s first (:func:`line_of`)."""
    return node.end_lineno if type(node) in _ASSIGNS else line_of(node)


_ASSIGNS = (ast.Assign, ast.AnnAssign, ast.AugAssign)


def line_of(node: ast.AST) -> int:
    """The line a binding node binds its names at."""
    t = type(node)
    if t is ast.comprehension:
        return node.target.lineno
    if t is ast.withitem:
        return node.context_expr.lineno
    return node.lineno
