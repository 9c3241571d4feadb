"""The ``isinstance`` tests the extraction reads, and what a comprehension's tests say.

``isinstance(x, T)`` tests a name (:func:`tested_name`) against one or more types
(:func:`isinstance_test`).  An ``if`` clause of a comprehension that tests one of the names
its ``for`` clauses bind narrows that name where the element is made
(:func:`comprehension_tests`): in ``[p.run() for p in params if isinstance(p, Argument)]``
``p`` is an ``Argument``, and so is each element of the list.
:mod:`indexgen.extract.narrowing` gives the function the narrowed name ``p@line`` (the
comprehension's first line) for the lines of the comprehension (but those only its first
iterable is on: :func:`inner_runs`), and a comprehension's element
whose path starts with such a name is written with it (:func:`narrowed_element`), so that
``args = [p for p in params if isinstance(p, Argument)]`` holds ``[p@3]``.
"""

from __future__ import annotations

import ast
import re

from indexgen.extract.unparse import unparse

#: The comprehensions: their ``if`` clauses may narrow their targets.
COMPREHENSIONS = frozenset({ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp})
Comprehension = ast.ListComp | ast.SetComp | ast.GeneratorExp | ast.DictComp


def tested_name(node: ast.AST) -> str | None:
    """The name that ``isinstance(name, T)`` tests, or None for any other node (another
    call, a test of an attribute or of a call's result)."""
    if (type(node) is ast.Call and type(node.func) is ast.Name and node.func.id == "isinstance"
            and len(node.args) == 2 and not node.keywords and type(node.args[0]) is ast.Name):
        return node.args[0].id
    return None


def isinstance_test(node: ast.AST) -> tuple[str, str] | None:
    """``(name, 'A | B')`` of ``isinstance(name, A)`` or ``isinstance(name, (A, B))``."""
    name = tested_name(node)
    if name is None:
        return None
    kind = node.args[1]
    types = kind.elts if type(kind) is ast.Tuple else [kind]
    if not types or not all(type(k) in (ast.Name, ast.Attribute) for k in types):
        return None
    return name, " | ".join(unparse(k) for k in types)


#: The type a narrowing writes for what :func:`self_first` tests: a function whose first
#: parameter is ``self`` (a method read on its class), which no annotation can name.
SELF_FIRST = "(self)"


def self_first(node: ast.AST) -> tuple[str, str] | None:
    """``(name, SELF_FIRST)`` of a test that the first parameter of the function ``name``
    is ``self``: ``["self"] == list(inspect.signature(name).parameters)[:1]`` (either side),
    ``list(signature(name).parameters)[0] == "self"``, ``"self" in
    signature(name).parameters`` -- how a wrapper tells a method from a function (pyparsing's
    ``replaced_by_pep8`` calls ``fn(self, *args)`` in one branch, ``fn(*args)`` in the
    other); None for any other node."""
    if type(node) is not ast.Compare or len(node.ops) != 1:
        return None
    left, op, right = node.left, type(node.ops[0]), node.comparators[0]
    found = None
    if op is ast.In and _is_self(left):
        found = _parameters_of(right)
    elif op is ast.Eq:
        if _is_self(right) or _is_self_list(right):
            left, right = right, left  # "self" == ... either way round
        if _is_self(left) or _is_self_list(left):
            found = _first_parameter(right, whole=_is_self_list(left))
    return (found, SELF_FIRST) if found is not None else None


def _is_self(node: ast.AST) -> bool:
    return type(node) is ast.Constant and node.value == "self"


def _is_self_list(node: ast.AST) -> bool:
    return type(node) in (ast.List, ast.Tuple) and len(node.elts) == 1 and _is_self(
        node.elts[0])


def _first_parameter(node: ast.AST, whole: bool) -> str | None:
    """The name whose signature's first parameter ``node`` reads: ``list(P)[:1]`` (a list
    of it: ``whole``) or ``list(P)[0]``, ``P`` read by :func:`_parameters_of`."""
    if type(node) is not ast.Subscript or type(node.value) is not ast.Call:
        return None
    call, index = node.value, node.slice
    if whole:
        fits = (type(index) is ast.Slice and index.lower is None and index.step is None
                and type(index.upper) is ast.Constant and index.upper.value == 1)
    else:
        fits = type(index) is ast.Constant and index.value == 0
    if not fits or type(call.func) is not ast.Name or call.func.id not in ("list", "tuple") \
            or len(call.args) != 1 or call.keywords:
        return None
    return _parameters_of(call.args[0])


def _parameters_of(node: ast.AST) -> str | None:
    """``name`` of ``inspect.signature(name).parameters`` (or ``signature(name)...``)."""
    if type(node) is not ast.Attribute or node.attr != "parameters" \
            or type(node.value) is not ast.Call:
        return None
    call = node.value
    named = call.func.attr if type(call.func) is ast.Attribute else \
        call.func.id if type(call.func) is ast.Name else ""
    if named != "signature" or len(call.args) != 1 or type(call.args[0]) is not ast.Name:
        return None
    return call.args[0].id


def narrowing_test(node: ast.AST) -> tuple[str, str] | None:
    """What a test of an ``if``, an ``assert`` or a conditional expression says a name is:
    :func:`isinstance_test`'s, or :func:`self_first`'s."""
    return isinstance_test(node) or self_first(node)


def comprehension_tests(node: Comprehension) -> list[tuple[str, str]]:
    """What the ``if`` clauses of a comprehension say of the names its ``for`` clauses bind
    (that clause's or an earlier one's), where its element is made: ``(name, ":T")`` for
    ``if isinstance(name, T)``, ``(name, "-T")`` for ``if not isinstance(name, T)``, each
    also as a conjunct of an ``and``; an ``or`` says nothing, nor a test of another name."""
    found: list[tuple[str, str]] = []
    bound: set[str] = set()
    for gen in node.generators:
        bound |= _names(gen.target)
        for cond in gen.ifs:
            terms = cond.values if type(cond) is ast.BoolOp and type(cond.op) is ast.And \
                else [cond]
            for term in terms:
                sign = ":"
                if type(term) is ast.UnaryOp and type(term.op) is ast.Not:
                    sign, term = "-", term.operand
                one = isinstance_test(term)
                if one is not None and one[0] in bound:
                    found.append((one[0], sign + one[1]))
    return found


def _names(target: ast.AST) -> set[str]:
    """The names a ``for`` target binds (``k, (a, *b)``: k, a and b)."""
    t = type(target)
    if t is ast.Name:
        return {target.id}
    if t is ast.Tuple or t is ast.List:
        return {n for e in target.elts for n in _names(e)}
    return _names(target.value) if t is ast.Starred else set()


_HEAD = re.compile(r"[A-Za-z_]\w*")


def narrowed_element(node: Comprehension, found: str) -> str:
    """The path ``found`` of a comprehension's element, its first name written ``x@line``
    (the comprehension's first line) where an ``if`` clause of the comprehension narrows
    that name: ``[p for p in ps if isinstance(p, A)]`` on line 3 holds ``p@3``."""
    if not any(g.ifs for g in node.generators):
        return found
    head = _HEAD.match(found)
    if head is not None and any(name == head.group() for name, _ in comprehension_tests(node)):
        return f"{head.group()}@{node.lineno}{found[head.end():]}"
    return found


def inner_runs(node: Comprehension) -> list[tuple[int, int]]:
    """The line runs of a comprehension but the lines only its first iterable is on: that
    iterable is evaluated outside the comprehension, where its names are the function's
    (``[n.f()`` then ``for n in n.nodes()]`` on a line of its own)."""
    first, last = node.lineno, node.end_lineno
    outer = node.generators[0].iter
    if outer.lineno == outer.end_lineno == first:
        return [(first, last)]  # most comprehensions: the iterable shares a line with more
    parts = [node.key, node.value] if type(node) is ast.DictComp else [node.elt]
    parts += [*node.generators[0].ifs,  # (its target makes no call, on the iterable's line)
              *[p for g in node.generators[1:] for p in (g.target, g.iter, *g.ifs)]]
    inner = {n for p in parts for n in range(p.lineno, p.end_lineno + 1)}
    runs: list[tuple[int, int]] = []
    for n in range(first, last + 1):
        if outer.lineno <= n <= outer.end_lineno and n not in inner:
            continue
        if runs and runs[-1][1] == n - 1:
            runs[-1] = (runs[-1][0], n)
        else:
            runs.append((n, n))
    return runs


def conditional(expr: ast.AST | None, one, reads) -> list[tuple]:
    """What the ``isinstance`` test of a conditional expression says of its branches
    (``x.run() if isinstance(x, A) else None``: an ``A`` in the first; with ``not``, in the
    second), as narrowings ``(name, first, last, ":T" or "-T", None)`` over the branch's
    lines, where the other branch does not read what is tested (a line is the unit: both
    branches on one line would be narrowed alike).  ``one`` reads a test (``(name,
    types)`` or None: :func:`isinstance_test`, or an attribute path's); ``reads(node,
    name)``: whether a node of the other branch reads it."""
    if type(expr) is not ast.IfExp:
        return []
    test, sign = expr.test, ":"
    if type(test) is ast.UnaryOp and type(test.op) is ast.Not:
        test, sign = test.operand, "-"
    found = one(test)
    if found is None:
        return []
    name, types = found
    out = []
    for branch, other, mark in ((expr.body, expr.orelse, sign),
                                (expr.orelse, expr.body, "-" if sign == ":" else ":")):
        if not any(reads(n, name) for n in ast.walk(other)):
            out.append((name, branch.lineno, branch.end_lineno, mark + types, None))
    return out
