"""Stage 1e (continued): where an ``isinstance`` test narrows an attribute path.

:mod:`indexgen.extract.narrowing` narrows names; the same tests narrow an attribute path of
one or two dots (``self.data``, ``node.inputs``, ``self.a.b``: :func:`tested_path`), as
Python's type checkers do: inside ``if isinstance(self.data, InputBuffer):``
``self.data.get_name()`` is ``InputBuffer``'s, never the ``get_name`` of every class that
``self.data`` may hold.  The forms are the names' (``if``, its ``else``, ``not``, ``and``,
what follows an ``if`` whose body always leaves, ``assert isinstance(self.data, (A, B))``),
and two more: the operands after an ``isinstance`` test of an ``and`` (``isinstance(self.data,
A) and self.data.run()``) in an ``if`` or ``assert`` test, a ``return`` or an assignment, and
the branches of a conditional expression a ``return`` or an assignment gives
(``self.data.run() if isinstance(self.data, A) else None``:
:func:`~indexgen.extract.instance_tests.conditional`).

The narrowing ends where the function assigns the path, or a prefix of it, again (``self.data
= B()``, ``self = ...``; an assignment in a branch or a loop as for names:
:func:`indexgen.extract.narrowing.cut`) -- mypy's rule: a call (``self.reset()``) does not end
it, though the method may assign the attribute; an augmented assignment or ``del`` does not
either, nor does anything a nested function does.  One cut more than mypy's: what follows an
``assert`` or an ``if`` that leaves is narrowed up to the end of the block that holds it, not
of the function (``with V.graph.set_current_wrapper_code(): assert isinstance(
V.graph.wrapper_code, W)``: the ``with`` puts the old value back).  A line is the unit, as for
names: an ``and`` on one line narrows the whole line.

Summaries stay small: a narrowing is kept only where a call inside it starts with the path;
the function's ``names`` then hold ``self.data@12`` (the path, ``@``, the narrowing's first
line) with the sources ``[":T" or "-T"..., "#last"]``, and those calls' records (flow records
``<`` and references ``&`` too) are written on it: ``self.data@12.get_name``.  The global
pass reads the head of such a path as one name (:func:`indexgen.analyze.paths.parse`), which
is the path's own value narrowed (:meth:`indexgen.analyze.types.Types._name_uncached`).
An assignment of the path narrows it too, to what was assigned
(:mod:`indexgen.extract.assignment_narrowing`), and the two compose (:func:`_spans`).
"""

from __future__ import annotations

import ast

from indexgen.extract.assignment_narrowing import (
    assigned_path,
    assignment_narrowings,
    attribute_path,
)
from indexgen.extract.model import Call, FileSummary
from indexgen.extract.narrowing import (
    LEAVES,
    VALUED,
    Narrowing,
    cut,
    line_of,
    narrowings,
    read_until,
)
from indexgen.extract.syntax import blocks, path, targets
from indexgen.extract.unparse import unparse

#: The statements a narrowing may follow (an ``if`` that leaves, an ``assert``, a ``while``):
#: what follows one is narrowed up to where :func:`followed_until` says.
FOLLOWED = (ast.If, ast.Assert, ast.While)
_BINDS = (ast.Assign, ast.AnnAssign, ast.For, ast.AsyncFor, ast.withitem)


def tested_path(node: ast.AST) -> tuple[str, str] | None:
    """``('self.data', 'A | B')`` of ``isinstance(self.data, A)`` (``(A, B)``): a path of
    one or two attributes on a name, or None."""
    if type(node) is not ast.Call or type(node.func) is not ast.Name or \
            node.func.id != "isinstance" or len(node.args) != 2 or node.keywords:
        return None
    tested = attribute_path(node.args[0])
    if tested is None:
        return None
    kind = node.args[1]  # the types, as isinstance_test reads a name's
    types = kind.elts if type(kind) is ast.Tuple else [kind]
    if not types or not all(type(k) in (ast.Name, ast.Attribute) for k in types):
        return None
    return tested, " | ".join(unparse(k) for k in types)


def _reads(node: ast.AST, tested: str) -> bool:
    """Whether ``node`` reads the attribute path ``tested``."""
    return type(node) is ast.Attribute and path(node) == tested


def _assigned(node: ast.AST) -> list[str]:
    """The paths a binding node assigns (names and attribute paths; a tuple's each)."""
    return [found for target in targets(node) if (found := path(target))]


def narrow_paths(summary: FileSummary, binders: list[ast.AST], owner: list[int],
                 defs_nodes: list, tested: list[int] | None = None,
                 block_ends: dict[int, dict[int, int]] | None = None) -> None:
    """Find the attribute paths the ``isinstance`` tests of each function narrow, keep those
    a call inside starts with in the function's ``names``, and write those calls on them (see
    the module's docstring).  ``binders``: the walk's binding nodes (``if``, ``assert``,
    assignments, loops...); ``owner``: the innermost definition of each line
    (:func:`indexgen.extract.calls.owners`); ``defs_nodes``: each definition with its node;
    ``tested``: the lines of the file's ``isinstance`` tests of an attribute
    (:attr:`~indexgen.extract.identifiers.Walked.path_tests`; None: unknown), which the
    statements of the other functions cannot narrow: only those of their functions are read
    (a test is on its statement's lines, and no ``def`` starts inside an expression);
    ``block_ends``: :func:`followed_until`'s table, shared with the narrowings of names."""
    defs = summary.definitions
    top = len(owner) - 1
    assigns = _assigns(summary, binders, owner)
    if tested is not None:
        functions = {owner[line] for line in tested if 0 <= line <= top}
        if not functions and not assigns:
            return
    else:
        functions = None
    found: dict[int, list[Narrowing]] = {}
    nodes = {d.anchor: node for d, node in defs_nodes}
    for i, paths in assigns.items():  # self.field = String(): self.field@13 after it
        here = assignment_narrowings(nodes[defs[i].anchor], paths)
        if here:
            found[i] = here
    ends_of = {} if block_ends is None else block_ends
    # (where no function tests a path, the loop would pass over every node: not read)
    for node in binders if functions is None or functions else ():
        t = type(node)
        if t not in FOLLOWED and t not in VALUED:
            continue
        i = owner[node.lineno] if 0 <= node.lineno <= top else -1
        if i < 0 or defs[i].kind == "class" or functions is not None and i not in functions:
            continue
        end = defs[i].end_lineno
        if t in FOLLOWED:  # what follows an if that leaves, an assert: up to its block's end
            end = followed_until(ends_of, i, nodes[defs[i].anchor].body, node, end)
        here = narrowings(node, end, one=tested_path, reads=_reads)
        if here:
            found.setdefault(i, []).extend(here)
    if not found:
        return
    rebound: dict[int, list[tuple[str, int]]] = {}  # function -> (path assigned, line)
    for node in binders:
        if type(node) in _BINDS:
            line = line_of(node)
            i = owner[line] if 0 <= line <= top else -1
            if i in found:  # the value's lines still read the old one
                rebound.setdefault(i, []).extend((p, read_until(node)) for p in _assigned(node))
    by_caller = {defs[i].anchor: i for i in found}
    calls = summary.calls
    spans: dict[int, dict[str, list[tuple[int, int, list[str]]]]] = {}
    for k, call in enumerate(calls):
        i = by_caller.get(call.caller)
        if i is None:
            continue
        mine = spans.get(i)
        if mine is None:
            mine = spans[i] = _spans(found[i], rebound.get(i, ()), defs[i].names or {})
        text = call.text
        mark = text[0] if text[0] in "<&" else ""
        called, tab, rest = text[len(mark):].partition("\t")
        for tested, runs in mine:  # the longest path first: self.a.b before self.a
            if not called.startswith(tested) or len(called) > len(tested) and \
                    called[len(tested)] not in ".[(":
                continue
            at = [(a, b, tests) for a, b, tests in runs if a <= call.line <= b]
            if at:
                a, b, tests = at[-1]  # the innermost: a later first line
                if len(called) == len(tested) and all(t[0] == "-" for t in tests):
                    break  # self.run() past `isinstance(self.run, S): return`: the method
                key = f"{tested}@{a}"
                defs[i].names = {**(defs[i].names or {}), key: [*tests, f"#{b}"]}
                calls[k] = Call(call.caller, mark + key + called[len(tested):] + tab + rest,
                                call.line, call.local)
                break


def _assigns(summary: FileSummary, binders: list[ast.AST], owner: list[int]
             ) -> dict[int, set[str]]:
    """The attribute paths each function assigns (:func:`~indexgen.extract.
    assignment_narrowing.assigned_path`) and a call of it starts with; none that names a
    method of the function's class (``self.size = n`` of a property)."""
    defs = summary.definitions
    top = len(owner) - 1
    assigned: dict[int, set[str]] = {}
    for node in binders:
        t = type(node)
        # (a target that is no attribute, most, has no path: assigned_path not asked)
        if t is ast.Assign and type(node.targets[0]) is ast.Attribute or \
                t is ast.AnnAssign and type(node.target) is ast.Attribute:
            found = assigned_path(node)
            i = owner[node.lineno] if found and 0 <= node.lineno <= top else -1
            if i >= 0 and defs[i].kind != "class":
                assigned.setdefault(i, set()).add(found)
    if not assigned:
        return {}
    by_caller = {defs[i].anchor: i for i in assigned}
    own = {d.qualname for d in defs}
    called: dict[int, set[str]] = {}
    for call in summary.calls:
        i = by_caller.get(call.caller)
        if i is None:
            continue
        text = call.text.partition("\t")[0].lstrip("<&")
        for p in assigned[i]:
            if text.startswith(p) and len(text) > len(p) and text[len(p)] in ".[(" and (
                    p.count(".") > 1 or f"{defs[i].parent}.{p.partition('.')[2]}" not in own):
                called.setdefault(i, set()).add(p)
    return called


def followed_until(ends_of: dict[int, dict[int, int]], i: int, body: list[ast.stmt],
                   node: ast.AST, end: int) -> int:
    """The last line a narrowing that follows the statement ``node`` of function ``i``
    (whose body is ``body``) reaches (:func:`statement_block_ends`, made once a function in
    ``ends_of``); ``end`` for a node that is none of its statements."""
    ends = ends_of.get(i)
    if ends is None:
        ends = ends_of[i] = statement_block_ends(body, {})
    return ends.get(id(node), end)


def statement_block_ends(body: list[ast.stmt], out: dict[int, int], end: int = 0
                         ) -> dict[int, int]:
    """Each statement of ``body`` and of the blocks within (by ``id``) -> the last line
    that what follows it reaches: its block's end (an ``if`` nested in another ends with
    it), or, in a branch of an ``if`` whose other branch leaves (``return``, ``raise``...:
    an ``elif`` chain), the end of the block that holds that ``if``.  What follows an
    ``if`` that leaves, or an ``assert``, is narrowed up to there."""
    end = end or body[-1].end_lineno
    for st in body:
        out[id(st)] = end
        if type(st) is ast.If:
            statement_block_ends(st.body, out, end if st.orelse and type(
                st.orelse[-1]) in LEAVES else 0)
            if st.orelse:
                statement_block_ends(st.orelse, out, end if type(st.body[-1]) in LEAVES
                                     else 0)
            continue
        for block in blocks(st):
            statement_block_ends(block, out)
    return out


def _spans(found: list[Narrowing], rebound, names: dict) -> list[tuple[str, list]]:
    """The narrowings of one function by path, the longest first: ``(path, [(first, last,
    sources)...])`` by first line,
    each cut where the path or a prefix of it is assigned; none of a path on a name the
    function's own tests narrow (``x@3.data@5`` is no path the pass reads).  A call takes
    the run that starts last, so each run also says what holds around it: a test's run the
    value assigned before it (``self.x = k`` then ``if isinstance(self.x, A):`` narrows
    ``k``), an assignment's run the innermost test around it (after ``if isinstance(self.x,
    A): return``, ``=k`` is no ``A``)."""
    lines: dict[str, list[int]] = {}
    for tested, *_ in found:
        lines[tested] = [line for p, line in rebound
                         if tested == p or tested.startswith(p + ".")]
    narrowed = {name.partition("@")[0] for name in names if "@" in name}
    out: dict[str, dict[int, tuple[int, list[str]]]] = {}
    extents: dict[str, list[tuple[int, int, str]]] = {}  # each assignment's, over its runs
    for entry in found:
        made = cut([entry], lines)
        if made and entry[3][0] == "=":
            extents.setdefault(entry[0], []).append((made[0][1], made[-1][2], entry[3]))
        for tested, first, last, source in made:
            if tested.partition(".")[0] in narrowed:
                continue
            runs = out.setdefault(tested, {})
            end, tests = runs.get(first, (last, []))
            runs[first] = (min(end, last), [*tests, source])
    return sorted(((p, [_around(run, runs, extents.get(p, ())) for run in
                        sorted((a, b, tests) for a, (b, tests) in runs.items())])
                   for p, runs in out.items()), key=lambda x: -len(x[0]))


def _around(run: tuple[int, int, list[str]], runs: dict, extents: list
            ) -> tuple[int, int, list[str]]:
    """``run`` with the sources that hold around it (see :func:`_spans`)."""
    a, b, sources = run
    if not extents:
        return run
    if all(s[0] == "=" for s in sources):  # an assignment's: the innermost test around
        tests = [(c, [s for s in t if s[0] != "="]) for c, (d, t) in runs.items()
                 if c < a <= d and any(s[0] != "=" for s in t)]
        return (a, b, [*sources, *max(tests)[1]]) if tests else run
    starts = [c for c, d, _ in extents if c < a <= d]  # a test's: the assignment before
    if not starts:
        return run
    last = max(starts)
    return a, b, [*(s for c, _, s in extents if c == last), *sources]
