"""What call sites hand the functions they call: the assignment graph's argument edges.

The extraction stage records, for every call that passes a name or an attribute chain, a
*flow* record among the file's calls (:func:`indexgen.extract.handing.handed`: ``<``, the
call's text, a tab, ``slot=path`` items).  Once the call graph has resolved each call to
its callees, :func:`call_sites` joins the two: for each project function (and each class
without an ``__init__`` of its own, whose fields its constructor is handed), the call sites
that reach it and what each hands to which slot.  The type evaluation
(:meth:`indexgen.analyze.types.Types.set_flows`) then reads a parameter that its function
does not type as the union of what its callers hand it -- in the spirit of PyCG's
assignment graph: a function passed as an argument and called through the parameter
(``self.ruler.push(name, rule)`` ... ``rule(state)``), an instance handed to a helper.

An edge found this way is labelled by how it was found: the parameter's source is ``<``
(what the callers hand it), so a page's edge through it is one the call sites justify.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from indexgen.analyze.appliers import APPLY, applied
from indexgen.analyze.init_fields import init_fields
from indexgen.analyze.memo import GuardedMemo
from indexgen.analyze.resolve import Resolver
from indexgen.analyze.values import NONE, Values, closure_qualname, ordered, union

#: ``(file key, qualname) -> [(caller file key, caller anchor, slot -> argument path,
#: parameters before the first slot)]``.
CallSites = dict[tuple[str, str], list[tuple[str, str, dict[str, str], int]]]
_PLAIN = ((0, None),)  # a call of no functools.partial: what it hands, where it hands it
_SITES = 128  # call sites of one function read that hand a parameter something

#: Edge kinds whose callee runs with the call's arguments.
CALLED = frozenset({"project", "override", "closure"})
#: Kinds of definitions called through an instance or a class: their first parameter is
#: not handed by the caller (``self``, ``cls``).
BOUND_KINDS = frozenset({"method", "classmethod", "property"})


def records(calls) -> dict[tuple[int, str], list[str]]:
    """The flow records of one file's calls: ``(line, call text) -> [items]``, each
    ``items`` the record's ``slot=path`` list as written (:func:`slots` reads it; most
    records no call graph edge asks for are never read)."""
    found: dict[tuple[int, str], list[str]] = {}
    for call in calls:
        text = call[1]
        if text[0] != "<":
            continue
        called, _, items = text[1:].partition("\t")
        found.setdefault((call[2], called), []).append(items)
    return found


def slots(items: str) -> dict[str, str]:
    """``slot -> path`` of a flow record's items (see :func:`records`)."""
    return dict(item.split("=", 1) for item in items.split(","))


def call_sites(resolver: Resolver, graph: dict[str, dict[str, list]],
               records_of: Callable[[str], dict] | None = None,
               types=None) -> CallSites:
    """The call sites of every project function and class in ``graph`` (the call graph of
    :func:`indexgen.analyze.callgraph.edges`) with what they hand it, in file and line
    order; through a ``functools.partial``, what it binds first (``types``: the
    :class:`~indexgen.analyze.types.Types`, whose ``partial_callers`` and ``partial_ways``
    say which callers bind one and how it hands).  A path handed where a test or an
    assignment narrows it (``types.narrowings``: ``if isinstance(x, A): f(x)``, ``self.lx =
    Basic()`` then ``self.lx = Wrap(self.lx)``) is handed as narrowed there."""
    flows: CallSites = {}
    for key in sorted(graph):
        binding = types.partial_callers(key) if types is not None else ()
        given = (records_of(key) if records_of is not None
                 else records(resolver.files[key].calls))
        if not given:
            continue
        read: dict[tuple[int, str], list[dict[str, str]]] = {}  # of given: read once
        by_line: dict[int, list] | None = None  # given by line, made for a callback
        for caller, out in graph[key].items():
            narrow = types.narrowings(key, caller) if types is not None else None
            for edge in out:
                if edge[2] == "callback":  # pool.submit(work, job): work(job)
                    if by_line is None:
                        by_line = {}
                        for (line, text), written in given.items():
                            by_line.setdefault(line, []).append((text, written))
                    if edge[0] in by_line:
                        _applied(resolver, flows, key, caller, out, edge, by_line[edge[0]])
                if edge[2] not in CALLED:
                    continue
                where = (edge[0], edge[1])  # a call with overrides has an edge each
                handed = read.get(where)
                if handed is None:
                    handed = read[where] = [_narrowed(slots(items), narrow, edge[0])
                                            for items in given.get(where, ())
                                            if items[0] != "#"]  # "#=n" alone: no argument
                ways = types.partial_ways(key, caller, edge) if (caller, edge[1]) in binding \
                    or types is not None and "partial(" in edge[1] else None
                if not handed and ways is None:
                    continue
                # Function.apply(x) runs forward(ctx, x): one place on, as a method's
                shift = _first_bound(resolver, edge) or int(edge[1].endswith(".apply"))
                mine = flows.setdefault((edge[3], edge[5]), [])
                for bound_n, bound in ways or _PLAIN:  # partial(f, a)(b): f(a, b)
                    if bound:
                        mine.append((key, caller, bound, shift))
                    for items in handed:
                        mine.append((key, caller, items, shift + bound_n))
    return flows


def handed_at(items: dict[str, str], name: str, place: str | None, shift: int,
              keyword: str | None = None) -> str | None:
    """The path a call site hands a parameter (``items``: slot -> path, :func:`slots`): by
    its ``name`` (or ``keyword``, another name it is given by), else at its position
    ``place`` (None: by keyword only), ``shift`` places on where a ``functools.partial``
    binds that many first; None where the site hands it nothing."""
    text = items.get(name)
    if text is None and keyword is not None:
        text = items.get(keyword)
    if text is None and place is not None:
        text = items.get(str(int(place) - shift) if shift else place)
    return text


def _narrowed(items: dict[str, str], narrow: dict | None, line: int) -> dict[str, str]:
    """``items`` (slot -> path) with each path that starts with a name narrowed at ``line``
    (``narrow``: :meth:`~indexgen.analyze.hierarchy.Hierarchy.narrowings`, name -> spans)
    starting with its narrowed name instead (``x@12.y``), the longest such name."""
    if not narrow:
        return items
    out = None
    for slot, path in items.items():
        cut = len(path)
        while cut > 0:  # the path itself, then each prefix ending before a . [ (
            spans = narrow.get(path[:cut])
            if spans is not None:
                found = None
                for first, last, name in spans:
                    if first <= line <= last:
                        found = name  # a later first line: an inner branch
                if found is not None:
                    if out is None:
                        out = dict(items)
                    out[slot] = found + path[cut:]
                break
            cut = max(path.rfind(".", 0, cut), path.rfind("[", 0, cut), path.rfind("(", 0, cut))
    return out if out is not None else items


def _applied(resolver: Resolver, flows: CallSites, key: str, caller: str, out: list,
             edge, given: list[tuple[str, list[str]]]) -> None:
    """Add to ``flows`` what a call that calls the function it is handed (``edge``, a
    callback edge of ``caller``: :func:`indexgen.analyze.appliers.applied`) hands that
    function, where the call reaches no function of the tree (``given``: the flow records
    of the edge's line, by call text)."""
    line, path = edge[0], edge[1][1:]
    for text, written in given:
        if text.rpartition(".")[2] not in APPLY or any(
                e[0] == line and e[1] == text and e[2] in CALLED for e in out):
            continue
        for items in written:
            found = applied(text, slots(items))
            if found is not None and found[0] == path and found[1]:
                flows.setdefault((edge[3], edge[5]), []).append(
                    (key, caller, found[1], _first_bound(resolver, edge)))


def _first_bound(resolver: Resolver, edge) -> int:
    """1 where the callee of ``edge`` gets its first parameter from the instance or class
    it is read on (a method, a classmethod, a property), not from the call; else 0."""
    return int(resolver.module(edge[3]).kinds.get(edge[5]) in BOUND_KINDS)


class Flows:
    """What the call sites hand parameters and dataclass fields, read by the type
    evaluation; mixed into :class:`~indexgen.analyze.types.Types`, whose ``evaluate``,
    ``element``, ``annotation``, ``_is_a``, memo and cycle guard it uses."""

    _flows: CallSites | None
    _flows_open: bool  # whether a set_flows is to come (expect_flows), which may change them
    _records: dict  # file key -> its flow records (records), made on first use
    _guard: GuardedMemo
    _defs: dict
    resolver: Resolver

    def flow_records(self, key: str) -> dict[tuple[int, str], list[str]]:
        """:func:`records` of one file, made once."""
        found = self._records.get(key)
        if found is None:
            found = self._records[key] = records(self.resolver.files[key].calls)
        return found

    def sites_of(self, key: str, qualname: str) -> list:
        """The call sites that hand the function ``qualname`` of file ``key`` its arguments
        (:func:`call_sites`), once the second round has them (:meth:`set_flows`)."""
        return self._flows.get((key, qualname), []) if self._flows is not None else []

    def set_flows(self, flows: CallSites
                  ) -> None:
        """Give parameters (``<`` sources) and dataclass fields what the call sites of
        their function or class hand them (:func:`indexgen.analyze.flows.call_sites`), and
        what decorators are handed (:meth:`decorate`); what was evaluated before from
        something provisional is forgotten (what read none of it is the same now: the
        second round finds it in the memo).  Until the end, what reads the flows or the
        attributes put from elsewhere (:meth:`extras`, found again here) is provisional
        still: they are incomplete."""
        self._flows = flows
        self._guard.forget_provisional()
        self._extras = None  # found again: what a parameter's attribute is given, now known
        self.decorate(flows)
        self.extras()
        self._guard.forget_provisional()
        self._flows_open = False

    def expect_flows(self) -> None:
        """A call graph's first round begins: until :meth:`set_flows`, what call sites hand
        parameters and fields may change, and a value that reads it is provisional
        (:meth:`indexgen.analyze.memo.GuardedMemo.note_provisional`)."""
        self._flows_open = True

    def decorate(self, flows: CallSites) -> None:
        """Add to ``flows`` what each decorator is handed: the function it decorates
        (:func:`indexgen.extract.handing.decorated`), as the parameter of the function of
        the tree a decorator factory returns (``@op_impl(op)`` returning
        ``functools.partial(_register_op, op=op)``) or of its closure (``@curry(1)``:
        ``curry`` returns its nested ``wrapper(fun)``, whose ``fun`` is each function so
        decorated).  A plain ``@register`` is the call ``register(f)`` itself
        (:mod:`indexgen.extract.handing`)."""
        for key in sorted(self.resolver.files):
            for call in self.resolver.files[key].calls:
                if not call[1].startswith("<@"):
                    continue
                called, _, items = call[1][2:].partition("\t")
                given = slots(items)
                for v in ordered(self.evaluate(key, call[0], called)):
                    if v[0] == "f":
                        flows.setdefault((v[1], v[2]), []).append((key, call[0], given, 0))
                    elif v[0] == "n":
                        flows.setdefault((v[1], closure_qualname(v[2], v[3])), []).append(
                            (key, call[0], given, 0))

    def _flow(self, key: str, anchor: str, spec: str) -> Values:
        """What the callers of the function ``anchor`` hand its parameter ``spec``
        (``position:name``, ``k:name`` for a keyword-only one, ``*position:name`` for
        ``*args``: a tuple of what is handed from that position on; ``=path`` after it: the
        default, what the parameter is where a caller leaves it out)."""
        if self._flows_open:  # the call graph's first round: what is handed may change
            self._guard.note_provisional()
        if self._flows is None:
            return NONE
        d = self._defs[key][0].get(anchor)
        if d is not None and spec[0] == "λ":  # a parameter of a closure: its callers'
            nested, _, spec = spec[1:].partition("|")
            sites = self._flows.get((key, closure_qualname(d.qualname, nested)))
        else:
            sites = self._flows.get((key, d.qualname)) if d is not None else None
        spec, _, default = spec.partition("=")  # what it is where a caller leaves it out
        if not sites and not default:
            return NONE
        return self._guard.get(("\4", key, anchor, spec, default, id(sites)), self._handed,
                               sites or (), spec, key, anchor, default)

    def _handed(self, sites: Sequence, spec: str, key: str, anchor: str, default: str
                ) -> Values:
        """What the call sites ``sites`` hand the parameter ``spec`` (see :meth:`_flow`),
        and its ``default`` (a path in the function ``anchor`` of file ``key``): a caller
        outside the tree, or one of these, may leave the parameter out."""
        if self._flows_open:  # sites still to come: kept only for this round (the key
            self._guard.note_provisional()  # holds the list, not what it will hold)
        pos, _, name = spec.partition(":")
        star = pos[0] == "*"
        given = [self.source(key, anchor, "=" + default)] if default else []
        handing = len(given) + _SITES  # read up to _SITES sites that hand it something
        for ckey, canchor, items, shift in sites:
            if star:
                first = int(pos[1:]) - shift
                for slot, text in items.items():
                    if slot == "*":
                        given.append(union(self.element(v) for v in ordered(
                            self.evaluate(ckey, canchor, text))))
                    elif slot.isdigit() and int(slot) >= first:
                        given.append(self.evaluate(ckey, canchor, text))
            else:
                text = handed_at(items, name, None if pos == "k" else pos, shift)
                if text is not None:
                    given.append(self.evaluate(ckey, canchor, text))
            if len(given) >= handing:
                break
        found = union(given)
        if star:
            return frozenset({("s", found)}) if found else NONE
        return found

    def _field_flow(self, key: str, cls: str, attr: str) -> Values:
        """What the call sites of a class without an ``__init__`` of its own (a dataclass)
        hand its field ``attr``, by keyword or by its place among the annotated fields."""
        if self._flows_open:  # the call graph's first round: what is handed may change
            self._guard.note_provisional()
        sites = self._flows.get((key, cls)) if self._flows is not None else None
        owner = self._defs[key][1].get(cls)
        if not sites or owner is None:
            return NONE
        fields, keyword = init_fields(owner, attr)  # an attrs class's: _x by x=, alias=
        place = str(fields.index(attr)) if attr in fields else None
        given = []
        for ckey, canchor, items, shift in sites:  # shift: what a partial binds first
            text = handed_at(items, attr, place, shift, keyword)
            if text is not None:
                given.append(self.evaluate(ckey, canchor, text))
                if len(given) == _SITES:
                    break
        return union(given)

