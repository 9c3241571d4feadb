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
  :meth:`~indexgen.analyze.members.Members.extras`), looked up in the class and then its project bases; an attribute a
  project class does not define is its outside base's (``self.register_forward_hook`` of an
  ``nn.Module``), or what its ``__getattr__`` hands on (``getattr(self.module, name)``);
- a call: a class gives an instance, a function its return annotation (with none, or
  ``Any``, what its ``return`` and ``yield`` statements give); ``iter``, ``next``,
  ``enumerate``, ``zip``, ``list``, ``sorted``... follow their arguments;
- a subscript or an iteration: the element type of ``list[X]``, ``dict[K, V]``,
  ``tuple[A, B]``, ``Iterator[X]`` and the like; ``X | None`` and ``Optional[X]`` are ``X``.

Nothing is guessed: a value nothing types stays unknown, and the call on it unresolved.

Names, members, calls and items are evaluated by one recursion (a member's source is a path
whose steps are members and calls, whose results are annotations or paths again), with one
memo and one guard against cycles; its parts are mixed into :class:`Types`: the value
tuples, the path parser and the reading of annotations are in
:mod:`indexgen.analyze.values`, what call sites hand parameters in
:mod:`indexgen.analyze.flows`, the class hierarchy (bases, overrides, protocols,
``isinstance`` narrowing) in :mod:`indexgen.analyze.hierarchy`, what calls, iterations and
subscripts give in :mod:`indexgen.analyze.results`, attributes in
:mod:`indexgen.analyze.members`, what a name's sources give together in
:mod:`indexgen.analyze.sourced`; names, their sources and paths are here.
"""

from __future__ import annotations

from functools import partial

from indexgen.analyze.arity import Arity
from indexgen.analyze.flows import CallSites, Flows
from indexgen.analyze.hierarchy import Hierarchy
from indexgen.analyze.lambdas import PREFIX, lambda_value
from indexgen.analyze.local_imports import NO_IMPORTS, local_targets, tables
from indexgen.analyze.members import Members
from indexgen.analyze.memo import GuardedMemo
from indexgen.analyze.overloads import Overloads, stub_table
from indexgen.analyze.paths import parse
from indexgen.analyze.puts import ModulePuts
from indexgen.analyze.resolve import PerFile, Resolver, Target
from indexgen.analyze.results import Results, hollow
from indexgen.analyze.sourced import Sourced
from indexgen.analyze.values import CONTAINERS, NONE, Annotations, Values, one, ordered, union
from indexgen.extract.model import Definition, FileSummary

_DEPTH = 25  # paths evaluated inside one another
#: Keys of a definition's ``names`` that are no names: what a plain function accepts
#: (``(``), the condition that picks a definition (``?``), the parameters of an overloaded
#: function (``/``: :mod:`indexgen.extract.stubs`).
_NOT_NAMES = frozenset({"(", ")", "?", "/"})


def _definitions(files: dict[str, FileSummary], key: str
                 ) -> tuple[dict[str, Definition], dict[str, Definition]]:
    """(by anchor, by qualname: the first that is not an overload stub) of one file."""
    by_anchor, by_name = {}, {}
    for d in files[key].definitions:
        by_anchor[d.anchor] = d
        if d.qualname not in by_name or (by_name[d.qualname].overload and not d.overload):
            by_name[d.qualname] = d
    return by_anchor, by_name


class Types(Annotations, Arity, Flows, Hierarchy, Members, Overloads, Results, Sourced):
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
        self._memo: dict[tuple, object] = {}  # tables that no evaluation changes
        self._guard = GuardedMemo(_DEPTH, NONE)  # what names, calls... are: memo, cycle guard
        self._mro: dict[tuple[str, str], list[tuple[str, str]]] = {}
        self._parsed: dict[str, object] = {}
        self._extras: dict[tuple[str, str, str], list[tuple[str, str, str]]] | None = None
        self._subclasses: dict[tuple[str, str], list[tuple[str, str]]] | None = None
        self._flows: CallSites | None = None  # see Flows.set_flows
        self._flows_open = True  # see Flows.expect_flows
        self._records: dict[str, dict] = {}  # see Flows.flow_records
        self._own_imports = tables(resolver)  # a function's own imports (local_imports)
        # File key -> what its functions put into its module attributes (puts), on first use
        self._puts = PerFile(ModulePuts(resolver))
        self._stubs = PerFile(partial(stub_table, resolver.files))  # typing.overload stubs

    # -- tables ------------------------------------------------------------------------------

    def names_of(self, key: str) -> dict[str, dict[str, list[str]]]:
        """Anchor -> ``names`` of the functions of one file that have any."""
        return {a: d.names for a, d in self._defs[key][0].items()
                if d.names and not d.names.keys() <= _NOT_NAMES}

    def local_names(self, key: str, anchor: str) -> dict[str, list[str]]:
        """The names of the definition ``anchor`` whose sources are known (empty for none)."""
        d = self._defs[key][0].get(anchor) if anchor else None
        return d.names if d is not None else {}

    def definition(self, key: str, anchor: str = "", qualname: str = "") -> Definition | None:
        """The definition of file ``key`` with the anchor ``anchor`` (or, without one, the
        qualname ``qualname``), or None."""
        defs = self._defs[key]
        return defs[0].get(anchor) if anchor else defs[1].get(qualname)

    # -- entry points ------------------------------------------------------------------------
    def begin_file(self) -> None:
        """Start resolving the calls of another file: the values a cut shaped are
        forgotten, so that each file's are found from that file's queries alone
        (:mod:`indexgen.analyze.memo`)."""
        self._guard.begin()

    def watch(self) -> None:
        """Start resolving one call: :meth:`settled` then says whether a later round would
        resolve it the same (:meth:`indexgen.analyze.memo.GuardedMemo.settled`)."""
        self._guard.watch()

    def settled(self) -> bool:
        """Whether what was evaluated since :meth:`watch` met no cut and read nothing that
        :meth:`set_flows` may change: asked again in the next round, the same."""
        return self._guard.settled()

    def evaluate(self, key: str, anchor: str, text: str, reads: set | None = None) -> Values:
        """What the path ``text`` may be, written in the definition ``anchor`` of file
        ``key`` ('' for module level).  ``reads`` collects ``(file key, qualname)`` of the
        project properties the path itself reads (``self.group.is_sharded.x``)."""
        steps = self._parsed.get(text)
        if steps is None:
            steps = self._parsed[text] = parse(text)
        if not self._guard.enter():
            return NONE  # a chain of values this long says little, and costs the stack
        try:
            return self._steps(key, anchor, steps, reads)
        finally:
            self._guard.leave()

    # -- paths -------------------------------------------------------------------------------
    def _steps(self, key: str, anchor: str, steps: tuple, reads: set | None = None) -> Values:
        if not steps:
            return NONE
        kind, first = steps[0]
        if kind == "n":
            values = self._name(key, anchor, first)
        elif kind == "q":  # a string: getattr reads it (Results._getattr), nothing else
            return NONE
        elif kind == "u":  # a tuple literal: what each place holds
            values = frozenset({("t", tuple(self._steps(key, anchor, item) if item else NONE
                                            for item in first))})
        else:  # a literal: what its items (or the values of the mappings it unpacks) are
            held = []
            keyed = []
            for splat, item, *named in first:
                found = self._steps(key, anchor, item) if item else NONE
                held.append(union(v[2] for v in found if v[0] == "d") if splat else found)
                if named:
                    keyed.append((named[0], found))
            if kind == "m" and keyed and len(keyed) == len(first):  # every key stated
                values = frozenset({("d", NONE, union(held), tuple(sorted(keyed)))})
            else:
                values = frozenset({("s", union(held)) if kind == "l" else ("d", NONE,
                                                                              union(held))})
        before = prior = None  # the values a step was taken on, and its kind
        for kind, arg in steps[1:]:
            if not values:
                return NONE
            on, before, prior = before if prior == "a" else NONE, values, kind  # x.f(): x
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
                        values = one(self.call(v, key, anchor, arg, on))
                else:
                    values = union(self.call(v, key, anchor, arg, on) for v in ordered(values))
            elif len(values) == 1:
                for v in values:
                    values = one(self.item(v, arg))
            else:
                values = union(self.item(v, arg) for v in ordered(values))
        return values

    def _name(self, key: str, anchor: str, name: str) -> Values:
        if name[:2] == PREFIX:  # a lambda: a closure of the definition around it
            return self._guard.get(("\21", key, name), lambda_value, self._defs[key][1], key, name)
        d = self._defs[key][0].get(anchor) if anchor else None
        if d is not None and (name in d.names or (
                d.parent and d.kind != "class" and (name == "self" or name == "cls"))):
            memo = (key, anchor, name)  # a name of the function: its own memo
        elif d is not None and d.kind == "class" and (
                f"{d.qualname}.{name}" in self._defs[key][1]
                or any(not a for a, _x in d.members.get(name, ()))):
            # a class body reads the names it binds itself (handed on in it: p =
            # replaced_by_pep8("p", parse)) as the class's own: a method is its function
            return self._class_member(key, d.qualname, name, False)
        else:
            own = self._own_imports[key].get(anchor, NO_IMPORTS).get(name)
            if own:  # a name the function imports itself: not what the module binds
                return union(self.of_target(t) for t in local_targets(self.resolver, own, []))
            memo = (key, "", name)  # a name of the module, the same in all its functions
            d = None
        return self._guard.get(memo, self._name_uncached, key, d, name)

    def _name_uncached(self, key: str, d: Definition | None, name: str) -> Values:
        if d is not None:
            sources = d.names.get(name)
            if sources and "@" in name:  # x@12: x where isinstance tests narrow it
                # a loop's own element; a nested function's own parameter (^:T, ^<λf|0:x)
                own = [x[x[0] == "^":] for x in sources[:-1] if x[0] == "=" or x[0] == "^"]
                base = name.partition("@")[0]  # self.data@12: an attribute path's value
                found = self.sources(key, d.anchor, own, d.parent) if own else NONE
                if not own or "." in base and (hollow(found) or any(  # self.x = []: as
                        v[0] in CONTAINERS for v in found)):  # unnarrowed, what it holds
                    found = self.evaluate(key, d.anchor, base) if "." in base else \
                        self._name(key, d.anchor, base)
                given = []  # +path: what a branch that tested the name bound it to
                for source in sources[:-1]:
                    if source[0] == "+":  # +:T, a T (a test's); +path, that path's value
                        given.append(self.source(key, d.anchor, source, d.parent))
                    elif source[0] != "=" and source[0] != "^":
                        found = self.tested(key, d, found, source)
                if given:
                    return union([found, *given])
                # a value no test lets pass: "is not a T" of a name known only as a T is
                # something the build does not know (the else of isinstance(x, T))
                return found
            if sources and (name == "self" or name == "cls") and d.parent and all(
                    x[0] == "~" for x in sources):
                # self.append(k, v), self.add(x): the instance's own method, which the
                # extraction reads as a container's; the instance is what it says
                return self.sources(key, d.anchor, ["@", *sources], d.parent)
            if sources and all(x[0] == "~" for x in sources) and name.isidentifier():
                # only written into here (xs.append(v), table[k] = v, and torch.add(a, b)
                # read so): a name the module binds, which it puts things in, no local
                target = self.resolver.name_in(key, name)
                if target is not None:
                    return union([self.sources(key, d.anchor, sources, d.parent),
                                  self.of_target(target)])
            if sources:
                if len(sources) == 1:
                    return one(self.source(key, d.anchor, sources[0], d.parent))
                return self.sources(key, d.anchor, sources, d.parent)
            kind = "c" if d.kind == "classmethod" or name == "cls" and not self.is_metaclass(
                key, d.parent) else "i"  # a metaclass's method: an instance (a class) of it
            return frozenset({(kind, key, d.parent)})
        target = self.resolver.name_in(key, name)
        return self.of_target(target) if target else NONE

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
        if source[0] == "+" and source[1] == ":":  # a test's: it may be a T
            return self.annotation(key, source[2:], cls)
        return self.evaluate(key, anchor, source[1:])  # =path; +path: what a branch bound

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
        if attr is not None and (attr.source or attr.name in self._puts[target.key]):
            return self._guard.get((target.key, "", "\0" + attr.name), self._attribute,
                                   target.key, attr.name, attr.source)
        return NONE

    def _attribute(self, key: str, name: str, source: str) -> Values:
        """A module attribute: what its source says, and when that leaves it a container
        (or unknown), what the module's functions put into it (:mod:`indexgen.analyze.puts`:
        ``_REGISTRY[f.__name__] = f``), each read in its writer."""
        found = self.source(key, "", source) if source else NONE
        puts = self._puts[key].get(name)
        if not puts or found and not any(v[0] in CONTAINERS for v in found):
            return found
        return union([found, *(self.sources(writer, anchor, sources, cls)
                               for writer, anchor, cls, sources in puts)])
