"""Whether a value the evaluation knows may be of the type an annotation states, for telling
which ``typing.overload`` stubs a call may match (:mod:`indexgen.analyze.overloads`).

An annotation is read (:meth:`Fits.wanted`; split as :func:`indexgen.analyze.
annotation_syntax.alternatives` tells) as the alternatives it admits, or None for
anything (``Any``, ``object``, a ``TypeVar`` without a bound, a protocol, what is not read):
``("none",)``; ``("b", cls)``, a builtin class (``list[int]`` is a ``list``: element types
are not checked); ``("abc", name)``, one of the abstract collections of ``collections.abc``
that builtin classes are registered as (``Sequence``, ``Mapping``...; the structural ones,
``Iterable`` and the like, admit anything); ``("lit", {(class, value)})`` of
``Literal[...]``; ``("i", key, C)``, a project class; ``("xi", dotted)``, a class outside
the build.

A value (:mod:`indexgen.analyze.values`' tuples, and ``("=", class[, value])``: exactly an
instance of a builtin class, as a literal or ``dict(...)`` makes one) fits an alternative
YES (it is one), NO (it cannot be one) or MAY:

- an exact builtin value is what its class is: a ``bool`` is an ``int``, an ``int`` is taken
  for a ``float`` (PEP 484's numeric tower), a ``dict`` is a ``Mapping``; it is no project
  class, and of the classes outside the build only those of the modules that define
  protocols and abstract classes (``typing``, ``_typeshed``, ``numbers``, ``os``...) may
  take it;
- a value typed by a builtin class (an annotation's ``int``) may also be of a subclass (a
  ``bool``);
- an instance of a project class is one of each of its bases, and may be one of the bases
  of each of its subclasses within the build; and of the builtin classes and classes outside
  the build these derive from (tomlkit's ``Table`` is a ``dict``) -- a base outside the
  build that is neither a builtin nor one of ``collections.abc``'s leaves anything open;
- functions, classes and modules are none of the builtin containers or scalars, literals or
  project instances (a class is a ``type``);
- a container an annotation types (``Mapping[K, V]``: of no known class) is no scalar; what
  else the evaluation knows (something outside the build) may be anything.
"""

from __future__ import annotations

import ast
import builtins

from indexgen.analyze.annotation_syntax import alternatives, dotted, parsed, type_arguments
from indexgen.analyze.values import Value

NO, MAY, YES = 0, 1, 2
#: The builtin classes a value is told by (and the stand-ins of literals: ``ellipsis``,
#: ``generator``, ``function``).
_TYPES = frozenset({"bool", "int", "float", "complex", "str", "bytes", "bytearray", "list",
                    "tuple", "dict", "set", "frozenset", "type", "range", "memoryview",
                    "slice", "NoneType", "ellipsis", "generator", "function"})
#: The builtin classes each is also taken for: ``bool`` is an ``int``; an ``int`` is taken
#: for a ``float``, a ``float`` for a ``complex`` (PEP 484's numeric tower).
_ALSO = {"bool": frozenset({"int", "float", "complex"}), "int": frozenset({"float", "complex"}),
         "float": frozenset({"complex"})}
_SCALARS = frozenset({"bool", "int", "float", "complex", "NoneType"})
#: ``typing``'s names of builtin classes.
_ALIASES = {"List": "list", "Dict": "dict", "Tuple": "tuple", "Set": "set",
            "FrozenSet": "frozenset", "Type": "type", "Text": "str"}
_SEQUENCES = frozenset({"list", "tuple", "str", "bytes", "bytearray", "range", "memoryview"})
#: The abstract collections builtin classes are registered as (nominal: a class is one only
#: by deriving from it or from such a builtin), and those builtin classes.
_ABSTRACT = {"Sequence": _SEQUENCES, "MutableSequence": frozenset({"list", "bytearray"}),
             "Mapping": frozenset({"dict"}), "MutableMapping": frozenset({"dict"}),
             "AbstractSet": frozenset({"set", "frozenset"}), "MutableSet": frozenset({"set"}),
             "ByteString": frozenset({"bytes", "bytearray"})}
#: Each abstract collection, and those that derive from it.
_BELOW = {"Sequence": frozenset({"Sequence", "MutableSequence", "ByteString"}),
          "Mapping": frozenset({"Mapping", "MutableMapping"}),
          "AbstractSet": frozenset({"AbstractSet", "Set", "MutableSet"}),
          "MutableSequence": frozenset({"MutableSequence"}),
          "MutableMapping": frozenset({"MutableMapping"}),
          "MutableSet": frozenset({"MutableSet"}), "ByteString": frozenset({"ByteString"})}
_TYPING = frozenset({"typing", "typing_extensions", "collections.abc"})
#: Top modules whose classes may take a builtin value: protocols, abstract classes that
#: builtins are registered as.
_PROTOCOLS = frozenset({"typing", "typing_extensions", "_typeshed", "collections", "numbers",
                        "abc", "os", "contextlib", "types", "io"})
#: Bases outside the build that give a class nothing of a builtin's or another class's.
_PLAIN_BASES = frozenset({"typing.Generic", "typing.Protocol", "typing_extensions.Protocol",
                          "typing_extensions.Generic", "abc.ABC"})
_NONE = frozenset({("none",)})
#: What an argument is taken to be where no stub's annotation tells it from another's: it
#: fits (:mod:`indexgen.analyze.overloads`).
ASSUMED = frozenset({("?",)})
_CALLABLES = frozenset({"f", "n", "k", "r", "m", "b"})  # functions, modules, builtins' names


def _literal(node: ast.AST) -> tuple | None:
    """``(class, value)`` of one value of ``Literal[...]``; None for an enum member."""
    if type(node) is ast.UnaryOp and type(node.op) is ast.USub:
        inner = _literal(node.operand)
        return (inner[0], -inner[1]) if inner and inner[0] == "int" else None
    if type(node) is not ast.Constant:
        return None
    value = node.value
    return ("NoneType" if value is None else type(value).__name__, value)


def _exact(value: Value, alt: tuple) -> int:
    """How an exact builtin value fits one alternative."""
    cls, want = value[1], alt[0]
    if want == "b":
        return YES if cls == alt[1] or alt[1] in _ALSO.get(cls, ()) else NO
    if want == "abc":
        return YES if cls in _ABSTRACT[alt[1]] else NO
    if want == "lit":
        if len(value) > 2:
            return YES if (cls, value[2]) in alt[1] else NO
        return MAY if any(x[0] == cls for x in alt[1]) else NO
    if want == "xi":
        return MAY if alt[1].partition(".")[0] in _PROTOCOLS else NO
    return NO  # a project class


def _typed(cls: str, alt: tuple) -> int:
    """How a value typed by the builtin class ``cls`` (or a subclass) fits one alternative
    other than a project class."""
    want = alt[0]
    if want == "b":
        if cls == alt[1] or alt[1] in _ALSO.get(cls, ()):
            return YES
        return MAY if cls in _ALSO.get(alt[1], ()) else NO  # an int may be a bool
    if want == "abc":
        return YES if cls in _ABSTRACT[alt[1]] else NO
    if want == "lit":
        return MAY if any(x[0] == cls or cls in _ALSO.get(x[0], ()) for x in alt[1]) else NO
    return MAY


def _container(kind: str, alt: tuple) -> int:
    """How a sequence or iterator (``s``) or a mapping (``d``) that an annotation types, of
    no known class, fits one alternative."""
    want = alt[0]
    if want == "b":
        if alt[1] in _SCALARS:
            return NO
        return MAY if kind == "s" or alt[1] == "dict" else NO
    if want == "abc":
        return MAY if kind == "s" or alt[1] in ("Mapping", "MutableMapping") else NO
    if want == "lit":
        return MAY if kind == "s" and any(x[0] in ("str", "bytes") for x in alt[1]) else NO
    return MAY


def _outside_fit(bases: frozenset, alt: tuple) -> int:
    """How a class deriving from the builtin and outside ``bases`` (:meth:`Fits.outside`)
    fits a builtin, abstract or outside alternative."""
    want, unknown = alt[0], False
    for kind, name in bases:
        if kind == "b":
            if want == "b" and (name == alt[1] or alt[1] in _ALSO.get(name, ())) or \
                    want == "abc" and name in _ABSTRACT[alt[1]]:
                return YES
            continue
        module, _, last = name.rpartition(".")
        if want == "xi" and name == alt[1]:
            return YES
        if module in _TYPING and (last in _ABSTRACT or last == "Set"):
            if want == "abc" and last in _BELOW[alt[1]]:
                return YES
        elif name not in _PLAIN_BASES:
            unknown = True
    return MAY if unknown else NO


class Fits:
    """Annotations read as what they admit, and values fitted to them; mixed into
    :class:`~indexgen.analyze.types.Types`, whose resolver, ``annotation``, ``mro``,
    ``subclasses``, ``is_protocol``, memo and cycle guard it uses."""

    _memo: dict
    _parsed: dict

    @staticmethod
    def builtin_class(name: str) -> bool:
        """Whether a builtin's name is that of a class (``int``, ``ValueError``; not
        ``len``)."""
        return name in _TYPES or isinstance(getattr(builtins, name, None), type)

    def wanted(self, key: str, text: str, cls: str) -> frozenset | None:
        """What the annotation ``text`` written in file ``key`` (in class ``cls``) admits."""
        return self._guard.get(("\14", key, text, cls), self._wanted, key, text, cls) or None

    def _wanted(self, key: str, text: str, cls: str) -> frozenset | None:
        node = parsed(self._parsed, text)
        return self._want(key, node, cls) if node else None

    def _want(self, key: str, node: ast.AST, cls: str) -> frozenset | None:
        t = type(node)
        if t is ast.Constant:
            if node.value is None:
                return _NONE
            return self.wanted(key, node.value, cls) if type(node.value) is str else None
        if t is ast.Name or t is ast.Attribute:
            return self._want_name(key, dotted(node), cls)
        split = alternatives(node)
        if split is not None:
            parts = [self._want(key, a, cls) for a in split]
            return None if None in parts else frozenset().union(*parts)
        if t is not ast.Subscript:
            return None
        base = dotted(node.value)
        if base.rpartition(".")[2] == "Literal":
            values = [_literal(a) for a in type_arguments(node)]
            return None if None in values else frozenset({("lit", frozenset(values))})
        return self._want_name(key, base, cls)

    def _want_name(self, key: str, name: str, cls: str) -> frozenset | None:
        last = name.rpartition(".")[2]
        if not name or last == "Any" or last == "object":
            return None
        if last == "None":
            return _NONE
        if last == "Self":
            return frozenset({("i", key, cls)}) if cls else None
        target = self.resolver.name_in(key, name)
        if target is not None and target.kind == "builtin":
            return frozenset({("b", last)}) if last in _TYPES else None
        if target is not None and target.kind == "external":
            module, _, last = target.qualname.rpartition(".")
            if module not in _TYPING:
                return frozenset({("xi", target.qualname)})
            if last == "Set" and module == "collections.abc":
                return frozenset({("abc", "AbstractSet")})
            if last in _ALIASES:
                return frozenset({("b", _ALIASES[last])})
            return frozenset({("abc", last)}) if last in _ABSTRACT else None
        found = set()
        for v in self.annotation(key, name, cls):  # a project class, or a TypeVar's bound
            if v[0] == "i" and not self.is_protocol(v[1], v[2]) or v[0] == "xi" or \
                    v[0] == "b" and v[1] in _TYPES:
                found.add(v)
            else:
                return None
        return frozenset(found) or None

    def fits(self, values: frozenset, want: frozenset | None) -> int:
        """How an argument that may be any of ``values`` (none: not known) fits what an
        annotation admits: YES when each value is one of it, NO when none may be."""
        if want is None or values is ASSUMED:
            return YES
        if not values:
            return MAY
        seen = {max(self._fit(v, alt) for alt in want) for v in values}
        return YES if seen == {YES} else NO if seen == {NO} else MAY

    def _fit(self, v: Value, alt: tuple) -> int:
        kind, want = v[0], alt[0]
        if want == "none":
            return (YES if v[1] == "NoneType" else NO) if kind == "=" else MAY
        if kind == "=":
            return _exact(v, alt)
        if kind == "b" and v[1] in _TYPES or kind == "t":
            cls = "tuple" if kind == "t" else v[1]
            if want != "i":
                return _typed(cls, alt)
            return MAY if _outside_fit(self.outside(alt[1], alt[2]), ("b", cls)) else NO
        if kind == "i":
            memo = ("\15", v, alt)
            found = self._memo.get(memo)
            if found is None:
                found = self._memo[memo] = self._instance(v[1], v[2], alt)
            return found
        if kind == "s" or kind == "d":
            return _container(kind, alt)
        if kind == "xi":
            return YES if want == "xi" and alt[1] == v[1] else MAY
        if kind == "c":
            return (YES if alt[1] == "type" else NO) if want == "b" else \
                MAY if want == "i" or want == "xi" else NO
        if kind in _CALLABLES:
            return MAY if want == "xi" else NO
        return MAY

    def _instance(self, key: str, cls: str, alt: tuple) -> int:
        """How an instance of the project class ``cls`` (or of a subclass) fits."""
        want = alt[0]
        if want == "lit":
            return NO
        subclasses = self.subclasses(key, cls)
        if want == "i":
            wanted = (alt[1], alt[2])
            if wanted in self.mro(key, cls):
                return YES
            below = {wanted, *self.subclasses(*wanted)}
            return MAY if any(s in below for s in subclasses) else NO
        own = _outside_fit(self.outside(key, cls), alt)
        if own != NO:
            return own
        return MAY if any(_outside_fit(self.outside(*s), alt) for s in subclasses) else NO

    def outside(self, key: str, cls: str) -> frozenset:
        """The builtin classes (``("b", name)``) and classes outside the build (``("x",
        dotted)``; ``("x", "?")`` for a base not known) a project class derives from."""
        memo = ("\16", key, cls)
        found = self._memo.get(memo)
        if found is None:
            bases = set()
            for k, c in self.mro(key, cls):
                if not k:
                    bases.add(("x", c))
                    continue
                module = self.resolver.module(k)
                if module.kinds.get(c) != "class":
                    bases.add(("x", "?"))
                for base in module.bases.get(c, ()):
                    name = base.partition("[")[0]
                    target = self.resolver.name_in(k, name) if "(" not in name else None
                    if target is None:
                        bases.add(("x", "?"))
                    elif target.kind == "builtin":
                        bases.add(("b", name.rpartition(".")[2]))
            found = self._memo[memo] = frozenset(bases)
        return found
