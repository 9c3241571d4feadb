"""The static call graph of a build: who calls whom, and what a call does through others.

Every call a file records (:class:`~indexgen.extract.model.Call`) is resolved with
:class:`~indexgen.analyze.resolve.Resolver`: ``self.m()``/``cls.m()`` in a method look ``m`` up in
the class and its project bases, ``super().m()`` in the bases only, anything else through the
file's namespace (definitions, imports, re-exports, aliases).  A call to a project definition
becomes an edge; a call to a name imported from outside the build is *external*; calls to
builtins are dropped; everything else (an attribute of an object, a local value, a name nothing
binds) is *unresolved* and shown as such -- never guessed.

On top of the edges: :func:`called_by` inverts them, :func:`effects` follows them to find
what each definition does through the project functions it calls (collectives, file access,
subprocesses...), :func:`indirect_findings` names the call sites that do something that way and
:func:`reach` finds every definition reachable from a set of calls.
"""

from __future__ import annotations

from collections import deque

from indexgen.analyze.context import CallEdge, CallerRef, IndirectFinding
from indexgen.analyze.resolve import Resolver
from indexgen.extract.model import Call

#: ``key -> caller anchor ('' for module level) -> edges`` for one build.
Edges = dict[str, dict[str, list[CallEdge]]]
#: A definition: (file key, anchor).
Node = tuple[str, str]
_UNSEEN = CallEdge(0, "", "")


def resolve_call(resolver: Resolver, key: str, call: Call, cls: str | None = None
                 ) -> CallEdge | None:
    """Where one call of file ``key`` leads; None for a builtin.  ``cls``: the class whose
    method makes the call ('' for none), when the caller knows it already."""
    if call.local:
        return CallEdge(call.line, call.text, "unresolved", label="a local value")
    parts = call.text.split(".")
    if cls is None:
        cls = _class_of(resolver, key, resolver.module(key).qualname_of.get(call.caller, ""))
    if parts[0] == "super()":
        target = resolver.inherited(key, cls, parts[1]) if cls and len(parts) == 2 else None
    elif parts[0] in ("self", "cls") and cls:
        target = resolver.method(key, cls, parts[1]) if len(parts) == 2 else None
    else:
        target = resolver.name_in(key, call.text)
    if target is None:
        why = "an attribute of an object" if len(parts) > 1 else "a name bound at run time"
        return CallEdge(call.line, call.text, "unresolved", label=why)
    if target.kind == "builtin":
        return None
    if target.kind == "external":
        return CallEdge(call.line, call.text, "external", label=target.qualname)
    if not target.qualname:  # a module is not callable
        return CallEdge(call.line, call.text, "unresolved", label="a module")
    return CallEdge(call.line, call.text, "project", target.key,
                    resolver.anchor(target.key, target.qualname), target.qualname)


def _class_of(resolver: Resolver, key: str, caller: str) -> str:
    """The class whose method ``caller`` is, or ''."""
    cls = caller.rpartition(".")[0]
    return cls if cls and resolver.module(key).kinds.get(cls) == "class" else ""


def edges(resolver: Resolver, keys: list[str]) -> Edges:
    """Resolved calls of the given files, by caller, in line order.

    A file calls the same expression from the same class many times (``torch.cat``,
    ``self._check``): each ``(text, class, local)`` is resolved once per file and the edge
    reused with the call's own line.
    """
    found: Edges = {}
    for key in keys:
        by_caller: dict[str, list[CallEdge]] = {}
        qualname_of = resolver.module(key).qualname_of
        seen: dict[tuple[str, str, bool], CallEdge | None] = {}
        classes: dict[str, str] = {}  # caller anchor -> the class it is a method of, or ''
        for call in resolver.files[key].calls:
            caller = call.caller
            cls = classes.get(caller)
            if cls is None:
                cls = classes[caller] = _class_of(resolver, key, qualname_of.get(caller, ""))
            memo = (call.text, cls, call.local)
            edge = seen.get(memo, _UNSEEN)
            if edge is _UNSEEN:
                edge = seen[memo] = resolve_call(resolver, key, call, cls)
            if edge is not None:
                if edge.line != call.line:
                    edge = CallEdge(call.line, *edge[1:])  # _replace(line=), cheaper
                out = by_caller.get(caller)
                if out is None:
                    out = by_caller[caller] = []
                out.append(edge)
        found[key] = by_caller
    return found


def called_by(graph: Edges, resolver: Resolver) -> dict[str, dict[str, list[CallerRef]]]:
    """``callee key -> callee anchor -> call sites``, sorted."""
    found: dict[str, dict[str, list[CallerRef]]] = {}
    for key, by_caller in graph.items():
        qualname_of = resolver.module(key).qualname_of
        for caller, out in by_caller.items():
            for edge in out:
                if edge.kind == "project":
                    found.setdefault(edge.key, {}).setdefault(edge.anchor, []).append(
                        CallerRef(key, qualname_of.get(caller, ""), caller, edge.line))
    for by_anchor in found.values():
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
    for key, by_caller in graph.items():
        for caller, out in by_caller.items():
            for edge in out:
                if edge.kind == "project":
                    for node in _entered(resolver, edge):
                        callers.setdefault(node, set()).add((key, caller))
    for key in graph:
        for anchor, found in resolver.module(key).effects.items():
            total.setdefault((key, anchor), set()).update(found)
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


def _entered(resolver: Resolver, edge: CallEdge) -> list[Node]:
    """The definitions a project call runs: the callee, and ``__init__`` for a class."""
    nodes = [(edge.key, edge.anchor)]
    table = resolver.module(edge.key)
    if table.kinds.get(edge.label) == "class":
        init = table.defs.get(f"{edge.label}.__init__")
        if init:
            nodes.append((edge.key, init))
    return nodes


def indirect_findings(graph: Edges, totals: dict[Node, frozenset[str]], resolver: Resolver
                      ) -> dict[str, list[IndirectFinding]]:
    """Call sites whose project callee in another file does something of interest, by file,
    in line order (what a file's own functions do is already in its direct findings)."""
    found: dict[str, list[IndirectFinding]] = {}
    for key, by_caller in graph.items():
        items = []
        qualname_of = resolver.module(key).qualname_of
        for caller, out in by_caller.items():
            for edge in out:
                if edge.kind != "project" or edge.key == key:
                    continue
                does = set()
                for node in _entered(resolver, edge):
                    does |= totals.get(node, frozenset())
                for category in sorted(does):
                    items.append(IndirectFinding(category, edge.line, edge.text,
                                                 qualname_of.get(caller, ""), edge.key,
                                                 edge.anchor, edge.label))
        if items:
            found[key] = sorted(items, key=lambda f: (f.line, f.category, f.text))
    return found


def reach(graph: Edges, start: list[CallEdge], resolver: Resolver) -> set[Node]:
    """Every project definition reachable from the project edges in ``start``."""
    seen: set[Node] = set()
    work = deque(node for e in start if e.kind == "project" for node in _entered(resolver, e))
    while work:
        node = work.popleft()
        if node in seen:
            continue
        seen.add(node)
        for edge in graph.get(node[0], {}).get(node[1], ()):
            if edge.kind == "project":
                work.extend(_entered(resolver, edge))
    return seen
