"""Values as the global pass knows them, and annotations read as values.

A value is a plain tuple:

=====================  ===================================================================
``("i", key, C)``      an instance of the project class ``C`` of file ``key``
``("i", key, C, E)``   one of a generic container class written with its type arguments
                       (``OrderedSet[Node]``): ``E`` the containers its bases are with them
                       bound (:mod:`indexgen.analyze.generics`)
``("c", key, C)``      the class ``C`` itself
``("f", key, F)``      the project function or method ``F``
``("n", key, F, g)``   the function ``g`` defined in the body of ``F`` (a closure)
``("m", key)``         a project module
``("x", dotted)``      something outside the build (``torch.cat``, ``torch.Tensor.view``)
``("xi", dotted)``     an instance of a class outside the build (``torch.Tensor``)
``("xa", dotted)``     a method or attribute of such an instance, or one a project class
                       inherits from an outside base (``torch.Tensor.view``): calling it is
                       an outside call; its own attributes are unknown (``frame.f_code``'s
                       ``co_filename`` is no name of ``types.FrameType``)
``("b", name)``        a builtin (``len``, a ``str`` and its methods): calls on it are dropped
``("s", E)``           a sequence, set or iterator of elements ``E`` (a set of values)
``("d", K, V[, by])``  a mapping (``by``: of a literal whose keys are all stated, (key, values))
``("t", (E0, ...))``   a tuple with one set of values per position
``("r", V, name)``     a method of a container that returns ``V`` (``list.pop``, ``dict.get``)
``("k", V)``           a callable the code types only by what it returns (``Callable[[A], V]``):
                       calling it gives ``V``, and no call edge (which function it is, the
                       annotation does not say; what callers hand it may)
``("p", key, C, k)``   ``super()`` in a method of the project class ``C``, or ``super(C, x)``:
                       its attributes are looked up past ``C`` (``k``: ``"i"`` for an
                       instance, ``"c"`` for the class, as in a classmethod)
=====================  ===================================================================

A plain function or closure read on an instance, which its class body binds, ends with
:data:`~indexgen.analyze.members.BOUND` (called, it gets the instance first).

:func:`union` joins what several steps give (what they do on builtin containers is
:mod:`indexgen.analyze.containers`; the steps of a path are
:func:`indexgen.analyze.paths.parse`'s); :class:`Annotations` reads ``X | None``,
``Optional[X]``, ``list[X]``, ``dict[K, V]``, ``tuple[A, B]``, ``Iterator[X]``,
``type[X]``, string annotations and the like as values, their syntax split by
:mod:`indexgen.analyze.annotation_syntax` (:class:`~indexgen.analyze.types.Types`
evaluates everything else).
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from functools import lru_cache

from indexgen.analyze.annotation_syntax import (
    alternatives,
    dotted,
    parsed,
    type_arguments,
    unpacked,
)
from indexgen.analyze.memo import GuardedMemo
from indexgen.analyze.resolve import Resolver, Target

Value = tuple
Values = frozenset
NONE: Values = frozenset()
MAX_VALUES = 128  # values kept in one set (a rule chain, a dispatch table, a decorator)
#: Kinds of values of builtin containers (a sequence, a mapping, a tuple).
CONTAINERS = frozenset({"s", "d", "t"})
#: Kinds of values that are nothing of the project (a builtin, something outside the build).
OUTSIDE = frozenset({"b", "x", "xi", "xa"})
_DEPTH = 25  # paths evaluated inside one another
#: Annotations of containers of one element type (``list[T]``, ``Iterable[T]``...), and of
#: mappings (``dict[K, V]``...), by their last name.
SEQUENCE_TYPES = frozenset({
    "list", "List", "Sequence", "MutableSequence", "Iterable", "Iterator", "Generator",
    "AsyncIterator", "AsyncIterable", "AsyncGenerator", "Collection", "set", "Set",
    "frozenset", "FrozenSet", "AbstractSet", "MutableSet", "deque", "Deque", "Reversible",
    "KeysView", "ValuesView"})
MAPPING_TYPES = frozenset({"dict", "Dict", "Mapping", "MutableMapping", "OrderedDict",
                           "defaultdict", "DefaultDict", "ChainMap"})
#: Annotations that say the value is a class, not which: the builtin ``type``
#: (:func:`indexgen.analyze.dispatch.resolve_call` reads calling it through another name,
#: ``c: type`` then ``c()``, as an instance of a class not known).
_SOME_CLASS = frozenset({"typing.Type", "typing_extensions.Type"})
_SOME_CLASS_VALUE = frozenset({("b", "type")})
#: Annotations (or ``isinstance`` tests) that say the value is a function, not which: read
#: as ``Callable`` is, a callable typed only by what it returns, nothing here; a parameter's
#: callers then say which (pyparsing's ``isinstance(fn, types.FunctionType)``).
_SOME_FUNCTION = frozenset({"types.FunctionType", "types.LambdaType", "types.MethodType"})
_SOME_FUNCTION_VALUE = frozenset({("k", NONE)})
#: Annotations that say nothing of the value's type (``Final`` and ``ClassVar`` alone: the
#: assigned value's).
_ANY = frozenset({"Any", "object", "None", "NoReturn", "Never", "TypeVar", "Callable", "Final",
                  "ClassVar"})
#: Last names the readers take as typing's or a builtin's before resolving them.
_TYPING_NAMES = _ANY | SEQUENCE_TYPES | MAPPING_TYPES | {
    "Self", "TypeGuard", "tuple", "Tuple", "type", "Type"}


class Annotations:
    """Annotations read as values; mixed into :class:`~indexgen.analyze.types.Types`, whose
    ``resolver`` looks names up, ``of_target`` says what a resolved name stands for and
    ``called_protocol`` what a callable ``Protocol`` gives (the hierarchy's) and
    ``bind_arguments`` what a generic container's type arguments make its elements
    (:class:`~indexgen.analyze.generics.Generics`)."""

    resolver: Resolver
    _guard: GuardedMemo
    _parsed: dict

    def of_target(self, target: Target) -> Values:  # pragma: no cover - Types defines it
        """The value a resolved name stands for (see ``Types.of_target``)."""
        raise NotImplementedError

    def annotation(self, key: str, text: str, cls: str = "") -> Values:
        """What an annotation written in file ``key`` says a value is (``cls``: the class
        ``Self`` and the class's own name mean)."""
        # (a recursive alias ends where it refers to itself)
        return self._guard.get(("\6", key, text, cls), self._annotation, key, text, cls)

    def _annotation(self, key: str, text: str, cls: str) -> Values:
        node = parsed(self._parsed, text)
        return self._type(key, node, cls) if node else NONE

    def _type(self, key: str, node: ast.AST, cls: str) -> Values:
        t = type(node)
        if t is ast.Constant:
            return self.annotation(key, node.value, cls) if type(node.value) is str else NONE
        if t is ast.Name or t is ast.Attribute:
            return self._type_name(key, dotted(node), cls)
        split = alternatives(node)
        if split is not None:  # (a generator: a union past MAX_VALUES reads no further)
            return union(self._type(key, a, cls) for a in split)
        if t is not ast.Subscript:
            return NONE
        base = dotted(node.value)
        last = base.rpartition(".")[2]
        if last in _TYPING_NAMES and self._trees(key, base):
            last = ""
        args = type_arguments(node)
        if last == "TypeGuard":  # what a guard returns: read as the type it tells
            return self._type(key, args[0], cls)
        if last in SEQUENCE_TYPES:
            return frozenset({("s", self._type(key, args[0], cls))})
        if last in MAPPING_TYPES and len(args) == 2:
            return frozenset({("d", self._type(key, args[0], cls),
                               self._type(key, args[1], cls))})
        if last in ("tuple", "Tuple"):
            return tuple_of(args, lambda a: self._type(key, a, cls))
        if last in ("type", "Type"):
            return classes_of(self._type(key, args[0], cls))
        if last == "Callable" and len(args) == 2:  # Callable[[A], R]: calling it gives R
            returned = self._type(key, args[1], cls)
            return frozenset({("k", returned)}) if returned else NONE
        found = self._type_name(key, base, cls)  # OrderedSet[Node]: its elements bound
        return self.bind_arguments(key, found, args, cls) if found else found

    def _trees(self, key: str, dotted: str) -> bool:
        """Whether a name the readers take as typing's or a builtin's by its last name
        (:data:`_TYPING_NAMES`: ``Generator``, ``Any``, ``list``) is bound to a class of the
        tree in module ``key`` (sqlglot's own ``Generator``; not an alias such as ``List =
        list``): then it is that class."""
        memo = ("typing-named", key, dotted)
        found = self._memo.get(memo)
        if found is None:
            target = self.resolver.name_in(key, dotted)
            found = self._memo[memo] = target is not None and target.kind == "project" and \
                self.resolver.module(target.key).kinds.get(target.qualname) == "class"
        return found

    def _type_name(self, key: str, dotted: str, cls: str) -> Values:
        last = dotted.rpartition(".")[2]
        if last in _TYPING_NAMES and self._trees(key, dotted):
            last = ""
        if not dotted or last in _ANY:
            return NONE
        if cls and (last == "Self" or dotted == "self.__class__"):  # isinstance(x,
            return frozenset({("i", key, cls)})  # self.__class__): the method's class's
        if last in SEQUENCE_TYPES:
            return frozenset({("s", NONE)})
        if last in MAPPING_TYPES:
            return frozenset({("d", NONE, NONE)})
        target = self._nested(key, dotted, cls) or self.resolver.name_in(key, dotted)
        if target is None:
            return NONE
        if target.qualname in _SOME_CLASS:  # typing.Type is the builtin type: some class
            return _SOME_CLASS_VALUE
        if target.qualname in _SOME_FUNCTION:  # a function, which callers may say
            return _SOME_FUNCTION_VALUE
        if target.kind == "builtin":
            return frozenset({("b", target.qualname)})
        if target.kind == "external":  # (an alias of ``Any``, ``PyTree = Any``, is an
            return frozenset({("xi", target.qualname)})  # instance of it: no attribute)
        found = set()
        for v in self.of_target(target):
            if v[0] == "c":  # a class: its instances, or what a callable protocol gives
                called = self.called_protocol(v[1], v[2])
                if called is None:
                    found.add(("i", v[1], v[2]))
                else:
                    found |= called
            elif v[0] in ("i", "s", "d", "t", "xi"):
                found.add(v)
        return frozenset(found)

    def _nested(self, key: str, dotted: str, cls: str) -> Target | None:
        """A class nested in ``cls`` that an annotation written in its body (or in the
        signature of one of its methods) names by its short name (``x: "Inner"``,
        ``Inner.Deeper``): the class body is the scope such an annotation is evaluated in,
        and its own names come before the module's."""
        if not cls:
            return None
        kinds = self.resolver.module(key).kinds
        if kinds.get(f"{cls}.{dotted.partition('.')[0]}") != "class" \
                or kinds.get(cls) != "class":
            return None
        return Target("project", key, f"{cls}.{dotted}") if f"{cls}.{dotted}" in kinds \
            else None


def tuple_of(args: list[ast.AST], read: Callable[[ast.AST], Values]) -> Values:
    """What ``tuple[...]`` with the type arguments ``args`` is, each read by ``read``:
    ``tuple[T, ...]`` a sequence of T, ``tuple[int, *Ts]`` one of any length with elements
    not known, else one set of values per place."""
    if len(args) == 2 and type(args[1]) is ast.Constant and args[1].value is ...:
        return frozenset({("s", read(args[0]))})
    if any(map(unpacked, args)):  # tuple[int, *Ts]: of any length
        return frozenset({("s", NONE)})
    return frozenset({("t", tuple(read(a) for a in args))})


def classes_of(instances: Values) -> Values:
    """What ``type[C]`` is where a ``C`` is ``instances``: the classes of the project
    instances among them."""
    return frozenset({("c", v[1], v[2]) for v in instances if v[0] == "i"})


def closure_qualname(outer: str, inner: str) -> str:
    """The qualname of the function ``inner`` defined in the body of ``outer`` (the label of
    an ``("n", key, outer, inner)`` value, as Python's ``__qualname__`` writes it)."""
    return f"{outer}.<locals>.{inner}"


def ordered(values: Values):
    """``values`` in an order that is the same in every process: evaluating them has side
    effects (memos, and the guards that cut cycles), so the order of a set -- which for
    strings changes with the interpreter's hash seed -- must not decide what is found."""
    if len(values) < 2:
        return values
    return sorted(values, key=_order_key)


@lru_cache(maxsize=1 << 16)
def _order_key(value: Value) -> str:
    """:func:`_canonical` of a value, made once: the same values are ordered again and again
    (every union of several), and their text is built recursively."""
    return _canonical(value)


def _canonical(value) -> str:
    t = type(value)
    if t is tuple:
        return "(" + ",".join([_canonical(v) for v in value]) + ")"
    if t is frozenset or t is set:
        return "{" + ",".join(sorted([_canonical(v) for v in value])) + "}"
    return repr(value)


def one(group: Values) -> Values:
    """``union([group])`` without its loop: the common union, of one group (a call on one
    value, a name with one source)."""
    if not group or len(group) > MAX_VALUES and too_many(group):
        return NONE
    return group if type(group) is frozenset else frozenset(group)


def too_many(found) -> bool:
    """Whether more than :data:`MAX_VALUES` values of ``found`` (more than that in all) are
    no lambdas, or more than that are: a lambda is a closure of the definition around it
    (:mod:`indexgen.analyze.lambdas`), so a table a class hierarchy rebinds in each class
    body (``FUNCTIONS = {**Parser.FUNCTIONS, "X": lambda args: ...}``) holds one per class
    besides its functions, and says no less for it."""
    lambdas = sum(1 for v in found if v[0] == "n" and v[3][:2] == "_λ")
    return lambdas > MAX_VALUES or len(found) - lambdas > MAX_VALUES


def union(groups) -> Values:
    """The values of all ``groups``; none when there are more than :data:`MAX_VALUES` (a
    union that large says little)."""
    first = None  # the one group that is not empty, while there is only one
    found = None
    for group in groups:
        if not group:
            continue
        if found is not None:
            found |= group
        elif first is None:
            first = group
            continue
        else:
            found = set(first)
            found |= group
        if len(found) > MAX_VALUES and too_many(found):
            return NONE
    if found is None:  # most unions: of one group, or of none
        return NONE if first is None else one(first)
    return frozenset(found)
