"""Builtin containers and builtins as the type evaluation knows them: what their methods
give, what iterating and subscripting them gives, and whether a builtin has an attribute.

A call on a value that may be a builtin container (the value tuples ``s``, ``d``, ``t`` of
:mod:`indexgen.analyze.values`) is a builtin's only when such a container has that method
(``self.items.render()`` on a value a ``list`` annotation and a project class both type is
the class's); a builtin's attribute is one only when the builtin has it (``list.render`` is
none): :func:`~indexgen.analyze.builtin_names.builtin_exists` says which.
"""

from __future__ import annotations

import re
from collections import defaultdict, deque

from indexgen.analyze.builtin_names import (
    builtin_exists,
    outside_lacks,
    says_nothing,
    stdlib_constant,
)
from indexgen.analyze.values import NONE, Value, Values, union

# Methods of a sequence that give an element; __enter__ of an iterator is what a
# @contextmanager generator annotated Iterator[X] (or yielding X) gives to "with ... as".
_SEQ_RETURNS = {"pop": "list.pop", "popleft": "deque.popleft", "__getitem__": "list.__getitem__",
                "__enter__": "contextlib.AbstractContextManager.__enter__"}
_MAP_RETURNS = frozenset({"get", "pop", "setdefault", "__getitem__"})
# The methods builtin containers have: a call of another name on a value that may be a
# container (``self.items.render()``) is not a builtin's, and is left to the other values.
_SEQ_OWNERS = (("list", frozenset(dir(list))), ("set", frozenset(dir(set))),
               ("deque", frozenset(dir(deque))))
_DICT_METHODS = frozenset(dir(dict))
_MAP_METHODS = _DICT_METHODS | frozenset(dir(defaultdict))
_TUPLE_METHODS = frozenset(dir(tuple))

#: A name written as a constant is (PEP 8: ``MAX``, ``DEFAULT_DTYPE``; three letters at least
#: or an underscore, so ``IO`` and ``T`` stay class names): no module or class
#: whose attributes are named under it.
_CONSTANT = re.compile(r"[A-Z][A-Z0-9]{2,}(?:_[A-Z0-9]+)*|[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+")


def container_member(value: Value, attr: str) -> Values:
    """``value.attr`` for a value outside the project's classes and modules: what a method of
    a container gives, a builtin's method, an outside name's attribute."""
    kind = value[0]
    if kind == "x":  # an outside module's or class's name: its attribute is named so
        constant = stdlib_constant(value[1])  # but a constant's is its type's (math.inf)
        if constant is not None:
            return container_member(("b", constant), attr)
        if _CONSTANT.fullmatch(value[1].rpartition(".")[2]):  # ReduceOp.MAX: a constant's
            return NONE                                        # attributes are its type's
        return frozenset({("x", f"{value[1]}.{attr}")})
    if kind == "xi":  # a method or attribute of an outside instance, its type unknown
        # none of its class's (the object is another's), or of typing.Any (unknown)
        if outside_lacks(value[1], attr) or says_nothing(value[1]):
            return NONE
        return frozenset({("xa", f"{value[1]}.{attr}")})
    if kind == "xa":  # an attribute of that: nothing the build can name
        return NONE
    if kind == "b":  # a builtin's attribute, if it has it (else the value is something else)
        found = f"{value[1]}.{attr}"
        return frozenset({("b", found)}) if builtin_exists(found) else NONE
    if kind == "s":
        if attr in _SEQ_RETURNS:
            return frozenset({("r", value[1], _SEQ_RETURNS[attr])})
        if attr == "copy":
            return frozenset({value})
        # a method no builtin sequence has is no builtin's: the value is something else too
        owner = next((name for name, methods in _SEQ_OWNERS if attr in methods), None)
        return frozenset({("b", f"{owner}.{attr}")}) if owner else NONE
    if kind == "d":
        if attr in _MAP_RETURNS:
            return frozenset({("r", value[2], "dict." + attr)})
        if attr == "items":
            return frozenset({("r", frozenset({("s", frozenset(
                {("t", (value[1], value[2]))}))}), "dict.items")})
        if attr == "copy":  # a copy holds the same keys and values
            return frozenset({("r", frozenset({value}), "dict.copy")})
        if attr in ("values", "keys"):
            return frozenset({("r", frozenset({("s", value[2 if attr == "values" else 1])}),
                               "dict." + attr)})
        owner = "dict" if attr in _DICT_METHODS else "defaultdict" if attr in _MAP_METHODS \
            else None
        return frozenset({("b", f"{owner}.{attr}")}) if owner else NONE
    if kind == "t":
        return frozenset({("b", "tuple." + attr)}) if attr in _TUPLE_METHODS else NONE
    return NONE


def element_of(value: Value) -> Values:
    """What iterating over a container gives (a mapping: its keys)."""
    kind = value[0]
    if kind == "s" or kind == "d":
        return value[1]
    return union(value[1]) if kind == "t" else NONE


def item_of(value: Value, index: int | None) -> Values:
    """A container's ``value[index]`` (None: an index that is not an integer literal)."""
    kind = value[0]
    if kind == "s":
        return value[1]
    if kind == "d":
        if len(value) > 3 and type(index) is str:  # ns["root"] of {"a": f}: its "root"
            return union(found for k, found in value[3] if k == index)
        return value[2]
    if kind == "t":
        elements = value[1]
        if type(index) is int and -len(elements) <= index < len(elements):
            return elements[index]
        return union(elements)
    return NONE
