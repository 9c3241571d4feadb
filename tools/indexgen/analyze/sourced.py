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
from indexgen.analyze.results import hollow
from indexgen.analyze.values import CONTAINERS, NONE, Value, Values, union
from indexgen.extract.instance_tests import SELF_FIRST
from indexgen.extract.model import Definition

_TYPE = ("b", "type")  # what isinstance(x, type) says x may be: some class
#: The kinds of values that are a class or a function (of the build, outside it, builtin).
_CALLABLES = frozenset({"c", "f", "n", "x", "b"})


class Sourced:
    """The union of a name's sources; mixed into :class:`~indexgen.analyze.types.Types`,
    whose ``source`` reads one."""

    def sources(self, key: str, anchor: str, sources: list[str], cls: str = "",
                held: tuple = ()) -> Values:
        """What several sources of one name give, read in ``anchor``.  What was appended to
        it (``~``: ``xs.append(v)``, or ``held``: ``(key, anchor, source)`` found in a
        subclass) counts only when the other sources leave the value a container or
        unknown: a value typed as a project class has an ``append`` of its own.  What the
        callers hand (``<``) counts where the rest leaves the value unknown or hollow
        (``*fns: Callable[...]``), and where ``isinstance`` tests (``+:T``) say only that it
        is some class or function (:meth:`_open_test`)."""
        real = [x for x in sources if x[0] != "~" and x[0] != "<" and x[0] != "+"]
        found = union(self.source(key, anchor, x, cls) for x in real)
        if len(real) == len(sources) and not held:
            return found
        tested = [x for x in sources if x[0] == "+"]
        if tested:
            may = union(self.source(key, anchor, x, cls) for x in tested)
            if (not found or hollow(found)) and self._open_test(may):
                handed = union(self.source(key, anchor, x, cls) for x in sources
                               if x[0] == "<")  # the classes and functions of those
                may = union([may, frozenset(v for v in handed if v[0] in _CALLABLES)])
            found = union([found, may])
            if len(real) + len(tested) == len(sources) and not held:
                return found
        if found and hollow(found):  # *fns: Callable[...]: what the callers hand says more
            found = union([found, *(self.source(key, anchor, x, cls) for x in sources
                                    if x[0] == "<")])
        if found and not any(v[0] in CONTAINERS for v in found):
            return found
        found = union([found, *(self.source(key, anchor, x, cls) for x in sources
                                if x[0] == "~"),
                       *(self.source(*x) for x in held)])
        if found:
            return found
        # nothing the function itself says: what its callers hand it (a parameter)
        return union(self.source(key, anchor, x, cls) for x in sources if x[0] == "<")

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
        tell; an ``isinstance`` test, what
        :meth:`~indexgen.analyze.hierarchy.Hierarchy._narrowed` keeps."""
        if SELF_FIRST not in source:
            return self._narrowed(key, d, full, source)
        if source[1:] != SELF_FIRST:  # an or of it and an isinstance test: all may pass
            return full
        want = source[0] == ":"
        return frozenset(v for v in full if self._self_first(v) in (want, None))

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
