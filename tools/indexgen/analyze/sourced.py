"""What several sources of one name give together (:meth:`Sourced.sources`), and what a
test that narrows it keeps (:meth:`Sourced.tested`).

A name of a function may have many sources (:mod:`indexgen.extract.bindings`): its
annotation (``:T``), what it is bound to (``=path``), what is appended to it (``~``),
what its callers hand it (``<``, a parameter: :mod:`indexgen.analyze.flows`) and what an
``isinstance`` test of it says it may be (``+:T``: :data:`indexgen.extract.sources.TESTED`).
What the function says of the name comes first; what was appended to it counts only where
that leaves it a container or unknown, what the callers hand only where it says nothing, or
only that the name is some callable or container.  A test says what the name may be,
which adds to the rest, as an annotation would; but a test that says only that it is some
class or some function (``isinstance(fn, type)``) leaves open which: the classes and
functions the callers hand say it (pyparsing's ``replaced_by_pep8(compat_name, fn)`` wraps
``fn`` and only then tests ``isinstance(fn, type)``).  Where a test of ``fn``'s first
parameter picks a branch (``["self"] == list(inspect.signature(fn).parameters)[:1]``:
:func:`~indexgen.extract.instance_tests.self_first`), the branch keeps the functions it
fits.
"""

from __future__ import annotations

from indexgen.analyze.members import BOUND
from indexgen.analyze.outside_tests import outside_bases, passes, tested_outside
from indexgen.analyze.results import hollow
from indexgen.analyze.values import CONTAINERS, NONE, Value, Values, union
from indexgen.extract.instance_tests import SELF_FIRST
from indexgen.extract.model import Definition

_TYPE = ("b", "type")  # what isinstance(x, type) says x may be: some class
#: The kinds of values that are a class or a function (of the build, outside it, builtin).
_CALLABLES = frozenset({"c", "f", "n", "x", "b"})
#: The kinds of values whose calls reach builtins alone (a container, a ``str``).
_BUILTINS = CONTAINERS | {"b"}


class Sourced:
    """The union of a name's sources; mixed into :class:`~indexgen.analyze.types.Types`,
    whose ``source`` reads one."""

    def sources(self, key: str, anchor: str, sources: list[str], cls: str = "",
                held: tuple = ()) -> Values:
        """What several sources of one name give, read in ``anchor``.  What the function
        states (an annotation, an assignment) comes first; what the callers hand (``<``)
        counts where that leaves the value unknown or hollow (``*fns: Callable[...]``),
        together with what ``isinstance`` tests (``+:T``) say it may be, as far as
        :meth:`_handed_tested` keeps it.  What was appended to it (``~``:
        ``xs.append(v)``, or ``held``: ``(key, anchor, source)`` found in a subclass)
        counts where the rest leaves the value a container or unknown, and the callers
        hand it no instance of a project class (lark's ``complete(to_scan)``, handed an
        ``OrderedSet``, whose ``add`` is its own); where the function states nothing of
        it, what was appended is taken instead of the builtins and unknowns handed (a
        ``dict`` handed: what it stores in it says more).  Until the
        callers are known (the call graph's first round), a value they may still make a
        project class's is not given as one the rest makes a builtin's
        (:meth:`_first_round`)."""
        real = [x for x in sources if x[0] != "~" and x[0] != "<" and x[0] != "+"]
        found = union(self.source(key, anchor, x, cls) for x in real)
        if len(real) == len(sources) and not held:
            return found
        tested = [x for x in sources if x[0] == "+"]
        may = union(self.source(key, anchor, x, cls) for x in tested) if tested else NONE
        given = self._handed_tested(key, anchor, sources, cls, tested, may) if (
            not found or hollow(found)) else NONE  # what the callers hand, with the tests
        found = union([found, may])
        if not found or any(v[0] in CONTAINERS for v in found):
            if not any(v[0] == "i" and v[1] for v in given):  # a project instance's own
                appended = union([*(self.source(key, anchor, x, cls) for x in sources
                                    if x[0] == "~"), *(self.source(*x) for x in held)])
                if appended and not found:  # what is appended says more than builtins
                    given = NONE
                found = union([found, appended])
        found = union([found, given])
        if not real and self._first_round(found) and any(x[0] == "<" for x in sources):
            return NONE
        return found

    def _handed_tested(self, key: str, anchor: str, sources: list[str], cls: str,
                       tested: list[str], may: Values) -> Values:
        """What the callers hand (``<`` sources) a name that the function leaves unknown
        or hollow, and whose ``isinstance`` tests (``tested``, ``+:T`` sources) say it may
        be ``may``: with no test, all of it; where the tests say only that it is some class
        or function (:meth:`_open_test`), the classes and functions handed; where they name
        builtins alone, what :meth:`_tested_builtins` keeps.  A test naming a project
        class (or an outside one) names what calls on the name reach, as an annotation
        would: none of what is handed is read (nor asked for: reading what torch's callers
        hand each such parameter cost the pass 2.8% more calls)."""
        open_test = bool(tested) and self._open_test(may)
        if tested and not open_test and not all(v[0] in _BUILTINS for v in may):
            return NONE
        given = union(self.source(key, anchor, x, cls) for x in sources if x[0] == "<")
        if not tested:
            return given
        if open_test:  # the classes and functions of those
            return frozenset(v for v in given if v[0] in _CALLABLES)
        return self._tested_builtins(key, tested, given)  # their project subclasses

    def _tested_builtins(self, key: str, tested: list[str], given: Values) -> Values:
        """Of the values ``given`` a parameter, those that pass its ``isinstance`` tests
        (``tested``: ``+:T`` sources) that name builtins alone (``isinstance(out, tuple)``,
        ``dict``, ``Mapping``): the instances of project classes that subclass one of
        them (boltons' ``OrderedMultiDict(dict)``) and the builtins' values.  Callers hand
        such a parameter builtins as a rule; another project instance found handed is more
        often a caller's value read too widely (torch's ``return_and_correct_aliasing``,
        ``type(out)(...)`` with ``out`` what an operator returns) than one it gets."""
        names = [n for x in tested for n in tested_outside(self, key, x[2:])]
        return frozenset(v for v in given if v[0] != "i" or not v[1] or passes(
            outside_bases(self, v[1], v[2]), names))

    def _first_round(self, found: Values) -> bool:
        """Whether ``found``, what a parameter is before its callers are known (the call
        graph's first round: ``_flows`` not set), is all builtins' (a container, a ``dict``
        a test names), which what they hand may yet make a project class's: the first
        round would resolve a call on it to a builtin's method, and ask no later round
        again (:func:`indexgen.analyze.callgraph.edges` widens only the calls that reach a
        project callee); of a value it does not know, it asks again."""
        return self._flows is None and bool(found) and all(v[0] in _BUILTINS for v in found)

    @staticmethod
    def _open_test(may: Values) -> bool:
        """Whether what ``isinstance`` tests of a name say it may be is only that it is
        some class or some function (``type``, ``types.FunctionType``): which one, the
        classes and functions the callers hand it say (pyparsing's
        ``replaced_by_pep8(name, fn)``, testing ``isinstance(fn, type)``, is handed the
        functions it wraps; an instance handed is none of those the test expects).  A test
        for a class (``isinstance(x, Node)``, a ``str``) names what calls on ``x`` reach,
        as an annotation would."""
        return all(v[0] == "k" or v == _TYPE for v in may)

    def tested(self, key: str, d: Definition, full: Values, source: str) -> Values:
        """What a name that may be ``full`` is where a test narrows it (``source``: ``:T``
        or ``-T``): a test that its first parameter is ``self``
        (:data:`~indexgen.extract.instance_tests.SELF_FIRST`) keeps the functions that
        have such a parameter first (or, ``-``, those that do not) and what it cannot
        tell; an ``isinstance`` test, what :meth:`_narrowed` keeps."""
        if SELF_FIRST not in source:
            return self._narrowed(key, d, full, source)
        if source[1:] != SELF_FIRST:  # an or of it and an isinstance test: all may pass
            return full
        want = source[0] == ":"
        return frozenset(v for v in full if self._self_first(v) in (want, None))

    def _narrowed(self, key: str, d: Definition, full: Values, source: str) -> Values:
        """What a name that may be ``full`` is where an ``isinstance`` test narrows it
        (``source``: ``:T``, it is a ``T``; ``-T``, it is not,
        :mod:`indexgen.extract.narrowing`): those of its values that are (or are not) a
        ``T`` or a subclass of one (of a ``T`` outside the build, ``dict``, ``Mapping``: a
        project class that subclasses it, :mod:`~indexgen.analyze.outside_tests`); for
        ``:T``, also each ``T`` that is a subclass of one of them (an ``IRNode`` tested for
        ``(Pointwise, InputBuffer)``: either), and a ``T`` when that leaves none (its type
        is unknown; in the call graph's first round, nothing where the ``T`` are builtins,
        which the callers may yet make a project subclass of: :meth:`_first_round`)."""
        tested = self.annotation(key, source[1:], d.parent)
        if not tested:
            return full
        out = tested_outside(self, key, source[1:]) if any(t[0] != "i" for t in tested) else ()
        want = source[0] == ":"
        kept = frozenset(v for v in full if (self._is_a(v, tested) or v[0] == "i" and bool(
            out) and passes(outside_bases(self, v[1], v[2]), out)) == want)
        if not want:
            return kept
        return kept | {t for t in tested if any(self._is_a(t, frozenset((v,))) for v in full)
                       } or (NONE if self._first_round(tested) else tested)

    def not_instances(self, key: str, anchor: str, name: str) -> Values:
        """The classes that a test of the narrowed name ``name`` (``x@12``,
        ``self.data@12``, read in ``anchor``) says it is not: its ``-T`` sources (the
        ``else`` of ``isinstance(x, A)``, what follows ``if isinstance(x, A): return``);
        nothing where no test says so.  A call on it runs no override of an ``A`` nor of a
        subclass of one (:func:`~indexgen.analyze.virtual.overrides`, with
        :meth:`is_ruled_out`)."""
        if "@" not in name:
            return NONE
        found = [x for x in self.local_names(key, anchor).get(name, ()) if x[0] == "-"
                 and SELF_FIRST not in x]
        if not found:
            return NONE
        d = self._defs[key][0].get(anchor)
        return union(self.annotation(key, x[1:], d.parent if d is not None else "")
                     for x in found)

    def is_ruled_out(self, not_a: Values, key: str, cls: str) -> bool:
        """Whether an instance of class ``cls`` of file ``key`` is one of the classes
        ``not_a`` (:meth:`not_instances`) or of a subclass of one."""
        return bool(not_a) and self._is_a(("i", key, cls), not_a)

    def _self_first(self, value: Value) -> bool | None:
        """Whether the signature of a function value starts with a parameter ``self`` (a
        method read on its class; a bound one or a class drops it), None where the build
        cannot tell (a closure, a property, an outside callable)."""
        if value[0] == "c":
            return False
        if value[0] != "f":
            return None
        if value[-1] == BOUND:
            return False
        d = self._defs[value[1]][1].get(value[2])
        if d is None or d.kind == "property":
            return None
        if d.kind != "function" and d.kind != "staticmethod":  # its signature drops it
            return d.kind == "method"  # self (as a rule), not a classmethod's cls
        head = d.signature.partition("(")[2]
        for stop in ",:=)":
            head = head.partition(stop)[0]
        return head.strip() == "self"
