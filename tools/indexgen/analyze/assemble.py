"""The global pass's last step: each file's :class:`~indexgen.analyze.context.FileContext`
put together from the call graph and the project's tables, a file at a time.

:func:`contexts` runs the pass's whole-build steps in the calling process (the call graph,
:mod:`indexgen.analyze.callgraph`; what each definition does through its callees, the
inverse views and the tests, which read every file's edges) and then finishes each file's
context alone: its edges with a page, its calls not resolved, the conditions that pick its
callees, its indirect findings, its sorted tables and the one-line summaries of the files
it names.  That per-file part reads the whole-build tables and writes nothing outside its
own file, so with more than two processes it runs, like the call graph, in processes
forked with the tables built (``fan``, :func:`indexgen.run.fanout.fork_map`), and a
``seal`` turns each context where it was finished into what the caller keeps (the build:
its render input, pickled once, where the calling process would have pickled every
context again to send it to a worker, and for a file taken from the manifest its hash).
The contexts are the same with any number of processes.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any

from indexgen.analyze import callgraph
from indexgen.analyze.context import FileContext
from indexgen.analyze.exports import star_names
from indexgen.analyze.flows import CALLED
from indexgen.analyze.picked_imports import import_conditions
from indexgen.analyze.resolve import PerFile
from indexgen.analyze.runs import FanOut, cut
from indexgen.analyze.tests import find_tests
from indexgen.analyze.walks import projects_own

#: What the caller keeps of one file's context: ``seal(key, ctx)``.
Seal = Callable[[str, FileContext], Any]

#: Why a call is counted under "Not resolved statically" although its callee is known: a
#: test's code (a listener a test installs), which has no page to link to.
INTO_TESTS = "into a test's code (no page)"

_LINKED = frozenset({"project", "override", "closure", "read", "callback"})  # to a definition


def contexts(project, ledger: callgraph.Ledger | None = None,
             fan: FanOut | None = None, shards: int = 1,
             seal: Seal | None = None,
             after_edges: Callable[[], None] | None = None) -> dict[str, Any]:
    """Every file's context, by file key, in key order (``seal(key, ctx)`` of each, when
    given); ``ledger``, ``fan`` and ``shards``: see :func:`indexgen.analyze.callgraph.edges`,
    whose fan also spreads the per-file part (:func:`_finish`).  ``after_edges()`` is
    called once the call edges are found, before the contexts are finished: from there on
    the calling process works alone (the build forks its folder pages there on two cores,
    :meth:`indexgen.run.plan.Plan.relate`)."""
    ctx = {key: FileContext() for key in project.files}

    def links() -> None:  # no call edge needed: done while forked processes find them
        by_module = project.resolver.by_module
        for key, s in project.files.items():
            project.imports_of(key, s, ctx)
            project.bases_and_links(key, s, ctx[key])
            if s.is_package:  # what its * imports bring: public names (exports.public_names)
                ctx[key].star = star_names(
                    s, lambda m: project.files.get(by_module.get(m, "")))

    unresolved: callgraph.Unresolved = {}
    resolver = project.resolver
    graph = callgraph.edges(resolver, list(project.files), project.types, unresolved, ledger,
                            fan, shards, meanwhile=links)
    if after_edges is not None:
        after_edges()
    totals = callgraph.effects(graph, resolver)
    inverse = callgraph.inverses(graph, resolver, ("project", "read", "callback"))
    # (an edge may end in a file that is read but not documented, e.g. a test's class
    # that the documented code calls back through a listener: it gets no page)
    for field, kind in (("called_by", "project"), ("read_by", "read"),
                        ("passed_by", "callback")):
        for key, by_anchor in inverse[kind].items():
            if key in ctx:
                setattr(ctx[key], field, dict(sorted(by_anchor.items())))
    find_tests(project, ctx, graph)
    finish = partial(_finish_run, project, ctx, graph, unresolved, totals, seal)
    keys = list(ctx)
    if fan is None or shards <= 2 or len(keys) < 2:  # on two cores a forked process
        parts = [finish(keys)]                          # measured slower than none
    else:
        parts = fan(finish, _runs(keys, ctx, graph, shards))
    return {key: value for part in parts for key, value in part}


def _runs(keys: list[str], ctx: dict[str, FileContext], graph: callgraph.Edges,
          shards: int) -> list[list[str]]:
    """``keys`` cut into ``shards`` runs of about equal work: a file's edges and the call
    sites that reach it."""
    return cut(keys, [1 + sum(map(len, graph.get(k, {}).values()))
                                + sum(map(len, ctx[k].called_by.values())) for k in keys],
                         shards)


def _finish_run(project, ctx: dict[str, FileContext], graph: callgraph.Edges,
                unresolved: callgraph.Unresolved, totals: dict, seal: Seal | None,
                keys: list[str]) -> list[tuple[str, Any]]:
    """``(key, context or its seal)`` of each file of ``keys``, finished (:func:`_finish`)."""
    done: dict = {}  # callee -> what it does (indirect findings), shared by the run's files
    lines = PerFile(lambda k: project.files[k].summary_line)  # each made once
    out = []
    for key in keys:
        c = _finish(project, key, ctx, graph.get(key, {}), unresolved, totals, done, lines)
        out.append((key, c if seal is None else seal(key, c)))
    return out


def _finish(project, key: str, ctx: dict[str, FileContext], by_caller: dict,
            unresolved: callgraph.Unresolved, totals: dict, done: dict,
            summary_lines: PerFile) -> FileContext:
    """The parts of one file's context that only its own edges and tables give."""
    c = ctx[key]
    c.calls = {caller: _documented(out, ctx, unresolved, key, caller)
               for caller, out in sorted(by_caller.items())}
    c.unresolved = {caller: {why: sorted(lines) for why, lines in sorted(reasons.items())}
                    for caller, reasons in sorted(unresolved.get(key, {}).items())}
    c.conditions = dict(sorted({**_conditions(project.resolver, c.calls), **import_conditions(
        project.resolver, key, c.calls)}.items()))
    c.indirect = callgraph.indirect_findings(key, by_caller, totals, project.resolver, done)
    named = project.files[key].by_name
    c.unfounded = sorted(projects_own(by_caller, named)) if named else []
    c.imported_by = sorted(c.imported_names)
    for names in c.imported_names.values():
        names.sort()
    c.targets = dict(sorted(c.targets.items()))
    c.base_links = dict(sorted(c.base_links.items()))
    partners = {*c.imported_by, *c.targets.values()}
    partners |= {e.key for out in c.calls.values() for e in out if e.kind == "project"}
    partners |= {r.key for refs in c.called_by.values() for r in refs}
    partners.discard(key)
    c.lines = {k: summary_lines[k] for k in sorted(partners)}
    return c


def _documented(out: list, ctx: dict[str, FileContext], unresolved: callgraph.Unresolved,
                key: str, caller: str) -> list:
    """The edges of one caller whose callee has a page; a call whose callees are all in test
    files (not documented) is kept under :data:`INTO_TESTS` instead (its line, as for the
    calls not resolved), so that every call stays accounted for."""
    kept = [e for e in out if e.kind not in _LINKED or e.key in ctx]
    if len(kept) < len(out):
        calls = {(e.line, e.text) for e in kept}
        gone = {(e.line, e.text) for e in out if e.kind in CALLED and e.key not in ctx}
        gone -= calls
        if gone:
            reasons = unresolved.setdefault(key, {}).setdefault(caller, {})
            reasons.setdefault(INTO_TESTS, []).extend(line for line, _text in gone)
    return kept


def _conditions(resolver, calls: dict[str, list]) -> dict[str, str]:
    """The conditions of the callees of ``calls`` that a condition picks at import time
    (:attr:`FileContext.conditions`)."""
    found = {}
    for out in calls.values():
        for e in out:
            if e.key and e.kind in CALLED:
                module = resolver.module(e.key)
                choices = module.choices.get(e.label) or module.choices.get(e.text)
                if choices:  # made under a condition, or one of several
                    found.update((f"{e.key}#{a}", c) for a, c in choices
                                 if a == e.anchor and (c or len(choices) > 1))
    return dict(sorted(found.items()))
