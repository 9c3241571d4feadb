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

import textwrap

from indexgen.analyze import callgraph
from indexgen.analyze.project import Project, compact
from indexgen.analyze.types import Types
from indexgen.extract.pipeline import extract_source

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


def _project() -> Project:
    summaries = []
    for rel, text in FILES.items():
        data = textwrap.dedent(text).lstrip("\n").encode()
        module = rel.removesuffix(".py").removesuffix("/__init__").replace("/", ".")
        summaries.append(compact(extract_source(data, "src", rel, module, 10**6)))
    return Project(summaries, {})


def _graph(project: Project, keys: list[str]) -> tuple[dict, dict]:
    """The call edges and unresolved counts of the files resolved in the order ``keys``,
    by a type evaluator of their own."""
    unresolved: callgraph.Unresolved = {}
    found = callgraph.edges(project.resolver, keys, Types(project.resolver), unresolved)
    return {k: found[k] for k in sorted(found)}, unresolved


def _callees(graph: dict, key: str, caller: str) -> set[str]:
    return {e.label for e in graph[key].get(caller, ()) if e.kind == "project"}


def test_each_file_resolves_the_same_in_any_order():
    project = _project()
    keys = sorted(project.files)
    forward, backward = _graph(project, keys), _graph(project, keys[::-1])
    assert _callees(forward[0], "src/pkg/b_user.py", "sym-second") == {"Node.go"}
    assert _callees(forward[0], "src/pkg/a_user.py", "sym-first") == {"Node.go"}
    assert forward == backward
