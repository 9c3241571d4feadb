"""The static call graph of a build: every call of every file resolved, by caller.

:func:`edges` resolves each call with :func:`~indexgen.analyze.dispatch.resolve_call`
(where one call leads, by what kind of edge), once per call text and class or caller, and
keeps the edges in line order; the calls not resolved are kept by reason, each by its line
(the pages say how many, and where), builtins' calls left out.  A second round
(:mod:`indexgen.analyze.second_round`) resolves again, with what the call sites found hand
each parameter (:mod:`indexgen.analyze.flows`), the calls on values the first could not
type, then the calls the first resolved from a read that was provisional (a parameter's
callers not yet known): what those find now is added to what they found then.  A call
inside an ``isinstance`` branch is resolved on its receiver as the test narrows it
(:mod:`indexgen.extract.narrowing`).  Every call is accounted for: an edge, a line under
its reason or a builtin (:data:`Ledger`, for the test that says so:
:mod:`indexgen.analyze.ledger`).  The walks over the edges (inverse views,
effects, reach) are :mod:`indexgen.analyze.walks`, re-exported here.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial

from indexgen.analyze import flows
from indexgen.analyze.context import CallEdge
from indexgen.analyze.dispatch import (
    RUN_TIME_NAME,
    SIGNATURE_ONLY,
    UNKNOWN_VALUE,
    make_edge,
    narrowed,
    resolve_call,
    text_heads,
)
from indexgen.analyze.ledger import Ledger, Unresolved, account  # noqa: F401 - read here
from indexgen.analyze.local_imports import tables as import_tables
from indexgen.analyze.resolve import Resolver
from indexgen.analyze.runs import FanOut, fan_runs
from indexgen.analyze.second_round import second_round
from indexgen.analyze.types import Types
from indexgen.analyze.virtual import class_of
from indexgen.analyze.walks import (  # noqa: F401 - the graph's walks, where callers look
    Edges,
    Node,
    called_by,
    effects,
    entered,
    indirect_findings,
    inverses,
    reach,
)
from indexgen.extract.model import Call


def edges(resolver: Resolver, keys: list[str], types: Types | None = None,
          unresolved: Unresolved | None = None, ledger: Ledger | None = None,
          fan: FanOut | None = None, shards: int = 1,
          meanwhile: Callable[[], None] | None = None) -> Edges:
    """Resolved calls of the given files, by caller, in line order; the lines of the calls
    not resolved go by reason into ``unresolved`` (:data:`Unresolved`), calls of builtins
    left out.  ``ledger``: filled with the kinds of edges each call made (see
    :data:`Ledger`), for a test that every call is accounted for.

    A file calls the same expression from the same class many times (``torch.cat``,
    ``self._check``): a call whose path starts with a name of the module or with ``self`` is
    resolved once per ``(text, class)`` and file, one on a name of its function once per
    ``(text, caller)`` (those and a computed callee, ``table[k](x)``, per what they hand),
    the edges reused with the call's own line.

    With a fan-out ``fan`` and ``shards`` > 1, the first round runs in that many processes,
    the calling process one of them (:func:`~indexgen.analyze.runs.fan_runs`; the others forked:
    :func:`indexgen.run.fanout.fork_map`), and the results are merged in the files' order.
    The result is the same: each file's values are found from its own queries
    (:mod:`indexgen.analyze.memo`).  The second round likewise (:meth:`Types.set_flows`
    has just emptied the values read provisionally: its first run, before the fork, finds
    again those many files share).  ``meanwhile()``: work of the caller's that needs no
    edge, done once in the first round, where the calling process would wait for the
    forked ones.
    """
    if types is not None:
        types.extras()  # a table every evaluation reads: built before any, the same in all
        types.expect_flows()  # the second round's call sites are this round's
    sizes = {k: len(resolver.files[k].calls) for k in keys}
    found: Edges = {}
    retry: list = []
    sites: flows.CallSites = {}
    round_one = partial(_first_round, resolver, types, ledger is not None)
    for part, unres, again, accounts, handed in fan_runs(fan, round_one, keys, sizes, shards,
                                                      meanwhile):
        found.update(part)
        retry += again
        if unresolved is not None:
            unresolved.update(unres)
        if ledger is not None:
            ledger.update(accounts)
        for callee, entries in handed.items():  # the runs come in the files' order
            sites.setdefault(callee, []).extend(entries)
    if types is not None and retry:
        if keys != sorted(keys):  # call_sites lists each callee's sites in sorted file order
            sites = flows.call_sites(resolver, found, types.flow_records, types)
        second_round(resolver, types, found, unresolved, retry, ledger, fan, shards, sites)
    return found


def _first_round(resolver: Resolver, types: Types | None, want_ledger: bool,
                 keys: list[str]) -> tuple[Edges, Unresolved, list, Ledger, flows.CallSites]:
    """The first round of :func:`edges` over ``keys``: the edges, the unresolved lines,
    the calls to try again, the ledger (empty unless ``want_ledger``) and what the calls
    hand their callees (:func:`indexgen.analyze.flows.call_sites` of these edges, for the
    second round; made here, where the runs are spread over processes)."""
    found: Edges = {}
    unresolved: Unresolved = {}
    ledger: Ledger | None = {} if want_ledger else None
    # call text -> its receiver_name and the name type() is given (the same texts in every
    # file)
    heads: dict[str, tuple[str, str]] = {}
    # the calls not resolved, for a second round with what callers hand parameters; after
    # them, the calls resolved from what the second round may know better (asked after, so
    # that the values they bring into the memo shape no answer of the first kind)
    retry: list[tuple[str, Call, str, dict, str, str, list[CallEdge] | None]] = []
    widen: list[tuple[str, Call, str, dict, str, str, None]] = []
    for key in keys:
        if types is not None:
            types.begin_file()
        by_caller: dict[str, list[CallEdge]] = {}
        unres: dict[str, dict[str, list[int]]] = {}
        seen: dict[tuple, list[CallEdge]] = {}
        # of seen: the next round's answer too, for the caller that asked (a memo shared by
        # the callers of a class may hold a call on a name of each: type(value))
        settled: dict[tuple, str] = {}
        classes: dict[str, str] = {}  # caller anchor -> the class it is a method of, or ''
        names_of = types.names_of(key) if types is not None else {}
        own = import_tables(resolver)[key]  # callers whose own imports shadow the module's
        handing = types.flow_records(key) if types is not None else {}  # what calls hand
        last = None  # the caller of the call before: a caller's calls come in runs
        tails: dict[str, set[tuple]] = {}  # caller -> (kind, anchor, key) of its last line
        for call in resolver.files[key].calls:
            caller, text, line, local = call
            if text[0] == "<":  # what the call hands its callee: read by flows.call_sites
                continue
            if caller != last:  # what depends on the caller alone, looked up once a run
                last = caller
                cls = classes.get(caller)
                if cls is None:
                    cls = classes[caller] = class_of(resolver, key, caller)
                names = names_of.get(caller)
                narrow = types.narrowings(key, caller) if names else None
                out = by_caller.get(caller)
                mine = unres.get(caller)
                tail = tails.get(caller)
            if names:
                parts = heads.get(text)
                if parts is None:
                    parts = heads[text] = text_heads(text)
                head, inner = parts
                if narrow and head in narrow:  # isinstance narrows the receiver here
                    call = narrowed(call, head, narrow[head])
                elif narrow and inner in narrow:  # type(x)(...): narrows x
                    call = narrowed(call, inner, narrow[inner], len(head) + 1)
                memo = (call[1], caller if head in names or inner in names or caller in own
                        else cls, local)
            else:
                memo = (text, caller if caller in own else cls, local)
            if text[-1] in ")]" or names and text in names:  # which functions fit: its args
                memo += (tuple(handing.get((line, text), ())),)
            out_edges = seen.get(memo)
            if out_edges is None:
                if types is not None:
                    types.watch()
                out_edges = seen[memo] = resolve_call(resolver, key, call, cls, types,
                                                      names or _NO_NAMES)
                if types is not None and types.settled():
                    settled[memo] = caller
            if ledger is not None:
                ledger[(key, caller, line, text)] = [account(e) for e in out_edges]
            asked = len(retry)
            for edge in out_edges:
                kind = edge[2]
                if kind == "builtin":
                    continue
                if kind == "unresolved":
                    if mine is None:
                        mine = unres[caller] = {}
                    lines = mine.get(edge[5])
                    if lines is None:
                        lines = mine[edge[5]] = []
                    lines.append(line)
                    # again with what callers hand: on local names, or read it (self.x)
                    if edge[5] in _AGAIN and (names or memo not in settled):
                        retry.append((key, call, cls, names or _NO_NAMES, edge[5], text,
                                      out_edges if settled.get(memo) == caller else None))
                    continue
                if edge[0] != line or edge[1] != text:
                    edge = make_edge((line, text, kind, edge[3], edge[4], edge[5]))
                mark = (kind, edge[4], edge[3], edge[5])  # two closures share an anchor
                if out is None:
                    out = by_caller[caller] = []
                if out and out[-1][0] == line:
                    if kind != "external" and mark in tail:
                        continue  # one edge per callee and line: the pages list lines
                    tail.add(mark)
                else:
                    tail = tails[caller] = {mark}
                out.append(edge)
            # resolved (to a callee, not only to builtins) from what may change: widen it
            if (types is not None and len(retry) == asked and memo not in settled
                    and any(e[2] != "builtin" for e in out_edges)):
                widen.append((key, call, cls, names or _NO_NAMES, "", text, None))
        found[key] = by_caller
        if unres:
            unresolved[key] = unres
    retry += widen
    handed = flows.call_sites(resolver, found, types.flow_records, types) if types is not None \
        else {}
    return found, unresolved, retry, ledger or {}, handed


_NO_NAMES: dict[str, list[str]] = {}  # a caller without local names (read, never written)
#: Why a call the second round may resolve was not.
_AGAIN = (UNKNOWN_VALUE, RUN_TIME_NAME, SIGNATURE_ONLY)


