"""What call sites hand the functions they call: the assignment graph's argument edges.

The extraction stage records, for every call that passes a name or an attribute chain, a
*flow* record among the file's calls (:func:`indexgen.extract.calls.arguments`: ``<``, the
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

from indexgen.analyze.resolve import Resolver

#: ``(file key, qualname) -> [(caller file key, caller anchor, slot -> argument path,
#: parameters before the first slot)]``.
Flows = dict[tuple[str, str], list[tuple[str, str, dict[str, str], int]]]

#: Edge kinds whose callee runs with the call's arguments.
_CALLED = frozenset({"project", "override"})
#: Kinds of definitions called through an instance or a class: their first parameter is
#: not handed by the caller (``self``, ``cls``).
_BOUND = frozenset({"method", "classmethod", "property"})


def records(calls) -> dict[tuple[int, str], list[dict[str, str]]]:
    """The flow records of one file's calls: ``(line, call text) -> [slot -> path]``."""
    found: dict[tuple[int, str], list[dict[str, str]]] = {}
    for call in calls:
        text = call[1]
        if text[0] != "<":
            continue
        called, _, items = text[1:].partition("\t")
        slots = dict(item.split("=", 1) for item in items.split(","))
        found.setdefault((call[2], called), []).append(slots)
    return found


def call_sites(resolver: Resolver, graph: dict[str, dict[str, list]]) -> Flows:
    """The call sites of every project function and class in ``graph`` (the call graph of
    :func:`indexgen.analyze.callgraph.edges`) with what they hand it, in file and line
    order."""
    flows: Flows = {}
    for key in sorted(graph):
        given = records(resolver.files[key].calls)
        if not given:
            continue
        for caller, out in graph[key].items():
            for edge in out:
                if edge[2] not in _CALLED:
                    continue
                slots = given.get((edge[0], edge[1]))
                if not slots:
                    continue
                kind = resolver.module(edge[3]).kinds.get(edge[5])
                shift = 1 if kind in _BOUND else 0
                mine = flows.setdefault((edge[3], edge[5]), [])
                for items in slots:
                    mine.append((key, caller, items, shift))
    return flows
