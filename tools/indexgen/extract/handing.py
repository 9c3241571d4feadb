"""Stage 1c (continued): what a call hands its callee, as the global pass reads it.

:func:`handed` records the functions a call is handed to call later
(``register_hook(self._on_grad)``, ``partial(f)``, ``key=by_size``) as *references*, ``&``
and a path, and what it hands its callee's parameters as a *flow* record (``<``, the call's
path, a tab and ``slot=path`` items), for the assignment graph of
:mod:`indexgen.analyze.flows`; :func:`counted` records only how many arguments a call of a
computed value hands, and :func:`decorated` a decorator's application and what it is
handed.  The paths are :func:`~indexgen.extract.syntax.path`'s.
"""

from __future__ import annotations

import ast

from indexgen.extract.arguments import PACKED, packed
from indexgen.extract.syntax import path

#: Calls that take a function to call later (besides ``*hook*`` and ``*callback*`` ones):
#: a function named as their argument is recorded as a reference, ``&`` and its path.
CALLBACK_TAKERS = frozenset({"partial", "Thread", "Timer", "submit", "apply_async", "connect",
                             "atexit", "register", "map", "filter", "spawn",
                             "start_processes"})
CALLBACK_KEYWORDS = frozenset({"target", "callback", "fn", "func", "hook"})


def handed(node: ast.Call, text: str, last: str | None, out: list[tuple[str, int]],
           methods: frozenset[str] | set[str], line: int) -> None:
    """Record what a call is handed, in one pass over its arguments, at the call's ``line``
    (:func:`indexgen.extract.calls.call_line`).

    *References* (``&`` and a path; not recorded when ``last`` is None): the functions the
    call may be handed to call later -- any name or attribute chain given to a ``*hook*``,
    ``*callback*`` or :data:`CALLBACK_TAKERS` call (``last`` is the callee's last name), and
    elsewhere a bound method of the instance (``self.on_grad``, when the file defines a
    function of that name: ``methods``) or a name given as a keyword argument
    (``key=by_size``).

    A *flow* record, when any argument is a name or an attribute chain: ``<``, the call's
    ``text``, a tab and ``slot=path`` items (a position, a keyword's name, or ``*`` for
    ``*xs``; ``args.0``, ``kwargs.c``, an item of a literal ``args=``/``kwargs=``:
    :func:`~indexgen.extract.arguments.packed`; and ``#=n`` for a call of ``n`` arguments
    all given by position), for the global pass to give the callee's parameters what the
    arguments are (functions passed on, the instances a method is given).
    """
    refs = last is not None
    taker = refs and ("hook" in last or "callback" in last or last in CALLBACK_TAKERS)
    items = []
    starred = False
    for k, a in enumerate(node.args):
        t = type(a)
        if t is ast.IfExp or t is ast.BoolOp:  # f if c else None: f
            a = _one_branch(a)
            t = type(a)
        if t is ast.Name:  # the most common argument: its path is its name
            if taker:
                out.append(("&" + a.id, line))
            items.append(f"{k}={a.id}")
            continue
        if t is ast.Starred:
            starred = True
            a, k = a.value, "*"
            t = type(a)
        if t is ast.Name or t is ast.Attribute:
            found = path(a, False)
            if found and "," not in found:  # zip(a, b).x: not one slot's path
                items.append(f"{k}={found}")
            if k != "*" and t is ast.Attribute and refs and found and (
                    taker or _bound_method(a) and a.attr in methods):
                out.append(("&" + found, line))
        elif t is ast.Call and k != "*" and (made := _constructed(a) or _class_of(a)):
            items.append(f"{k}={made}")  # Box(Node()): a Node
    for kw in node.keywords:
        v = kw.value
        t = type(v)
        if t is ast.IfExp or t is ast.BoolOp:  # key=by_name if c else None: by_name
            v = _one_branch(v)
            t = type(v)
        if t is ast.Call and kw.arg is not None:  # box=Box(): a Box
            found = _constructed(v)
            if found:
                items.append(f"{kw.arg}={found}")
            continue
        if t is not ast.Name and t is not ast.Attribute:
            if (t is ast.Tuple or t is ast.List or t is ast.Dict) and kw.arg in PACKED:
                items += packed(kw.arg, v, path)
            continue
        found = path(v, False)
        if not found:
            continue
        if refs and (t is ast.Name or taker or kw.arg in CALLBACK_KEYWORDS
                     or _bound_method(v) and v.attr in methods):
            out.append(("&" + found, line))
        if kw.arg is not None and "," not in found:
            items.append(f"{kw.arg}={found}")
    if items:
        if not node.keywords and not starred:
            items.append(f"#={len(node.args)}")  # as many arguments, all by position
        out.append((f"<{text}\t{','.join(items)}", line))


def _constructed(node: ast.Call) -> str | None:
    """The path of a call written as a class's construction (``Node(...)``,
    ``nodes.Node(...)``: a name in CapWords, PEP 8's for classes), for a flow record's
    slot (``Box(Node(x))`` hands a ``Node``), else None."""
    func = node.func
    last = func.id if type(func) is ast.Name else func.attr if type(func) is ast.Attribute \
        else ""
    if not last[:1].isupper() or last.isupper() or "_" in last:
        return None
    found = path(node, False)
    return found if found and "," not in found else None


def _class_of(node: ast.Call) -> str | None:
    """``type(self)``, for a flow record's slot (``build(type(self))`` hands the class of
    the instance, as ``build(self.__class__)`` does), else None: not ``type(x)`` of another
    name, which an ``isinstance`` test around the call may narrow (a slot is not narrowed:
    torch's ``wrap_fx_proxy_cls(target_cls=type(a))`` of a ``TensorVariable`` ``a``)."""
    func, args = node.func, node.args
    if type(func) is ast.Name and func.id == "type" and len(args) == 1 and not node.keywords \
            and type(args[0]) is ast.Name and args[0].id == "self":
        return "type(self)"
    return None


#: Written before a call's path by :func:`counted` where the record is kept only if the
#: call's name is local to its function (:func:`indexgen.extract.calls.attribute` decides).
LOCAL_ONLY = "?"


def counted(node: ast.Call, text: str, out: list[tuple[str, int]], line: int,
            mark: str = "") -> None:
    """Record how many arguments a call of a computed value (``getattr(self, "parse_" +
    kind)()``, ``table[key](1)``, or ``f()`` of a local name: ``mark`` :data:`LOCAL_ONLY`)
    hands by position, where :func:`handed` recorded nothing (no argument is a name): a
    flow record ``#=n`` alone, so the global pass keeps only the candidates that take that
    many (:meth:`indexgen.analyze.arity.Arity.fitting`: jinja2's ``f =
    getattr(self, "parse_" + kind); f()`` reaches no ``parse_*`` that wants a node); at the
    call's ``line``."""
    if not node.keywords and not any(type(a) is ast.Starred for a in node.args):
        out.append((f"<{mark}{text}\t#={len(node.args)}", line))


def _one_branch(node: ast.IfExp | ast.BoolOp) -> ast.AST | None:
    """The one name or attribute chain a conditional expression or an ``or``/``and`` may
    give besides ``None`` (``lower if not case_sensitive else None``: ``lower``; ``fast and
    lower``: ``lower``, the ``and``'s other outcome being a false value), else None."""
    if type(node) is ast.IfExp:
        given = [node.body, node.orelse]
    else:
        given = node.values[-1:] if type(node.op) is ast.And else node.values
    found = [v for v in given if not (type(v) is ast.Constant and v.value is None)]
    return found[0] if len(found) == 1 and type(found[0]) in (ast.Name, ast.Attribute) \
        else None


#: Decorators that hand the function to nothing a call graph follows.
_PLAIN_DECORATORS = frozenset({"property", "staticmethod", "classmethod", "abstractmethod",
                               "overload", "override", "final", "setter", "getter", "deleter",
                               "cached_property", "wraps", "cache", "lru_cache",
                               "contextmanager", "asynccontextmanager", "dataclass",
                               "total_ordering", "runtime_checkable", "no_type_check"})


def decorated(node: ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef, name: str,
              out: list[tuple[str, int]]) -> None:
    """Record each decorator's application, a call made in the enclosing scope: of the
    decorator (``@register``: ``register``) or of what a call of it returns (``@curry(1)``:
    ``curry()``), unless it is one of :data:`_PLAIN_DECORATORS` (the standard library's,
    which run nothing of the tree); and that it is handed the definition, a function or a
    class, as its enclosing scope names it (``C.m`` for a method).  ``@D`` is the call
    ``D(obj)``: a flow record of that call, ``0=`` and the name, for
    :func:`indexgen.analyze.flows.call_sites` to give the first parameter of whatever the
    call reaches (a function, the ``__init__`` of a decorator class: ``@Wrap``).  ``@D(...)``
    hands it to what the call returns: a flow record ``<@`` and the decorator's path, which
    the global pass gives to that function's parameter, or a closure's
    (:meth:`indexgen.analyze.flows.Flows.decorate`; not an instance's ``__call__``: torch's
    ``@torch.no_grad()`` alone would hand ``_DecoratorContextManager.__call__`` more
    functions than a value set holds).  Both at the decorator's first line, where Python
    3.11+ reports its application (:func:`~indexgen.extract.calls.call_line`)."""
    for decorator in node.decorator_list:
        found = path(decorator, False)
        kept = path(decorator)  # @register(c): what it hands, which parameters it leaves out
        if found and kept and "," not in kept:  # (indexgen.analyze.left_out)
            found = kept
        last = found.rpartition(".")[2].partition("(")[0] if found else ""
        if found and last not in _PLAIN_DECORATORS and "," not in found:
            out.append((found, decorator.lineno))
            out.append((f"<@{found}\t0={name}" if "(" in found else
                        f"<{found}\t0={name},#=1", decorator.lineno))


def _bound_method(node: ast.Attribute) -> bool:
    """Whether ``node`` is ``self.name`` or ``cls.name``."""
    value = node.value
    return type(value) is ast.Name and (value.id == "self" or value.id == "cls")
