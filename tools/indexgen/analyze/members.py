"""Attributes of values, for the type evaluation: what ``value.attr`` is.

:class:`Members` is mixed into :class:`~indexgen.analyze.types.Types`.  An attribute of an
instance or a class is looked up in the class and then its project bases: a method, a
nested class, a property (its return annotation; :meth:`Members._property` notes the read),
an enum's member (an instance), or an attribute the class's methods assign (``self.group =
group``), its body annotates, functions elsewhere assign or append to
(``ctx.order.append(self)``: :meth:`Members.extras`) or a dataclass's call sites hand it;
one a project class does not define is its outside base's, or what its ``__getattr__`` hands
on.  An instance made with the elements of a builtin sequence it subclasses
(``Stack([frame])``: :meth:`indexgen.analyze.held.Held.built`) has that sequence's methods
where no project class defines them (``pop``).  A method of a ``Protocol`` read on a value
typed by it (an instance, or a class value: ``type[P]``) is nothing (a structural type's
stubs never run), as is one of a class defined only under ``if TYPE_CHECKING:`` (jinja2's
``_TranslationsContext.pgettext``).  Attributes of modules are their names; of containers
and builtins, :func:`indexgen.analyze.containers.container_member`'s.
"""

from __future__ import annotations

from indexgen.analyze.builtin_names import builtin_exists
from indexgen.analyze.containers import container_member
from indexgen.analyze.lambdas import lambdas_apart
from indexgen.analyze.matching import Matching
from indexgen.analyze.memo import GuardedMemo
from indexgen.analyze.outside_bases import MARKERS, outside_member
from indexgen.analyze.paths import parse
from indexgen.analyze.results import hollow
from indexgen.analyze.values import CONTAINERS, NONE, Value, Values, ordered, union
from indexgen.extract.model import Definition

#: The last item of a plain function's or closure's value read as an instance's attribute
#: that its class body binds (:meth:`Members._bound`): a call hands the instance first.
BOUND = ">self"
#: What every class has from ``object``: on a class, found in its own bases before its
#: metaclass's (``cls.__init__`` in a metaclass's method is the class's, not the metaclass's).
OBJECT_NAMES = frozenset(dir(object))
_METACLASSES = frozenset({"type", "ABCMeta", "EnumMeta", "EnumType"})
_UNBINDING = frozenset({"staticmethod", "partial"})  # wrappers that give no bound method


def _put(source: str, found: Values) -> str:
    """A put into an attribute (``~[v]``, ``~{v}``) as what it puts into the attribute's
    value ``found``: into a list (a sequence and no mapping), ``self.xs[i] = v`` (``~{v}``)
    puts an element, as ``append`` does (``~[v]``)."""
    if source[1] == "{" and any(v[0] == "s" for v in found) and not any(
            v[0] == "d" for v in found):
        return f"~[{source[2:-1]}]"
    return source


class Members(Matching):
    """Attributes of values; mixed into :class:`~indexgen.analyze.types.Types`, whose
    resolver, tables, memo, cycle guard, ``mro``, ``annotation``, ``source``, ``_steps``,
    ``evaluate``, ``of_target`` and ``_field_flow`` it uses."""

    resolver: object
    _defs: dict
    _guard: GuardedMemo
    _parsed: dict
    _flows: object
    _extras: dict | None
    _memo: dict
    _flows_open: bool

    def _property(self, key: str, cls: str, attr: str) -> list[tuple[str, str]]:
        """``[(file key, qualname)]`` of the property ``attr`` of the class, if it is one."""
        for k, c in self.mro(key, cls):
            d = self._defs[k][1].get(f"{c}.{attr}") if k else None
            if d is not None:
                return [(k, d.qualname)] if d.kind == "property" else []
        return []

    def member(self, value: Value, attr: str) -> Values:
        """``value.attr``."""
        kind = value[0]
        if kind == "i" and attr == "__class__":  # self.__class__(...): the class
            return frozenset({("c", value[1], value[2])})
        if kind == "i" and attr in OBJECT_NAMES and self.instance_own(value[1], value[2], attr):
            return NONE  # (object's names tested first: most lookups are of none of them)
        if kind == "i" or kind == "c":
            found = self._class_member(value[1], value[2], attr, kind == "i")
            if len(value) > 3 and all(v[0] == "xa" or v[0] == "b" for v in found):
                # Stack([frame]).pop(), no project class's: of the container it holds too
                found = union([found, *(container_member(v, attr) for v in ordered(value[3]))])
            return found
        if kind == "p":
            return self._super_member(value[1], value[2], attr, value[3] == "i")
        if kind == "m":
            target = self.resolver.name_in(value[1], attr) if self.resolver.files[
                value[1]].module else None
            found = self.resolver.absolute(
                f"{self.resolver.files[value[1]].module}.{attr}") if target is None else target
            return self.of_target(found) if found else NONE
        return container_member(value, attr)

    def instance_own(self, key: str, cls: str, attr: str) -> bool:
        """Whether the attribute ``attr`` of an instance of the class ``cls`` is the
        instance's own, which no lookup in ``cls`` finds (:meth:`member` gives none; the
        direct ``self.attr``/``cls.attr`` of :mod:`indexgen.analyze.dispatch` is not taken):
        an instance of a metaclass is a class, whose ``object`` names (``__init__``...) are
        found in its own bases, which end in ``object``, before its metaclass
        (``cls.__init__`` in a metaclass's method is the class's, not the metaclass's), and
        what they are is not known here."""
        return attr in OBJECT_NAMES and self.is_metaclass(key, cls)

    def is_metaclass(self, key: str, cls: str) -> bool:
        """Whether the class ``cls`` of file ``key`` is a metaclass: ``type`` (or a metaclass
        of the standard library) is among its bases.  Its instances are classes."""
        for k, c in self.mro(key, cls):
            for base in self.resolver.module(k).bases.get(c, ()) if k else (c,):
                target = self.resolver.name_in(k, base) if k else None
                name = target.qualname if target is not None else base
                if (target is None or target.kind != "project") and \
                        name.rpartition(".")[2] in _METACLASSES:
                    return True
        return False

    def _super_member(self, key: str, cls: str, attr: str, instance: bool) -> Values:
        """``super().attr`` in class ``cls``: the attribute of the first class after ``cls``
        (its bases, depth first) that defines or assigns it; when none of the build does,
        an outside base's, a builtin base's (``Exception.__init__``) or ``object``'s (a
        class of no other base) -- unknown when a base is neither."""
        outside = ""
        for k, c in self.mro(key, cls)[1:]:
            if not k:
                outside = outside or (c if c not in MARKERS else "")
                continue
            by_name = self._defs[k][1]
            owner = by_name.get(c)
            if f"{c}.{attr}" in by_name or owner is not None and attr in owner.members:
                return self._class_member(k, c, attr, instance)
        if outside:
            return outside_member(outside, attr)
        builtin = "object"
        for k, c in self.mro(key, cls):
            for base in self.resolver.module(k).bases.get(c, ()) if k else ():
                target = self.resolver.name_in(k, base.partition("[")[0])
                if target is None:
                    return NONE  # a base the build cannot name: its attribute is unknown
                if target.kind == "builtin" and builtin == "object":
                    builtin = target.qualname
        found = f"{builtin}.{attr}"
        return frozenset({("b", found)}) if builtin_exists(found) else NONE

    def _class_member(self, key: str, cls: str, attr: str, instance: bool) -> Values:
        # (in a cycle, self.x = self.x.next(): what else it is decides)
        return self._guard.get(("\1", key, cls, attr, instance), self._class_member_uncached,
                               key, cls, attr, instance)

    def _class_member_uncached(self, key: str, cls: str, attr: str, instance: bool) -> Values:
        outside = ""
        delegate = None
        held: list[tuple[str, str, str, str]] = []  # appended to in a subclass: see sources
        given: Values = NONE  # assigned only from outside in a subclass (obj.x = v)
        for k, c in self.mro(key, cls):
            if not k:  # a base outside the build: the attribute may be its
                outside = outside or (c if c not in MARKERS else "")
                continue
            by_name = self._defs[k][1]
            if instance and delegate is None and f"{c}.__getattr__" in by_name:
                delegate = (k, by_name[f"{c}.__getattr__"])
            d = by_name.get(f"{c}.{attr}")
            if d is not None:
                found = self._defined(key, cls, k, c, d, instance)
                return union([given, found]) if given else found
            owner = by_name.get(c)
            sources = owner.members.get(attr) if owner is not None else None
            if sources and attr[0] != "_" and self.is_enum(k, c) and not sources[0][0]:
                return frozenset({("i", k, c)})  # DType.DATE: a member, a DType
            extras = self.put_from_elsewhere(k, c, attr)
            if (sources or extras) and all(x[1][0] == "~" for x in sources or ()) \
                    and all(x[2][0] == "~" for x in extras or ()):
                # only appended to here, or elsewhere (``table.value.append(k, v)``): what a
                # base says it is comes first (a property whose class has its own append)
                held += [(k, anchor, x, c) for anchor, x in sources or ()] + list(extras or ())
                continue
            if sources or extras:
                found = union([*(self._in_class(k, c, attr, anchor, x, instance)
                                 for anchor, x in sources or () if x[0] != "~"),
                               *(self.source(*extra) for extra in extras or ())])
                # a field typed Callable: what is handed (a lambda default says no more)
                if not found or hollow(found) or hollow(lambdas_apart(found)):
                    found = union([found, self._field_flow(k, c, attr)]) or found
                if not found or hollow(found):  # Dict[str, Callable]: what subclasses put
                    found = union([found, self._below(key, cls, attr, instance, False)]) or found
                held += [(k, anchor, x, c) for anchor, x in sources or () if x[0] == "~"]
                if held and (not found or any(v[0] in CONTAINERS for v in found)):
                    found = union([found, *(self.source(*x[:2], _put(x[2], found), *x[3:])
                                            for x in held)])
                if not sources:  # only assignments from outside: what the bases say holds too
                    given = union([given, found])
                    continue
                if instance and any(not a for a, _x in sources):  # self.TABLE: a subclass's
                    found = union([found, self._below(key, cls, attr, True, True)]) or found
                return union([given, found]) if given else found
        if held:
            return union([given, *(self.source(*x) for x in held)])
        if given:
            return given
        if delegate is not None and not outside:
            return self._delegated(*delegate, attr)
        return outside_member(outside, attr) if outside else NONE

    def _defined(self, key: str, cls: str, k: str, c: str, d: Definition, instance: bool
                 ) -> Values:
        """The member that a definition ``d`` in class ``c`` (of file ``k``) of the MRO of
        ``cls`` binds: a nested class, a property's value, a method."""
        if d.kind == "class":
            return frozenset({("c", k, d.qualname)})
        if d.kind == "property":
            return self.annotation(k, d.returns, c) if instance and d.returns else NONE
        if self.is_protocol(key, cls) and self.is_protocol(k, c) or instance and \
                c.partition(".")[0] in self.resolver.files[k].type_checking:
            return NONE  # a structural type (an instance or a class value: type[P]), or
        return frozenset({("f", k, d.qualname)})  # one only type checkers see: stubs

    def _in_class(self, key: str, cls: str, attr: str, anchor: str, source: str,
                  instance: bool) -> Values:
        """What one source of a class's attribute ``attr`` gives: read in the class body
        (anchor ''), a bare name the class itself binds is the class's (``visit_Template =
        _simple_visit``: the method), not the module's; ``MockHandler = MockHandler`` reads
        the module's (the class binds it only then)."""
        name = source[1:]
        if not anchor and source[0] == "=" and name != attr and name.isidentifier() and (
                f"{cls}.{name}" in self._defs[key][1]
                or name in getattr(self._defs[key][1].get(cls), "members", ())):
            return self._class_member(key, cls, name, instance)
        found = self.source(key, anchor, source, cls)
        return self._bound(found, source) if instance and not anchor else found

    def _bound(self, found: Values, source: str) -> Values:
        """The plain functions and closures of ``found``, which a class body binds by
        ``source`` (``visit_Add = _make_binop("+")``), as read on an instance: each marked
        :data:`BOUND`, since called that way it gets the instance as its first argument
        (not through ``staticmethod(f)`` or ``partial(f, x)``, which bind nothing)."""
        if source[0] != "=" or source[1:].partition("(")[0].rpartition(".")[2] in _UNBINDING:
            return found
        return frozenset(v + (BOUND,) if v[0] == "n" or v[0] == "f" and getattr(
            self._defs[v[1]][1].get(v[2]), "kind", "") == "function" else v for v in found)

    def _below(self, key: str, cls: str, attr: str, instance: bool, body: bool) -> Values:
        """What the documented subclasses of the class bind the attribute to themselves: an
        instance of the class may be one of theirs.  With ``body``, in their class bodies
        only (``FUNCTIONS = {**Parser.FUNCTIONS, "SUB": build_sub}``, ``parser_class =
        MyParser``: ``self.FUNCTIONS`` in a base's method reads the subclass's, as a method
        call reaches its overrides; :meth:`~indexgen.analyze.hierarchy.Hierarchy.rebinders`);
        else anywhere (``self.methods = {...}`` in a subclass's ``__init__``)."""
        found = []
        for k, c in self.rebinders(key, cls, attr) if body else self.subclasses(key, cls):
            owner = self._defs[k][1].get(c)
            for anchor, x in owner.members.get(attr, ()) if owner is not None else ():
                if x[0] != "~" and not (body and anchor):
                    found.append(self._in_class(k, c, attr, anchor, x, instance))
        return union(found)

    def _delegated(self, k: str, getattr_def: Definition, attr: str) -> Values:
        """``attr`` of an instance whose class's ``__getattr__`` (in file ``k``) hands it on
        to another object (``return getattr(self.module, name)``): that object's ``attr``."""
        found = []
        for source in getattr_def.names.get("return", ()):
            steps = self._parsed.get(source[1:]) or parse(source[1:])
            if len(steps) == 2 and steps[0] == ("n", "getattr") and steps[1][0] == "c" \
                    and len(steps[1][1]) == 2 and steps[1][1][0]:
                held = self._steps(k, getattr_def.anchor, steps[1][1][0])
                found.append(union(self.member(v, attr) for v in ordered(held)))
        return union(found)

    def put_from_elsewhere(self, key: str, cls: str, attr: str) -> list | None:
        """What functions elsewhere put into the attribute ``attr`` of class ``cls`` of file
        ``key`` (:meth:`extras`).  Where no function of the build puts an attribute of that
        name into anything (``x.attr = ...``), nothing, in any round: a value that reads
        it is not provisional for that."""
        attrs = self._memo.get("put attributes")
        if attrs is None:
            attrs = self._memo["put attributes"] = frozenset(
                name.rpartition(".")[2] for s in self.resolver.files.values()
                for d in s.definitions if d.names for name in d.names if name[0] == "+")
        return self.extras().get((key, cls, attr)) if attr in attrs else None

    def extras(self) -> dict[tuple[str, str, str], list[tuple[str, str, str]]]:
        """``(file key, class, attribute) -> [(file key, anchor, source)]``: what functions
        elsewhere put into an attribute of another object (``ctx.order.append(self)``
        gives the ``order`` of the class of ``ctx`` the source ``=[self]``), found once."""
        if self._flows_open:  # found again once callers hand parameters (set_flows)
            self._guard.note_provisional()
        if self._extras is None:
            self._extras = {}  # found as if asked first (every build finds the same), then
            self._guard.isolated(self._find_extras)  # what was found meanwhile is forgotten
            if self._flows_open:  # what read the table being made is provisional
                self._guard.forget_provisional()
            else:
                self._guard.clear()
        return self._extras

    def _find_extras(self) -> None:
        for key, s in self.resolver.files.items():
            for d in s.definitions:
                for name, sources in d.names.items() if d.names else ():
                    if name[0] != "+":
                        continue
                    base, _, attr = name[1:].rpartition(".")
                    # C.f = g.h (a name): the class's too, unless taken back (orig = C.f)
                    patch = any(d.names.get(x[1:]) == ["=" + name[1:]] for x in sources)
                    aliases = [] if patch else [
                        x for x in sources if x[1:].replace(".", "").isidentifier()]
                    for v in ordered(self.evaluate(key, d.anchor, base)):
                        if v[0] == "i" or v[0] == "c" and aliases:
                            self._extras.setdefault((v[1], v[2], attr), []).extend(
                                (key, d.anchor, s) for s in (sources if v[0] == "i" else aliases))
