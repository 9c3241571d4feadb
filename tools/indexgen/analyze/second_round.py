"""The call graph's second round: the calls resolved again with what call sites hand.

The first round (:func:`indexgen.analyze.callgraph.edges`) resolves every call with what
the code states; a call on a value it could not type, or one it resolved from a read that
was provisional (a parameter's callers not yet known), is asked again here, once every
call site's arguments are known (:mod:`indexgen.analyze.flows`): what it finds now becomes
edges, in line order, and its line leaves the unresolved.
"""

from __future__ import annotations

from functools import partial
from operator import itemgetter

from indexgen.analyze import flows
from indexgen.analyze.context import CallEdge
from indexgen.analyze.dispatch import make_edge, resolve_call
from indexgen.analyze.ledger import Ledger, Unresolved, account
from indexgen.analyze.resolve import Resolver
from indexgen.analyze.runs import FanOut, fan_runs
from indexgen.analyze.types import Types
from indexgen.analyze.walks import Edges

_LINE = itemgetter(0)  # a CallEdge's line


def second_round(resolver: Resolver, types: Types, found: Edges,
                  unresolved: Unresolved | None, retry: list, ledger: Ledger | None,
                  fan: FanOut | None, shards: int, sites: flows.CallSites) -> None:
    """Resolve again, with what the call sites found hand each parameter (``sites``:
    :mod:`indexgen.analyze.flows`), the calls on local values the first round could not:
    those it resolves now become edges, in line order, and their lines leave the unresolved.
    A call the first round resolved from a provisional read (its reason ``""``) keeps its
    edges and gains those it finds now; it is asked after the others of its file, so that
    the values it brings into the memo shape none of their answers."""
    types.set_flows(sites)
    changed: set[tuple[str, str]] = set()
    by_file: dict[str, list] = {}
    for entry in retry:  # in the files' order, as the first round made them
        by_file.setdefault(entry[0], []).append(entry)
    sizes = {k: len(v) for k, v in by_file.items()}
    runs = fan_runs(fan, partial(_retried_files, resolver, types, by_file), list(by_file),
                    sizes, shards)
    done = [new for part in runs for new in part]
    asked = [entry for key in by_file for entry in by_file[key]]
    have: dict[tuple[str, str], set] = {}  # what a widened call's caller lists already
    for (key, call, _cls, _names, why, text, _known), new in zip(asked, done):
        if all(e[2] == "read" for e in new):  # a property read on the way is no callee
            continue
        at = (key, call.caller, call.line, text)
        if not why:  # resolved in the first round, perhaps from less: what it adds
            mine = have.get(at[:2])
            if mine is None:
                mine = have[at[:2]] = {_callee(e, e[0]) for e in found[key].get(call.caller, ())}
            new = [e for e in new if _callee(e, call.line) not in mine
                   and (e[2] != "builtin" or ledger is None or account(e) not in ledger[at])]
            if not new:
                continue
            mine.update(_callee(e, call.line) for e in new)
        if ledger is not None:
            ledger[at] = ([] if why else ledger[at]) + [account(e) for e in new]
        new = [make_edge((e[0], text, *e[2:])) for e in new if e[2] != "builtin"]
        found[key].setdefault(call.caller, []).extend(new)
        changed.add((key, call.caller))
        if unresolved is not None and why:
            unres = unresolved[key][call.caller]
            unres[why].remove(call.line)  # this call's line, not another's
            if not unres[why]:
                del unres[why]
                if not unres:
                    del unresolved[key][call.caller]
    for key, caller in changed:
        out = sorted(found[key][caller], key=_LINE)
        kept: list[CallEdge] = []
        for edge in out:
            if not (kept and edge[2] != "external" and kept[-1][0] == edge[0]
                    and _repeats(kept, edge)):
                kept.append(edge)
        found[key][caller] = kept


def _retried_files(resolver: Resolver, types: Types, by_file: dict[str, list],
                   keys: list[str]) -> list[list[CallEdge]]:
    """:func:`_retried` of the calls of the files ``keys`` (``by_file``: by file key)."""
    return _retried(resolver, types, [entry for key in keys for entry in by_file[key]])


def _retried(resolver: Resolver, types: Types, retry: list) -> list[list[CallEdge]]:
    """What the calls ``retry`` (of the second round, by file) resolve to now, but the
    reasons they are not resolved.  A call whose first resolution was settled (no cut, no
    parameter's flow read: :meth:`Types.settled`) resolves as it did then, not asked again."""
    out, last = [], None
    for key, call, cls, names, _why, _text, known in retry:
        if known is not None:  # the edges of the call that asked first: this call's line
            out.append([make_edge((call[2], *e[1:])) for e in known if e[2] != "unresolved"])
            continue
        if key != last:
            types.begin_file()
            last = key
        out.append([e for e in resolve_call(resolver, key, call, cls, types, names)
                    if e[2] != "unresolved"])
    return out


def _callee(edge: CallEdge, line: int) -> tuple:
    """The callee of ``edge`` at ``line``, whatever the kind of edge that reaches it (a
    method listed as an override the call may run, or as the callee itself; two functions
    nested in one definition share its anchor, not their labels)."""
    return (line, edge[3], edge[4], edge[5]) if edge[3] else (line, edge[2], edge[5])


def _repeats(out: list[CallEdge], edge: CallEdge) -> bool:
    """Whether ``out`` (calls in line order) ends with calls on the line of ``edge`` of which
    one already leads to its callee (``f(g(x), g(y))``, ``self.a.run(); self.b.run()``)."""
    for other in reversed(out):
        if other.line != edge.line:
            return False
        if (other.kind == edge.kind and other.anchor == edge.anchor and other.key == edge.key
                and other.label == edge.label):
            return True
    return False
