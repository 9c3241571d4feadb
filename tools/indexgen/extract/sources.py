"""Stage 1e (continued): the sources one binding statement gives the names it binds.

A *source* is ``:`` and an annotation as written, ``=`` and the path of a value
(:func:`~indexgen.extract.syntax.path`, a literal of paths
:func:`~indexgen.extract.syntax.literal`), or ``%`` and the name of a module imported by a
name the source gives (``importlib.import_module("pkg.mod")``).  :func:`pairs` says which
target of an assignment, annotation, loop, comprehension, ``with ... as``, walrus or
``isinstance`` test gets which source, :func:`parameter_source` what an annotated parameter
is, :func:`nested_function` what a function nested in another gives that function's names
(a closure: ``λname``; its parameters what the closure's callers hand them);
:mod:`indexgen.extract.bindings` decides where each goes.
"""

from __future__ import annotations

import ast

from indexgen.extract.instance_tests import COMPREHENSIONS
from indexgen.extract.nodes import subtree
from indexgen.extract.shadows import MARK, SELF_NAMES
from indexgen.extract.syntax import (
    LITERALS,
    annotation,
    literal,
    path,
    strings,
    targets,
    tested_name,
    unpacked,
)

#: (target node, source) pairs of one binder.
Pairs = list[tuple[ast.AST, str]]
#: What starts the source an ``isinstance`` test of a name gives it (``+:T``): one of the
#: things the name may be, which adds to what the rest of its sources say, and where it
#: says only "some class", to what the callers hand
#: (:meth:`indexgen.analyze.sourced.Sourced.sources`).
TESTED = "+"


def pairs(node: ast.AST, consts: dict[str, list[str]]) -> Pairs:
    """(target, source) of every name or attribute ``node`` binds to something typed
    (``consts``: the module's constants of strings, for dynamic imports)."""
    t = type(node)
    if t is ast.Assign:
        value = node.value
        targets = node.targets
        if len(targets) == 1 and type(targets[0]) is ast.Name:  # x = value: the most common
            return [(targets[0], s) for s in values(value, consts)]
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
    if t is ast.Call:  # isinstance(name, T): the name may be a T (TESTED: among others)
        classes = _classes(node.args[1])
        mark = TESTED if type(node.args[0]) is ast.Name else ""
        return [(node.args[0], mark + classes)] if classes else []
    if t is ast.ExceptHandler:  # except (E, F) as err: err is an E or an F
        classes = _classes(node.type) if node.name else ""
        return [(ast.Name(id=node.name, ctx=ast.Store()), classes)] if classes else []
    if t is ast.withitem:
        found = path(node.context_expr)
        if node.optional_vars is None or found is None:
            return []
        return _unpack(node.optional_vars, f"={found}.__enter__()")
    # for loops and comprehensions: the target takes the elements of the iterable (of a
    # comprehension too: for p in (x for x in xs if isinstance(x, A)), an element of [x@3])
    found = path(node.iter) or (literal(node.iter) if type(node.iter) in COMPREHENSIONS
                                else None)
    if found:
        return _unpack(node.target, element_source(found))
    if type(node.iter) in (ast.List, ast.Tuple, ast.Set):  # for f in [a, b]: each of them
        return [pair for element in node.iter.elts for s in _spread(element, consts)
                for pair in _unpack(node.target, s)]
    if type(node.iter) is ast.IfExp:  # for x in xs if c else ys: the elements of either
        return [pair for s in values(node.iter, consts) if s[0] == "="
                for pair in _unpack(node.target, element_source(s[1:]))]
    return []


def _spread(element: ast.AST, consts: dict[str, list[str]]) -> list[str]:
    """The sources of an item of a literal looped over: ``*xs.items()`` gives its elements
    (``for k, f in (*a.items(), *b.items())``), another item its value."""
    if type(element) is ast.Starred:
        found = path(element.value)
        return [element_source(found)] if found else []
    return values(element, consts)


def element_source(found: str) -> str:
    """The source of a loop's target: an element of the iterable at path ``found``."""
    return f"=next(iter({found}))"


#: Builtins (and ``functools.reduce``) that call the function they are handed with the
#: elements of the iterables they are handed (:func:`lambda_pairs`).
HANDS_ELEMENTS = frozenset({"map", "filter", "sorted", "min", "max", "reduce"})


def lambda_tests(node: ast.Lambda) -> set[int]:
    """The ids of the ``isinstance(p, T)`` calls in a lambda's body whose ``p`` is a
    parameter of the lambda: the lambda's own name, not its function's, so the test says
    nothing of the function's ``p`` (nor of another lambda's)."""
    a = node.args
    params = {p.arg for p in (*a.posonlyargs, *a.args, *a.kwonlyargs)}
    return {id(c) for c in subtree(node.body) if tested_name(c) in params}


def lambda_pairs(call: ast.Call) -> list[tuple[ast.arg, str]]:
    """(parameter, source) of a lambda that a call of :data:`HANDS_ELEMENTS` is handed,
    which it calls with elements of its iterables: ``map(lambda x, y: ..., xs, ys)`` (x an
    element of xs, y of ys), ``filter(lambda x: ..., xs)``, ``sorted(xs, key=lambda x:
    ...)`` (``min``, ``max`` of one iterable likewise), ``functools.reduce(lambda acc, x:
    ..., xs, start)`` (x an element of xs; acc ``start``, or an element of xs without
    one).  A name of the builtins only (``map``, not ``pool.map``): a method of that name
    may do anything."""
    func, args = call.func, call.args
    name = func.id if type(func) is ast.Name else (
        "reduce" if path(func) == "functools.reduce" else "")
    if name not in HANDS_ELEMENTS:
        return []
    if name in ("sorted", "min", "max"):
        keys = [k.value for k in call.keywords if k.arg == "key"]
        fn, given = (keys[0], args[:1]) if keys and len(args) == 1 else (None, [])
    else:
        fn, given = (args[0], args[1:]) if args else (None, [])
    if type(fn) is not ast.Lambda:
        return []
    params = [*fn.args.posonlyargs, *fn.args.args]
    elements = [[element_source(found)] if found else [] for found in map(path, given)]
    if name == "reduce" and elements:  # acc, then the element
        elements = [values(given[1], {}) if len(given) > 1 else elements[0], elements[0]]
    return [(param, source) for param, sources in zip(params, elements) for source in sources]


def _classes(kind: ast.AST | None) -> str:
    """``:A | B`` of the classes ``A`` or ``(A, B)`` names (those written as names), '' for
    none."""
    types = kind.elts if type(kind) is ast.Tuple else [kind] if kind is not None else []
    texts = [annotation(k) for k in types if type(k) in (ast.Name, ast.Attribute)]
    return ":" + " | ".join(texts) if texts else ""


def values(value: ast.AST, consts: dict[str, list[str]]) -> list[str]:
    """Sources of an assigned value: its path, or the paths of ``a if c else b`` and
    ``a or b``; none for literals and operators."""
    t = type(value)
    if t is ast.Name:  # the commonest values first: a name is its path
        return ["=" + value.id] if value.id != "None" else []
    if t is ast.Constant:  # no path
        return []
    if t is ast.IfExp:
        return values(value.body, consts) + values(value.orelse, consts)
    if t is ast.BoolOp:
        return [s for v in value.values for s in values(v, consts)]
    if t is ast.Subscript and type(value.value) in (ast.Dict, ast.List, ast.Tuple):
        table = value.value  # {"a": self.a, "b": self.b}[name]: any of its entries
        items = ([v for k, v in zip(table.keys, table.values) if k is not None]
                 if type(table) is ast.Dict else table.elts)
        return [s for v in items for s in values(v, consts)]
    if t is ast.Call and _imports(value):  # a module imported by a name the source gives
        return ["%" + m for m in strings(value.args[0], consts)]
    held = literal(value) if t in LITERALS else None
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


def nested_function(node: ast.FunctionDef | ast.AsyncFunctionDef, found: dict[str, list[str]],
            lazy: dict[str, list], in_method: bool = False) -> None:
    """A function nested in another (a closure: not a definition of its own) in that
    function's names: its name is the closure (``λname``).  In a method (``in_method``),
    its own ``self`` or ``cls`` is named apart (``selfʹ``, :mod:`indexgen.extract.shadows`):
    that (or elsewhere the name) is what its annotation says and what the closure's callers hand it
    (``<λname|position:param``, read by :meth:`indexgen.analyze.flows.Flows._flow`).  Its
    other parameters are names of its own (:mod:`indexgen.extract.scopes`)."""
    found.setdefault(node.name, []).append("λ" + node.name)
    for a, *parameter in nested_parameters(node):
        if a.arg in SELF_NAMES:
            lazy.setdefault(a.arg + MARK if in_method else a.arg, []).extend(
                parameter_bindings(a, *parameter))


def parameter_bindings(a: ast.arg, stars: str, given: str, flow: str) -> list:
    """What a nested function's parameter ``a`` is bound to (one of
    :func:`nested_parameters`), as its enclosing function's binding statements by name
    hold it: its annotated node, its default (``=path``), what the closure's callers hand
    it (``<λname|position:param``)."""
    found: list = [(a, stars)] if a.annotation is not None else []
    return found + [x for x in (given, flow) if x]


def nested_parameters(node: ast.FunctionDef | ast.AsyncFunctionDef
                ) -> list[tuple[ast.arg, str, str, str]]:
    """Each parameter of a nested function: (its node, ``*`` or ``**`` or '', ``=`` and the
    path of its default or '', what the closure's callers hand it or '')."""
    args = node.args
    positional = [*args.posonlyargs, *args.args]
    defaults = [None] * (len(positional) - len(args.defaults)) + [*args.defaults,
                                                                  *args.kw_defaults]
    out = []
    for k, a in enumerate((*positional, *args.kwonlyargs, args.vararg, args.kwarg)):
        if a is None:
            continue
        given = path(defaults[k], False) if k < len(defaults) and defaults[k] else None
        spot = (k if k < len(positional) else f"*{len(positional)}" if a is args.vararg
                else None if a is args.kwarg else "k")
        out.append((a, "*" if a is args.vararg else "**" if a is args.kwarg else "",
                    f"={given}" if given and given != "None" else "",
                    f"<λ{node.name}|{spot}:{a.arg}" if spot is not None else ""))
    return out


#: What starts the sources a nested function's own name is over its body alone (``^:T``).
OWN = "^"


def rebinding(body: list[ast.stmt], name: str) -> str | None:
    """The path of what ``body`` binds ``name`` to in a statement of its own (``name =
    value``, ``name: T = value``; the last such), which every way through the block runs,
    None when there is none or it is no path."""
    given = None
    for st in body:
        t = type(st)
        if t is ast.Assign and len(st.targets) == 1 and type(st.targets[0]) is ast.Name \
                and st.targets[0].id == name or t is ast.AnnAssign and st.value is not None \
                and type(st.target) is ast.Name and st.target.id == name:
            given = path(st.value)
        elif type(st) not in _SIMPLE:
            return None  # a branch, loop or try: some way through may not bind it
    return given


#: Statements that run through to the next one (no block of their own).
_SIMPLE = frozenset({ast.Assign, ast.AnnAssign, ast.AugAssign, ast.Expr, ast.Pass,
                     ast.Delete, ast.Import, ast.ImportFrom, ast.Global, ast.Nonlocal})


def parameter_source(arg: ast.arg, stars: str) -> str:
    """The source of an annotated parameter (``*args: T`` is a ``tuple[T, ...]``,
    ``**kwargs: T`` a ``dict[str, T]``)."""
    text = annotation(arg.annotation)
    if stars == "*":
        text = f"tuple[{text}, ...]"
    elif stars == "**":
        text = f"dict[str, {text}]"
    return ":" + text


def plain_names(node: ast.AST) -> list[str] | None:
    """The names ``node`` binds when it binds nothing but plain names (no attribute of an
    object, no subscript), else None."""
    t = type(node)
    if t is ast.ExceptHandler:  # except E as name
        return [node.name] if node.name else []
    bound = unpacked(node.args[:1]) if t is ast.Call else targets(node)  # isinstance(name, T)
    return [x.id for x in bound] if all(type(x) is ast.Name for x in bound) else None
