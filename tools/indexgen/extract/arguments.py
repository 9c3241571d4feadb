"""The arguments of a call as a path keeps them, for the global pass to tell which
``typing.overload`` stub the call matches (:mod:`indexgen.analyze.overloads`), and the
items of a literal ``args=``/``kwargs=`` a call unpacks into the function it is handed
(:func:`packed`).

:func:`~indexgen.extract.syntax.path` writes a call of anything but the builtins whose
arguments it keeps as paths with what :func:`handed_text` makes of its arguments after
``(:`` (``item(:dict(:data), _sort_keys=#True)``); :func:`without_arguments` drops them
again where two paths are the same value whatever their calls are handed.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable

#: A string a path may write quoted (as a key, ``d["k"]``, or an argument, ``"r"``).
KEY_TEXT = re.compile(r"\w+")


#: What a literal argument's type is written as (``#list``: :func:`handed_text`).
_LITERAL_ARGUMENTS = {ast.List: "list", ast.ListComp: "list", ast.Set: "set", ast.SetComp: "set",
                      ast.Dict: "dict", ast.DictComp: "dict", ast.Tuple: "tuple",
                      ast.GeneratorExp: "generator", ast.JoinedStr: "str", ast.Lambda: "function"}


def handed_text(node: ast.Call, path: Callable[[ast.AST], str | None],
                listed: Callable[[ast.AST], str | None] = lambda node: None) -> str:
    """What a call hands, as the arguments of a path keep it: each positional argument, then
    each keyword one as ``name=`` and its value (``**`` for ``**kwargs``), each written as
    its path, ``*`` for ``*args``, ``#`` and what a literal is (``#None``, ``#True``,
    ``#12``, ``#str``, ``#float``, ``#dict``...: a word-like string is written quoted, as
    ``"r"``) or ``_`` (unknown); a list (or list comprehension) of paths as what ``listed``
    writes of it (:func:`~indexgen.extract.syntax.literal`: ``Stack(:[Frame()])``, whose
    elements a ``list`` subclass holds; the overload matching reads it as ``#list``).  Read
    by :mod:`indexgen.analyze.overloads` and :mod:`indexgen.analyze.held`."""
    items = [_handed(a, path, listed) for a in node.args]
    items += ["**" if k.arg is None else f"{k.arg}={_handed(k.value, path, listed)}"
              for k in node.keywords]
    return ", ".join(items)


def _handed(node: ast.AST, path: Callable[[ast.AST], str | None],
            listed: Callable[[ast.AST], str | None]) -> str:
    t = type(node)
    if t is ast.Name:  # the commonest argument: its path is its name (path's first case)
        return node.id
    if t is ast.Constant:
        return constant_text(node.value)
    if t is ast.Starred:
        return "*"
    kind = _LITERAL_ARGUMENTS.get(t)
    if kind is not None:
        return (kind == "list" and listed(node)) or "#" + kind
    if t is ast.UnaryOp:  # -1, not x
        if type(node.op) is ast.Not:
            return "#bool"
        if type(node.op) is ast.USub and type(node.operand) is ast.Constant \
                and type(node.operand.value) in (int, float):
            return constant_text(-node.operand.value)
    return path(node) or "_"


#: Keywords whose literal tuple or dict a call unpacks into the function it is handed
#: (``Thread(target=f, args=(a, b), kwargs={"c": c})`` runs ``f(a, b, c=c)``).
PACKED = frozenset({"args", "kwargs"})


def packed(keyword: str, node: ast.Tuple | ast.List | ast.Dict,
           path: Callable[..., str | None]) -> list[str]:
    """The flow items (:func:`indexgen.extract.handing.handed`) of a literal ``args=`` or
    ``kwargs=`` (:data:`PACKED`): ``args.0=a`` for each name or chain up to the first
    ``*xs``, ``kwargs.c=c`` for each key written as a name; ``path`` is
    :func:`indexgen.extract.syntax.path`.  Read by :func:`indexgen.analyze.appliers.applied`."""
    if type(node) is ast.Dict:
        pairs = [(k.value, v) for k, v in zip(node.keys, node.values)
                 if type(k) is ast.Constant and type(k.value) is str and k.value.isidentifier()]
    else:
        pairs = []
        for i, e in enumerate(node.elts):
            if type(e) is ast.Starred:
                break
            pairs.append((i, e))
    found = [(k, path(v, False)) for k, v in pairs if type(v) in (ast.Name, ast.Attribute)]
    return [f"{keyword}.{k}={p}" for k, p in found if p and "," not in p]


def without_arguments(text: str) -> str:
    """A path with the arguments :func:`handed_text` wrote left out (``wrap(:fn)``:
    ``wrap()``): where two paths are the same value whatever their calls are handed."""
    start = text.find("(:")
    if start < 0:
        return text
    out, pos = [], 0
    while start >= 0:
        out.append(text[pos:start + 1])
        pos = closing_at(text, start) + 1
        out.append(")")
        start = text.find("(:", pos)
    return "".join(out) + text[pos:]


def closing_at(text: str, start: int) -> int:
    """Where the bracket that opens at ``start`` closes (``len(text)`` when it does not)."""
    depth, pos, n = 0, start, len(text)
    while pos < n:
        ch = text[pos]
        depth += ch in "([{"
        depth -= ch in ")]}"
        if not depth:
            return pos
        pos += 1
    return n


def constant_text(value: object) -> str:
    """A constant as :func:`handed_text` writes it (also the default of a parameter of an
    overloaded function, :mod:`indexgen.extract.stubs`)."""
    if value is None or value is True or value is False or value is ...:
        return f"#{value!r}"
    if type(value) is int:
        return f"#{value}"
    if type(value) is str and KEY_TEXT.fullmatch(value) and len(value) <= 40:
        return f'"{value}"'
    return "#" + type(value).__name__
