"""Which test files exercise each module of the build, and how.

A test file exercises a module when it

- imports from it (through re-exports too), or imports it by a name the source gives
  (``importlib.import_module("pkg.mod")``, or a module-level constant of such names:
  the ``import:`` literals of :attr:`~indexgen.extract.model.FileSummary.literals`);
- or reaches its functions through calls the static call graph follows -- from its own code,
  through the code of other test files, and from the functions it names to a test harness as
  ``"pkg.module:function"`` strings (or as a ``"pkg.module:"`` prefix and the bare names the
  file joins to it), which a harness such as ``tests/dist_harness.py`` imports and runs in
  its worker processes.

Test files are namespaces of their own (``test:`` keys of the resolver) whose module name is
their path below the project folder (``tests/fsdp/scenarios.py`` is
``tests.fsdp.scenarios``), the name a harness string gives.
"""

from __future__ import annotations

from indexgen.analyze import callgraph
from indexgen.analyze.context import FileContext, TestReference

TEST_PREFIX = "test:"


def test_module(path: str) -> str:
    """The dotted module name of a test file from its path below the project folder."""
    parts = path.removesuffix(".py").split("/")
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def find_tests(project, ctx: dict[str, FileContext], graph: callgraph.Edges) -> None:
    """Fill ``tests``, ``test_calls`` and ``dynamic_tests`` of every context.

    Args:
        project: The :class:`~indexgen.analyze.project.Project` (its files, tests, resolver
            and types).
        ctx: The contexts to fill, by file key.
        graph: The call graph of the build's files.
    """
    keys = [TEST_PREFIX + path for path in project.tests]
    tests_graph = callgraph.edges(project.resolver, keys, project.types)
    every = {**graph, **tests_graph}
    resolver = project.resolver
    for path, t in project.tests.items():
        key = TEST_PREFIX + path
        found = _imported(project, t)
        for target, (lines, names, as_module) in found.items():
            if as_module:
                public = {n for n in resolver.module(target).defs
                          if "." not in n and not n.startswith("_")}
                names |= public & set(t.identifiers)
            ctx[target].tests.append(TestReference(path, sorted(set(lines)), sorted(names)))
        start = [node for out in tests_graph.get(key, {}).values() for e in out
                 if e.kind == "project" for node in callgraph.entered(resolver, e)]
        start += _harness_targets(project, t)
        reached: dict[str, set[str]] = {}
        for node_key, anchor in callgraph.reach(every, start, resolver):
            if node_key in project.files and node_key not in found:
                reached.setdefault(node_key, set()).add(
                    resolver.module(node_key).qualname_of.get(anchor, anchor))
        for node_key, names in reached.items():
            ctx[node_key].test_calls[path] = sorted(names)
    dynamic = sorted(path for path, t in project.tests.items() if _dynamic(t))
    for c in ctx.values():
        c.dynamic_tests = dynamic


def _imported(project, t) -> dict[str, tuple[list[int], set[str], bool]]:
    """Project file -> (lines, names used, imported as a module) for one test file's
    imports, those made by ``importlib.import_module`` with a name the source gives too."""
    found: dict[str, tuple[list[int], set[str], bool]] = {}
    for imp in t.imports:
        target = project.import_target(imp) if project.category(imp) == "project" else None
        if target is None:
            continue
        for file_key, name in project.files_read(imp, target):
            if file_key not in project.files:
                continue  # another test file
            lines, names, as_module = found.setdefault(file_key, ([], set(), False))
            lines.append(imp.lineno)
            if name:
                names.add(name)
            else:
                found[file_key] = (lines, names, True)
    for text, line in t.literals:
        if text.startswith("import:"):
            target = project.resolver.absolute(text[len("import:"):])
            if (target is not None and target.kind == "project" and not target.qualname
                    and target.key in project.files):  # not another test file
                lines, names, _ = found.setdefault(target.key, ([], set(), True))
                lines.append(line)
                found[target.key] = (lines, names, True)
    return found


def _harness_targets(project, t) -> list[callgraph.Node]:
    """The functions a test file names as ``"pkg.module:function"`` (or as a
    ``"pkg.module:"`` prefix and bare names), in the build or in test files."""
    resolver = project.resolver
    named = {text for text, _ in t.literals}
    wanted = [text.partition(":")[::2] for text in named
              if ":" in text and not text.startswith("import:")]
    prefixes = [module for module, name in wanted if not name]
    wanted = [(m, n) for m, n in wanted if n]
    wanted += [(m, n) for m in prefixes for n in named if ":" not in n and "." not in n]
    nodes = []
    for module, name in wanted:
        key = resolver.by_module.get(module)
        anchor = resolver.anchor(key, name) if key else ""
        if anchor:
            nodes.append((key, anchor))
    return nodes


def _dynamic(t) -> bool:
    """Whether a test file imports a module by a name the source does not give."""
    given = {line for text, line in t.literals if text.startswith("import:")}
    return any(f.category == "dynamic-import" and f.lineno not in given for f in t.findings)
