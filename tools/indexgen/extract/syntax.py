"""Small readers of syntax-tree expressions shared by the extraction stages."""

from __future__ import annotations

import ast
import re

from indexgen.extract.arguments import KEY_TEXT, handed_text
from indexgen.extract.instance_tests import COMPREHENSIONS, narrowed_element
from indexgen.extract.instance_tests import tested_name as tested_name  # read from here too
from indexgen.extract.nodes import blocks as blocks  # read from here too
from indexgen.extract.operators import operator_path
from indexgen.extract.unparse import dotted, unparse

#: Calls whose arguments a path keeps: builtins whose result's type follows from them
#: (whatever keywords they are given: ``sorted(xs, key=f)`` holds the elements of ``xs``),
#: ``itertools.chain`` (by name, or ``itertools.chain(a, b)``,
#: ``itertools.chain.from_iterable(xss)``: :data:`_KEPT_METHODS`) and ``collections.deque``.
KEEP_ARGS = frozenset({"enumerate", "zip", "iter", "next", "list", "sorted", "reversed",
                       "tuple", "set", "frozenset", "cast", "super", "getattr", "type",
                       "staticmethod", "classmethod", "chain", "deque", "dict", "filter"})
#: Attributes whose calls keep their arguments when read on a name (``typing.cast``,
#: ``itertools.chain``), or, for ``from_iterable``, on ``chain``.
_KEPT_METHODS = frozenset({"cast", "chain", "from_iterable", "deque"})
#: Calls (of ``functools``, by name or attribute) that give back the function they are
#: handed first, bound or cached: a path keeps their positional arguments, keywords or not.
WRAPPERS = frozenset({"partial", "lru_cache", "cache"})
#: What :func:`path` keeps the arguments of, besides the names above: a call of what a
#: wrapper's call made (``lru_cache(maxsize=None)(f)``: the cache, handed ``f``).
_MADE_BY_WRAPPER = "()"


def path(node: ast.AST, given: bool = True) -> str | None:
    """``node`` as a *path*: a name followed by attributes, calls and subscripts, in the
    normalized text the global pass evaluates (:mod:`indexgen.analyze.types`), or None.

    The builtins of :data:`KEEP_ARGS` keep their arguments as paths (``next([s])`` for
    ``next(s for s in states)``: ``[E]`` is a list of E), as do ``itertools.chain`` and
    ``typing.cast`` written with their module (``t.cast(T, x)``,
    ``itertools.chain.from_iterable(xss)``), the type a cast is given written as a string
    quoted (``cast("type[S]", x)``: :func:`quoted_type`); any other call keeps what
    :func:`~indexgen.extract.arguments.handed_text` writes of its arguments after ``(:``
    (``item(:dict(:data), _sort_keys=#True)``, for the global pass to tell which
    ``typing.overload`` stub it matches), or with ``given`` False (a flow record's slot)
    drops them (``f()``); and a
    subscript keeps an integer index (``t[1]``), writes any other as ``_`` (``d[_]``) and a
    slice as nothing (``xs[1:]`` is ``xs``, a container of the same elements):
    ``self.groups[i].reset`` -> ``self.groups[_].reset``, ``zip(a, self.b)`` stays as it is.
    A method of a string literal is the builtin's (``"".join``: ``str.join``); an operator
    is its dunder's call (``a.__or__(b)``, ``a.__invert__()``:
    :func:`~indexgen.extract.operators.operator_path`); anything else (another literal
    receiver, a comparison) makes the path None.
    """
    t = type(node)
    if t is ast.Name:
        return node.id
    if t is ast.Attribute:
        # ``a.b.c``, the most common chain, in one loop (``dotted``'s); a chain on anything
        # but a name is read by recursion
        attrs = [node.attr]
        value = node.value
        while type(value) is ast.Attribute:
            attrs.append(value.attr)
            value = value.value
        base = value.id if type(value) is ast.Name else path(value, given)
        if base is None and type(value) is ast.Constant and type(value.value) in (str, bytes):
            base = type(value.value).__name__  # "".join: str.join, a builtin's method
        if base is None:
            return None
        attrs.append(base)
        return ".".join(reversed(attrs))
    if t is ast.Call:
        func = node.func
        ft = type(func)
        head = func.id if ft is ast.Name else path(func, given)  # f(...): no call for f
        if head is None:
            return None
        if ft is ast.Name:
            kept = func.id if func.id in KEEP_ARGS or func.id in WRAPPERS else None
        elif ft is ast.Attribute:  # typing.cast(T, x), t.cast("T", x), functools.partial(f)
            kept = func.attr if (func.attr in _KEPT_METHODS or func.attr in WRAPPERS) and (
                type(func.value) is ast.Name if func.attr != "from_iterable"
                else head.endswith("chain.from_iterable")) else None
        else:  # lru_cache(maxsize=None)(f): the cache made, handed f
            inner = func.func if ft is ast.Call else None
            kept = _MADE_BY_WRAPPER if inner is not None and (getattr(inner, "id", None) in WRAPPERS or
                                                  getattr(inner, "attr", None) in WRAPPERS) \
                else None
        if kept is None:
            if given and (node.args or node.keywords):
                return f"{head}(:{handed_text(node, path, literal)})"
            return head + "()"
        args = [_argument(a) for a in node.args]
        if kept == "dict" and not args:  # dict(**table): a copy of the table, as dict(table)
            args = [_argument(k.value) for k in node.keywords if k.arg is None][:1]
        if kept == "getattr" and len(args) > 1:  # the name: "on_*" for "on_" + x
            args[1] = name_pattern(node.args[1]) or "_"
        elif kept == "cast" and args and type(node.args[0]) not in (ast.Name, ast.Attribute):
            first = node.args[0]  # a string, a subscript (list[T]), a union: its text
            text = first.value if type(first) is ast.Constant else expr_text(first)
            args[0] = quoted_type(text) or "_"
        return f"{head}({', '.join(args)})"
    if t is ast.IfExp or t is ast.BoolOp:  # a if c else b, a or b: either of them
        items = [path(v, given) for v in ((node.body, node.orelse) if t is ast.IfExp
                                          else node.values)]
        items = list(dict.fromkeys(i for i in items if i and i != "None"))
        if not items:
            return None
        return items[0] if len(items) == 1 else f"next(iter([{', '.join(items)}]))"
    if t is ast.Subscript:
        base = path(node.value, given)
        if base is None:
            return None
        index = node.slice
        if type(index) is ast.Slice:  # a slice of a list is a list of the same elements
            return base
        keep = type(index) is ast.Constant and type(index.value) is int
        if not keep and key_text(index):  # ns["root"]: the key, quoted
            return f'{base}["{index.value}"]'
        return f"{base}[{index.value if keep else '_'}]"
    if t is ast.BinOp or t is ast.UnaryOp:
        return operator_path(node, path, given)
    if t is ast.Lambda:  # a closure of its definition (indexgen.extract.lambdas)
        return f"_λ{node.lineno}_{lambda_name(node)[2:]}"
    return None


def lambda_name(node: ast.Lambda) -> str:
    """The name of a lambda's closure: ``_λ`` and its parameters' names (``_λself_e``): the
    lambdas of one definition with the same parameters are one closure, whose parameters are
    what the calls of any of them hand (:mod:`indexgen.extract.lambdas`)."""
    a = node.args
    return "_λ" + "_".join(p.arg for p in (*a.posonlyargs, *a.args, *([a.vararg] if a.vararg
                                                                      else []), *a.kwonlyargs))


def targets(node: ast.AST) -> list[ast.AST]:
    """What a binding statement assigns (an assignment's targets, a ``for``'s, a ``with``
    item's, a walrus's), tuples, lists and starred targets unpacked: ``a, (b.x, *c) = v``
    gives ``c``, ``b.x`` and ``a`` (the last first); nothing for a ``with`` without ``as``."""
    t = type(node)
    if t is ast.Assign:
        return unpacked(list(node.targets))
    if t is ast.withitem:
        return unpacked([node.optional_vars] if node.optional_vars is not None else [])
    return unpacked([node.target])


def unpacked(todo: list[ast.AST]) -> list[ast.AST]:
    """The targets of ``todo`` (emptied) with tuples, lists and starred ones unpacked, the
    last first."""
    out = []
    while todo:
        target = todo.pop()
        tt = type(target)
        if tt is ast.Tuple or tt is ast.List:
            todo.extend(target.elts)
        elif tt is ast.Starred:
            todo.append(target.value)
        else:
            out.append(target)
    return out


def key_text(node: ast.AST) -> bool:
    """Whether ``node`` is a string literal a path may quote as a key (word characters)."""
    return type(node) is ast.Constant and type(node.value) is str \
        and KEY_TEXT.fullmatch(node.value) is not None


#: A type written as a string (``cast("type[Schema]", x)``) that a path may quote: names,
#: dots, brackets, commas and ``|``, never a quote.
_TYPE_TEXT = re.compile(r"[A-Za-z_][\w.]*(?:[\w.\[\], |]*[\w\]])?")


def quoted_type(value: object) -> str | None:
    """``"T"`` for a type written as the string ``T`` that :data:`_TYPE_TEXT` admits (how a
    path quotes it, as :func:`name_pattern` quotes a name), else None."""
    if type(value) is not str:
        return None
    text = " ".join(value.split())
    return f'"{text}"' if _TYPE_TEXT.fullmatch(text) else None


#: Fewest characters the source states of an attribute name made at run time
#: (``"visit_" + kind``) for :func:`name_pattern` to read it: ``"_" + x`` says nothing.
MIN_PATTERN_TEXT = 3


def name_pattern(node: ast.AST) -> str | None:
    """An attribute name given to ``getattr`` as a quoted pattern: ``"run"`` for a string
    literal, ``"visit_*"`` for ``"visit_" + kind`` or ``f"visit_{kind}"`` (``*``: any
    characters made at run time); None when it is no identifier or the source states fewer
    than :data:`MIN_PATTERN_TEXT` of its characters."""
    parts: list[ast.AST] = []
    stack = [node]
    while stack:  # "a" + x + "b": the operands in order
        n = stack.pop()
        if type(n) is ast.BinOp and type(n.op) is ast.Add:
            stack += [n.right, n.left]
        elif type(n) is ast.JoinedStr:
            stack += reversed(n.values)
        else:
            parts.append(n)
    text = ""
    for part in parts:
        if type(part) is ast.Constant and type(part.value) is str:
            text += part.value
        elif not text.endswith("*"):
            text += "*"
    stated = text.replace("*", "")
    if len(stated) < MIN_PATTERN_TEXT and text != stated or not stated \
            or not (stated.isidentifier() or ("a" + stated).isidentifier()):
        return None
    return f'"{text}"'


def strings(node: ast.AST, constants: dict[str, list[str]]) -> list[str]:
    """The strings ``node`` may be, when the source says: a string literal, either branch of
    ``a if c else b``, or a module-level constant holding strings (``NAMES["x"]``, ``NAME``:
    every string it holds, see ``constants``); [] otherwise."""
    t = type(node)
    if t is ast.Constant:
        return [node.value] if type(node.value) is str else []
    if t is ast.IfExp:
        return strings(node.body, constants) + strings(node.orelse, constants)
    if t is ast.Subscript:
        node = node.value
    return list(constants.get(node.id, ())) if type(node) is ast.Name else []


def constant_strings(value: ast.AST) -> list[str] | None:
    """The strings a module-level constant holds: a string, or a literal list, tuple, set or
    dict of strings (a dict's values); None for anything else."""
    t = type(value)
    if t is ast.Constant:
        return [value.value] if type(value.value) is str else None
    items = value.values if t is ast.Dict else value.elts if t in (ast.List, ast.Tuple,
                                                                    ast.Set) else None
    if not items or not all(type(i) is ast.Constant and type(i.value) is str for i in items):
        return None
    return [i.value for i in items]


def annotation(node: ast.AST) -> str:
    """An annotation as text (a string annotation as the text it holds)."""
    if type(node) is ast.Constant and type(node.value) is str:
        return node.value
    try:
        return unparse(node)
    except Exception:  # noqa: BLE001 - unparse of odd trees must not stop extraction
        return ""


#: The node types :func:`literal` reads (for anything else it is None).
LITERALS = frozenset({ast.List, ast.Tuple, ast.Set, ast.Dict, ast.ListComp, ast.SetComp,
                      ast.GeneratorExp, ast.DictComp})


def literal(node: ast.AST) -> str | None:
    """A container literal as a path of what it holds: ``[a, b]`` for a list or set (or a
    comprehension, or a tuple with a starred element) whose elements are the paths ``a`` or
    ``b``; ``(a, _)`` for a tuple, place by place (``_``: no path); ``{a, *m}`` for a dict
    whose values are ``a`` or those of the mapping ``m`` (``{**m}``; a dict comprehension
    ``{a}``); None when no element is a path (a dispatch table ``{"x": render_x, ...}`` is
    one).  A comprehension's element narrowed by its ``if`` clauses starts with the narrowed
    name (:func:`~indexgen.extract.instance_tests.narrowed_element`: ``[p@3]``)."""
    t = type(node)
    if t is ast.Tuple and node.elts and not any(type(e) is ast.Starred for e in node.elts):
        items = [path(e) or (literal(e) if type(e) in _ROWS else None) or "_"
                 for e in node.elts]  # (_, f): a tuple, what each place holds
        return f"({', '.join(items)})" if any(i != "_" for i in items) else None
    if t in (ast.List, ast.Tuple, ast.Set):  # a row of a table [["x", f, [...]]]: [[f]]
        items = [path(e) or (literal(e) if type(e) in _ROWS else None)
                 for e in node.elts if type(e) is not ast.Starred]
        opening, closing = "[", "]"
    elif t is ast.Dict:  # a value that is a table itself ({"x": {"y": f}}): what it holds
        items = [path(v) or (literal(v) if type(v) in _TABLES else None) if k is not None
                 else (f"*{path(v)}" if path(v) else None) for k, v in zip(node.keys, node.values)]
        if all(k is not None and key_text(k) for k in node.keys):  # every key stated
            items = [f'"{k.value}"={i}' for k, i in zip(node.keys, items) if i]
        opening, closing = "{", "}"
    elif t in COMPREHENSIONS:  # [p for p in ps if isinstance(p, A)]: [p@line], an A
        found = path(node.value if t is ast.DictComp else node.elt)  # {k: f(k) for k in ks}
        items = [narrowed_element(node, found) if found else None]
        opening, closing = "{}" if t is ast.DictComp else "[]"
    else:
        return None
    items = list(dict.fromkeys(i for i in items if i))
    return f"{opening}{', '.join(items)}{closing}" if items else None


_ROWS = (ast.Tuple, ast.List)  # literals inside a literal that are read as what they hold
_TABLES = (ast.Dict, ast.Tuple, ast.List)  # a dict's values read so


def _argument(node: ast.AST) -> str:
    """An argument of a kept call: its path, ``[E]`` for a comprehension of paths ``E`` (a
    list of them), else ``_``."""
    return path(node) or literal(node) or "_"


def expr_text(node: ast.AST) -> str:
    """Source-like text of a small expression (decorators, bases)."""
    t = type(node)
    if t is ast.Name or t is ast.Attribute:
        return dotted(node)
    if t is ast.Call:
        return expr_text(node.func) + ("(...)" if (node.args or node.keywords) else "()")
    try:
        return unparse(node)
    except Exception:  # noqa: BLE001 - unparse of odd trees must not stop extraction
        return "..."


def is_type_checking(test: ast.AST) -> bool:
    """Whether an ``if`` test is ``TYPE_CHECKING`` (imports under it are for type checkers)."""
    return expr_text(test) in ("TYPE_CHECKING", "typing.TYPE_CHECKING", "t.TYPE_CHECKING")
