"""The class hierarchy as the type evaluation reads it: bases, subclasses, overrides,
protocols, constructors, and whether a value is an instance of a class.

:class:`Hierarchy` is mixed into :class:`~indexgen.analyze.types.Types`: ``mro`` walks a
class's project bases (a base outside the build is listed by its dotted name),
``overrides`` lists the methods the documented subclasses define themselves (class
hierarchy analysis: a call on an instance may run any of them), ``is_protocol`` tells a
structural type (PEP 544) from a class, and ``constructor`` says what calling a class runs;
``_is_a`` tells whether a value is an instance of one of some classes.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from indexgen.analyze.linearize import c3, own_bases
from indexgen.analyze.outside_bases import stands_for
from indexgen.analyze.resolve import Resolver
from indexgen.analyze.siblings import CALLABLE_KINDS, sibling_methods, sibling_names
from indexgen.analyze.values import NONE, Value, Values
from indexgen.extract.model import Definition

T = TypeVar("T")

_ENUMS = frozenset({"Enum", "IntEnum", "StrEnum", "Flag", "IntFlag", "ReprEnum"})

_MEMBER_KINDS = CALLABLE_KINDS | {"property"}


class Hierarchy:
    """Class relations over the summaries of a build; mixed into
    :class:`~indexgen.analyze.types.Types`, whose resolver, tables, memo and
    ``annotation``/``local_names`` it uses."""

    resolver: Resolver
    _defs: dict
    _memo: dict
    _mro: dict[tuple[str, str], list[tuple[str, str]]]
    _subclasses: dict[tuple[str, str], list[tuple[str, str]]] | None
    _overridden: dict[tuple[str, str, str], list[tuple[str, str]]]  # made with _subclasses

    def mro(self, key: str, cls: str) -> list[tuple[str, str]]:
        """The class and its bases in Python's lookup order (:mod:`~indexgen.analyze.
        linearize`); a base outside the build is ``("", dotted)``, with no bases read."""
        memo = (key, cls)
        found = self._mro.get(memo)
        if found is None:
            self._mro[memo] = [memo]  # a class that is its own base reads itself alone
            b = own_bases(self.resolver, key, cls)
            found = self._mro[memo] = c3(memo, [self.mro(*x) if x[0] else [x] for x in b], b)
        return found

    def remembered(self, memo: tuple, make: Callable[[], T]) -> T:
        """``make()``, made once per ``memo`` (a tuple that names what it is and of what) in
        the memo of the class relations: for the questions of the hierarchy that other
        modules ask (:mod:`indexgen.analyze.outside_tests`)."""
        found = self._memo.get(memo)
        if found is None:
            found = self._memo[memo] = make()
        return found

    def is_enum(self, key: str, cls: str) -> bool:
        """Whether the class is an ``enum.Enum`` (``IntEnum``, ``StrEnum``, ``Flag``...):
        the names its body binds (not ``_x``, no function) are its members, instances."""
        memo = ("enum", key, cls)
        found = self._memo.get(memo)
        if found is None:
            found = self._memo[memo] = any(not k and c.startswith("enum.") and c[5:] in _ENUMS
                                           for k, c in self.mro(key, cls))
        return found

    def is_protocol(self, key: str, cls: str) -> bool:
        """Whether the class names ``typing.Protocol`` among its own bases (PEP 544: a value
        typed by it may be of any class that has its members, which need not inherit
        them)."""
        memo = ("\7", key, cls)
        found = self._memo.get(memo)
        if found is None:
            found = self._memo[memo] = any(not k and c.rpartition(".")[2] == "Protocol"
                                           for k, c in own_bases(self.resolver, key, cls))
        return found

    def called_protocol(self, key: str, cls: str) -> Values | None:
        """What a value typed by the class is when the class is a ``Protocol`` whose one
        method is ``__call__`` (a callable type written as a class: ``VisitCallable``): a
        ``("k", R)`` value, R its ``__call__``'s return annotation (nothing when that says
        nothing), as ``Callable[..., R]`` reads; None for any other class (a protocol with
        other methods stays an instance, whose calls reach its explicit subclasses)."""
        if not self.is_protocol(key, cls):
            return None
        call = self._defs[key][1].get(f"{cls}.__call__")
        if call is None or any(d.parent == cls and d.kind in CALLABLE_KINDS
                               and d.qualname != call.qualname
                               for d in self._defs[key][1].values()):
            return None
        returned = self.annotation(key, call.returns, cls) if call.returns else NONE
        return frozenset({("k", returned)}) if returned else NONE

    def implementers(self, key: str, cls: str, attr: str) -> list[tuple[str, str]]:
        """``[(file key, qualname)]`` of the methods ``attr`` that run on the documented
        classes conforming to the ``Protocol`` (PEP 544: a class whose own project classes
        define every method and property the protocol and its protocol bases declare, each
        method taking the arguments the protocol's does; it need not inherit from the
        protocol), sorted; none when the class is not a protocol or declares no method
        ``attr``.  The protocol's data attributes are not checked: a summary keeps only the
        attributes whose values the type evaluation reads."""
        memo = ("\10", key, cls, attr)
        found = self._memo.get(memo)
        if found is None:
            found = self._memo[memo] = []
            wanted = self._protocol_methods(key, cls)
            if attr in wanted:
                for k, c in self._definers(attr):
                    for sk, sc in [(k, c), *self.subclasses(k, c)]:
                        if not self.is_protocol(sk, sc) and self._conforms(sk, sc, wanted):
                            target = self._first_method(sk, sc, attr)
                            if target is not None and target not in found:
                                found.append(target)
                found.sort()
        return found

    def _protocol_methods(self, key: str, cls: str) -> dict[str, tuple[int, int] | None]:
        """The methods and properties a protocol and its protocol bases declare, each with
        the least and most arguments it takes by position (None: a property, or not known);
        none for a class that is not a protocol."""
        found: dict[str, tuple[int, int] | None] = {}
        for k, c in self.mro(key, cls):
            if k and self.is_protocol(k, c):
                for d in self._defs[k][1].values():
                    if d.parent == c and d.kind in _MEMBER_KINDS and not d.overload:
                        found.setdefault(d.name, _takes(d))
        return found

    def _definers(self, attr: str) -> list[tuple[str, str]]:
        """The documented classes that define a method ``attr`` in their own body."""
        index = self._memo.get("\11")
        if index is None:
            index = self._memo["\11"] = {}
            for k, s in self.resolver.files.items():
                kinds = self.resolver.module(k).kinds if not k.startswith("test:") else {}
                for d in s.definitions if kinds else ():
                    if d.parent and d.kind in CALLABLE_KINDS and not d.overload \
                            and kinds.get(d.parent) == "class":
                        index.setdefault(d.name, []).append((k, d.parent))
        return index.get(attr, [])

    def _conforms(self, key: str, cls: str, wanted: dict[str, tuple[int, int] | None]
                  ) -> bool:
        """Whether the class or its project bases define every name ``wanted``, each method
        taking (at least) every number of arguments the protocol's does."""
        for name, takes in wanted.items():
            found = self._first_definition(key, cls, name)
            if found is None:
                return False
            have = _takes(found[1]) if takes is not None else None
            if have is not None and (have[0] > takes[0] or -1 < have[1] < takes[1]
                                     or takes[1] == -1 < have[1]):
                return False
        return True

    def _first_definition(self, key: str, cls: str, attr: str
                          ) -> tuple[str, Definition] | None:
        """(file key, definition) of the ``attr`` an instance of the class finds first."""
        for k, c in self.mro(key, cls):
            d = self._defs[k][1].get(f"{c}.{attr}") if k else None
            if d is not None:
                return k, d
        return None

    def _first_method(self, key: str, cls: str, attr: str) -> tuple[str, str] | None:
        """(file key, qualname) of the method ``attr`` an instance of the class runs."""
        found = self._first_definition(key, cls, attr)
        return (found[0], found[1].qualname) if found and found[1].kind in CALLABLE_KINDS \
            else None

    def overrides(self, key: str, cls: str, attr: str) -> list[tuple[str, str]]:
        """``[(file key, qualname)]`` of the methods ``attr`` that the documented subclasses
        of the class define themselves (class hierarchy analysis: a call on an instance of
        ``cls`` may run any of them), then those they take from a sibling base
        (:mod:`~indexgen.analyze.siblings`), in a fixed order (the same list at each call:
        not to be changed)."""
        if attr not in self._overriding_names()[0] and attr not in sibling_names(self):
            return []
        subclasses = self.subclasses(key, cls)
        memo = (key, cls, attr)  # the hierarchy never changes: each answer made once
        found = self._overridden.get(memo)
        if found is None:
            found = self._overridden[memo] = []
            for k, c in subclasses:
                d = self._defs[k][1].get(f"{c}.{attr}")
                if d is not None and d.kind in CALLABLE_KINDS and not d.overload:
                    found.append((k, d.qualname))
            found += [m for m in sibling_methods(self, key, cls, attr) if m not in found]
        return found

    def rebinders(self, key: str, cls: str, attr: str) -> list[tuple[str, str]]:
        """``[(file key, qualname)]`` of the documented subclasses of the class whose own
        body assigns ``attr`` a value (``concat = staticmethod(native_concat)``; an
        annotation alone is no value): an override all the same, whose value only the type
        evaluation can tell (kept in ``_overridden`` beside :meth:`overrides`'s answers,
        under ``"=" + attr``)."""
        if attr not in self._overriding_names()[1]:
            return []
        subclasses = self.subclasses(key, cls)
        memo = (key, cls, "=" + attr)
        found = self._overridden.get(memo)
        if found is None:
            found = self._overridden[memo] = []
            for k, c in subclasses:
                owner = self._defs[k][1].get(c)
                if owner is not None and f"{c}.{attr}" not in self._defs[k][1] and any(
                        not anchor and x[0] == "=" for anchor, x in owner.members.get(attr, ())):
                    found.append((k, c))
        return found

    def may_be_overridden(self, attr: str) -> bool:
        """Whether any documented subclass defines a method or property ``attr`` or binds
        ``attr`` in its body: when none does, a call ``x.attr(...)`` has no override,
        implementer or rebinder to list, whatever ``x`` is (a quick exit for
        :func:`indexgen.analyze.virtual.overrides`, before it evaluates the receiver).  A
        protocol is a subclass too, of ``typing.Protocol``: what it declares counts."""
        return attr in self._overriding_names()[2]

    def _overriding_names(self) -> tuple[frozenset[str], frozenset[str], frozenset[str]]:
        """The names of the methods and properties the documented subclasses define, of
        what their bodies bind by assignment, and both together: wider than any answer of
        :meth:`overrides`, :meth:`rebinders` and :meth:`implementers`, made once."""
        found = self._memo.get("\12")
        if found is None:
            self.subclasses("", "")  # the table of subclasses, made once
            assert self._subclasses is not None
            subs = {sub for under in self._subclasses.values() for sub in under}
            defined, bound = set(), set()
            for k, s in self.resolver.files.items():
                for d in s.definitions:
                    if d.kind == "class" and (k, d.qualname) in subs:
                        bound.update(m for m, values in d.members.items()
                                     if any(not a and x[0] == "=" for a, x in values))
                    elif d.kind in _MEMBER_KINDS and (k, d.parent) in subs:
                        defined.add(d.name)
            found = self._memo["\12"] = (frozenset(defined), frozenset(bound), frozenset(
                defined | bound | sibling_names(self)))
        return found

    def subclasses(self, key: str, cls: str) -> list[tuple[str, str]]:
        """``[(file key, qualname)]`` of the documented subclasses of the class, direct or
        not, sorted; of a class outside the build, ``("", dotted)`` as :meth:`mro` names it,
        those the build defines (``class CopyIO(io.BytesIO)``)."""
        if self._subclasses is None:
            subs: dict[tuple[str, str], list[tuple[str, str]]] = {}
            for k, s in self.resolver.files.items():
                if k.startswith("test:"):  # test files are not documented
                    continue
                for d in s.definitions:
                    if d.kind == "class":
                        for base in self.mro(k, d.qualname)[1:]:  # ("", dotted): outside
                            for b in (base, *stands_for(base)):  # an io class: typing.IO too
                                subs.setdefault(b, []).append((k, d.qualname))
            self._subclasses = {c: sorted(set(v)) for c, v in subs.items()}
            self._overridden = {}
        return self._subclasses.get((key, cls), [])

    def narrowings(self, key: str, anchor: str) -> dict[str, list[tuple[int, int, str]]]:
        """Name -> where ``isinstance`` tests narrow it in the function ``anchor``: (first
        line, last line, the narrowed name ``x@first``), by first line."""
        memo = ("\5", key, anchor)
        found = self._memo.get(memo)
        if found is None:
            found = {}
            for name, sources in self.local_names(key, anchor).items():
                if "@" in name:
                    base, _, first = name.partition("@")
                    found.setdefault(base, []).append((int(first), int(sources[-1][1:]), name))
            for spans in found.values():
                spans.sort()
            self._memo[memo] = found
        return found

    def constructor(self, key: str, cls: str) -> tuple[str, str]:
        """(file key, qualname) of what calling the class runs: the ``__init__`` it defines or
        inherits from a project base, else the class itself (a dataclass, or an ``__init__``
        from outside the build)."""
        for k, c in self.mro(key, cls):
            if not k:
                break
            if f"{c}.__init__" in self._defs[k][1]:
                return k, f"{c}.__init__"
        return key, cls

    def metaclass(self, key: str, cls: str) -> Values:
        """The instance values of the metaclass a class of the project states (its own
        ``metaclass=`` or its bases'), or none."""
        for k, c in self.mro(key, cls):
            d = self._defs[k][1].get(c) if k else None
            meta = d.names.get("metaclass=") if d is not None and d.names else None
            if meta:
                return self.annotation(k, meta[0])
        return frozenset()

    def _is_a(self, value: Value, tested: Values) -> bool:
        """Whether ``value`` is one of the ``tested`` values or an instance of a subclass of
        one of their classes."""
        if value in tested:
            return True
        if value[0] == "c":  # a class: an instance of type, and of its metaclass
            return ("b", "type") in tested or any(
                self._is_a(m, tested) for m in self.metaclass(value[1], value[2]))
        if value[0] != "i":
            return False
        bases = self.mro(value[1], value[2])
        return any(t[0] == "i" and (t[1], t[2]) in bases for t in tested)


def _takes(d: Definition) -> tuple[int, int] | None:
    """The least and most arguments a method takes by position, its instance counted (most
    -1: any number), or None when not known (a property; a summary without the shape)."""
    shape = d.names.get(")") if d.kind != "staticmethod" else d.names.get("(")
    if not shape:
        return None
    least, _, most = shape[0].partition("-")
    extra = d.kind == "staticmethod"  # no instance argument: counted as one more
    return int(least) + extra, int(most) + extra if most != "-1" else -1
