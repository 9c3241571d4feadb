"""Every call of a build accounted for: an edge, a line under its reason, or a builtin.

The call graph (:mod:`indexgen.analyze.callgraph`) keeps the calls it does not resolve by
reason and line (:data:`Unresolved`: the pages say how many, and where) and, for the test
that no call is lost (``tests/indexgen/test_call_accounting.py``), what each call made
(:data:`Ledger`).
"""

from __future__ import annotations

from indexgen.analyze.context import CallEdge

#: ``key -> caller anchor -> reason -> lines`` of the calls not resolved statically, one
#: line per call (a line holding two such calls is there twice), in the order met.
Unresolved = dict[str, dict[str, dict[str, list[int]]]]
#: ``(key, caller anchor, line, call text) -> kinds of the edges the call made`` (for a
#: builtin's call, which makes no edge on the pages, ``builtin:`` and the builtin's name):
#: never an empty list.
Ledger = dict[tuple[str, str, int, str], list[str]]

def account(edge: CallEdge) -> str:
    """How an edge is written in a :data:`Ledger`."""
    return "builtin:" + edge[5] if edge[2] == "builtin" else edge[2]
