"""A project class that subclasses a generic container, written with its type arguments.

``class OrderedSet(MutableSet[T])`` iterated gives what ``T`` stands for, and an annotation
``OrderedSet[Node]`` says it: its instance is then ``("i", key, "OrderedSet", E)``, ``E`` the
containers its bases are with the arguments bound (``MutableSet[Node]``: ``("s", {Node})``),
which iterating and subscripting it read (:mod:`indexgen.analyze.results`) where its own
``__iter__`` (``-> Iterator[T]``) says nothing.  The class's type parameters are those of a
``Generic[...]`` (or ``Protocol[...]``) base, else the type variables its subscripted bases
name, in the order they first appear (as :pep:`484` orders them); a base that is itself a
project generic (``class Deeper(OrderedSet[T])``) is bound in turn, and a base whose
arguments are stated (``class NodeSet(OrderedSet[Node])``) is read as its annotation.

:class:`Generics` is mixed into :class:`~indexgen.analyze.types.Types` (through
:class:`~indexgen.analyze.results.Results`), whose resolver, memo and ``_type`` it uses.
"""

from __future__ import annotations

import ast

from indexgen.analyze.annotation_syntax import (
    TYPE_PARAMETERS,
    alternatives,
    dotted,
    parsed,
    type_arguments,
)
from indexgen.analyze.values import (
    CONTAINERS,
    MAPPING_TYPES,
    NONE,
    SEQUENCE_TYPES,
    Values,
    classes_of,
    ordered,
    tuple_of,
    union,
)

#: Bases that list a class's type parameters in their order.
_DECLARING = frozenset({"Generic", "Protocol"})
_DEPTH = 8  # generic bases bound inside one another


class Generics:
    """Type arguments of a project generic container bound to its elements."""

    resolver: object
    _memo: dict
    _parsed: dict

    def _type(self, key: str, node: ast.AST, cls: str) -> Values:  # pragma: no cover
        raise NotImplementedError  # Annotations defines it

    def is_type_var(self, key: str, name: str, declares: frozenset[str]
                    ) -> bool:  # pragma: no cover
        """Whether ``name`` in file ``key`` is a type variable the build declares (one rule,
        :meth:`indexgen.analyze.typevars.TypeVars.is_type_var`, which defines it)."""
        raise NotImplementedError

    def bind_arguments(self, key: str, found: Values, args: list[ast.AST], cls: str
                       ) -> Values:
        """``found`` (what the annotation ``C[args]`` of file ``key`` names without its
        arguments) with each instance of a generic project container class carrying the
        containers its bases are with ``args`` bound."""
        out = None
        for v in found:
            if v[0] != "i" or len(v) > 3 or not self._generic(v[1], v[2])[0]:
                continue
            given = tuple(self._type(key, a, cls) for a in args)
            bound = self._containers(v[1], v[2], given, 0)
            if bound:
                out = set(found) if out is None else out
                out.discard(v)
                out.add((*v, bound))
        return found if out is None else frozenset(out)

    def _generic(self, key: str, cls: str) -> tuple[tuple[str, ...], tuple[ast.AST, ...]]:
        """The class's type parameters and its subscripted bases (parsed), read once."""
        memo = ("generic", key, cls)
        found = self._memo.get(memo)
        if found is None:
            bases = [node for text in self.resolver.module(key).bases.get(cls, ())
                     if "[" in text and (node := parsed(self._parsed, text))]
            params: list[str] = []
            for base in bases:
                if type(base) is not ast.Subscript:
                    continue
                if dotted(base.value).rpartition(".")[2] in _DECLARING:
                    params = [n.id for n in type_arguments(base) if type(n) is ast.Name]
                    break
                for n in ast.walk(base.slice):
                    if type(n) is ast.Name and n.id not in params and self.is_type_var(key, n.id, TYPE_PARAMETERS):
                        params.append(n.id)
            found = self._memo[memo] = (tuple(params), tuple(bases))
        return found

    def _containers(self, key: str, cls: str, given: tuple[Values, ...], depth: int) -> Values:
        """The containers the class's bases are with its parameters bound to ``given``."""
        params, bases = self._generic(key, cls)
        if not params or depth > _DEPTH:
            return NONE
        bound = dict(zip(params, given))
        found = []
        for base in bases:
            for v in ordered(self._generic_bound(key, base, cls, bound, depth)):
                if v[0] in CONTAINERS:
                    found.append(frozenset({v}))
                elif v[0] == "i" and len(v) > 3:
                    found.append(v[3])
        return union(found)

    def bound_annotation(self, key: str, text: str, cls: str, bound: dict[str, Values]
                         ) -> Values:
        """What the annotation ``text`` of file ``key`` says with the type variables of
        ``bound`` standing for the values given (``list[T]``, ``T``: a function's return
        annotation, with T solved from a call's arguments: :mod:`indexgen.analyze.typevars`)."""
        node = parsed(self._parsed, text)
        return self._generic_bound(key, node, cls, bound, 0) if node else NONE

    def _generic_bound(self, key: str, node: ast.AST, cls: str, bound: dict[str, Values],
                       depth: int) -> Values:
        """The annotation ``node`` of the class's file with its parameters ``bound``."""
        t = type(node)
        if t is ast.Name and node.id in bound:
            return bound[node.id]
        if t is ast.Constant and type(node.value) is str:  # "T", "list[T]"
            inner = parsed(self._parsed, node.value)
            return self._generic_bound(key, inner, cls, bound, depth) if inner else NONE
        split = alternatives(node)  # T | None, Optional[T]: either
        if split is not None:
            return union(self._generic_bound(key, a, cls, bound, depth) for a in split)
        if t is not ast.Subscript:
            return self._type(key, node, cls)
        head = dotted(node.value)
        last = head.rpartition(".")[2]
        if last == "Literal" or last == "TypeGuard":
            return self._type(key, node, cls)
        nodes = type_arguments(node)
        if last in ("tuple", "Tuple"):
            return tuple_of(nodes, lambda a: self._generic_bound(key, a, cls, bound, depth))
        args = [self._generic_bound(key, a, cls, bound, depth) for a in nodes]
        if last == "Callable" and len(args) == 2:  # Callable[..., T]: calling it gives T
            return frozenset({("k", args[1])}) if args[1] else NONE
        if last in ("type", "Type"):
            return classes_of(args[0])
        if last in SEQUENCE_TYPES:
            return frozenset({("s", args[0])})
        if last in MAPPING_TYPES and len(args) == 2:
            return frozenset({("d", args[0], args[1])})
        out = set()
        for v in self._type(key, node.value, cls):  # a project generic: bound in turn
            if v[0] == "i" and len(v) == 3 and self._generic(v[1], v[2])[0]:
                inner = self._containers(v[1], v[2], tuple(args), depth + 1)
                out.add((*v, inner) if inner else v)
            else:
                out.add(v)
        return frozenset(out)
