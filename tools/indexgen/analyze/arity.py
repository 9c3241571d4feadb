"""Which of the functions a call's callee may be can take what the call hands.

A rule chain (``for rule in self.rules: rule(state)``), a table of handlers
(``handlers[kind](node)``) or a name looked up by a computed name (``getattr(self, "parse_"
+ kind)()``) may hold functions of different shapes; a call reaches only those that take
as many arguments by position as it hands (and whose first parameter's annotation admits
what it hands there): :meth:`Arity.fitting`, read by the dispatch where a call's callee
holds several functions.  How many a call hands is its flow record's ``#``
(:func:`indexgen.extract.handing.handed`, :func:`~indexgen.extract.handing.counted`).
"""

from __future__ import annotations

from indexgen.analyze.appliers import partial_arguments
from indexgen.analyze.flows import BOUND_KINDS, slots
from indexgen.analyze.members import BOUND
from indexgen.analyze.values import NONE, Values, closure_qualname


class Arity:
    """:meth:`fitting`; mixed into :class:`~indexgen.analyze.types.Types`, whose
    ``flow_records``, ``evaluate``, ``local_names``, ``annotation``, ``_is_a`` and tables it
    uses."""

    _defs: dict
    resolver: object
    _partial_callers: dict  # file key -> partial_callers(key)

    def fitting(self, key: str, call, values: Values) -> Values:
        """Of the plain functions and closures ``values`` holds, those a call that hands
        ``n`` arguments by position can call (:func:`indexgen.extract.calls.accepts`:
        between their least and most), whose first parameter's annotation admits what the
        call hands it (a class of the project, a base or a subclass of one the argument may
        be); of its methods, where the callee is computed (:func:`_computed`), those that
        take ``n`` or ``n + 1`` (the instance counted) -- when that leaves any: a rule chain
        holds the functions of every chain (``rule(state)`` of markdown-it-py's core reaches
        no inline rule).  The others are kept as they are."""
        if sum(v[0] == "f" or v[0] == "n" for v in values) < 2:
            return values
        written = self.flow_records(key).get((call[2], call[1]))
        if not written or len(written) > 1:
            return values
        given = slots(written[0])
        if "#" not in given:
            return values
        n, first = int(given["#"]), given.get("0")
        handed = self.evaluate(key, call[0], first) if first else NONE
        computed = _computed(self.local_names(key, call[0]), call[1])
        kept = set(self._partial_of(key, call))
        for v in values:
            d = self._defs[v[1]][1].get(v[2]) if v[0] in ("f", "n") else None
            if d is not None and v[0] == "f" and d.kind in BOUND_KINDS:
                # of a computed value (getattr(self, "parse_" + kind)(), table[key](x), a
                # name bound only to such: f = getattr(self, ...); f()):
                # read on an instance, a method gets it first; read on its class
                # (GuardBuilder.TYPE_MATCH(builder, guard)), it is handed it: either count
                # (elsewhere, a method's value may be a partial of it: not checked)
                shape = d.names.get(")") if computed else None  # the instance counted
                if shape and not (_takes(shape, n + 1) or _takes(shape, n)):
                    continue
            elif d is not None:
                shape = d.names.get("(" if v[0] == "f" else "(" + v[3])
                bound = v[-1] == BOUND  # the instance comes first: one more, not checked
                if shape is not None and not (_takes(shape, n + bound) and (
                        bound or self._admits(v[1], shape, handed))):
                    continue
            kept.add(v)
        return frozenset(kept) if kept else values

    def _partial_of(self, key: str, call) -> Values:
        """The functions a called local name may get from ``functools.partial(f, ...)``
        (``g = a if c else partial(f, r=r)``): the arguments the partial binds are not in
        the call's count, so the count says nothing of them and they are kept."""
        sources = self.local_names(key, call[0]).get(call[1]) if call[1].isidentifier() \
            else None
        found = NONE
        for source in sources or ():
            head, paren, _ = source[1:].partition("(")
            if source[0] == "=" and paren and any(
                    v[0] == "x" and v[1] == "functools.partial"
                    for v in self.evaluate(key, call[0], head)):
                found = found | self.evaluate(key, call[0], source[1:])
        return found

    def partial_bindings(self, key: str, anchor: str, text: str):
        """Where a call of ``anchor`` calls a local name ``text`` bound to
        ``functools.partial(f, a, k=v)``: for each such source, what ``f`` may be, the paths
        of the positional arguments it binds (None: not written) and its keywords (paths in
        ``anchor``); and whether the name may be anything else too (``text`` may be the
        partial itself: ``partial(f, a)(b)``).  None where it is never
        a partial (:func:`indexgen.analyze.flows.call_sites` shifts what such a call hands
        by the positions the partial binds, and adds what the partial binds)."""
        sources = self.local_names(key, anchor).get(text) if text.isidentifier() else (
            ["=" + text] if text[-1] == ")" else None)  # partial(f, a)(b): itself
        if not sources or not any("partial(" in s for s in sources):
            return None
        found, other = [], False
        for source in sources:
            bound = partial_arguments(source)
            if bound is None or not any(
                    v[0] == "x" and v[1] == "functools.partial"
                    for v in self.evaluate(key, anchor, source[1:].partition("(")[0])):
                other = True
                continue
            found.append((self.evaluate(key, anchor, bound[0]), bound[1], bound[2]))
        return (found, other) if found else None

    def partial_callers(self, key: str) -> set[tuple[str, str]]:
        """``(anchor, name)`` of the local names of file ``key`` that may be bound to a
        ``functools.partial`` (a source that calls ``partial(...)``, in a function that
        calls it): only their calls are read by :meth:`partial_ways`; made once a file."""
        made = self.__dict__.get("_partial_callers")  # (made here: one per Types)
        if made is None:
            made = self._partial_callers = {}
        found = made.get(key)
        if found is None:
            found = made[key] = set()
            callers = {call[0] for call in self.resolver.files[key].calls
                       if call[1][-7:] == "partial"}  # partial(...), functools.partial(...)
            for anchor in callers:
                d = self._defs[key][0].get(anchor)
                for name, sources in d.names.items() if d is not None else ():
                    for source in sources:
                        if "partial(" in source:
                            found.add((anchor, name))
                            break
        return found

    def partial_ways(self, key: str, anchor: str, edge) -> list | None:
        """How a call of ``anchor`` (its call graph ``edge``) hands its callee what it
        hands, where the callee is a local name bound to ``functools.partial(f, a, k=v)``
        (:meth:`partial_bindings`): a list of ``(n, bound)``, ``n`` the positions the
        partial binds ahead of what the call hands, ``bound`` what it binds (slot -> path);
        ``(0, None)`` where the callee may be reached through another source as well.
        None where the name is no partial."""
        bindings = self.partial_bindings(key, anchor, edge[1])
        if bindings is None:
            return None
        found, other = bindings
        alone = len(found) == 1 and not other
        ways = []
        for values, positional, keywords in found:
            if alone or _reaches(values, edge):
                bound = {str(i): p for i, p in enumerate(positional) if p is not None}
                bound.update(keywords)
                ways.append((len(positional), bound))
        if not ways or other and any(
                _reaches(self.evaluate(key, anchor, s[1:]), edge)
                for s in self.local_names(key, anchor).get(edge[1], ())
                if s[0] == "=" and partial_arguments(s) is None):
            ways.append((0, None))
        return ways

    def _admits(self, key: str, shape: list[str], handed: Values) -> bool:
        """Whether a first parameter annotated ``shape[1]`` (none: anything) in file ``key``
        may be given one of ``handed``: unless both are project instances of classes none
        of which is a base of another."""
        if len(shape) < 2 or not handed:
            return True
        wanted = self.annotation(key, shape[1])
        if not wanted or not all(v[0] == "i" for v in wanted) or not all(
                v[0] == "i" for v in handed):
            return True
        return any(self._is_a(h, wanted) or self._is_a(w, handed)
                   for h in handed for w in wanted)

def _reaches(values: Values, edge) -> bool:
    """Whether calling one of ``values`` may run the callee of a call graph ``edge``: it is
    that function or closure, or the class whose method (``__init__``) it is."""
    for v in values:
        if v[0] == "f" and v[1] == edge[3] and v[2] == edge[5]:
            return True
        if v[0] == "n" and v[1] == edge[3] and closure_qualname(v[2], v[3]) == edge[5]:
            return True
        if v[0] == "c" and v[1] == edge[3] and edge[5].startswith(v[2] + "."):
            return True
    return False


def _computed(names: dict[str, list[str]], text: str) -> bool:
    """Whether a call's callee is what a call or a subscript gives: written so
    (``table[k](x)``), or a local name (of ``names``) bound only to such (``f =
    getattr(self, "parse_" + kind)``; not to a ``functools.partial``, whose arguments
    the call does not count)."""
    if text[-1] in ")]":
        return True
    sources = names.get(text) if text.isidentifier() else None
    return bool(sources) and all(
        s[0] == "=" and s[-1] in ")]" and s[1:].partition("(")[0].rpartition(".")[2] != "partial"
        for s in sources)


def _takes(shape: list[str], n: int) -> bool:
    """Whether a function of ``shape`` (``"least-most"`` first, most -1 for ``*args``:
    :func:`indexgen.extract.calls.accepts`) may be called with ``n`` arguments by position."""
    least, _, most = shape[0].partition("-")
    return int(least) <= n and (most == "-1" or n <= int(most))
