"""What calling, iterating and subscripting a value gives, for the type evaluation.

:class:`Results` is mixed into :class:`~indexgen.analyze.types.Types`: ``call`` gives what a
class (an instance), a function (its return annotation, or what its ``return`` and ``yield``
statements give when that says nothing) or a builtin (``iter``, ``next``, ``enumerate``,
``zip``, ``list``, ``sorted``, ``type``...) or ``typing.cast`` returns, an operator what its
dunder returns (:mod:`indexgen.analyze.operated`); ``element`` what iterating
gives (an instance: its ``__iter__``, or the container or ``Iterable[T]`` its class
subclasses, or the ``list`` or ``dict`` its methods fill: :mod:`indexgen.analyze.held`);
``item`` what a subscript gives (a class: the generic itself, ``Chain[Step]``).
"""

from __future__ import annotations

from indexgen.analyze.containers import element_of, item_of
from indexgen.analyze.generics import Generics
from indexgen.analyze.held import HELD_METHODS, Held
from indexgen.analyze.left_out import left_out
from indexgen.analyze.memo import GuardedMemo
from indexgen.analyze.operated import Operated
from indexgen.analyze.paths import Given, Operator, arguments
from indexgen.analyze.values import NONE, OUTSIDE, Value, Values, ordered, union
from indexgen.extract.attribute_source import ABSTRACT_CONTAINER
from indexgen.extract.model import Definition

_OBJECT_NAMES = frozenset(dir(object))  # what getattr(x, name, default) always finds

#: ``typing.cast`` as the resolver names it, whichever way it was imported.
_CASTS = frozenset({"typing.cast", "typing_extensions.cast"})
#: Calls that give back the function they are handed first (:data:`indexgen.extract.syntax.
#: WRAPPERS` as the resolver names them): ``partial(f, 1)`` and ``lru_cache(None)(f)`` call f.
_WRAPPERS = frozenset({"functools.partial", "functools.lru_cache", "functools.cache"})
#: ``itertools.chain(a, b)``: the elements of each; ``chain.from_iterable(xss)``: of each of
#: its elements.
_CHAINS = frozenset({"itertools.chain", "itertools.chain.from_iterable"})
#: What a memo of :mod:`indexgen.analyze.typevars` holds for an annotation that names no type
#: variable (a method that returns no receiver): tested before a call is made to ask.
NO_VARS: frozenset = frozenset()


def hollow(values: Values) -> bool:
    """Whether every value is a callable typed only by what it returns (``Callable[[A],
    R]``) or a container whose elements are unknown or such callables (``list[T]`` of a
    ``TypeVar``, ``dict[str, Callable]``): what is returned (or handed) may say more."""
    for v in values:
        kind = v[0]
        if not (kind == "k" or kind == "s" and hollow(v[1]) or kind == "d" and hollow(v[2])
                or kind == "t" and all(map(hollow, v[1]))):
            return False
    return True


def _open(v: Value) -> bool:
    """Whether ``v`` is a tuple with a place its annotation leaves open (a ``Callable``)."""
    return v[0] == "t" and not all(p and not hollow(p) for p in v[1])


def _filled(annotated: Values, returned: Values) -> Values:
    """``annotated`` with each place its tuples leave open (a ``Callable``) taken from what
    a function's return statements give (a tuple of the same length, or any element of a
    sequence): ``-> tuple[list, Callable]`` and ``return [x], _only`` give ``(list,
    _only)``."""
    out = set()
    for v in annotated:
        if not _open(v):
            out.add(v)
            continue
        places = list(v[1])
        for r in returned:  # a tuple place by place; a list (or a starred tuple): any element
            if r[0] == "t" and len(r[1]) == len(places) or r[0] == "s":
                places = [p if v[1][k] and not hollow(v[1][k])
                          else union((p, r[1] if r[0] == "s" else r[1][k]))
                          for k, p in enumerate(places)]
        out.add(("t", tuple(places)))
    return frozenset(out)


class Results(Held, Generics, Operated):
    """Calls, iterations and subscripts of values; mixed into
    :class:`~indexgen.analyze.types.Types`, whose tables, memo, cycle guard, ``source``,
    ``_steps``, ``_class_member``, ``mro`` and ``annotation`` it uses."""

    resolver: object
    _defs: dict
    _guard: GuardedMemo
    _stubs: dict  # file key -> qualname -> its typing.overload stubs (overloads.stub_table)

    def call(self, value: Value, key: str, anchor: str, args: tuple, on: Values = NONE
             ) -> Values:
        """What calling ``value`` gives; ``args``: the kept arguments of a builtin; ``on``:
        what a method was read on (``x`` of ``x.copy()``: a method that returns ``Self``
        gives what it is called on, :meth:`~indexgen.analyze.receivers.Receivers.received`)."""
        kind = value[0]
        if kind == "c":  # Stack([frame]) of a list subclass: holding its elements
            return (type(args) is Given and args and self.built(value, key, anchor, args)
                    ) or frozenset({("i", value[1], value[2])})
        if kind == "f":
            d = self._defs[value[1]][1].get(value[2])
            if d is None:
                return NONE
            if on and d.parent and self._memo.get(
                    ("self typed", value[1], d.qualname, d.lineno)) is not NO_VARS:
                return self.received(value, d, key, anchor, args, on)
            if type(args) is Given and value[2] in self._stubs[value[1]]:
                found = self.overloaded(value, key, anchor, args)  # what the stubs say
                if found is not None:
                    return found
            if type(args) is Given and d.returns and self._memo.get(  # -> T: T what the
                    ("typevars", value[1], d.returns, d.parent)) is not NO_VARS:  # arguments are
                found = self.solved(value, d, key, anchor, args)
                if found and not hollow(found):
                    return found
            if d.returns:
                found = self.annotation(value[1], d.returns, d.parent)
                if found and not hollow(found) or "return" not in d.names:
                    if "return" in d.names and any(map(_open, found)):
                        return _filled(found, self._returned(value[1], d))
                    if "return" in d.names and ABSTRACT_CONTAINER.search(d.returns):
                        # -> Mapping[K, V]: which mapping, the returns may say (a class)
                        return found | frozenset(v for v in self._returned(value[1], d)
                                                 if v[0] == "i")
                    if "return" in d.names and any(v[0] == "k" for v in found):
                        # -> C | Callable[..., C]: which callable, the returns say
                        return found | frozenset(v for v in self._returned(value[1], d)
                                                 if v[0] == "f" or v[0] == "n")
                    return found
            if "return" in d.names:  # no annotation, or a vague one: what it returns
                out = left_out(d, args, on) if type(args) is Given else None
                return self._returned(value[1], d, out) if out else self._returned(value[1], d)
            return NONE
        if kind == "r" or kind == "k":
            return value[1]
        if kind == "n":  # a closure: what its return annotation says
            d = self._defs[value[1]][1].get(value[2])
            returns = d.names.get("->" + value[3]) if d is not None else None
            return self.annotation(value[1], returns[0], d.parent) if returns else NONE
        if kind == "t":  # a.__or__(b): the operands, and the operator (Operated)
            return self.operated(value[1], args, key, anchor) if type(args) is Operator \
                else NONE
        if on and (kind == "xa" or kind == "b") and value[1].rpartition(".")[2] in \
                HELD_METHODS:  # self.values() of a project dict: what its methods put
            found = self.held_call(value, key, anchor, args, on)
            if found:
                return found
        if type(args) is Given:  # f(:x): called as if its arguments were not there
            if (kind == "b" or kind == "xa") and value[1][-8:] == ".__new__" and args:
                return self._new(key, anchor, args)
            args = ()
        if kind == "b" and args is not None:
            return self._builtin(value[1], key, anchor, args)
        if kind == "x" and value[1] in _CASTS and args is not None:
            return self._cast(key, anchor, args)
        if kind == "x" and value[1] == "collections.deque" and args and args[0]:
            # deque([root]): a sequence of what it is handed, popleft() gives one
            return self._sequence([self._steps(key, anchor, args[0])])
        if kind == "x" and value[1] in _CHAINS and args:
            given = [self._steps(key, anchor, a) if a else NONE for a in args]
            if value[1] == "itertools.chain.from_iterable":
                given = [union(self.element(v) for v in ordered(given[0]))]
            return self._sequence(given)
        if kind == "x" and value[1] in _WRAPPERS:  # partial(f, 1), cache(f): f, bound
            if args:  # lru_cache(maxsize=8) itself: a decorator that gives that back
                return self._steps(key, anchor, args[0]) if args[0] else NONE
            return frozenset({value})
        return NONE

    def _new(self, key: str, anchor: str, args: Given) -> Values:
        """What ``object.__new__(cls)``, ``super().__new__(cls, *a)`` or ``cls.__new__(cls)``
        of no ``__new__`` of the project gives: an instance of the class handed first."""
        first = arguments(args)[0]
        if not first or type(first[0]) is str or first[0][0] == "v":  # k=, *a, a literal
            return NONE
        return frozenset(("i", v[1], v[2]) for v in self._steps(key, anchor, first)
                         if v[0] == "c")

    def _cast(self, key: str, anchor: str, args: tuple) -> Values:
        """What ``typing.cast(T, x)`` gives: what the type ``T`` names (written as a name or
        as a string); where that is nothing of the project (a builtin, a class outside the
        build, a type not read), also what ``x`` is -- the value itself, which calls on it
        reach (``cast("type[set]", self.set_class)`` is whatever ``set_class`` holds)."""
        found = NONE
        if args and args[0]:
            first = args[0]
            if first[0][0] == "q":
                found = self.annotation(key, first[0][1])
            elif all(step[0] in ("n", "a") for step in first):
                found = self.annotation(key, ".".join(step[1] for step in first))
        if len(args) > 1 and args[1] and all(v[0] in OUTSIDE for v in found):
            found = found | self._steps(key, anchor, args[1])
        return found

    def _returned(self, key: str, d: Definition, out: frozenset = frozenset()) -> Values:
        """What a function without a return annotation returns: what its ``return``
        statements return (a recursive call adds nothing), but the parameters ``out`` a call
        leaves out (:mod:`indexgen.analyze.left_out`)."""
        return self._guard.get(("\2", key, d.anchor, out), self._returns, key, d, out)

    def _returns(self, key: str, d: Definition, out: frozenset) -> Values:
        return union(self.source(key, d.anchor, s, d.parent) for s in d.names["return"]
                     if s[1:] not in out)

    def _builtin(self, name: str, key: str, anchor: str, args: tuple) -> Values:
        if name == "super":
            return self._super(key, anchor, args)
        if name == "getattr":
            return self._getattr(key, anchor, args)
        given = [self._steps(key, anchor, a) if a else NONE for a in args]
        if not given:
            return NONE
        if name == "type":  # type(self)(...): the class of the instance
            return frozenset({("c", v[1], v[2]) for v in given[0] if v[0] == "i"})
        if name == "staticmethod" or name == "classmethod":  # the function, as a value
            return given[0]
        if name == "next":
            return union(self.following(v) for v in ordered(given[0]))
        if name == "enumerate":
            elements = union(self.element(v) for v in ordered(given[0]))
            return frozenset({("s", frozenset({("t", (frozenset({("b", "int")}), elements))}))})
        if name == "zip":
            elements = tuple(union(self.element(v) for v in ordered(g)) for g in given)
            return frozenset({("s", frozenset({("t", elements)}))})
        if name == "dict":  # a copy of a mapping holds its keys and values
            return frozenset(v for v in given[0] if v[0] == "d")
        if name in ("iter", "list", "sorted", "reversed", "tuple", "set", "frozenset"):
            return frozenset({("s", union(self.element(v) for v in ordered(given[0])))})
        if name == "filter" and len(given) == 2:  # filter(None, [a, b]): some of a and b
            return frozenset({("s", union(self.element(v) for v in ordered(given[1])))})
        return NONE

    def _super(self, key: str, anchor: str, args: tuple) -> Values:
        """``super()`` in a method (the method's class; in a classmethod, the class) or
        ``super(C, x)`` (the class ``C``; ``x`` a class or an instance): a proxy whose
        attributes are those of the classes after ``C`` (``("p", key, C, "i" or "c")``)."""
        if not args:
            d = self._defs[key][0].get(anchor) if anchor else None
            if d is None or not d.parent or d.kind not in ("method", "classmethod", "property"):
                return NONE  # a nested function's super() takes its own first argument
            return frozenset({("p", key, d.parent, "c" if d.kind == "classmethod" else "i")})
        if len(args) != 2 or not args[0] or not args[1]:
            return NONE
        owner = self._steps(key, anchor, args[0])
        kind = "c" if any(v[0] == "c" for v in self._steps(key, anchor, args[1])) else "i"
        return frozenset({("p", v[1], v[2], kind) for v in owner if v[0] == "c"})

    def _getattr(self, key: str, anchor: str, args: tuple) -> Values:
        """``getattr(x, "name")``: ``x.name``; ``getattr(x, "visit_*")``: every attribute of
        ``x`` whose name fits (:meth:`Members.matching`); with a default, that too."""
        if len(args) < 2 or not args[0] or not args[1] or args[1][0][0] != "q":
            return NONE
        pattern = args[1][0][1]
        held = ordered(self._steps(key, anchor, args[0]))
        found = union(self.member(v, pattern) if "*" not in pattern
                      else self.matching(v, pattern) for v in held)
        if len(args) > 2 and args[2] and pattern not in _OBJECT_NAMES:  # every object has
            found = union([found, self._steps(key, anchor, args[2])])  # __init__: no default
        return found

    def element(self, value: Value) -> Values:
        """What iterating over ``value`` gives (an instance: what its ``__iter__`` gives)."""
        if value[0] != "i":
            if value[0] == "c" and self.is_enum(value[1], value[2]):  # for t in DType:
                return frozenset({("i", value[1], value[2])})  # its members
            return element_of(value)
        # (an __iter__ that returns self: its elements are the others)
        return self._guard.get(("\3", value), self._elements, value)

    def _sequence(self, given: list[Values]) -> Values:
        """A sequence of the elements of each of the iterables ``given``."""
        return frozenset({("s", union(self.element(v) for g in given for v in ordered(g)))})

    def following(self, value: Value) -> Values:
        """What ``next(value)`` gives: an instance's ``__next__`` (a project iterator's
        ``-> Token``), else what iterating it gives (a builtin iterator)."""
        if value[0] == "i":
            found = self._next_of(value)
            if found:
                return found
        return self.element(value)

    def _next_of(self, value: Value) -> Values:
        """What the ``__next__`` of an instance's class gives (nothing: none, or says none)."""
        return union(self.call(f, "", "", None) for f in ordered(
            self._class_member(value[1], value[2], "__next__", True)))

    def _elements(self, value: Value) -> Values:
        given = self._class_member(value[1], value[2], "__iter__", True)
        # an __iter__ giving an iterator: what its __next__ gives (returning self: its own)
        found = union(self._next_of(r) if r == value else self.following(r)
                      for f in ordered(given) for r in ordered(self.call(f, "", "", None)))
        if found and len(value) < 4:
            return found
        # class Chain(list[Step]): iterating gives Steps; an __iter__ -> Iterator[T] of
        # OrderedSet[Node] (or of class NodeSet(OrderedSet[Node])): Nodes (generics)
        return union([found, *(element_of(v) for v in ordered(self._container_base(value)))])

    def _container_base(self, value: Value) -> Values:
        """The builtin container or ``Iterable[T]`` an instance's class subclasses, as a
        container value (``class Chain(list[Step])``: a list of Steps), or none."""
        found = []
        for k, c in self.mro(value[1], value[2]):
            if not k:
                continue
            for base in self.resolver.module(k).bases.get(c, ()):
                if "[" in base:  # (class NodeSet(OrderedSet[Node]): what that binds)
                    for v in ordered(self.annotation(k, base, c)):
                        found.append(frozenset({v}) if v[0] in "sdt" else
                                     v[3] if v[0] == "i" and len(v) > 3 else NONE)
        if len(value) > 3:
            found.append(value[3])
        found.append(self.held(value[1], value[2]))  # a list or dict its methods fill
        return union(found)

    def item(self, value: Value, index: int | None) -> Values:
        """``value[index]`` (None: an index that is not an integer literal; an instance:
        what its ``__getitem__`` gives)."""
        kind = value[0]
        if kind == "c":  # Chain[Step]: the generic class itself
            return frozenset({value})
        if kind != "i":
            return item_of(value, index)
        found = union(self.call(f, "", "", None) for f in ordered(
            self._class_member(value[1], value[2], "__getitem__", True)))
        if found and len(value) < 4:
            return found
        return union([found, *(item_of(v, index) for v in ordered(self._container_base(value)))])
