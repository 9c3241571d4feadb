"""Summaries and contexts cross process pipes as pickles; they come back equal, named tuples
and all (their ``__reduce__`` sends the named tuples as plain tuples)."""

from __future__ import annotations

import pickle

from ig_helpers import SAMPLE
from indexgen.analyze.context import CallEdge, CallerRef, FileContext, IndirectFinding
from indexgen.analyze.project import Project, compact
from indexgen.extract.discover import discover
from indexgen.extract.model import Call
from indexgen.extract.pipeline import extract_file


def _summaries():
    return [extract_file(s.path, s.root, s.relpath, s.module, 10**6)
            for s in discover(SAMPLE / "src")]


def test_summaries_come_back_equal_with_their_calls():
    for full in _summaries():
        for summary in (full, compact(full)):
            back = pickle.loads(pickle.dumps(summary, protocol=pickle.HIGHEST_PROTOCOL))
            assert back == summary and back.key == summary.key
            assert all(type(c) is Call for c in back.calls)
    assert any(s.calls for s in _summaries())


def test_contexts_come_back_equal_with_their_edges():
    contexts = Project([compact(s) for s in _summaries()], {}).contexts()
    contexts["extra"] = FileContext(
        calls={"": [CallEdge(3, "f", "project", "k", "sym-f", "f")]},
        called_by={"sym-g": [CallerRef("k", "h", "sym-h", 9)]},
        indirect=[IndirectFinding("collective", 3, "f", "", "k", "sym-f", "f")])
    for ctx in contexts.values():
        back = pickle.loads(pickle.dumps(ctx, protocol=pickle.HIGHEST_PROTOCOL))
        assert back == ctx
        assert all(type(e) is CallEdge for out in back.calls.values() for e in out)
        assert all(type(r) is CallerRef for refs in back.called_by.values() for r in refs)
        assert all(type(f) is IndirectFinding for f in back.indirect)
    assert any(c.calls for c in contexts.values()) and any(c.called_by for c in contexts.values())
