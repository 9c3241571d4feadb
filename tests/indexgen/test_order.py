"""The call graph does not depend on the order in which the files are resolved.

The type evaluator cuts a value that depends on itself where the cycle closes (the value
in progress counts as none).  Where that cut falls depends on which value of the cycle was
asked first; a value shaped by it must not be reused by another file's calls, or each
file's edges would depend on the files resolved before it (:mod:`indexgen.analyze.memo`).
Below, ``Holder.x`` and ``Holder.y`` are each other's sources: asked for ``x`` first (in
``a_user.py``), ``y`` is cut to nothing; asked for ``y`` first, it is ``Node``.  (The
calls are on module-level names, which the second round, with what callers hand
parameters, does not try again.)  Every expected edge is read off the source by hand.
"""

from __future__ import annotations

import os
from functools import partial

import pytest
from ig_helpers import SAMPLE, project_of
from indexgen.analyze import callgraph
from indexgen.analyze.project import Project, compact
from indexgen.analyze.types import Types
from indexgen.extract.discover import discover
from indexgen.extract.pipeline import extract_file
from indexgen.run import fanout
from indexgen.run import manifest as mf

FILES = {
    "pkg/__init__.py": "",
    "pkg/holder.py": '''
        class Node:
            def go(self) -> None:
                pass


        class Holder:
            def __init__(self) -> None:
                self.x = Node()
                self.y = self.x

            def swap(self) -> None:
                self.x = self.y
        ''',
    "pkg/a_user.py": '''
        from pkg.holder import Holder

        h = Holder()


        def first() -> None:
            h.x.go()
        ''',
    "pkg/b_user.py": '''
        from pkg.holder import Holder

        h = Holder()


        def second() -> None:
            h.y.go()
        ''',
}


def _graph(project: Project, keys: list[str]) -> tuple[dict, dict]:
    """The call edges and unresolved counts of the files resolved in the order ``keys``,
    by a type evaluator of their own."""
    unresolved: callgraph.Unresolved = {}
    found = callgraph.edges(project.resolver, keys, Types(project.resolver), unresolved)
    return {k: found[k] for k in sorted(found)}, unresolved


def _callees(graph: dict, key: str, caller: str) -> set[str]:
    return {e.label for e in graph[key].get(caller, ()) if e.kind == "project"}


def test_each_file_resolves_the_same_in_any_order():
    project = project_of(FILES)
    keys = sorted(project.files)
    forward, backward = _graph(project, keys), _graph(project, keys[::-1])
    assert _callees(forward[0], "src/pkg/b_user.py", "sym-second") == {"Node.go"}
    assert _callees(forward[0], "src/pkg/a_user.py", "sym-first") == {"Node.go"}
    assert forward == backward


@pytest.mark.skipif(not fanout.can_fork(), reason="needs fork (POSIX)")
def test_the_files_resolved_in_forked_processes_give_the_same_contexts():
    """The global pass with its first round's call edges cut into runs of files, one
    resolved before forking, the others each in a process forked for it but the last
    (:func:`indexgen.run.fanout.fork_map`), gives the contexts of the serial pass: here on
    the files above and on the sample project's."""
    runs: list[int] = []

    def fan(func, parts, meanwhile=None):
        runs.append(len(parts))
        return fanout.fork_map(func, parts, here=True, meanwhile=meanwhile)

    summaries = [compact(extract_file(s.path, s.root, s.relpath, s.module, 10**6))
                 for s in discover(SAMPLE / "src")]
    for files in (list(project_of(FILES).files.values()), summaries):
        serial = Project(files, {}).contexts()
        sharded = Project(files, {}).contexts(fan=fan, shards=3)
        assert repr(sharded) == repr(serial)  # equal, and in the same order
    assert sum(n >= 2 for n in runs) >= 2, runs  # it forked, in both trees


@pytest.mark.skipif(not fanout.can_fork(), reason="needs fork (POSIX)")
def test_contexts_sealed_in_forked_processes_are_those_of_the_serial_pass():
    """Each file's context is finished and sealed (:mod:`indexgen.analyze.assemble`) in the
    process its run of files went to: what the build keeps of it (here its hash, as the
    manifest has it) is the serial pass's, in the same order, though sealed elsewhere."""
    def seal(key, ctx):
        return os.getpid(), mf.context_hash(ctx, key)

    files = list(project_of(FILES).files.values())
    serial = Project(files, {}).contexts(seal=seal)
    sharded = Project(files, {}).contexts(fan=partial(fanout.fork_map, here=True), shards=3,
                                          seal=seal)
    assert [(k, h) for k, (_pid, h) in sharded.items()] == \
        [(k, h) for k, (_pid, h) in serial.items()]
    assert len(serial) == len(FILES)
    assert len({pid for pid, _h in sharded.values()}) >= 2  # sealed in forked processes too
