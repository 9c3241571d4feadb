"""What a value is, as far as the annotations and assignments of the project say.

:class:`Types` evaluates the *paths* of the extraction stage (``self.group.pre_forward``,
``ctx.current()``, ``next(iter(self.fsdp_params))``: :func:`indexgen.extract.syntax.path`)
in the scope of a function or a module, to the set of things the value may be (the value
tuples of :mod:`indexgen.analyze.values`).

Where a value comes from:

- a name: the function's own names (:attr:`~indexgen.extract.model.Definition.names`: an
  annotation, what was assigned, looped over or appended, an ``isinstance`` test),
  ``self``/``cls`` of a method, else the module's namespace
  (:class:`~indexgen.analyze.resolve.Resolver`); a module attribute is what its source says
  (``recorder = Recorder()``); a module imported by a name the source gives is that module;
- an attribute of an instance: a method, a property (its return annotation; the read is
  noted), or an attribute the class's methods assign (``self.group = group``), its body
  annotates, or functions elsewhere assign or append to (``ctx.order.append(self)``:
  :meth:`Types.extras`), looked up in the class and then its project bases; an attribute a
  project class does not define is its outside base's (``self.register_forward_hook`` of an
  ``nn.Module``), or what its ``__getattr__`` hands on (``getattr(self.module, name)``);
- a call: a class gives an instance, a function its return annotation (with none, or
  ``Any``, what its ``return`` and ``yield`` statements give); ``iter``, ``next``,
  ``enumerate``, ``zip``, ``list``, ``sorted``... follow their arguments;
- a subscript or an iteration: the element type of ``list[X]``, ``dict[K, V]``,
  ``tuple[A, B]``, ``Iterator[X]`` and the like; ``X | None`` and ``Optional[X]`` are ``X``.

Nothing is guessed: a value nothing types stays unknown, and the call on it unresolved.

Why this module is longer than the house's ~300 lines (540; issue 31 asked for about 300, and
this is not there yet): names, members, calls and items are evaluated by one recursion (a member's source is a path whose steps are members and calls,
whose results are annotations or paths again), with one memo and one guard against cycles;
split into files, one evaluation would be read across several.  The value tuples, the path
parser and the reading of annotations live in :mod:`indexgen.analyze.values`, what call sites
hand parameters in :mod:`indexgen.analyze.flows`; the class hierarchy (``mro``,
``overrides``) is the next candidate to move out.
"""

from __future__ import annotations

from functools import partial

from indexgen.analyze.flows import CallSites, Flows
from indexgen.analyze.resolve import PerFile, Resolver, Target
from indexgen.analyze.values import (
    NONE,
    Annotations,
    Value,
    Values,
    container_member,
    element_of,
    item_of,
    one,
    ordered,
    parse,
    union,
)
from indexgen.extract.model import Definition, FileSummary

_DEPTH = 25  # paths evaluated inside one another
_CONTAINERS = frozenset({"s", "d", "t"})  # values of builtin containers
_CALLABLE_KINDS = frozenset({"method", "classmethod", "staticmethod", "function"})
#: Keys of a definition's ``names`` that are no names: what a plain function accepts
#: (``(``), the condition that picks a definition (``?``).
_NOT_NAMES = frozenset({"(", "?"})


def _definitions(files: dict[str, FileSummary], key: str
                 ) -> tuple[dict[str, Definition], dict[str, Definition]]:
    """(by anchor, by qualname: the first that is not an overload stub) of one file."""
    by_anchor, by_name = {}, {}
    for d in files[key].definitions:
        by_anchor[d.anchor] = d
        if d.qualname not in by_name or (by_name[d.qualname].overload and not d.overload):
            by_name[d.qualname] = d
    return by_anchor, by_name


def _hollow(values: Values) -> bool:
    """Whether every value is a container whose elements are unknown (``list[T]`` of a
    ``TypeVar`` or a ``Callable``): what is returned may say more."""
    for v in values:
        kind = v[0]
        if not (kind == "s" and not v[1] or kind == "d" and not v[2]
                or kind == "t" and not any(v[1])):
            return False
    return True


class Types(Annotations, Flows):
    """Evaluate paths and annotations over the summaries of a build.

    Args:
        resolver: The build's name resolver (its summaries are read for ``names``,
            ``members``, ``returns`` and module attribute sources).
    """

    def __init__(self, resolver: Resolver) -> None:
        self.resolver = resolver
        # File key -> its definitions by anchor and by qualname (_definitions), made on first use.
        self._defs: dict[str, tuple[dict[str, Definition], dict[str, Definition]]] = PerFile(
            partial(_definitions, resolver.files))
        self._memo: dict[tuple, Values] = {}
        self._types: dict[tuple, Values] = {}
        self._active: set[tuple] = set()
        self._mro: dict[tuple[str, str], list[tuple[str, str]]] = {}
        self._parsed: dict[str, object] = {}
        self._extras: dict[tuple[str, str, str], list[tuple[str, str, str]]] | None = None
        self._subclasses: dict[tuple[str, str], list[tuple[str, str]]] | None = None
        self._flows: CallSites | None = None  # see Flows.set_flows
        self._depth = 0

    # -- tables ------------------------------------------------------------------------------
    def mro(self, key: str, cls: str) -> list[tuple[str, str]]:
        """The class and its project bases, depth first in base order, each once; a base
        outside the build is listed as ``("", dotted)``."""
        memo = (key, cls)
        found = self._mro.get(memo)
        if found is None:
            found = self._mro[memo] = []
            self._walk_bases(key, cls, found, 0)
        return found

    def _walk_bases(self, key: str, cls: str, out: list, depth: int) -> None:
        if (key, cls) in out or depth > 30:
            return
        out.append((key, cls))
        for base in self.resolver.module(key).bases.get(cls, []):
            if "(" in base or "[" in base:
                base = base.split("[", 1)[0]
                if "(" in base:
                    continue
            target = self.resolver.name_in(key, base)
            if target and target.kind == "project" and target.qualname:
                self._walk_bases(target.key, target.qualname, out, depth + 1)
            elif target and target.kind == "external" and ("", target.qualname) not in out:
                out.append(("", target.qualname))

    def is_protocol(self, key: str, cls: str) -> bool:
        """Whether the class names ``typing.Protocol`` among its own bases (PEP 544: a value
        typed by it may be of any class that has its members, which need not inherit
        them)."""
        memo = ("\7", key, cls)
        found = self._memo.get(memo)
        if found is None:
            found = False
            for base in self.resolver.module(key).bases.get(cls, ()):
                target = self.resolver.name_in(key, base.partition("[")[0])
                if target is not None and target.kind == "external" \
                        and target.qualname.rpartition(".")[2] == "Protocol":
                    found = True
            self._memo[memo] = found
        return found

    def overrides(self, key: str, cls: str, attr: str) -> list[tuple[str, str]]:
        """``[(file key, qualname)]`` of the methods ``attr`` that the documented subclasses
        of the class define themselves (class hierarchy analysis: a call on an instance of
        ``cls`` may run any of them), in a fixed order."""
        if self._subclasses is None:
            subs: dict[tuple[str, str], list[tuple[str, str]]] = {}
            for k, s in self.resolver.files.items():
                if k.startswith("test:"):  # test files are not documented
                    continue
                for d in s.definitions:
                    if d.kind == "class":
                        for base in self.mro(k, d.qualname)[1:]:
                            if base[0]:
                                subs.setdefault(base, []).append((k, d.qualname))
            self._subclasses = {c: sorted(set(v)) for c, v in subs.items()}
        found = []
        for k, c in self._subclasses.get((key, cls), ()):
            d = self._defs[k][1].get(f"{c}.{attr}")
            if d is not None and d.kind in _CALLABLE_KINDS and not d.overload:
                found.append((k, d.qualname))
        return found

    def names_of(self, key: str) -> dict[str, dict[str, list[str]]]:
        """Anchor -> ``names`` of the functions of one file that have any."""
        return {a: d.names for a, d in self._defs[key][0].items()
                if d.names and not d.names.keys() <= _NOT_NAMES}

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

    def local_names(self, key: str, anchor: str) -> dict[str, list[str]]:
        """The names of the definition ``anchor`` whose sources are known (empty for none)."""
        d = self._defs[key][0].get(anchor) if anchor else None
        return d.names if d is not None else {}

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

    # -- entry points ------------------------------------------------------------------------
    def evaluate(self, key: str, anchor: str, text: str, reads: set | None = None) -> Values:
        """What the path ``text`` may be, written in the definition ``anchor`` of file
        ``key`` ('' for module level).  ``reads`` collects ``(file key, qualname)`` of the
        project properties the path itself reads (``self.group.is_sharded.x``)."""
        steps = self._parsed.get(text)
        if steps is None:
            steps = self._parsed[text] = parse(text)
        if self._depth > _DEPTH:
            return NONE  # a chain of values this long says little, and costs the stack
        self._depth += 1
        try:
            return self._steps(key, anchor, steps, reads)
        finally:
            self._depth -= 1

    def _property(self, key: str, cls: str, attr: str) -> list[tuple[str, str]]:
        """``[(file key, qualname)]`` of the property ``attr`` of the class, if it is one."""
        for k, c in self.mro(key, cls):
            d = self._defs[k][1].get(f"{c}.{attr}") if k else None
            if d is not None:
                return [(k, d.qualname)] if d.kind == "property" else []
        return []

    # -- paths -------------------------------------------------------------------------------
    def _steps(self, key: str, anchor: str, steps: tuple, reads: set | None = None) -> Values:
        if not steps:
            return NONE
        kind, first = steps[0]
        if kind == "n":
            values = self._name(key, anchor, first)
        else:  # a literal: what its items (or the values of the mappings it unpacks) are
            held = []
            for splat, item in first:
                found = self._steps(key, anchor, item)
                held.append(union(v[2] for v in found if v[0] == "d") if splat else found)
            values = frozenset({("s", union(held)) if kind == "l" else ("d", NONE,
                                                                          union(held))})
        for kind, arg in steps[1:]:
            if not values:
                return NONE
            if kind == "a":
                if reads is not None:
                    for v in values:
                        if v[0] == "i":
                            reads.update(self._property(v[1], v[2], arg))
                if len(values) == 1:  # the common case: no union to make
                    for v in values:
                        values = self.member(v, arg)
                else:
                    values = union(self.member(v, arg) for v in ordered(values))
            elif kind == "c":
                if len(values) == 1:
                    for v in values:
                        values = one(self.call(v, key, anchor, arg))
                else:
                    values = union(self.call(v, key, anchor, arg) for v in ordered(values))
            elif len(values) == 1:
                for v in values:
                    values = one(self.item(v, arg))
            else:
                values = union(self.item(v, arg) for v in ordered(values))
        return values

    def _name(self, key: str, anchor: str, name: str) -> Values:
        d = self._defs[key][0].get(anchor) if anchor else None
        if d is not None and (name in d.names or (
                d.parent and d.kind != "class" and (name == "self" or name == "cls"))):
            memo = (key, anchor, name)  # a name of the function: its own memo
        else:
            memo = (key, "", name)  # a name of the module, the same in all its functions
            d = None
        found = self._memo.get(memo)
        if found is not None:
            return found
        if memo in self._active:
            return NONE
        self._active.add(memo)
        try:
            found = self._memo[memo] = self._name_uncached(key, d, name)
        finally:
            self._active.discard(memo)
        return found

    def _name_uncached(self, key: str, d: Definition | None, name: str) -> Values:
        if d is not None:
            sources = d.names.get(name)
            if sources and "@" in name:  # x@12: x where isinstance tests narrow it
                full = found = self._name(key, d.anchor, name.partition("@")[0])
                for source in sources[:-1]:
                    found = self._narrowed(key, d, found, source)
                return found or full  # tests no value passes: the line is for others
            if sources:
                if len(sources) == 1:
                    return one(self.source(key, d.anchor, sources[0], d.parent))
                return self.sources(key, d.anchor, sources, d.parent)
            kind = "c" if name == "cls" or d.kind == "classmethod" else "i"
            return frozenset({(kind, key, d.parent)})
        target = self.resolver.name_in(key, name)
        return self.of_target(target) if target else NONE

    def _narrowed(self, key: str, d: Definition, full: Values, source: str) -> Values:
        """What a name that may be ``full`` is where an ``isinstance`` test narrows it
        (``source``: ``:T``, it is a ``T``; ``-T``, it is not,
        :mod:`indexgen.extract.narrowing`): those of its values that are (or are not) a
        ``T`` or a subclass of one; for ``:T``, a ``T`` when none of them is one (the test
        names a subclass of its type, or its type is unknown)."""
        tested = self.annotation(key, source[1:], d.parent)
        if not tested:
            return full
        kept = frozenset(v for v in full if self._is_a(v, tested) == (source[0] == ":"))
        return kept or tested if source[0] == ":" else kept

    def _is_a(self, value: Value, tested: Values) -> bool:
        """Whether ``value`` is one of the ``tested`` values or an instance of a subclass of
        one of their classes."""
        if value in tested:
            return True
        if value[0] != "i":
            return False
        bases = self.mro(value[1], value[2])
        return any(t[0] == "i" and (t[1], t[2]) in bases for t in tested)

    def sources(self, key: str, anchor: str, sources: list[str], cls: str = "",
                held: tuple = ()) -> Values:
        """What several sources of one name give, read in ``anchor``.  What was appended to
        it (``~``: ``xs.append(v)``, or ``held``: ``(key, anchor, source)`` found in a
        subclass) counts only when the other sources leave the value a container or
        unknown: a value typed as a project class has an ``append`` of its own."""
        real = [x for x in sources if x[0] != "~" and x[0] != "<"]
        found = union(self.source(key, anchor, x, cls) for x in real)
        if len(real) == len(sources) and not held:
            return found
        if found and _hollow(found):  # *fns: Callable[...]: what the callers hand says more
            found = union([found, *(self.source(key, anchor, x, cls) for x in sources
                                    if x[0] == "<")])
        if found and not any(v[0] in _CONTAINERS for v in found):
            return found
        found = union([found, *(self.source(key, anchor, x, cls) for x in sources
                                if x[0] == "~"),
                       *(self.source(*x) for x in held)])
        if found:
            return found
        # nothing the function itself says: what its callers hand it (a parameter)
        return union(self.source(key, anchor, x, cls) for x in sources if x[0] == "<")

    def source(self, key: str, anchor: str, source: str, cls: str = "") -> Values:
        """What one source (``:annotation``, ``=path``, ``@``) gives, read in ``anchor``."""
        if source[0] == ":":
            return self.annotation(key, source[1:], cls)
        if source[0] == "%":  # a module imported by name (importlib.import_module("x"))
            target = self.resolver.absolute(source[1:])
            return self.of_target(target) if target else frozenset({("x", source[1:])})
        if source[0] == "<":  # a parameter: what the callers hand it
            return self._flow(key, anchor, source[1:])
        if source[0] == "λ":  # a function nested in this one: a closure
            d = self._defs[key][0].get(anchor)
            return frozenset({("n", key, d.qualname, source[1:])}) if d else NONE
        if source[0] == "~":  # what was appended to it: a container of those
            return self.evaluate(key, anchor, source[1:])
        if source[0] == "@":  # the first parameter of a method: the instance (or the class)
            d = self._defs[key][0].get(anchor)
            if d is None or not d.parent:
                return NONE
            return frozenset({("c" if d.kind == "classmethod" else "i", key, d.parent)})
        return self.evaluate(key, anchor, source[1:])

    def of_target(self, target: Target) -> Values:
        """The value a resolved name stands for."""
        if target.kind == "builtin":
            return frozenset({("b", target.qualname)})
        if target.kind == "external":
            return frozenset({("x", target.qualname)})
        if not target.qualname:
            return frozenset({("m", target.key)})
        by_name = self._defs[target.key][1]
        d = by_name.get(target.qualname)
        if d is not None:
            return frozenset({("c" if d.kind == "class" else "f", target.key, target.qualname)})
        attr = self.resolver.module(target.key).attrs.get(target.qualname)
        if attr is not None and attr.source:
            memo = (target.key, "", "\0" + attr.name)
            if memo in self._active:
                return NONE
            self._active.add(memo)
            try:
                return self.source(target.key, "", attr.source)
            finally:
                self._active.discard(memo)
        return NONE

    # -- steps ---------------------------------------------------------------------------
    def member(self, value: Value, attr: str) -> Values:
        """``value.attr``."""
        kind = value[0]
        if kind == "i" and attr == "__class__":  # self.__class__(...): the class
            return frozenset({("c", value[1], value[2])})
        if kind == "i" or kind == "c":
            return self._class_member(value[1], value[2], attr, kind == "i")
        if kind == "m":
            target = self.resolver.name_in(value[1], attr) if self.resolver.files[
                value[1]].module else None
            found = self.resolver.absolute(
                f"{self.resolver.files[value[1]].module}.{attr}") if target is None else target
            return self.of_target(found) if found else NONE
        return container_member(value, attr)

    def _class_member(self, key: str, cls: str, attr: str, instance: bool) -> Values:
        memo = ("\1", key, cls, attr, instance)
        found = self._memo.get(memo)
        if found is None:
            if memo in self._active:
                return NONE  # self.x = self.x.next(): what else it is decides
            self._active.add(memo)
            try:
                found = self._class_member_uncached(key, cls, attr, instance)
            finally:
                self._active.discard(memo)
            self._memo[memo] = found
        return found

    def _class_member_uncached(self, key: str, cls: str, attr: str, instance: bool) -> Values:
        outside = ""
        delegate = None
        held: list[tuple[str, str, str, str]] = []  # appended to in a subclass: see sources
        for k, c in self.mro(key, cls):
            if not k:  # a base outside the build: the attribute may be its
                outside = outside or c
                continue
            by_name = self._defs[k][1]
            if instance and delegate is None and f"{c}.__getattr__" in by_name:
                delegate = (k, by_name[f"{c}.__getattr__"])
            d = by_name.get(f"{c}.{attr}")
            if d is not None:
                if d.kind == "class":
                    return frozenset({("c", k, d.qualname)})
                if d.kind == "property":
                    if not instance or not d.returns:
                        return NONE
                    return self.annotation(k, d.returns, c)
                if instance and self.is_protocol(key, cls) and self.is_protocol(k, c):
                    return NONE  # a structural type: its methods are stubs, never run
                return frozenset({("f", k, d.qualname)})
            owner = by_name.get(c)
            sources = owner.members.get(attr) if owner is not None else None
            extras = self.extras().get((k, c, attr))
            if sources and not extras and all(x[1][0] == "~" for x in sources):
                held += [(k, anchor, x, c) for anchor, x in sources]
                continue  # only appended to here: what a base says it is comes first
            if sources or extras:
                found = union([*(self.source(k, anchor, x, c) for anchor, x in sources or ()
                                 if x[0] != "~"),
                               *(self.source(*extra) for extra in extras or ())])
                if not found and self._flows is not None:
                    found = self._field_flow(k, c, attr)
                held += [(k, anchor, x, c) for anchor, x in sources or () if x[0] == "~"]
                if held and (not found or any(v[0] in _CONTAINERS for v in found)):
                    found = union([found, *(self.source(*x) for x in held)])
                return found
        if held:
            return union(self.source(*x) for x in held)
        if delegate is not None and not outside:
            return self._delegated(*delegate, attr)
        return frozenset({("x", f"{outside}.{attr}")}) if outside else NONE

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

    def extras(self) -> dict[tuple[str, str, str], list[tuple[str, str, str]]]:
        """``(file key, class, attribute) -> [(file key, anchor, source)]``: what functions
        elsewhere put into an attribute of another object (``ctx.order.append(self)``
        gives the ``order`` of the class of ``ctx`` the source ``=[self]``), found once."""
        if self._extras is None:
            self._extras = {}
            for key, s in self.resolver.files.items():
                for d in s.definitions:
                    for name, sources in d.names.items() if d.names else ():
                        if name[0] != "+":
                            continue
                        base, _, attr = name[1:].rpartition(".")
                        for v in ordered(self.evaluate(key, d.anchor, base)):
                            if v[0] == "i":
                                self._extras.setdefault((v[1], v[2], attr), []).extend(
                                    (key, d.anchor, s) for s in sources)
            self._memo.clear()  # what was evaluated to find them may hold more now
        return self._extras

    def call(self, value: Value, key: str, anchor: str, args: tuple) -> Values:
        """What calling ``value`` gives; ``args``: the kept arguments of a builtin."""
        kind = value[0]
        if kind == "c":
            return frozenset({("i", value[1], value[2])})
        if kind == "f":
            d = self._defs[value[1]][1].get(value[2])
            if d is None:
                return NONE
            if d.returns:
                found = self.annotation(value[1], d.returns, d.parent)
                if found and not _hollow(found) or "return" not in d.names:
                    return found
            if "return" in d.names:  # no annotation, or a vague one: what it returns
                return self._returned(value[1], d)
            return NONE
        if kind == "r":
            return value[1]
        if kind == "b" and args is not None:
            return self._builtin(value[1], key, anchor, args)
        return NONE

    def _returned(self, key: str, d: Definition) -> Values:
        """What a function without a return annotation returns: what its ``return``
        statements return (a recursive call adds nothing)."""
        memo = ("\2", key, d.anchor)
        found = self._memo.get(memo)
        if found is None:
            if memo in self._active:
                return NONE
            self._active.add(memo)
            try:
                found = union(self.source(key, d.anchor, s, d.parent)
                               for s in d.names["return"])
            finally:
                self._active.discard(memo)
            self._memo[memo] = found
        return found

    def _builtin(self, name: str, key: str, anchor: str, args: tuple) -> Values:
        given = [self._steps(key, anchor, a) if a else NONE for a in args]
        if name == "cast" and args and args[0]:
            text = ".".join(arg for _, arg in args[0])
            return self.annotation(key, text)
        if not given:
            return NONE
        if name == "type":  # type(self)(...): the class of the instance
            return frozenset({("c", v[1], v[2]) for v in given[0] if v[0] == "i"})
        if name == "next":
            return union(self.element(v) for v in ordered(given[0]))
        if name == "enumerate":
            elements = union(self.element(v) for v in ordered(given[0]))
            return frozenset({("s", frozenset({("t", (frozenset({("b", "int")}), elements))}))})
        if name == "zip":
            elements = tuple(union(self.element(v) for v in ordered(g)) for g in given)
            return frozenset({("s", frozenset({("t", elements)}))})
        if name in ("iter", "list", "sorted", "reversed", "tuple", "set", "frozenset"):
            return frozenset({("s", union(self.element(v) for v in ordered(given[0])))})
        return NONE

    def element(self, value: Value) -> Values:
        """What iterating over ``value`` gives (an instance: what its ``__iter__`` gives)."""
        if value[0] != "i":
            return element_of(value)
        memo = ("\3", value)
        found = self._memo.get(memo)
        if found is None:
            if memo in self._active:
                return NONE  # an __iter__ that returns self: its elements are the others
            self._active.add(memo)
            try:
                given = self._class_member(value[1], value[2], "__iter__", True)
                found = union(self.element(r) for f in ordered(given)
                              for r in ordered(self.call(f, "", "", None)) if r != value)
                if not given:  # class Chain(list[Step]): iterating gives Steps
                    found = union(element_of(v) for v in ordered(self._container_base(value)))
            finally:
                self._active.discard(memo)
            self._memo[memo] = found
        return found

    def _container_base(self, value: Value) -> Values:
        """The builtin container or ``Iterable[T]`` an instance's class subclasses, as a
        container value (``class Chain(list[Step])``: a list of Steps), or none."""
        found = []
        for k, c in self.mro(value[1], value[2]):
            if not k:
                continue
            for base in self.resolver.module(k).bases.get(c, ()):
                if "[" in base:
                    found.append(v for v in self.annotation(k, base, c) if v[0] in "sdt")
        return union(found)

    def item(self, value: Value, index: int | None) -> Values:
        """``value[index]`` (None: an index that is not an integer literal; an instance:
        what its ``__getitem__`` gives)."""
        kind = value[0]
        if kind == "c":  # Chain[Step]: the generic class itself
            return frozenset({value})
        if kind != "i":
            return item_of(value, index)
        found = self._class_member(value[1], value[2], "__getitem__", True)
        if found:
            return union(self.call(f, "", "", None) for f in ordered(found))
        return union(item_of(v, index) for v in ordered(self._container_base(value)))
