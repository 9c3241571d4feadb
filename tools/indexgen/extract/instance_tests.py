"""The ``isinstance`` tests the extraction reads, and what a comprehension's tests say.

``isinstance(x, T)`` tests a name (:func:`tested_name`) against one or more types
(:func:`isinstance_test`), and so, where it is true, does ``type(x) is T``
(:func:`type_test`); a test that a function's first parameter is ``self`` picks one of two
wrappers (:func:`self_first`).  :func:`says` reads what the test of an ``if``, ``assert``
or ``while`` says, :func:`matched` what a ``match`` statement's class patterns say, and
:func:`conditional` and :func:`operands` what a test says inside an expression.  An ``if``
clause of a comprehension that tests one of the names its ``for`` clauses bind narrows that
name where the element is made
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


def type_test(node: ast.AST, one=None) -> tuple[str, str] | None:
    """What ``type(x) is T`` (or ``== T``) says of ``x`` where it is true, as ``one`` (default
    :func:`isinstance_test`) reads ``isinstance(x, T)``: ``x`` is a ``T`` there.  Where it
    is false ``x`` may still be a ``T`` (of a subclass), so a caller reads it only where it
    holds."""
    if type(node) is not ast.Compare or len(node.ops) != 1 \
            or type(node.ops[0]) not in (ast.Is, ast.Eq):
        return None
    call = node.left
    if type(call) is not ast.Call or type(call.func) is not ast.Name or call.func.id != "type" \
            or len(call.args) != 1 or call.keywords:
        return None
    return (one or isinstance_test)(_as_isinstance(call.args[0], node.comparators[0]))


def _as_isinstance(subject: ast.AST, types: ast.AST) -> ast.Call:
    """``isinstance(subject, types)``, written for a reader of such tests (:func:`type_test`,
    :func:`matched`: another form that says the same of ``subject`` where it holds)."""
    return ast.Call(ast.Name("isinstance", ast.Load()), [subject, types], [])


#: What a test says of the names it tests: ``(name, ":T" or "-T")`` (a ``T``, or not one).
Said = list[tuple[str, str]]


def says(test: ast.AST, isinstance_test=isinstance_test) -> tuple[Said, Said]:
    """What the test of an ``if``, ``assert`` or ``while`` says (where it is true, where it is
    false): ``isinstance(x, T)`` that ``x`` is a ``T``, false that it is not; ``type(x) is
    T`` (:func:`type_test`) the same where true only; ``not`` the opposite; an ``and`` what
    each operand says where it is true (``callable(x) and not isinstance(x, M)``: no M),
    false nothing; an ``or``, false, what each operand says where false (``not
    isinstance(x, A) or x.bad()``: an A), true, where every operand tests one name, that it
    is one of the types (``isinstance(x, A) or isinstance(x, B)``).  ``isinstance_test``
    reads one test (an attribute path's, :mod:`indexgen.extract.attribute_narrowing`)."""
    one = isinstance_test(test)
    if one is not None:
        return [(one[0], ":" + one[1])], [(one[0], "-" + one[1])]
    one = type_test(test, isinstance_test)  # type(x) is A: false, x may be of a subclass
    if one is not None:
        return [(one[0], ":" + one[1])], []
    t = type(test)
    if t is ast.UnaryOp and type(test.op) is ast.Not:
        true, false = says(test.operand, isinstance_test)
        return false, true
    if t is not ast.BoolOp:
        return [], []
    parts = [says(v, isinstance_test) for v in test.values]
    if type(test.op) is ast.And:
        return [s for true, _false in parts for s in true], []
    tested = [isinstance_test(v) for v in test.values]
    if all(tested) and len({found[0] for found in tested}) == 1:
        types = " | ".join(found[1] for found in tested)
        return [(tested[0][0], ":" + types)], [(tested[0][0], "-" + types)]
    return [], [s for _true, false in parts for s in false]


def matched(node: ast.Match, one=None) -> list[tuple]:
    """What each ``case`` of a ``match`` on a name (or, with ``one``, an attribute path) says
    of it over the case's body: ``case A():`` or ``case A(x=1) | B():`` (class patterns,
    perhaps ``as`` a name) an ``A`` (or a ``B``), as ``isinstance`` says, as narrowings
    ``(name, first, last, ":T", the case's body)``; other patterns say nothing."""
    found = []
    for case in node.cases:
        pattern = case.pattern
        while type(pattern) is ast.MatchAs and pattern.pattern is not None:
            pattern = pattern.pattern
        classes = pattern.patterns if type(pattern) is ast.MatchOr else [pattern]
        if not all(type(c) is ast.MatchClass for c in classes):
            continue
        tested = (one or isinstance_test)(_as_isinstance(
            node.subject, ast.Tuple([c.cls for c in classes], ast.Load())))
        if tested is not None:
            body = case.body
            found.append((tested[0], body[0].lineno, body[-1].end_lineno, ":" + tested[1],
                          body))
    return found


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


def operands(expr: ast.AST | None, one, reads) -> list[tuple]:
    """What the ``isinstance`` tests of an ``and`` or ``or`` say of the operands after them
    (``isinstance(x, A) and x.run()``: an ``A`` there; ``not isinstance(x, A) or
    x.run()`` too; with the other sign, not an ``A``), as narrowings ``(name, first, last,
    ":T" or "-T", None)`` over the later operands' lines; a test is not read where an
    operand before it reads what it tests on those lines (``x.ok() and isinstance(x, A) and
    ...``: a line is the unit).  ``one`` and ``reads`` as for :func:`conditional`."""
    if type(expr) is not ast.BoolOp:
        return []
    found: list[tuple] = []
    values = expr.values
    holds = ":" if type(expr.op) is ast.And else "-"  # what a true test says after it
    for k, v in enumerate(values[:-1]):
        sign, test = (holds, v) if type(v) is not ast.UnaryOp or type(v.op) is not ast.Not \
            else ("-" if holds == ":" else ":", v.operand)
        tested = one(test)
        if tested is None and sign == ":" and test is v:  # type(x) is A and x.run()
            tested = type_test(test, one)
        if tested is None:
            continue
        first = values[k + 1].lineno
        if any(w.end_lineno >= first and any(reads(n, tested[0]) for n in ast.walk(w))
               for w in values[:k]):
            continue
        found.append((tested[0], first, expr.end_lineno, sign + tested[1], None))
    return found
