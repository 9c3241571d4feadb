"""Walks over the call graph's edges: the inverse views, what each definition does through
the functions it calls, the call sites that do something that way, and reachability.

:func:`called_by`/:func:`inverses` invert the edges (a definition's "Called by", "Read by"
and "Passed as a callback by"); :func:`effects` follows them to find what each definition
does through the project functions it calls (collectives, file access, subprocesses...);
:func:`indirect_findings` names the call sites that do something that way (and
:func:`projects_own` the calls found by name that are the project's own); :func:`reach`
finds every definition reachable from a set of definitions (the tests that reach a module).
"""

from __future__ import annotations

from collections import deque
from functools import partial
from operator import itemgetter

from indexgen.analyze.context import CallEdge, CallerRef, IndirectFinding
from indexgen.analyze.dispatch import RUNS
from indexgen.analyze.resolve import Resolver
from indexgen.extract.arguments import without_arguments

_caller_ref = partial(tuple.__new__, CallerRef)
_indirect = partial(tuple.__new__, IndirectFinding)

#: ``key -> caller anchor ('' for module level) -> edges`` for one build.
Edges = dict[str, dict[str, list[CallEdge]]]
#: A definition: (file key, anchor).
Node = tuple[str, str]
#: Edge kinds listed in their callee's "Called by" (a closure's: the function it is in).
_AS_PROJECT = frozenset({"override", "closure"})
#: Edge kinds of a call that runs the project's own code.
_OWN = frozenset({"project", "override", "closure"})
_LINE_CATEGORY_TEXT = itemgetter(1, 0, 2)  # an IndirectFinding's (line, category, text)


def called_by(graph: Edges, resolver: Resolver, kind: str = "project"
              ) -> dict[str, dict[str, list[CallerRef]]]:
    """``callee key -> callee anchor -> call sites``, sorted: the exact inverse of the edges
    of ``kind`` (``project`` calls, ``read`` properties or ``callback`` references)."""
    return inverses(graph, resolver, (kind,))[kind]


def inverses(graph: Edges, resolver: Resolver, kinds: tuple[str, ...]
             ) -> dict[str, dict[str, dict[str, list[CallerRef]]]]:
    """:func:`called_by` of each of ``kinds``, in one pass over the edges."""
    found: dict[str, dict[str, dict[str, list[CallerRef]]]] = {k: {} for k in kinds}
    for key, by_caller in graph.items():
        qualname_of = resolver.module(key).qualname_of
        for caller, out in by_caller.items():
            qualname = qualname_of.get(caller, "")
            for edge in out:
                kind = edge[2]
                mine = found.get("project" if kind in _AS_PROJECT else kind)  # by kind
                if mine is not None:
                    by_anchor = mine.get(edge[3])
                    if by_anchor is None:
                        by_anchor = mine[edge[3]] = {}
                    refs = by_anchor.get(edge[4])
                    if refs is None:
                        refs = by_anchor[edge[4]] = []
                    refs.append(_caller_ref((key, qualname, caller, edge[0], edge[5].rpartition(
                        ".<locals>.")[2] if kind == "closure" else "")))
    for by_key in found.values():
        for by_anchor in by_key.values():
            for refs in by_anchor.values():
                refs.sort()
    return found


def effects(graph: Edges, resolver: Resolver) -> dict[Node, frozenset[str]]:
    """What each definition does, directly or through the project functions it calls.

    A worklist over the reversed graph: when a callee's set grows, its callers are revisited;
    sets only grow and are small, so cycles end.
    """
    total: dict[Node, set[str]] = {}
    callers: dict[Node, set[Node]] = {}
    runs: dict[tuple[str, str, str], list[Node]] = {}  # callee -> what calling it runs
    for key, by_caller in graph.items():
        for caller, out in by_caller.items():
            me = (key, caller)
            for edge in out:
                if edge[2] == "project":
                    callee = (edge[3], edge[4], edge[5])
                    nodes = runs.get(callee)
                    if nodes is None:
                        nodes = runs[callee] = entered(resolver, edge)
                    for node in nodes:
                        mine = callers.get(node)
                        if mine is None:
                            mine = callers[node] = set()
                        mine.add(me)
    for key in graph:
        module = resolver.module(key)
        for anchor, found in module.effects.items():
            total.setdefault((key, anchor), set()).update(found)
        if module.s.by_name:  # found by name alone: unless the project's own
            own = projects_own(graph[key], module.s.by_name)
            for anchor, line, text, category in module.s.by_name:
                if anchor and (line, text) not in own:
                    total.setdefault((key, anchor), set()).add(category)
    work = deque(total)
    while work:
        node = work.popleft()
        mine = total.get(node, set())
        for caller in callers.get(node, ()):
            theirs = total.setdefault(caller, set())
            if not mine <= theirs:
                theirs |= mine
                work.append(caller)
    return {node: frozenset(found) for node, found in total.items()}


def projects_own(by_caller: dict[str, list[CallEdge]], named: list[tuple[str, int, str, str]]
                 ) -> set[tuple[int, str]]:
    """``(line, call as written)`` of the calls ``named`` (a file's
    :attr:`~indexgen.extract.model.FileSummary.by_name`: found by a rule that knows them by
    their name alone, pathlib's ``write_text``) whose callees the call graph finds all in
    the project (``by_caller``: the file's edges): the project's own methods of that name
    (click's ``HelpFormatter.write_text`` builds a string), not findings; what they do is
    what their bodies do.  A call not resolved, or that may reach a name outside the build
    (a receiver that may be a ``Path`` or a project class), stays a finding."""
    own = set()
    for anchor, line, text, _category in named:
        name = text.rpartition(".")[2]
        kinds = {e[2] for e in by_caller.get(anchor, ()) if e[0] == line
                 and e[1][0] not in "&^" and e[1].rpartition(".")[2] == name}
        if kinds & _OWN and kinds <= _OWN | {"read"}:  # a property read on the way aside
            own.add((line, text))
    return own


def entered(resolver: Resolver, edge: CallEdge) -> list[Node]:
    """The definitions a project call runs: the callee, and ``__init__`` for a class."""
    nodes = [(edge.key, edge.anchor)]
    table = resolver.module(edge.key)
    if table.kinds.get(edge.label) == "class":
        init = table.defs.get(f"{edge.label}.__init__")
        if init:
            nodes.append((edge.key, init))
    return nodes


def indirect_findings(key: str, by_caller: dict[str, list[CallEdge]],
                      totals: dict[Node, frozenset[str]], resolver: Resolver,
                      done: dict[tuple[str, str, str], list[str]]) -> list[IndirectFinding]:
    """Call sites of file ``key`` (its edges: ``by_caller``) whose project callee in another
    file does something of interest, in line order (what a file's own functions do is
    already in its direct findings); ``done``: what each callee does, sorted, kept from
    file to file."""
    items = []
    qualname_of = resolver.module(key).qualname_of
    for caller, out in by_caller.items():
        for edge in out:
            if edge.kind != "project" or edge.key == key:
                continue
            callee = (edge.key, edge.anchor, edge.label)
            categories = done.get(callee)
            if categories is None:
                does: set[str] = set()
                for node in entered(resolver, edge):
                    does |= totals.get(node, frozenset())
                categories = done[callee] = sorted(does)
            text = edge.text if "(:" not in edge.text else without_arguments(edge.text)
            for category in categories:  # (the call as the source spells its callee)
                items.append(_indirect((category, edge.line, text,
                                        qualname_of.get(caller, ""), edge.key,
                                        edge.anchor, edge.label)))
    return sorted(items, key=_LINE_CATEGORY_TEXT)


def reach(graph: Edges, start: list[Node], resolver: Resolver) -> set[Node]:
    """Every definition reachable from the definitions ``start`` (themselves included)."""
    seen: set[Node] = set()
    work = deque(start)
    while work:
        node = work.popleft()
        if node in seen:
            continue
        seen.add(node)
        for edge in graph.get(node[0], {}).get(node[1], ()):
            if edge.kind in RUNS:
                work.extend(entered(resolver, edge))
    return seen
